package api

import (
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/notifyd/notifyd/internal/inbox"
	"github.com/notifyd/notifyd/internal/notify"
)

// inboxAPI serves the in-app inbox (issue 33): /v1/inbox for the
// recipient's browser or app, authenticated by a recipient token and
// open to the workspace's allowed origins (CORS); the workspace's inbox
// settings on the Dashboard API; token minting on both APIs.
type inboxAPI struct {
	*API
	room *inbox.Service
}

func (a inboxAPI) routes() []Route {
	all, op, admin := notify.RolesAll, notify.RolesOperator, notify.RolesAdmin
	recipient := []Route{
		{Method: "GET", Path: "/v1/inbox/messages", auth: authRecipient, h: a.handleList},
		{Method: "GET", Path: "/v1/inbox/counts", auth: authRecipient, h: a.handleCounts},
		{Method: "POST", Path: "/v1/inbox/messages/{id}/{op}", auth: authRecipient, h: a.handleChange},
		{Method: "DELETE", Path: "/v1/inbox/messages/{id}", auth: authRecipient, h: a.handleDelete},
		{Method: "POST", Path: "/v1/inbox/{op}", auth: authRecipient, h: a.handleChangeAll},
		{Method: "GET", Path: "/v1/inbox/stream", auth: authRecipient, h: a.handleStream},
	}
	// Each recipient path answers a browser's CORS preflight.
	out := recipient
	for _, rt := range recipient {
		if !slices.ContainsFunc(out, func(o Route) bool { return o.Method == "OPTIONS" && o.Path == rt.Path }) {
			out = append(out, Route{Method: "OPTIONS", Path: rt.Path, auth: authPublic, h: a.handlePreflight})
		}
	}
	return append(out, []Route{
		{Method: "GET", Path: "/v1/inbox-settings", auth: authDashboard, Roles: all, h: a.handleSettings},
		{Method: "PUT", Path: "/v1/inbox-settings", auth: authDashboard, Roles: admin, h: a.handleSettingsPut},
		{Method: "POST", Path: "/v1/inbox-settings/rotate-secret", auth: authDashboard, Roles: admin, h: a.handleRotate},
		{Method: "POST", Path: "/v1/recipients/{externalId}/inbox-token", auth: authEither, Roles: op,
			Scope: notify.ScopeRecipientsWrite, h: a.handleMint},
	}...)
}

// recipientToken is the token of a recipient route: the Authorization
// header's bearer token, or the token query parameter (an EventSource
// cannot set headers). Neither is ever logged or echoed.
func recipientToken(r *http.Request) (string, bool) {
	if h := r.Header.Get("Authorization"); h != "" {
		return bearer(h)
	}
	t := r.URL.Query().Get("token")
	return t, t != ""
}

// authenticateRecipient checks a recipient route's token and its
// request's origin: a browser (Origin set) must be at an origin the
// workspace allows, and is then told so (CORS); a caller without Origin
// (a server, a mobile app) is not a browser and needs no origin.
func (a *API) authenticateRecipient(c *call) error {
	token, ok := recipientToken(c.r)
	if !ok {
		return notify.Unauthorized("Missing recipient token: give it as a bearer token or the token query parameter")
	}
	if !inbox.IsRecipientToken(token) {
		// A credential of another kind (a dashboard session): the caller
		// may be authenticated, but not as a recipient.
		return notify.Forbidden("Inbox routes take a recipient token (POST /v1/recipients/{externalId}/inbox-token), not a dashboard token")
	}
	acc, err := a.rooms.Inbox.Authenticate(c.ctx, token)
	if err != nil {
		return err
	}
	if origin := c.r.Header.Get("Origin"); origin != "" {
		if !inbox.Allowed(acc.Origins, origin) {
			return notify.Forbidden("This origin is not allowed to call the inbox of this workspace")
		}
		h := c.w.Header()
		h.Set("Access-Control-Allow-Origin", origin)
		h.Add("Vary", "Origin")
	}
	c.reader = &acc.Reader
	return nil
}

