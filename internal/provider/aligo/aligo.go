// Package aligo implements the vendora_sms (Aligo SMS API) and vendora_msgr
// (Aligo KakaoTalk AlimTalk API) provider kinds with plain net/http through
// provider.Do; Aligo has no Go SDK (PROVIDERS.md).
//
// Decisions worth knowing when reading attempt history:
//
//   - Aligo returns one message id per call. A /send_mass/ or multi-recipient
//     AlimTalk call therefore reports "<msg_id>-<N>" (or "<mid>-<N>") for its
//     N-th message, N counted from 1 as in rec_N / receiver_N; a single
//     message gets the bare id.
//   - SMS vs LMS is decided by the message's length in the carriers' EUC-KR
//     encoding (ASCII 1 byte, anything else 2), which is what Aligo counts;
//     UTF-8 length would turn a 30-character Korean SMS into an LMS.
//   - /send_mass/ takes one title for the whole call: the first non-empty
//     msg.Title of the batch is used.
//   - An LMS title is cut to Aligo's 44 bytes (it is decoration; the text
//     is whole), while a text over 2,000 bytes fails as invalid_request
//     before any call: Aligo would refuse it, and cutting it would send a
//     partial notification.
//   - AlimTalk needs one senderkey and tpl_code per call, so a batch is sent
//     as one call per (sender profile, template) pair.
//   - The AlimTalk token is created for 30 seconds (/akv10/token/create/30/s/)
//     and reused until shortly before it expires.
//   - Quota for both kinds comes from /remain/ on the SMS host (the msgr kind
//     uses its own API key); Aligo reports counts purchasable with the
//     current prepaid money, so Period is "current", Limit nil and Used 0.
//   - base_url replaces the scheme and host of both API hosts.
package aligo

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/notifyd/notifyd/internal/notify"
	"github.com/notifyd/notifyd/internal/provider"
)

// Config keys (SPEC "Provider account").
const (
	keyUserID     = "vendora_user_id"
	keyAPIKey     = "vendora_api_key"
	keyMsgrAPIKey = "vendora_msgr_api_key"
	keySender     = "vendora_sender"
	keyBaseURL    = "base_url"
)

// Production API roots; base_url replaces both.
const (
	defaultSMSRoot  = "https://apis.aligo.in"
	defaultMsgrRoot = "https://kakaoapi.aligo.in"
)

// maxPerCall is Aligo's limit for /send_mass/ pairs and AlimTalk receivers.
// The adapter batching default is the same, but an account may override it.
const maxPerCall = 500

// smsMaxBytes is the SMS size limit; longer texts go as LMS.
const smsMaxBytes = 90

// Aligo's limits for /send/ and /send_mass/ (PROVIDERS.md), in EUC-KR bytes:
// msg 1-2,000, title (LMS/MMS) at most 44.
const (
	msgMaxBytes   = 2000
	titleMaxBytes = 44
)

// batch is SPEC "Adapter batching" for vendorA, both kinds.
var batch = provider.BatchDefaults{CallsPerSecond: 2, Window: 800 * time.Millisecond, MaxSize: 500}

// redacted replaces secret form fields in Call.Logged.
const redacted = "[redacted]"

// secretFields are the form fields that carry credentials on either host.
var secretFields = map[string]bool{"key": true, "apikey": true, "token": true}

// Config is the configJson of both vendorA kinds.
type Config struct {
	// UserID is the Aligo account id (user_id).
	UserID string `json:"vendora_user_id"`
	// APIKey is the SMS API key; vendora_msgr uses it when MsgrAPIKey is
	// empty (SPEC).
	APIKey string `json:"vendora_api_key"`
	// MsgrAPIKey is the KakaoTalk (AlimTalk) API key of vendora_msgr.
	MsgrAPIKey string `json:"vendora_msgr_api_key"`
	// Sender is the registered caller number.
	Sender string `json:"vendora_sender"`
	// Endpoint's base_url replaces the scheme and host of both API hosts.
	provider.Endpoint
}

// SMSKind describes vendora_sms.
func SMSKind() provider.Kind {
	return provider.Spec[Config]{
		ID:       "vendora_sms",
		Channel:  notify.ChannelSMS,
		Required: []string{keyUserID, keyAPIKey, keySender},
		Optional: []string{keyBaseURL},
		Batch:    batch,
		Receipts: notify.ReceiptsPolled,
		New:      newSMS,
	}.Kind()
}

// MsgrKind describes vendora_msgr. vendora_msgr_api_key is listed as
// required, as in SPEC, but vendora_api_key stands in for it.
func MsgrKind() provider.Kind {
	return provider.Spec[Config]{
		ID:       "vendora_msgr",
		Channel:  notify.ChannelAlimTalk,
		Required: []string{keyUserID, keyMsgrAPIKey, keySender},
		Optional: []string{keyAPIKey, keyBaseURL},
		Batch:    batch,
		Receipts: notify.ReceiptsPolled,
		Defaults: func(c *Config) {
			if c.MsgrAPIKey == "" {
				c.MsgrAPIKey = c.APIKey // SPEC: falls back when absent
			}
		},
		New: newMsgr,
	}.Kind()
}

