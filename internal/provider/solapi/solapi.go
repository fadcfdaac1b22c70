// Package solapi implements the vendorb_sms and vendorb_msgr (AlimTalk,
// message type ATA) provider kinds on the Solapi Messages API v4 with plain
// net/http through provider.Do. The official SDK hides its base URL and
// auth in internal packages (PROVIDERS.md), and a signer is twenty lines.
//
// Decisions worth knowing when reading attempt history:
//
//   - Every send, one message or many, is POST /messages/v4/send-many/detail
//     with showMessageList, so one code path builds requests and reads
//     per-message results.
//   - allowDuplicates is true: a batch may hold two notifications for the
//     same number (an OTP and an alert), which are distinct messages to us.
//   - Each message carries customFields {"nid": <notification id>}; results
//     are matched to messages through it in messageList and
//     failedMessageList, so a partial failure classifies each message on
//     its own. A message whose id is empty or repeated in the batch gets
//     "<id>#<index>" instead, so that the match stays unambiguous.
//   - SMS messages leave the type to Solapi's autoTypeDetect (over 90 bytes
//     is LMS); the subject is sent when the notification has a title. ATA
//     messages send no subject: AlimTalk has none.
//   - Quota is the cash balance in KRW (points are not added); Solapi has no
//     period or limit, so Period is "current", Limit nil and Used 0.
package solapi

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"time"

	"github.com/notifyd/notifyd/internal/notify"
	"github.com/notifyd/notifyd/internal/provider"
)

// Config keys (SPEC "Provider account").
const (
	keyAPIKey    = "vendorb_api_key"
	keyAPISecret = "vendorb_api_secret"
	keySender    = "vendorb_sender"
	keyBaseURL   = "base_url"
)

// defaultRoot is the production API root; base_url replaces it.
const defaultRoot = "https://api.solapi.com"

// maxPerCall is the documented per-request cap of Solapi's group API; the
// adapter batching default (100) stays far below it unless overridden.
const maxPerCall = 10000

// batch is SPEC "Adapter batching" for vendorB, both kinds.
var batch = provider.BatchDefaults{CallsPerSecond: 20, Window: 500 * time.Millisecond, MaxSize: 100}

// Config is the configJson of both vendorB kinds.
type Config struct {
	// APIKey and APISecret sign every request (HMAC-SHA256).
	APIKey    string `json:"vendorb_api_key"`
	APISecret string `json:"vendorb_api_secret"`
	// Sender is the registered caller number.
	Sender string `json:"vendorb_sender"`
	// Endpoint's base_url replaces the scheme and host of the API root.
	provider.Endpoint
}

// SMSKind describes vendorb_sms.
func SMSKind() provider.Kind { return kind("vendorb_sms", notify.ChannelSMS, false) }

// MsgrKind describes vendorb_msgr.
func MsgrKind() provider.Kind { return kind("vendorb_msgr", notify.ChannelAlimTalk, true) }

// kind describes one of the two kinds; ata selects AlimTalk messages.
func kind(id string, ch notify.Channel, ata bool) provider.Kind {
	return provider.Spec[Config]{
		ID:       id,
		Channel:  ch,
		Required: []string{keyAPIKey, keyAPISecret, keySender},
		Optional: []string{keyBaseURL},
		Batch:    batch,
		Receipts: notify.ReceiptsPolled,
		New: func(c Config, deps provider.Deps) (provider.Provider, error) {
			return newSender(c, deps, ata)
		},
	}.Kind()
}

var (
	_ provider.Provider     = (*sender)(nil)
	_ provider.QuotaChecker = (*sender)(nil)
)

// sender is a Solapi account; ata selects AlimTalk messages.
type sender struct {
	root   string
	apiKey string
	secret string
	from   string
	ata    bool
	client *http.Client
	now    func() time.Time
	// salt makes each signature unique; tests replace it to pin payloads.
	salt func() string
}