// handlePreflight answers a browser's CORS preflight of a recipient
// route. A preflight carries no token, so its workspace is not known:
// it is let through, and the request itself is checked against the
// workspace's origins (authenticateRecipient), which no browser lets a
// page read or send credentials past without.
func (a inboxAPI) handlePreflight(c *call) error {
	h := c.w.Header()
	if origin := c.r.Header.Get("Origin"); origin != "" {
		h.Set("Access-Control-Allow-Origin", origin)
		h.Add("Vary", "Origin")
	}
	h.Set("Access-Control-Allow-Methods", "GET, POST, DELETE")
	h.Set("Access-Control-Allow-Headers", "Authorization, Content-Type, Last-Event-ID")
	h.Set("Access-Control-Max-Age", "600")
	return c.noContent()
}

// inboxMessageJSON is a message as the inbox API shows it.
type inboxMessageJSON struct {
	ID         string         `json:"id"`
	RequestID  string         `json:"requestId"`
	Category   *string        `json:"category"`
	Title      *string        `json:"title"`
	Body       string         `json:"body"`
	ActionURL  *string        `json:"actionUrl"`
	Data       map[string]any `json:"data"`
	CreatedAt  string         `json:"createdAt"`
	ReadAt     *string        `json:"readAt"`
	SeenAt     *string        `json:"seenAt"`
	ArchivedAt *string        `json:"archivedAt"`
}

func inboxMessageBody(m *notify.InboxMessage) inboxMessageJSON {
	return inboxMessageJSON{ID: m.ID, RequestID: m.RequestID, Category: strOrNil(m.Category), Title: strOrNil(m.Title), Body: m.Body,
		ActionURL: strOrNil(m.ActionURL), Data: m.Data, CreatedAt: Timestamp(m.CreatedAt), ReadAt: TimestampPtr(m.ReadAt),
		SeenAt: TimestampPtr(m.SeenAt), ArchivedAt: TimestampPtr(m.ArchivedAt)}
}

func inboxCountsBody(c notify.InboxCounts) map[string]int {
	return map[string]int{"unread": c.Unread, "unseen": c.Unseen}
}

// boolParam reads a query flag: absent, "true" or "false".
func boolParam(v, name string) (bool, error) {
	switch v {
	case "", "false":
		return false, nil
	case "true":
		return true, nil
	}
	return false, notify.Invalid("%s must be true or false", name)
}

func (a inboxAPI) handleList(c *call) error {
	q := c.r.URL.Query()
	var f notify.InboxFilter
	var err error
	for _, p := range []struct {
		name string
		dst  *bool
	}{{"unread", &f.Unread}, {"unseen", &f.Unseen}, {"archived", &f.Archived}} {
		if *p.dst, err = boolParam(q.Get(p.name), p.name); err != nil {
			return err
		}
	}
	if f.Limit, err = intParam(q.Get("limit"), "limit"); err != nil {
		return err
	}
	if f.Before, err = decodeCursor(q.Get("cursor")); err != nil {
		return err
	}
	f.Category = q.Get("category")
	p, err := a.room.List(c.ctx, *c.reader, f)
	if err != nil {
		return err
	}
	out := make([]inboxMessageJSON, len(p.Messages))
	for i, m := range p.Messages {
		out[i] = inboxMessageBody(m)
	}
	return c.ok(http.StatusOK, map[string]any{"messages": out, "counts": inboxCountsBody(p.Counts),
		"cursor": encodeCursor(p.Next), "hasNext": p.Next != nil})
}

func (a inboxAPI) handleCounts(c *call) error {
	n, err := a.room.Counts(c.ctx, *c.reader)
	if err != nil {
		return err
	}
	return c.ok(http.StatusOK, map[string]any{"counts": inboxCountsBody(n)})
}

