package api

import (
	"net/http"

	"github.com/notifyd/notifyd/internal/notify"
	"github.com/notifyd/notifyd/internal/providers"
)

// providersAPI are the handlers of the providers room: accounts, routes
// and test-sends.
type providersAPI struct {
	*API
	room *providers.Service
}

func (a providersAPI) routes() []Route {
	all, op := notify.RolesAll, notify.RolesOperator
	return []Route{
		{Method: "POST", Path: "/v1/providers", auth: authDashboard, Roles: op, h: a.handleProviderCreate},
		{Method: "GET", Path: "/v1/providers", auth: authDashboard, Roles: all, h: a.handleProviderList},
		{Method: "GET", Path: "/v1/providers/{id}", auth: authDashboard, Roles: all, h: a.handleProviderGet},
		{Method: "PATCH", Path: "/v1/providers/{id}", auth: authDashboard, Roles: op, h: a.handleProviderUpdate},
		{Method: "GET", Path: "/v1/routes", auth: authDashboard, Roles: all, h: a.handleRouteList},
		{Method: "PUT", Path: "/v1/routes", auth: authDashboard, Roles: op, h: a.handleRouteReplace},
		{Method: "POST", Path: "/v1/providers/{id}/test-send", auth: authDashboard, Roles: op, h: a.handleTestSend},
	}
}

type providerJSON struct {
	ID           string         `json:"id"`
	ProviderKind string         `json:"providerKind"`
	Channel      notify.Channel `json:"channel"`
	DisplayName  string         `json:"displayName"`
	Enabled      bool           `json:"enabled"`
	CreatedAt    string         `json:"createdAt"`
	UpdatedAt    string         `json:"updatedAt"`
	Quota        *notify.Quota  `json:"quota,omitempty"`
}

func providerBody(v *providers.ProviderView) providerJSON {
	p := v.Account
	return providerJSON{ID: p.ID, ProviderKind: p.ProviderKind, Channel: p.Channel, DisplayName: p.DisplayName, Enabled: p.Enabled,
		CreatedAt: Timestamp(p.CreatedAt), UpdatedAt: Timestamp(p.UpdatedAt), Quota: v.Quota}
}

type providerIn struct {
	ProviderKind Optional[string]         `json:"providerKind"`
	DisplayName  Optional[string]         `json:"displayName"`
	ConfigJSON   Optional[map[string]any] `json:"configJson"`
	Enabled      Optional[bool]           `json:"enabled"`
}

func (in providerIn) input() (providers.ProviderInput, error) {
	var out providers.ProviderInput
	out.ProviderKind = in.ProviderKind.Value
	if in.DisplayName.Set {
		if in.DisplayName.Null {
			return out, notify.Invalid("displayName must be a string")
		}
		out.DisplayName = &in.DisplayName.Value
	}
	if in.Enabled.Set {
		if in.Enabled.Null {
			return out, notify.Invalid("enabled must be a boolean")
		}
		out.Enabled = &in.Enabled.Value
	}
	if in.ConfigJSON.Set {
		if in.ConfigJSON.Null {
			return out, notify.Invalid("configJson must be an object")
		}
		cfg, err := providers.ProviderConfig(in.ConfigJSON.Value)
		if err != nil {
			return out, err
		}
		out.ConfigJSON, out.SetConfig = cfg, true
	}
	return out, nil
}

func (a providersAPI) handleProviderCreate(c *call) error {
	var in providerIn
	if err := c.decode(&in); err != nil {
		return err
	}
	if !in.ProviderKind.Set || in.ProviderKind.Null || in.ProviderKind.Value == "" {
		return notify.Invalid("providerKind is required")
	}
	input, err := in.input()
	if err != nil {
		return err
	}
	p, err := a.room.CreateProvider(c.ctx, c.actor, input)
	if err != nil {
		return err
	}
	a.warnSender(c, p.ID)
	return c.ok(http.StatusCreated, map[string]any{"provider": map[string]any{
		"id": p.ID, "providerKind": p.ProviderKind, "displayName": p.DisplayName, "enabled": p.Enabled}})
}

func (a providersAPI) handleProviderList(c *call) error {
	vs, err := a.room.ListProviders(c.ctx, c.actor)
	if err != nil {
		return err
	}
	out := make([]providerJSON, len(vs))
	for i, v := range vs {
		out[i] = providerBody(v)
	}
	return c.ok(http.StatusOK, map[string]any{"providers": out})
}

