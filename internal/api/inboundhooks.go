package api

import (
	"errors"
	"net/http"
	"strconv"
	"strings"

	"github.com/notifyd/notifyd/internal/inboundhooks"
	"github.com/notifyd/notifyd/internal/notify"
)

// inboundHooksAPI serves the inbound hooks (issue 36, item 3): their
// management on the Dashboard API (reads for every role, changes for
// admins and up, as webhooks and API keys, since a hook's token is a
// credential that sends) and the public receiving URLs, whose token is
// their only credential.
type inboundHooksAPI struct {
	*API
	room *inboundhooks.Service
}

// hooksPath is the receiving URLs' prefix; internal/redact hides the
// token that follows it.
const hooksPath = "/v1/hooks/"

func (a inboundHooksAPI) routes() []Route {
	all, admin := notify.RolesAll, notify.RolesAdmin
	routes := []Route{
		{Method: "GET", Path: "/v1/inbound-hooks", auth: authDashboard, Roles: all, h: a.handleList},
		{Method: "POST", Path: "/v1/inbound-hooks", auth: authDashboard, Roles: admin, h: a.handleCreate},
		{Method: "GET", Path: "/v1/inbound-hooks/{id}", auth: authDashboard, Roles: all, h: a.handleGet},
		{Method: "PATCH", Path: "/v1/inbound-hooks/{id}", auth: authDashboard, Roles: admin, h: a.handleUpdate},
		{Method: "DELETE", Path: "/v1/inbound-hooks/{id}", auth: authDashboard, Roles: admin, h: a.handleDelete},
		{Method: "POST", Path: "/v1/inbound-hooks/{id}/rotate-token", auth: authDashboard, Roles: admin, h: a.handleRotate},
		// The Apprise API's layout: its apprise:// URLs post to
		// <path>/notify/<key>.
		{Method: "POST", Path: hooksPath + "notify/{token}", auth: authPublic, ownBody: true, h: a.handleReceive},
	}
	// ntfy publishes with POST or PUT, to the topic (the token) or, when
	// a tool takes a server URL and a topic apart, to a topic below it.
	for _, m := range []string{"POST", "PUT"} {
		routes = append(routes,
			Route{Method: m, Path: hooksPath + "{token}", auth: authPublic, ownBody: true, h: a.handleReceive},
			Route{Method: m, Path: hooksPath + "{token}/{topic}", auth: authPublic, ownBody: true, h: a.handleReceive})
	}
	return routes
}

type inboundHookJSON struct {
	ID                 string   `json:"id"`
	Name               string   `json:"name"`
	Format             string   `json:"format"`
	Channel            string   `json:"channel"`
	Addresses          []string `json:"addresses"`
	RecipientIDs       []string `json:"recipientIds"`
	TemplateCode       *string  `json:"templateCode"`
	Category           *string  `json:"category"`
	RateLimitPerMinute int      `json:"rateLimitPerMinute"`
	Enabled            bool     `json:"enabled"`
	TokenRotatedAt     string   `json:"tokenRotatedAt"`
	CreatedAt          string   `json:"createdAt"`
	UpdatedAt          string   `json:"updatedAt"`
}

func inboundHookBody(h *notify.InboundHook) inboundHookJSON {
	return inboundHookJSON{ID: h.ID, Name: h.Name, Format: h.Format, Channel: string(h.Channel), Addresses: h.Addresses,
		RecipientIDs: h.RecipientIDs, TemplateCode: strOrNil(h.TemplateCode), Category: strOrNil(h.Category),
		RateLimitPerMinute: h.RateLimit, Enabled: h.Enabled, TokenRotatedAt: Timestamp(h.TokenRotatedAt),
		CreatedAt: Timestamp(h.CreatedAt), UpdatedAt: Timestamp(h.UpdatedAt)}
}

type inboundHookIn struct {
	Name               Optional[string]   `json:"name"`
	Format             Optional[string]   `json:"format"`
	Channel            Optional[string]   `json:"channel"`
	Addresses          Optional[[]string] `json:"addresses"`
	RecipientIDs       Optional[[]string] `json:"recipientIds"`
	TemplateCode       Optional[string]   `json:"templateCode"`
	Category           Optional[string]   `json:"category"`
	RateLimitPerMinute Optional[int]      `json:"rateLimitPerMinute"`
	Enabled            Optional[bool]     `json:"enabled"`
}

// set takes an optional field: absent stays nil; null is refused unless
// clears, when it is the empty value (templateCode, category).
func set[T any](o Optional[T], name, kind string, clears bool) (*T, error) {
	switch {
	case !o.Set:
		return nil, nil
	case o.Null && clears:
		var zero T
		return &zero, nil
	case o.Null:
		return nil, notify.Invalid("%s must be %s", name, kind)
	}
	v := o.Value
	return &v, nil
}

