package discord

import (
	"context"
	"net/http"

	"github.com/notifyd/notifyd/internal/provider"
)

var _ provider.Provider = (*webhookProvider)(nil)

// webhookProvider executes one webhook; the URL is the credential, so it
// is used as is (base_url does not apply) and shown redacted in the attempt
// history (provider.Do).
type webhookProvider struct {
	url    string
	client *http.Client
}

func newWebhook(c WebhookConfig, deps provider.Deps) (provider.Provider, error) {
	u, err := provider.HTTPURL(keyWebhookURL, c.WebhookURL)
	if err != nil {
		return nil, err
	}
	// wait=true makes Discord answer 200 with the message (and its id)
	// instead of 204; other parameters such as thread_id are kept.
	q := u.Query()
	q.Set("wait", "true")
	u.RawQuery = q.Encode()
	u.Fragment = ""
	return &webhookProvider{url: u.String(), client: deps.HTTP}, nil
}

// Send makes one call per message: webhooks have no batch API.
func (p *webhookProvider) Send(ctx context.Context, msgs []provider.Message) []provider.Result {
	return provider.SendEach(ctx, msgs, p.send)
}

func (p *webhookProvider) send(ctx context.Context, msg provider.Message) provider.Result {
	c, perr := content(msg)
	if perr != nil {
		return provider.Result{Err: perr}
	}
	pl := payload{Content: c}
	body, perr := encode(pl)
	if perr != nil {
		return provider.Result{Err: perr}
	}
	res := send(ctx, p.client, provider.Call{
		Method:    http.MethodPost,
		URL:       p.url,
		Header:    http.Header{"Content-Type": {"application/json"}},
		Body:      body,
		Logged:    pl,
		SecretURL: true, // the path is the credential
	})
	if res.Err != nil {
		// The receiver's answer may echo the URL.
		res.Err.Message = provider.RedactIn(res.Err.Message, p.url)
	}
	return res
}
