package slack

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"time"

	"github.com/notifyd/notifyd/internal/notify"
	"github.com/notifyd/notifyd/internal/provider"
)

var _ provider.Provider = (*botProvider)(nil)

// botProvider calls chat.postMessage with a bot token (xoxb-..., configured
// with its prefix and sent as a Bearer token).
type botProvider struct {
	endpoint string
	token    string
	client   *http.Client
}

func newBot(c BotConfig, deps provider.Deps) (provider.Provider, error) {
	root, err := c.Root(defaultRoot)
	if err != nil {
		return nil, err
	}
	return &botProvider{
		endpoint: root + "/api/chat.postMessage",
		token:    c.BotToken,
		client:   deps.HTTP,
	}, nil
}

type botPayload struct {
	Channel string `json:"channel"`
	Text    string `json:"text"`
}

type botAnswer struct {
	OK      bool   `json:"ok"`
	Error   string `json:"error"`
	Channel string `json:"channel"`
	TS      string `json:"ts"`
}

// Send makes one call per message: chat.postMessage has no batch form.
func (p *botProvider) Send(ctx context.Context, msgs []provider.Message) []provider.Result {
	return provider.SendEach(ctx, msgs, p.send)
}

func (p *botProvider) send(ctx context.Context, msg provider.Message) provider.Result {
	if strings.TrimSpace(msg.To) == "" {
		return provider.Result{Err: provider.Errorf(notify.FailureInvalidRequest, "chata_bot needs the target channel in recipient.address")}
	}
	payload := botPayload{Channel: msg.To, Text: text(msg)}
	if payload.Text == "" {
		return provider.Result{Err: provider.Errorf(notify.FailureInvalidRequest, "empty message text")}
	}
	body, err := json.Marshal(payload)
	if err != nil {
		return provider.Result{Err: provider.Errorf(notify.FailureInvalidRequest, "encode payload: %v", err)}
	}
	ex, raw, perr := provider.Do(ctx, p.client, provider.Call{
		Method: http.MethodPost,
		URL:    p.endpoint,
		Header: http.Header{
			"Authorization": {"Bearer " + p.token},
			"Content-Type":  {"application/json; charset=utf-8"},
		},
		Body:   body,
		Logged: payload, // the token travels only in the header
	})
	if perr != nil {
		return provider.Result{Err: perr, Exchange: ex}
	}
	id, perr := botResult(ex, raw, msg.To)
	return provider.Result{MessageID: id, Err: perr, Exchange: ex}
}

// botResult reads a chat.postMessage answer that provider.Do left
// unclassified. Failures come as HTTP 200 {"ok":false,"error":code}. The
// message id is channel:ts, since ts is unique only within its channel.
func botResult(ex provider.Exchange, raw []byte, to string) (string, *provider.Error) {
	st := status(ex)
	var a botAnswer
	if err := json.Unmarshal(raw, &a); err != nil {
		return "", provider.Errorf(provider.UnlistedStatus(st), "HTTP %d: unreadable answer: %s", st, provider.Snippet(raw, 300))
	}
	if a.OK && st >= 200 && st < 300 {
		ch := a.Channel
		if ch == "" {
			ch = to
		}
		return ch + ":" + a.TS, nil
	}
	code, ok := botErrors[a.Error]
	if !ok {
		code = provider.UnlistedStatus(st) // unknown for HTTP 200
	}
	e := provider.Errorf(code, "HTTP %d: %s", st, a.Error)
	if code == notify.FailureRateLimited {
		e.RetryAfter = retryAfter(ex)
	}
	return "", e
}

// retryAfter reads Retry-After (seconds) from a recorded answer, for a
// "ratelimited" body that came without HTTP 429.
func retryAfter(ex provider.Exchange) time.Duration {
	if ex.Response == nil {
		return 0
	}
	v := ex.Response.Headers["Retry-After"]
	if v == "" {
		return 0
	}
	h := http.Header{}
	h.Set("Retry-After", v)
	if e := provider.StatusError(http.StatusTooManyRequests, h, ""); e != nil {
		return e.RetryAfter
	}
	return 0
}
