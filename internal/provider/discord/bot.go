package discord

import (
	"context"
	"net/http"

	"github.com/notifyd/notifyd/internal/notify"
	"github.com/notifyd/notifyd/internal/provider"
)

var _ provider.Provider = (*botProvider)(nil)

// botProvider creates messages as a bot (Authorization: Bot <token>).
type botProvider struct {
	root   string
	token  string
	client *http.Client
}

func newBot(c BotConfig, deps provider.Deps) (provider.Provider, error) {
	root, err := c.Root(defaultRoot)
	if err != nil {
		return nil, err
	}
	return &botProvider{root: root, token: c.BotToken, client: deps.HTTP}, nil
}

// Send makes one call per message: Create Message has no batch form.
func (p *botProvider) Send(ctx context.Context, msgs []provider.Message) []provider.Result {
	return provider.SendEach(ctx, msgs, p.send)
}

func (p *botProvider) send(ctx context.Context, msg provider.Message) provider.Result {
	// The channel id goes into the URL path: accepting only a snowflake
	// keeps "../" and the like out of it. Discord itself rejects anything
	// else with 50035, which is invalid_request too.
	if !snowflake(msg.To) {
		return provider.Result{Err: provider.Errorf(notify.FailureInvalidRequest,
			"chatb_bot needs a channel id (snowflake) in recipient.address, got %q", msg.To)}
	}
	c, perr := content(msg)
	if perr != nil {
		return provider.Result{Err: perr}
	}
	pl := payload{Content: c}
	body, perr := encode(pl)
	if perr != nil {
		return provider.Result{Err: perr}
	}
	return send(ctx, p.client, provider.Call{
		Method: http.MethodPost,
		URL:    p.root + "/api/v10/channels/" + msg.To + "/messages",
		Header: http.Header{
			"Authorization": {"Bot " + p.token},
			"Content-Type":  {"application/json"},
		},
		Body:   body,
		Logged: pl, // the token travels only in the header
	})
}

// snowflake reports whether s is a Discord id: a decimal uint64.
func snowflake(s string) bool {
	if s == "" || len(s) > 20 {
		return false
	}
	for _, r := range s {
		if r < '0' || r > '9' {
			return false
		}
	}
	return true
}
