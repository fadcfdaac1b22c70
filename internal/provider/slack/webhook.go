package slack

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"

	"github.com/notifyd/notifyd/internal/notify"
	"github.com/notifyd/notifyd/internal/provider"
)

var _ provider.Provider = (*webhookProvider)(nil)

// webhookProvider posts to one incoming-webhook URL; the URL is the
// credential, so it is used as is (base_url does not apply) and the
// attempt history shows it redacted (provider.Do).
type webhookProvider struct {
	url    string
	client *http.Client
}

func newWebhook(c WebhookConfig, deps provider.Deps) (provider.Provider, error) {
	u, err := provider.HTTPURL(keyWebhookURL, c.WebhookURL)
	if err != nil {
		return nil, err
	}
	return &webhookProvider{url: u.String(), client: deps.HTTP}, nil
}

type webhookPayload struct {
	Text string `json:"text"`
}

// Send makes one call per message: incoming webhooks have no batch API.
func (p *webhookProvider) Send(ctx context.Context, msgs []provider.Message) []provider.Result {
	return provider.SendEach(ctx, msgs, p.send)
}

func (p *webhookProvider) send(ctx context.Context, msg provider.Message) provider.Result {
	payload := webhookPayload{Text: text(msg)}
	if payload.Text == "" {
		return provider.Result{Err: provider.Errorf(notify.FailureInvalidRequest, "empty message text")}
	}
	body, err := json.Marshal(payload)
	if err != nil {
		return provider.Result{Err: provider.Errorf(notify.FailureInvalidRequest, "encode payload: %v", err)}
	}
	ex, raw, perr := provider.Do(ctx, p.client, provider.Call{
		Method:    http.MethodPost,
		URL:       p.url,
		Header:    http.Header{"Content-Type": {"application/json"}},
		Body:      body,
		Logged:    payload,
		SecretURL: true, // the path is the credential
	})
	if perr != nil {
		return provider.Result{Err: perr, Exchange: ex}
	}
	perr = webhookResult(status(ex), string(raw))
	if perr != nil {
		// The receiver's answer may echo the URL.
		perr.Message = provider.RedactIn(perr.Message, p.url)
	}
	return provider.Result{Err: perr, Exchange: ex}
}

// webhookResult classifies an answer that provider.Do left unclassified.
// Success is exactly HTTP 200 with body "ok"; incoming webhooks return no
// message id.
func webhookResult(status int, body string) *provider.Error {
	b := strings.TrimSpace(body)
	if status == http.StatusOK && b == "ok" {
		return nil
	}
	if code, ok := webhookErrors[b]; ok {
		return provider.Errorf(code, "HTTP %d: %s", status, b)
	}
	return provider.Errorf(provider.UnlistedStatus(status), "HTTP %d: %s", status, provider.Snippet([]byte(b), 300))
}
