package inboundhooks

import (
	"context"
	"crypto/subtle"
	"errors"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/notifyd/notifyd/internal/compose"
	"github.com/notifyd/notifyd/internal/gate"
	"github.com/notifyd/notifyd/internal/notify"
	"github.com/notifyd/notifyd/internal/secret"
)

// ErrUnknownHook answers a token that finds no enabled hook: malformed,
// wrong, rotated away, of a deleted or a disabled hook alike. The API
// answers it as it answers a path no route takes, so a caller cannot tell
// a hook exists.
var ErrUnknownHook = errors.New("unknown inbound hook")

// Delivery is one request to a hook's URL. ReadBody is called once the
// token has found its hook and the hook's limit has admitted the
// request, so an unknown caller cannot make the server read a body.
type Delivery struct {
	Token    string
	Payload  Payload
	ReadBody func() ([]byte, error)
}

// Received is what a delivery became.
type Received struct {
	Format     string
	Message    *Message
	RequestIDs []string
}

// rateWindowSeconds is the window of a hook's limit (per minute).
const rateWindowSeconds = 60

// Receive authenticates a delivery by its token, applies the hook's
// limit (429 with Retry-After), reads the payload in the hook's format
// (400 when it is not one) and hands its sends to the sends room.
func (s *Service) Receive(ctx context.Context, d Delivery) (*Received, error) {
	h, err := s.admit(ctx, d.Token)
	if err != nil {
		return nil, err
	}
	body, err := d.ReadBody()
	if err != nil {
		return nil, err
	}
	d.Payload.Body = body
	m, err := Parse(h.Format, d.Payload)
	if err != nil {
		return nil, err
	}
	sends, err := sendsOf(h, m)
	if err != nil {
		return nil, err
	}
	ids, err := s.accept.AcceptInbound(ctx, h.WorkspaceID, sends)
	if err != nil {
		return nil, err
	}
	return &Received{Format: h.Format, Message: m, RequestIDs: ids}, nil
}

// admit finds the enabled hook of token and counts the request toward
// its limit. The lookup is a read, so unknown tokens never take the
// writer; the token's hash is compared again in constant time.
func (s *Service) admit(ctx context.Context, token string) (*notify.InboundHook, error) {
	if !wellFormed(token) {
		return nil, ErrUnknownHook
	}
	hash := secret.HashToken(token)
	var h *notify.InboundHook
	err := s.Store.Lookup(ctx, func(tx notify.Tx) (err error) {
		h, err = tx.FindInboundHookByToken(ctx, hash)
		return err
	})
	if notify.IsNotFound(err) {
		return nil, ErrUnknownHook
	}
	if err != nil {
		return nil, err
	}
	if subtle.ConstantTimeCompare([]byte(h.TokenHash), []byte(hash)) != 1 || !h.Enabled {
		return nil, ErrUnknownHook
	}
	now := s.Now()
	err = s.Store.Update(ctx, func(tx notify.Tx) error {
		return gate.CountWindow(ctx, tx, "h:"+h.ID, rateWindowSeconds, h.RateLimit, now,
			"Inbound hook rate limit exceeded: at most "+strconv.Itoa(h.RateLimit)+" requests per minute")
	})
	if s.gate != nil {
		s.gate.SweepCounters(ctx)
	}
	return h, err
}

// sendsOf makes the sends of a message: one per recipient of the hook.
// With a template the message's variables fill it; without, the text is
// the message's, and its title is the subject on email and push (the
// hook's name when the payload has none) or the first line elsewhere.
func sendsOf(h *notify.InboundHook, m *Message) ([]Send, error) {
	meta := map[string]string{"hookId": h.ID, "hookFormat": h.Format}
	for k, v := range m.Meta {
		meta[k] = truncate(v, compose.MaxMetadataValue)
	}
	base := Send{Channel: h.Channel, Category: h.Category, Metadata: meta}
	if h.TemplateCode != "" {
		base.TemplateCode, base.Variables = h.TemplateCode, boundedVars(h, m.Vars)
	} else {
		title, text := truncate(m.Title, compose.MaxContentTitle), strings.TrimSpace(m.Text)
		switch h.Channel {
		case notify.ChannelEmail, notify.ChannelPush:
			if title == "" {
				title = h.Name
			}
			base.Title = &title
		default:
			if title != "" && !strings.HasPrefix(text, title) {
				text = strings.TrimSpace(title + "\n" + text)
			}
		}
		if text == "" {
			return nil, notify.Invalid("The payload holds no message text")
		}
		text = truncate(text, compose.MaxContentText)
		base.Text = &text
	}
	var out []Send
	for _, a := range h.Addresses {
		s := base
		s.Address = a
		out = append(out, s)
	}
	for _, id := range h.RecipientIDs {
		s := base
		s.RecipientID = id
		out = append(out, s)
	}
	if len(out) == 0 { // a chat webhook channel: the label names the hook
		s := base
		s.Address = "hook:" + h.Name
		out = append(out, s)
	}
	return out, nil
}

// boundedVars are the message's variables within a send's bounds, with
// hookName added.
func boundedVars(h *notify.InboundHook, vars map[string]string) map[string]string {
	out := make(map[string]string, len(vars)+1)
	for k, v := range vars {
		if len(k) > compose.MaxTemplateVariableName || len(out) >= compose.MaxTemplateVariables-1 {
			continue
		}
		out[k] = truncate(v, compose.MaxTemplateVariableValue)
	}
	out["hookName"] = h.Name
	return out
}

// truncate cuts s to n characters, ending it with "…" when cut.
func truncate(s string, n int) string {
	if len(s) <= n || utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	return string(r[:n-1]) + "…"
}