// inboxOps are the changes of one message by their path segment.
var inboxOps = map[string]notify.InboxOp{"read": notify.InboxRead, "seen": notify.InboxSeen, "archive": notify.InboxArchive,
	"unarchive": notify.InboxUnarchive}

// inboxAllOps are the changes of every message: POST /v1/inbox/{op}.
var inboxAllOps = map[string]notify.InboxOp{"read-all": notify.InboxRead, "seen-all": notify.InboxSeen,
	"archive-all": notify.InboxArchive}

func (a inboxAPI) change(c *call, op notify.InboxOp, id string) error {
	if err := decodeNone(c.body); err != nil {
		return err
	}
	n, err := a.room.Change(c.ctx, *c.reader, op, id)
	if err != nil {
		return err
	}
	return c.ok(http.StatusOK, map[string]any{"counts": inboxCountsBody(n)})
}

func (a inboxAPI) handleChange(c *call) error {
	op, ok := inboxOps[c.r.PathValue("op")]
	if !ok {
		return notify.Errorf(notify.CodeNotFound, "No route matches %s %s", c.r.Method, c.r.URL.Path)
	}
	return a.change(c, op, c.r.PathValue("id"))
}

func (a inboxAPI) handleChangeAll(c *call) error {
	op, ok := inboxAllOps[c.r.PathValue("op")]
	if !ok {
		return notify.Errorf(notify.CodeNotFound, "No route matches %s %s", c.r.Method, c.r.URL.Path)
	}
	return a.change(c, op, "")
}

func (a inboxAPI) handleDelete(c *call) error {
	if _, err := a.room.Change(c.ctx, *c.reader, notify.InboxDelete, c.r.PathValue("id")); err != nil {
		return err
	}
	return c.noContent()
}

func inboxSettingsBody(s *notify.InboxSettings) map[string]any {
	var at *string
	if !s.UpdatedAt.IsZero() {
		at = TimestampPtr(&s.UpdatedAt)
	}
	return map[string]any{"allowedOrigins": s.AllowedOrigins, "secretSet": s.SecretSealed != "", "updatedAt": at}
}

func (a inboxAPI) handleSettings(c *call) error {
	s, err := a.room.Settings(c.ctx, c.actor)
	if err != nil {
		return err
	}
	return c.ok(http.StatusOK, map[string]any{"inboxSettings": inboxSettingsBody(s)})
}

func (a inboxAPI) handleSettingsPut(c *call) error {
	var b struct {
		AllowedOrigins *[]string `json:"allowedOrigins"`
	}
	if err := c.decode(&b); err != nil {
		return err
	}
	if b.AllowedOrigins == nil {
		return notify.Invalid("allowedOrigins is required")
	}
	s, err := a.room.PutOrigins(c.ctx, c.actor, *b.AllowedOrigins)
	if err != nil {
		return err
	}
	return c.ok(http.StatusOK, map[string]any{"inboxSettings": inboxSettingsBody(s)})
}

func (a inboxAPI) handleRotate(c *call) error {
	if err := decodeNone(c.body); err != nil {
		return err
	}
	s, err := a.room.RotateSecret(c.ctx, c.actor)
	if err != nil {
		return err
	}
	return c.ok(http.StatusOK, map[string]any{"secret": s})
}

func (a inboxAPI) handleMint(c *call) error {
	var b struct {
		TTLSeconds int `json:"ttlSeconds"`
	}
	if len(strings.TrimSpace(string(c.body))) > 0 {
		if err := c.decode(&b); err != nil {
			return err
		}
	}
	tok, exp, err := a.room.MintToken(c.ctx, c.caller(), c.r.PathValue("externalId"), time.Duration(b.TTLSeconds)*time.Second)
	if err != nil {
		return err
	}
	return c.ok(http.StatusOK, map[string]any{"token": tok, "expiresAt": Timestamp(exp)})
}