func newSender(c Config, deps provider.Deps, ata bool) (provider.Provider, error) {
	root, err := c.Root(defaultRoot)
	if err != nil {
		return nil, err
	}
	return &sender{
		root:   root,
		apiKey: c.APIKey,
		secret: c.APISecret,
		from:   c.Sender,
		ata:    ata,
		client: deps.HTTP,
		now:    deps.Now,
		salt:   randomSalt,
	}, nil
}

// randomSalt returns 32 hex characters, as the Go SDK uses; Solapi rejects
// a signature seen before, so the salt must never repeat.
func randomSalt() string {
	b := make([]byte, 16)
	_, _ = rand.Read(b) // crypto/rand.Read does not fail (Go 1.24+)
	return hex.EncodeToString(b)
}

// authorization builds the HMAC header: the signature covers date+salt
// only, not the method, path or body.
func (s *sender) authorization() string {
	date := s.now().UTC().Format(time.RFC3339)
	salt := s.salt()
	mac := hmac.New(sha256.New, []byte(s.secret))
	mac.Write([]byte(date + salt))
	return fmt.Sprintf("HMAC-SHA256 apiKey=%s, date=%s, salt=%s, signature=%s",
		s.apiKey, date, salt, hex.EncodeToString(mac.Sum(nil)))
}

// call signs and performs one request. logged is the body as attempt
// history shows it: Solapi bodies carry no credentials (they travel in the
// header), so it is the request itself.
func (s *sender) call(ctx context.Context, method, path string, body []byte, logged any) (provider.Exchange, []byte, *provider.Error) {
	h := http.Header{"Authorization": {s.authorization()}, "Accept": {"application/json"}}
	if body != nil {
		h.Set("Content-Type", "application/json")
	}
	return provider.Do(ctx, s.client, provider.Call{
		Method: method, URL: s.root + path, Header: h, Body: body, Logged: logged,
	})
}

// apiError is Solapi's request-level error body.
type apiError struct {
	ErrorCode    string `json:"errorCode"`
	ErrorMessage string `json:"errorMessage"`
}

// requestFailure classifies an answer that failed as a whole: the errorCode
// through the codes table, or unknown when there is none (a 404 from a
// wrong base_url, for example). Statuses 401/403/429/5xx were classified by
// provider.Do already.
func requestFailure(status int, body []byte) *provider.Error {
	var e apiError
	_ = json.Unmarshal(body, &e)
	if e.ErrorCode == "" {
		return provider.Errorf(notify.FailureUnknown, "solapi answered HTTP %d: %s", status, provider.Snippet(body, 200))
	}
	if c := classify(e.ErrorCode, e.ErrorMessage); c.err != nil {
		return c.err
	}
	return provider.Errorf(notify.FailureUnknown, "solapi answered HTTP %d with %s", status, e.ErrorCode)
}

func ok(status int) bool { return status >= 200 && status <= 299 }

// balanceAnswer is the body of GET /cash/v1/balance.
type balanceAnswer struct {
	Balance *json.Number `json:"balance"`
}

// Quota reads the cash balance (KRW).
func (s *sender) Quota(ctx context.Context) (provider.Quota, error) {
	ex, body, err := s.call(ctx, http.MethodGet, "/cash/v1/balance", nil, nil)
	if err != nil {
		return provider.Quota{}, err
	}
	if !ok(ex.Response.HTTPStatus) {
		return provider.Quota{}, requestFailure(ex.Response.HTTPStatus, body)
	}
	var a balanceAnswer
	if jerr := json.Unmarshal(body, &a); jerr != nil || a.Balance == nil {
		return provider.Quota{}, provider.Errorf(notify.FailureUnknown, "solapi balance answer has no balance: %s", provider.Snippet(body, 200))
	}
	v, perr := strconv.ParseFloat(a.Balance.String(), 64)
	if perr != nil {
		return provider.Quota{}, provider.Errorf(notify.FailureUnknown, "solapi balance %q is not a number", a.Balance.String())
	}
	return provider.Quota{Period: "current", RemainingCredit: v, Currency: "KRW"}, nil
}