func (a providersAPI) handleProviderGet(c *call) error {
	v, err := a.room.GetProvider(c.ctx, c.actor, c.r.PathValue("id"))
	if err != nil {
		return err
	}
	return c.ok(http.StatusOK, map[string]any{"provider": providerBody(v)})
}

func (a providersAPI) handleProviderUpdate(c *call) error {
	var in providerIn
	if err := c.decode(&in); err != nil {
		return err
	}
	if in.ProviderKind.Set {
		return notify.Invalid("providerKind cannot be changed")
	}
	input, err := in.input()
	if err != nil {
		return err
	}
	p, err := a.room.UpdateProvider(c.ctx, c.actor, c.r.PathValue("id"), input)
	if err != nil {
		return err
	}
	return c.ok(http.StatusOK, map[string]any{"provider": providerBody(&providers.ProviderView{Account: p})})
}

type routeJSON struct {
	ID                string         `json:"id"`
	Channel           notify.Channel `json:"channel"`
	ProviderAccountID string         `json:"providerAccountId"`
	Priority          int            `json:"priority"`
	Enabled           bool           `json:"enabled"`
	CreatedAt         string         `json:"createdAt"`
}

func routesBody(rs []*notify.Route) map[string]any {
	out := make([]routeJSON, len(rs))
	for i, r := range rs {
		out[i] = routeJSON{ID: r.ID, Channel: r.Channel, ProviderAccountID: r.ProviderAccountID, Priority: r.Priority,
			Enabled: r.Enabled, CreatedAt: Timestamp(r.CreatedAt)}
	}
	return map[string]any{"routes": out}
}

func (a providersAPI) handleRouteList(c *call) error {
	rs, err := a.room.ListRoutes(c.ctx, c.actor)
	if err != nil {
		return err
	}
	return c.ok(http.StatusOK, routesBody(rs))
}

func (a providersAPI) handleRouteReplace(c *call) error {
	var in struct {
		Routes *[]struct {
			Channel           string `json:"channel"`
			ProviderAccountID string `json:"providerAccountId"`
			Priority          int    `json:"priority"`
			Enabled           *bool  `json:"enabled"`
		} `json:"routes"`
	}
	if err := c.decode(&in); err != nil {
		return err
	}
	if in.Routes == nil {
		return notify.Invalid("routes is required")
	}
	rs := make([]providers.RouteInput, len(*in.Routes))
	for i, r := range *in.Routes {
		rs[i] = providers.RouteInput{Channel: r.Channel, ProviderAccountID: r.ProviderAccountID, Priority: r.Priority, Enabled: r.Enabled}
	}
	out, err := a.room.ReplaceRoutes(c.ctx, c.actor, rs)
	if err != nil {
		return err
	}
	return c.ok(http.StatusOK, routesBody(out))
}

func (a providersAPI) handleTestSend(c *call) error {
	var b struct {
		Mode      string `json:"mode"`
		Recipient *struct {
			Address string `json:"address"`
			Name    string `json:"name"`
		} `json:"recipient"`
		Content *struct {
			Text              *string           `json:"text"`
			Title             *string           `json:"title"`
			TemplateCode      string            `json:"templateCode"`
			TemplateVariables map[string]string `json:"templateVariables"`
		} `json:"content"`
	}
	if err := c.decode(&b); err != nil {
		return err
	}
	in := providers.TestSendInput{Mode: b.Mode}
	if b.Recipient != nil {
		in.RecipientAddress, in.RecipientName = b.Recipient.Address, b.Recipient.Name
	}
	if b.Content != nil {
		in.Text, in.Title, in.TemplateCode, in.TemplateVariables = b.Content.Text, b.Content.Title, b.Content.TemplateCode, b.Content.TemplateVariables
	}
	r, err := a.room.TestSend(c.ctx, c.actor, c.r.PathValue("id"), in)
	if err != nil {
		return err
	}
	a.warnSender(c, c.r.PathValue("id"))
	return c.ok(http.StatusOK, map[string]any{"requestId": r.ID, "status": r.Status, "mode": b.Mode, "channel": r.Channel,
		"providerMessageId": strOrNil(r.SelectedMessageID), "acceptedAt": Timestamp(r.RequestedAt)})
}
