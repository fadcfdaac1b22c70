package api

import (
	"net/http"

	"github.com/notifyd/notifyd/internal/limits"
	"github.com/notifyd/notifyd/internal/notify"
)

// limitsAPI are the handlers of the limits room.
type limitsAPI struct {
	*API
	room *limits.Service
}

// routes lists the rate-limit and dispatch-limit routes (SPEC
// "Request rate-limit policies", "Dispatch limits"; API-DECISIONS 5).
func (a limitsAPI) routes() []Route {
	all, admin := notify.RolesAll, notify.RolesAdmin
	return []Route{
		{Method: "GET", Path: "/v1/limits/rate", auth: authDashboard, Roles: all, h: a.handleRateLimitGet},
		{Method: "PUT", Path: "/v1/limits/rate/workspace", auth: authDashboard, Roles: admin, h: a.handleRateLimitWorkspace},
		{Method: "PUT", Path: "/v1/limits/rate/api-keys/{apiKeyCredentialId}", auth: authDashboard, Roles: admin, h: a.handleRateLimitAPIKey},
		{Method: "GET", Path: "/v1/limits/dispatch", auth: authDashboard, Roles: all, h: a.handleDispatchLimitList},
		{Method: "PUT", Path: "/v1/limits/dispatch", auth: authDashboard, Roles: admin, h: a.handleDispatchLimitPut},
		{Method: "DELETE", Path: "/v1/limits/dispatch/{id}", auth: authDashboard, Roles: admin, h: a.handleDispatchLimitDelete},
	}
}

type ratePolicyJSON struct {
	ID                 string `json:"id"`
	APIKeyCredentialID string `json:"apiKeyCredentialId,omitempty"`
	WindowSeconds      int    `json:"windowSeconds"`
	MaxRequests        int    `json:"maxRequests"`
	Enabled            bool   `json:"enabled"`
	UpdatedAt          string `json:"updatedAt"`
}

func ratePolicyBody(p *notify.RateLimitPolicy) *ratePolicyJSON {
	if p == nil {
		return nil
	}
	return &ratePolicyJSON{ID: p.ID, APIKeyCredentialID: p.APIKeyID, WindowSeconds: p.WindowSeconds,
		MaxRequests: p.MaxRequests, Enabled: p.Enabled, UpdatedAt: Timestamp(p.UpdatedAt)}
}

func (a limitsAPI) handleRateLimitGet(c *call) error {
	ws, keys, err := a.room.RateLimitPolicies(c.ctx, c.actor)
	if err != nil {
		return err
	}
	out := make([]*ratePolicyJSON, len(keys))
	for i, p := range keys {
		out[i] = ratePolicyBody(p)
	}
	return c.ok(http.StatusOK, map[string]any{"workspacePolicy": ratePolicyBody(ws), "apiKeyPolicies": out})
}

type rateLimitIn struct {
	WindowSeconds Optional[int]  `json:"windowSeconds"`
	MaxRequests   Optional[int]  `json:"maxRequests"`
	Enabled       Optional[bool] `json:"enabled"`
}

func (c *call) rateLimitInput() (limits.RateLimitInput, error) {
	var in rateLimitIn
	var out limits.RateLimitInput
	if err := c.decode(&in); err != nil {
		return out, err
	}
	if !in.WindowSeconds.Set || in.WindowSeconds.Null {
		return out, notify.Invalid("windowSeconds is required")
	}
	if !in.MaxRequests.Set || in.MaxRequests.Null {
		return out, notify.Invalid("maxRequests is required")
	}
	if in.Enabled.Set {
		if in.Enabled.Null {
			return out, notify.Invalid("enabled must be a boolean")
		}
		out.Enabled = &in.Enabled.Value
	}
	out.WindowSeconds, out.MaxRequests = in.WindowSeconds.Value, in.MaxRequests.Value
	return out, nil
}

func (a limitsAPI) handleRateLimitWorkspace(c *call) error {
	in, err := c.rateLimitInput()
	if err != nil {
		return err
	}
	p, err := a.room.PutWorkspaceRateLimit(c.ctx, c.actor, in)
	if err != nil {
		return err
	}
	return c.ok(http.StatusOK, ratePolicyBody(p))
}

func (a limitsAPI) handleRateLimitAPIKey(c *call) error {
	in, err := c.rateLimitInput()
	if err != nil {
		return err
	}
	p, err := a.room.PutAPIKeyRateLimit(c.ctx, c.actor, c.r.PathValue("apiKeyCredentialId"), in)
	if err != nil {
		return err
	}
	return c.ok(http.StatusOK, ratePolicyBody(p))
}

type dispatchLimitJSON struct {
	ID            string  `json:"id"`
	Scope         string  `json:"scope"`
	TargetID      *string `json:"targetId"`
	RatePerSecond int     `json:"ratePerSecond"`
	Enabled       bool    `json:"enabled"`
	CreatedAt     string  `json:"createdAt"`
	UpdatedAt     string  `json:"updatedAt"`
}

func dispatchLimitBody(l *notify.DispatchLimit) dispatchLimitJSON {
	out := dispatchLimitJSON{ID: l.ID, Scope: l.Scope, RatePerSecond: l.RatePerSecond, Enabled: l.Enabled,
		CreatedAt: Timestamp(l.CreatedAt), UpdatedAt: Timestamp(l.UpdatedAt)}
	if l.TargetID != "" {
		t := l.TargetID
		out.TargetID = &t
	}
	return out
}

func (a limitsAPI) handleDispatchLimitList(c *call) error {
	ls, err := a.room.ListDispatchLimits(c.ctx, c.actor)
	if err != nil {
		return err
	}
	out := make([]dispatchLimitJSON, len(ls))
	for i, l := range ls {
		out[i] = dispatchLimitBody(l)
	}
	return c.ok(http.StatusOK, map[string]any{"limits": out})
}

func (a limitsAPI) handleDispatchLimitPut(c *call) error {
	var in struct {
		Scope         Optional[string] `json:"scope"`
		TargetID      Optional[string] `json:"targetId"`
		RatePerSecond Optional[int]    `json:"ratePerSecond"`
		Enabled       Optional[bool]   `json:"enabled"`
	}
	if err := c.decode(&in); err != nil {
		return err
	}
	if !in.Scope.Set || in.Scope.Null {
		return notify.Invalid("scope is required")
	}
	if !in.RatePerSecond.Set || in.RatePerSecond.Null {
		return notify.Invalid("ratePerSecond is required")
	}
	input := limits.DispatchLimitInput{Scope: in.Scope.Value, RatePerSecond: in.RatePerSecond.Value}
	if in.TargetID.Set && !in.TargetID.Null {
		if in.Scope.Value == notify.DispatchScopeWorkspace {
			return notify.Invalid("targetId must be omitted for scope workspace")
		}
		input.TargetID = in.TargetID.Value
	}
	if in.Enabled.Set {
		if in.Enabled.Null {
			return notify.Invalid("enabled must be a boolean")
		}
		input.Enabled = &in.Enabled.Value
	}
	l, err := a.room.PutDispatchLimit(c.ctx, c.actor, input)
	if err != nil {
		return err
	}
	return c.ok(http.StatusOK, map[string]any{"limit": dispatchLimitBody(l)})
}

func (a limitsAPI) handleDispatchLimitDelete(c *call) error {
	if err := a.room.DeleteDispatchLimit(c.ctx, c.actor, c.r.PathValue("id")); err != nil {
		return err
	}
	return c.noContent()
}
