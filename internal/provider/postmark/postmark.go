// Package postmark is the mailz_email adapter: Postmark's email API
// (PROVIDERS.md "mailz_email -> Postmark").
package postmark

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"sort"
	"strings"
	"time"

	"github.com/notifyd/notifyd/internal/notify"
	"github.com/notifyd/notifyd/internal/provider"
)

// KindID is the providerKind this package implements.
const KindID = "mailz_email"

// DefaultRoot is Postmark's API root; configJson base_url replaces it.
const DefaultRoot = "https://api.postmarkapp.com"

// DefaultFromName is the display name used when mailz_from_name is unset.
const DefaultFromName = "notifyd"

// Message streams: Postmark keeps transactional and bulk mail apart, and
// a mail carrying List-Unsubscribe is newsletter or advertisement mail
// (API-DECISIONS section 6), which belongs on the broadcast stream.
const (
	streamTransactional = "outbound"
	streamBroadcast     = "broadcast"
)

// Config is the decoded configJson of a mailz_email account.
type Config struct {
	// APIKey is the Postmark server token.
	APIKey string `json:"mailz_api_key"`
	// FromEmail is the sender address (a confirmed sender signature).
	FromEmail string `json:"mailz_from_email"`
	// FromName is the display name; DefaultFromName when empty.
	FromName string `json:"mailz_from_name"`
	// BaseURL replaces the scheme and host of DefaultRoot.
	BaseURL string `json:"base_url"`
}

// Kind describes mailz_email for the registry.
func Kind() provider.Kind {
	return provider.Kind{
		ID:         KindID,
		Channel:    notify.ChannelEmail,
		Required:   []string{"mailz_api_key", "mailz_from_email"},
		Optional:   []string{"mailz_from_name"},
		Batch:      provider.BatchDefaults{CallsPerSecond: 2, Window: 1000 * time.Millisecond, MaxSize: 100},
		New:        New,
		Identities: NewIdentities,
	}
}

// Provider sends through one Postmark server.
type Provider struct {
	cfg  Config
	from string
	root string
	http *http.Client
}

// Interface guards.
var (
	_ provider.Provider                                               = (*Provider)(nil)
	_ func(provider.Config, provider.Deps) (provider.Provider, error) = New
)

// New builds a provider; a missing key or a bad base_url is an
// invalid_request *provider.Error.
func New(cfg provider.Config, deps provider.Deps) (provider.Provider, error) {
	if err := provider.Require(cfg, Kind().Required...); err != nil {
		return nil, err
	}
	root, err := provider.APIRoot(cfg, DefaultRoot)
	if err != nil {
		return nil, err
	}
	c := Config{
		APIKey:    cfg["mailz_api_key"],
		FromEmail: cfg["mailz_from_email"],
		FromName:  cfg["mailz_from_name"],
		BaseURL:   cfg["base_url"],
	}
	if c.FromName == "" {
		c.FromName = DefaultFromName
	}
	client := deps.HTTP
	if client == nil {
		client = provider.DefaultHTTPClient()
	}
	return &Provider{cfg: c, from: FormatFrom(c.FromName, c.FromEmail), root: root, http: client}, nil
}

// FormatFrom builds Postmark's From, "Name <addr>", quoting the name when it
// holds characters outside RFC 5322 atext (a comma or a dot would otherwise
// split or break the address). Non-ASCII is left as UTF-8, which Postmark
// encodes itself; CR and LF are dropped so a name cannot add a header.
func FormatFrom(name, addr string) string {
	name = strings.TrimSpace(strings.NewReplacer("\r", "", "\n", "").Replace(name))
	if name == "" {
		return addr
	}
	if !needsQuoting(name) {
		return name + " <" + addr + ">"
	}
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range name {
		if r == '"' || r == '\\' {
			b.WriteByte('\\')
		}
		b.WriteRune(r)
	}
	b.WriteString(`" <` + addr + ">")
	return b.String()
}

// needsQuoting reports whether name is not a run of atext words.
func needsQuoting(name string) bool {
	for _, r := range name {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == ' ', r >= 0x80:
		case strings.ContainsRune("!#$%&'*+-/=?^_`{|}~", r):
		default:
			return true
		}
	}
	return false
}

type header struct {
	Name  string `json:"Name"`
	Value string `json:"Value"`
}

// email is one message of POST /email and of the /email/batch array.
type email struct {
	From          string   `json:"From"`
	To            string   `json:"To"`
	Subject       string   `json:"Subject"`
	TextBody      string   `json:"TextBody,omitempty"`
	HTMLBody      string   `json:"HtmlBody,omitempty"`
	Headers       []header `json:"Headers,omitempty"`
	MessageStream string   `json:"MessageStream"`
}