// account is what both kinds share: credentials, hosts and the client.
type account struct {
	userID   string
	apiKey   string
	sender   string
	smsRoot  string
	msgrRoot string
	client   *http.Client
	now      func() time.Time
}

func newAccount(c Config, apiKey string, deps provider.Deps) (account, *provider.Error) {
	smsRoot, msgrRoot := defaultSMSRoot, defaultMsgrRoot
	if c.BaseURL != "" {
		root, err := c.Root(defaultSMSRoot)
		if err != nil {
			return account{}, err
		}
		smsRoot, msgrRoot = root, root
	}
	return account{
		userID:   c.UserID,
		apiKey:   apiKey,
		sender:   c.Sender,
		smsRoot:  smsRoot,
		msgrRoot: msgrRoot,
		client:   deps.HTTP,
		now:      deps.Now,
	}, nil
}

// post sends form to url. The logged copy has the credentials replaced.
func (a *account) post(ctx context.Context, url string, form url.Values) (provider.Exchange, []byte, *provider.Error) {
	return provider.Do(ctx, a.client, provider.Call{
		Method: http.MethodPost,
		URL:    url,
		Header: http.Header{
			"Content-Type": {"application/x-www-form-urlencoded"},
			"Accept":       {"application/json"},
		},
		Body:   []byte(form.Encode()),
		Logged: loggedForm(form),
	})
}

// loggedForm flattens form for attempt history with secrets redacted.
func loggedForm(form url.Values) map[string]string {
	out := make(map[string]string, len(form))
	for k, vs := range form {
		v := strings.Join(vs, ",")
		if secretFields[k] {
			v = redacted
		}
		out[k] = v
	}
	return out
}

// decode reads an Aligo JSON answer into v. Aligo answers failures with
// HTTP 200 and a body code, so a non-2xx status that provider.Do did not
// classify (404, 400...) has no vendor meaning and is unknown.
func decode(ex provider.Exchange, body []byte, v any) *provider.Error {
	if st := ex.Response.HTTPStatus; st < 200 || st > 299 {
		return provider.Errorf(notify.FailureUnknown, "aligo answered HTTP %d: %s", st, provider.Snippet(body, 200))
	}
	// Aligo sometimes labels JSON as text/html, so the content type is ignored.
	if err := json.Unmarshal(bytes.TrimSpace(body), v); err != nil {
		return provider.Errorf(notify.FailureUnknown, "aligo answer is not JSON: %s", provider.Snippet(body, 200))
	}
	return nil
}

// flexInt is an integer Aligo may send as a JSON number or a string.
type flexInt int64

func (f *flexInt) UnmarshalJSON(b []byte) error {
	s := strings.Trim(strings.TrimSpace(string(b)), `"`)
	if s == "" || s == "null" {
		*f = 0
		return nil
	}
	if n, err := strconv.ParseInt(s, 10, 64); err == nil {
		*f = flexInt(n)
		return nil
	}
	x, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return fmt.Errorf("aligo: %q is not a number", s)
	}
	*f = flexInt(x)
	return nil
}

// smsBytes is the length of s as the carriers' EUC-KR gateways count it.
func smsBytes(s string) int {
	n := 0
	for _, r := range s {
		if r < 0x80 {
			n++
		} else {
			n += 2
		}
	}
	return n
}

// fitBytes cuts s to at most limit EUC-KR bytes, on a character boundary.
func fitBytes(s string, limit int) string {
	n := 0
	for i, r := range s {
		w := 1
		if r >= 0x80 {
			w = 2
		}
		if n+w > limit {
			return s[:i]
		}
		n += w
	}
	return s
}

// batchID is the message id of the n-th (from 1) message of a call.
func batchID(id string, n, total int) string {
	if total == 1 || id == "" {
		return id
	}
	return id + "-" + strconv.Itoa(n)
}

// checkRecipient rejects messages Aligo would refuse anyway, before a call.
func checkRecipient(m provider.Message) *provider.Error {
	if strings.TrimSpace(m.To) == "" {
		return provider.Errorf(notify.FailureInvalidRequest, "recipient address is empty")
	}
	if m.Text == "" {
		return provider.Errorf(notify.FailureInvalidRequest, "message text is empty")
	}
	return nil
}

// chunks splits idx into runs of at most maxPerCall.
func chunks(idx []int) [][]int {
	var out [][]int
	for len(idx) > maxPerCall {
		out = append(out, idx[:maxPerCall])
		idx = idx[maxPerCall:]
	}
	if len(idx) > 0 {
		out = append(out, idx)
	}
	return out
}
