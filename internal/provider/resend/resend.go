// Package resend is the mailx_email adapter: Resend's REST API
// (PROVIDERS.md "mailx_email -> Resend").
package resend

import (
	"context"
	"encoding/json"
	"net/http"
	"time"

	"github.com/notifyd/notifyd/internal/notify"
	"github.com/notifyd/notifyd/internal/provider"
)

// KindID is the providerKind this package implements.
const KindID = "mailx_email"

// DefaultRoot is Resend's API root; configJson base_url replaces it.
const DefaultRoot = "https://api.resend.com"

// Config is the configJson of a mailx_email account.
type Config struct {
	// APIKey is the Resend API key (re_...), sent as a bearer token.
	APIKey string `json:"mailx_api_key"`
	// FromEmail is Resend's one-string from: a bare address or "Name <addr>".
	FromEmail string `json:"mailx_from_email"`
	// Endpoint's base_url replaces the scheme and host of DefaultRoot.
	provider.Endpoint
}

var spec = provider.Spec[Config]{
	ID:         KindID,
	Channel:    notify.ChannelEmail,
	Required:   []string{"mailx_api_key", "mailx_from_email"},
	Batch:      provider.BatchDefaults{CallsPerSecond: 2, Window: 750 * time.Millisecond, MaxSize: 100},
	Receipts:   notify.ReceiptsPushed, // email.delivered and bounces on the callback endpoint (issue 35)
	Idempotent: true,                  // Idempotency-Key
	New:        newProvider,
	Identities: newIdentities,
}

// Kind describes mailx_email for the registry.
func Kind() provider.Kind { return spec.Kind() }

// Provider sends through one Resend account.
type Provider struct {
	cfg  Config
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
	return &Provider{cfg: c, root: root, http: deps.HTTP}, nil
}

// email is one item of POST /emails and of the /emails/batch array.
type email struct {
	From    string            `json:"from"`
	To      []string          `json:"to"`
	Subject string            `json:"subject"`
	Text    string            `json:"text,omitempty"`
	HTML    string            `json:"html,omitempty"`
	Headers map[string]string `json:"headers,omitempty"`
}

func (p *Provider) email(m provider.Message) email {
	return email{
		From:    p.cfg.FromEmail,
		To:      []string{m.To},
		Subject: m.Title,
		Text:    m.Text,
		HTML:    m.HTML,
		Headers: m.Headers,
	}
}

// maxBatch is the most emails /emails/batch takes in one call.
const maxBatch = 100

// Send uses POST /emails for one message and POST /emails/batch for more,
// at most maxBatch per call.
func (p *Provider) Send(ctx context.Context, msgs []provider.Message) []provider.Result {
	return provider.SendChunks(ctx, msgs, maxBatch, p.sendOne, p.sendBatch)
}

func (p *Provider) sendOne(ctx context.Context, m provider.Message) provider.Result {
	body, err := provider.EncodeJSON(p.email(m))
	if err != nil {
		return provider.Result{Err: provider.Errorf(notify.FailureInvalidRequest, "encode request: %v", err)}
	}
	var extra http.Header
	if m.IdempotencyKey != "" {
		// Resend keeps a key 24 h: a repeat after a crash is not sent twice.
		extra = http.Header{"Idempotency-Key": {m.IdempotencyKey}}
	}
	ex, raw, perr := provider.Do(ctx, p.http, p.call("/emails", body, extra))
	if e := classify(ex, raw, perr); e != nil {
		return provider.Result{Err: e, Exchange: ex}
	}
	var out struct {
		ID string `json:"id"`
	}
	if json.Unmarshal(raw, &out) != nil || out.ID == "" {
		return provider.Result{Err: provider.Errorf(notify.FailureUnknown, "HTTP %d without an email id", ex.Response.HTTPStatus), Exchange: ex}
	}
	return provider.Result{MessageID: out.ID, Exchange: ex}
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
	// Permissive mode sends the valid items and reports the others by
	// index, so one bad address does not fail the whole batch.
	h := http.Header{"X-Batch-Validation": {"permissive"}}
	ex, raw, perr := provider.Do(ctx, p.http, p.call("/emails/batch", body, h))
	if e := classify(ex, raw, perr); e != nil {
		return provider.FailAll(msgs, e, ex)
	}
	var out struct {
		Data []struct {
			ID string `json:"id"`
		} `json:"data"`
		Errors []struct {
			Index   int    `json:"index"`
			Message string `json:"message"`
		} `json:"errors"`
	}
	if err := json.Unmarshal(raw, &out); err != nil {
		return provider.FailAll(msgs, provider.Errorf(notify.FailureUnknown, "decode batch response: %v", err), ex)
	}
	res := make([]provider.Result, len(msgs))
	failed := make(map[int]bool, len(out.Errors))
	for _, e := range out.Errors {
		if e.Index >= 0 && e.Index < len(msgs) {
			failed[e.Index] = true
			res[e.Index] = provider.Result{Err: provider.Errorf(notify.FailureInvalidRequest, "batch item %d: %s", e.Index, e.Message), Exchange: ex}
		}
	}
	// data lists the accepted emails in input order, without the failed
	// ones; should it ever hold one entry per input, index it directly.
	direct := len(out.Data) == len(msgs)
	next := 0
	for i := range msgs {
		if failed[i] {
			continue
		}
		j := i
		if !direct {
			j = next
			next++
		}
		if j >= len(out.Data) || out.Data[j].ID == "" {
			res[i] = provider.Result{Err: provider.Errorf(notify.FailureUnknown, "batch item %d: no email id in response", i), Exchange: ex}
			continue
		}
		res[i] = provider.Result{MessageID: out.Data[j].ID, Exchange: ex}
	}
	return res
}

func (p *Provider) call(path string, body []byte, extra http.Header) provider.Call {
	h := http.Header{
		"Authorization": {"Bearer " + p.cfg.APIKey},
		"Content-Type":  {"application/json"},
		"Accept":        {"application/json"},
	}
	for k, v := range extra {
		h[k] = v
	}
	return provider.Call{
		Method: http.MethodPost,
		URL:    p.root + path,
		Header: h,
		Body:   body,
		// The body holds no credential (the key travels in a header).
		Logged: json.RawMessage(body),
	}
}