func (p *Provider) email(m provider.Message) email {
	e := email{
		From:          p.from,
		To:            m.To,
		Subject:       m.Title,
		TextBody:      m.Text,
		HTMLBody:      m.HTML,
		MessageStream: streamTransactional,
	}
	names := make([]string, 0, len(m.Headers))
	for k := range m.Headers {
		names = append(names, k)
		if strings.EqualFold(k, "List-Unsubscribe") {
			e.MessageStream = streamBroadcast
		}
	}
	sort.Strings(names) // a stable payload for golden files and logs
	for _, k := range names {
		e.Headers = append(e.Headers, header{Name: k, Value: m.Headers[k]})
	}
	return e
}

// result is Postmark's answer for one message, alone or within a batch.
type result struct {
	To          string `json:"To"`
	SubmittedAt string `json:"SubmittedAt"`
	MessageID   string `json:"MessageID"`
	ErrorCode   int    `json:"ErrorCode"`
	Message     string `json:"Message"`
}

// maxBatch is the most messages /email/batch takes in one call.
const maxBatch = 500

// Send uses POST /email for one message and POST /email/batch for more,
// at most maxBatch per call: an account may raise its batch size
// (dispatch_max_batch_size) above what Postmark accepts.
func (p *Provider) Send(ctx context.Context, msgs []provider.Message) []provider.Result {
	if len(msgs) == 0 {
		return nil
	}
	out := make([]provider.Result, 0, len(msgs))
	for start := 0; start < len(msgs); start += maxBatch {
		chunk := msgs[start:min(start+maxBatch, len(msgs))]
		if len(chunk) == 1 {
			out = append(out, p.sendOne(ctx, chunk[0]))
			continue
		}
		out = append(out, p.sendBatch(ctx, chunk)...)
	}
	return out
}

func (p *Provider) sendOne(ctx context.Context, m provider.Message) provider.Result {
	body, err := marshal(p.email(m))
	if err != nil {
		return provider.Result{Err: provider.Errorf(notify.FailureInvalidRequest, "encode request: %v", err)}
	}
	ex, raw, perr := provider.Do(ctx, p.http, p.call("/email", body))
	if e := classifyCall(ex, raw, perr); e != nil {
		return provider.Result{Err: e, Exchange: ex}
	}
	var r result
	if err := json.Unmarshal(raw, &r); err != nil {
		return provider.Result{Err: provider.Errorf(notify.FailureUnknown, "decode response: %v", err), Exchange: ex}
	}
	return p.result(r, ex)
}

func (p *Provider) sendBatch(ctx context.Context, msgs []provider.Message) []provider.Result {
	items := make([]email, len(msgs))
	for i, m := range msgs {
		items[i] = p.email(m)
	}
	body, err := marshal(items)
	if err != nil {
		return provider.FailAll(msgs, provider.Errorf(notify.FailureInvalidRequest, "encode request: %v", err), provider.Exchange{})
	}
	ex, raw, perr := provider.Do(ctx, p.http, p.call("/email/batch", body))
	if e := classifyCall(ex, raw, perr); e != nil {
		return provider.FailAll(msgs, e, ex)
	}
	var rs []result
	if err := json.Unmarshal(raw, &rs); err != nil {
		return provider.FailAll(msgs, provider.Errorf(notify.FailureUnknown, "decode batch response: %v", err), ex)
	}
	// The batch answer holds one result per message, in input order.
	out := make([]provider.Result, len(msgs))
	for i := range msgs {
		if i >= len(rs) {
			out[i] = provider.Result{Err: provider.Errorf(notify.FailureUnknown, "batch item %d: no result in response", i), Exchange: ex}
			continue
		}
		out[i] = p.result(rs[i], ex)
	}
	return out
}

func (p *Provider) result(r result, ex provider.Exchange) provider.Result {
	if r.ErrorCode != 0 {
		return provider.Result{Err: classifyCode(r.ErrorCode, r.Message), Exchange: ex}
	}
	if r.MessageID == "" {
		return provider.Result{Err: provider.Errorf(notify.FailureUnknown, "no MessageID in response"), Exchange: ex}
	}
	return provider.Result{MessageID: r.MessageID, Exchange: ex}
}

func (p *Provider) call(path string, body []byte) provider.Call {
	return provider.Call{
		Method: http.MethodPost,
		URL:    p.root + path,
		Header: http.Header{
			"X-Postmark-Server-Token": {p.cfg.APIKey},
			"Accept":                  {"application/json"},
			"Content-Type":            {"application/json"},
		},
		Body: body,
		// The body holds no credential (the token travels in a header).
		Logged: json.RawMessage(body),
	}
}

// marshal encodes without HTML escaping so that "Name <addr>" and HTML
// bodies go out as written.
func marshal(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, fmt.Errorf("marshal: %w", err)
	}
	return bytes.TrimRight(b.Bytes(), "\n"), nil
}
