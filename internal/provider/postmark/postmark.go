// Package postmark is the mailz_email adapter: Postmark's email API
// (PROVIDERS.md "mailz_email -> Postmark").
package postmark

import (
	"context"
	"encoding/json"
	"net/http"
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

// Config is the configJson of a mailz_email account.
type Config struct {
	// APIKey is the Postmark server token.
	APIKey string `json:"mailz_api_key"`
	// FromEmail is the sender address (a confirmed sender signature).
	FromEmail string `json:"mailz_from_email"`
	// FromName is the display name; DefaultFromName when empty.
	FromName string `json:"mailz_from_name"`
	// AccountToken is the account token only the identity API uses
	// (AccountTokenKey).
	AccountToken string `json:"mailz_account_token"`
	// Endpoint's base_url replaces the scheme and host of DefaultRoot.
	provider.Endpoint
}

var spec = provider.Spec[Config]{
	ID:       KindID,
	Channel:  notify.ChannelEmail,
	Required: []string{"mailz_api_key", "mailz_from_email"},
	Optional: []string{"mailz_from_name"},
	Batch:    provider.BatchDefaults{CallsPerSecond: 2, Window: 1000 * time.Millisecond, MaxSize: 100},
	Receipts: notify.ReceiptsPushed, // Delivery and Bounce webhooks on the callback endpoint (issue 35)
	Defaults: func(c *Config) {
		if c.FromName == "" {
			c.FromName = DefaultFromName
		}
	},
	New:              newProvider,
	IdentityRequired: []string{AccountTokenKey},
	Identities:       newIdentities,
}

// Kind describes mailz_email for the registry.
func Kind() provider.Kind { return spec.Kind() }

// Provider sends through one Postmark server.
type Provider struct {
	cfg  Config
	from string
	root string
	http *http.Client
}

// Interface guard.
var _ provider.Provider = (*Provider)(nil)

// newProvider builds a provider; a bad base_url is an invalid_request
// *provider.Error.
func newProvider(c Config, deps provider.Deps) (provider.Provider, error) {
	root, err := c.Root(DefaultRoot)
	if err != nil {
		return nil, err
	}
	return &Provider{cfg: c, from: provider.MailFrom(c.FromName, c.FromEmail), root: root, http: deps.HTTP}, nil
}

// email is one message of POST /email and of the /email/batch array.
type email struct {
	From          string                `json:"From"`
	To            string                `json:"To"`
	Subject       string                `json:"Subject"`
	TextBody      string                `json:"TextBody,omitempty"`
	HTMLBody      string                `json:"HtmlBody,omitempty"`
	Headers       []provider.MailHeader `json:"Headers,omitempty"`
	MessageStream string                `json:"MessageStream"`
}

func (p *Provider) email(m provider.Message) email {
	e := email{
		From:          p.from,
		To:            m.To,
		Subject:       m.Title,
		TextBody:      m.Text,
		HTMLBody:      m.HTML,
		Headers:       provider.MailHeaders(m.Headers),
		MessageStream: streamTransactional,
	}
	for k := range m.Headers {
		if strings.EqualFold(k, "List-Unsubscribe") {
			e.MessageStream = streamBroadcast
		}
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
// at most maxBatch per call.
func (p *Provider) Send(ctx context.Context, msgs []provider.Message) []provider.Result {
	return provider.SendChunks(ctx, msgs, maxBatch, p.sendOne, p.sendBatch)
}

func (p *Provider) sendOne(ctx context.Context, m provider.Message) provider.Result {
	body, err := provider.EncodeJSON(p.email(m))
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
	body, err := provider.EncodeJSON(items)
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