func (in inboundHookIn) input() (out inboundhooks.Input, err error) {
	if out.Name, err = set(in.Name, "name", "a string", false); err != nil {
		return out, err
	}
	if out.Format, err = set(in.Format, "format", "a string", false); err != nil {
		return out, err
	}
	if out.Channel, err = set(in.Channel, "channel", "a string", false); err != nil {
		return out, err
	}
	if out.Addresses, err = set(in.Addresses, "addresses", "an array", false); err != nil {
		return out, err
	}
	if out.RecipientIDs, err = set(in.RecipientIDs, "recipientIds", "an array", false); err != nil {
		return out, err
	}
	if out.TemplateCode, err = set(in.TemplateCode, "templateCode", "a string", true); err != nil {
		return out, err
	}
	if out.Category, err = set(in.Category, "category", "a string", true); err != nil {
		return out, err
	}
	if out.RateLimit, err = set(in.RateLimitPerMinute, "rateLimitPerMinute", "an integer", false); err != nil {
		return out, err
	}
	out.Enabled, err = set(in.Enabled, "enabled", "a boolean", false)
	return out, err
}

// withToken is a hook with its token and receiving URL, shown once.
func (a inboundHooksAPI) withToken(w *inboundhooks.WithToken) map[string]any {
	return map[string]any{"inboundHook": inboundHookBody(w.Hook), "token": w.Token, "url": a.baseURL + hooksPath + w.Token}
}

func (a inboundHooksAPI) decodeInput(c *call) (inboundhooks.Input, error) {
	var in inboundHookIn
	if err := c.decode(&in); err != nil {
		return inboundhooks.Input{}, err
	}
	return in.input()
}

func (a inboundHooksAPI) handleCreate(c *call) error {
	in, err := a.decodeInput(c)
	if err != nil {
		return err
	}
	w, err := a.room.Create(c.ctx, c.actor, in)
	if err != nil {
		return err
	}
	return c.ok(http.StatusCreated, a.withToken(w))
}

func (a inboundHooksAPI) handleList(c *call) error {
	hs, err := a.room.List(c.ctx, c.actor)
	if err != nil {
		return err
	}
	out := make([]inboundHookJSON, len(hs))
	for i, h := range hs {
		out[i] = inboundHookBody(h)
	}
	return c.ok(http.StatusOK, map[string]any{"inboundHooks": out})
}

func (a inboundHooksAPI) handleGet(c *call) error {
	h, err := a.room.Get(c.ctx, c.actor, c.r.PathValue("id"))
	if err != nil {
		return err
	}
	return c.ok(http.StatusOK, map[string]any{"inboundHook": inboundHookBody(h)})
}

func (a inboundHooksAPI) handleUpdate(c *call) error {
	in, err := a.decodeInput(c)
	if err != nil {
		return err
	}
	h, err := a.room.Update(c.ctx, c.actor, c.r.PathValue("id"), in)
	if err != nil {
		return err
	}
	return c.ok(http.StatusOK, map[string]any{"inboundHook": inboundHookBody(h)})
}

func (a inboundHooksAPI) handleDelete(c *call) error {
	if err := decodeNone(c.body); err != nil {
		return err
	}
	if err := a.room.Delete(c.ctx, c.actor, c.r.PathValue("id")); err != nil {
		return err
	}
	return c.noContent()
}

func (a inboundHooksAPI) handleRotate(c *call) error {
	if err := decodeNone(c.body); err != nil {
		return err
	}
	w, err := a.room.Rotate(c.ctx, c.actor, c.r.PathValue("id"))
	if err != nil {
		return err
	}
	return c.ok(http.StatusOK, a.withToken(w))
}

// handleReceive takes a payload on a hook's URL. A token that finds no
// enabled hook answers exactly as a path no route takes. The answer is
// what each tool expects: Slack's "ok", an ntfy message object, or the
// accepted request ids.
func (a inboundHooksAPI) handleReceive(c *call) error {
	r := c.r
	res, err := a.room.Receive(c.ctx, inboundhooks.Delivery{
		Token: r.PathValue("token"),
		Payload: inboundhooks.Payload{ContentType: r.Header.Get("Content-Type"), Header: r.Header.Get, Query: r.URL.Query(),
			Topic: r.PathValue("topic")},
		ReadBody: func() ([]byte, error) {
			err := c.readBody(maxNotificationBody)
			return c.body, err
		},
	})
	if errors.Is(err, inboundhooks.ErrUnknownHook) {
		return noRoute(r)
	}
	if err != nil {
		return err
	}
	switch res.Format {
	case notify.HookSlack:
		c.w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		c.w.Header().Set("Cache-Control", "no-store")
		c.w.WriteHeader(http.StatusOK)
		_, _ = c.w.Write([]byte("ok"))
		return nil
	case notify.HookNtfy:
		m := res.Message
		prio, _ := strconv.Atoi(m.Vars["priority"])
		out := map[string]any{"id": firstID(res.RequestIDs), "time": a.now().Unix(), "event": "message", "topic": r.PathValue("topic"),
			"message": m.Text, "priority": prio, "requestIds": res.RequestIDs}
		if m.Title != "" {
			out["title"] = m.Title
		}
		if t := m.Meta["tags"]; t != "" {
			out["tags"] = strings.Split(t, ",")
		}
		return c.ok(http.StatusOK, out)
	}
	return c.ok(http.StatusOK, map[string]any{"accepted": len(res.RequestIDs), "requestIds": res.RequestIDs})
}

func firstID(ids []string) string {
	if len(ids) == 0 {
		return ""
	}
	return ids[0]
}
