package web

import (
	"net/http"
	"strconv"
	"strings"

	"github.com/notifyd/notifyd/internal/limits"
	"github.com/notifyd/notifyd/internal/notify"
)

// limitPages serve the rate-limit and dispatch-limit pages.
type limitPages struct{ *Console }

// routes mirror the Dashboard API's rate-limit and dispatch-limit
// routes and roles (API-DECISIONS 5): reading for every role, writing for
// admins. A rate-limit policy is not deleted (the API has no such verb):
// it is disabled.
func (c limitPages) routes() []Route {
	all, admin := notify.RolesAll, notify.RolesAdmin
	return []Route{
		{Method: "GET", Path: "/limits", Auth: Member, Roles: all, h: c.limitsPage},
		{Method: "POST", Path: "/limits/rate/workspace", Auth: Member, Roles: admin, h: c.putRateLimit},
		{Method: "POST", Path: "/limits/rate/api-keys", Auth: Member, Roles: admin, h: c.putRateLimit},
		{Method: "POST", Path: "/limits/dispatch", Auth: Member, Roles: admin, h: c.putDispatchLimit},
		{Method: "POST", Path: "/limits/dispatch/{id}/delete", Auth: Member, Roles: admin, h: c.deleteDispatchLimit},
	}
}

type limitsData struct {
	Workspace   *notify.RateLimitPolicy
	KeyPolicies []*notify.RateLimitPolicy
	Dispatch    []*notify.DispatchLimit
	// Keys name the API keys (policy rows and the key choice).
	Keys   []*notify.APIKey
	Scopes []string
}

// KeyName is an API key's name and key id, or the id when unknown.
func (d limitsData) KeyName(id string) string {
	for _, k := range d.Keys {
		if k.ID == id {
			return k.Name + " (" + k.KeyID + ")"
		}
	}
	return id
}

func (c limitPages) limitsPage(x *Ctx) error { return c.renderLimits(x, http.StatusOK, nil) }

func (c limitPages) renderLimits(x *Ctx, status int, problem *notify.Error) error {
	d := limitsData{Scopes: []string{notify.DispatchScopeWorkspace, notify.DispatchScopeProvider, notify.DispatchScopeAPIKey}}
	var err error
	if d.Workspace, d.KeyPolicies, err = c.rooms.Limits.RateLimitPolicies(x.Context(), x.Actor); err != nil {
		return err
	}
	if d.Dispatch, err = c.rooms.Limits.ListDispatchLimits(x.Context(), x.Actor); err != nil {
		return err
	}
	if d.Keys, err = c.rooms.Accounts.ListAPIKeys(x.Context(), x.Actor); err != nil {
		return err
	}
	return x.Render(status, "limits.html", &Page{Title: "Limits", Section: "/limits", Problem: problem, Data: d})
}

// formInt reads a whole-number field; anything else is 400 with the
// field's name, as the API's decoder answers.
func formInt(x *Ctx, name string) (int, error) {
	v := strings.TrimSpace(x.R.PostFormValue(name))
	if v == "" {
		return 0, notify.Invalid("%s is required", name)
	}
	n, err := strconv.Atoi(v)
	if err != nil {
		return 0, notify.Invalid("%s must be an integer", name)
	}
	return n, nil
}

// formBool is a checkbox: checked is true.
func formBool(x *Ctx, name string) *bool {
	b := x.R.PostFormValue(name) != ""
	return &b
}

// putRateLimit sets the workspace policy or an API key's policy (PUT
// /v1/limits/rate/workspace, /v1/limits/rate/api-keys/{id}).
func (c limitPages) putRateLimit(x *Ctx) error {
	err := func() error {
		var in limits.RateLimitInput
		var err error
		if in.WindowSeconds, err = formInt(x, "windowSeconds"); err != nil {
			return err
		}
		if in.MaxRequests, err = formInt(x, "maxRequests"); err != nil {
			return err
		}
		in.Enabled = formBool(x, "enabled")
		if strings.HasSuffix(x.R.URL.Path, "/workspace") {
			_, err = c.rooms.Limits.PutWorkspaceRateLimit(x.Context(), x.Actor, in)
		} else {
			_, err = c.rooms.Limits.PutAPIKeyRateLimit(x.Context(), x.Actor, x.R.PostFormValue("apiKeyCredentialId"), in)
		}
		return err
	}()
	if err != nil {
		return c.again(x, err, func(status int, e *notify.Error) error { return c.renderLimits(x, status, e) })
	}
	return x.Redirect("/limits", Flash{Kind: "info", Text: "Rate-limit policy saved."})
}

// putDispatchLimit creates or updates the limit of (scope, target).
func (c limitPages) putDispatchLimit(x *Ctx) error {
	err := func() error {
		in := limits.DispatchLimitInput{Scope: x.R.PostFormValue("scope"), TargetID: strings.TrimSpace(x.R.PostFormValue("targetId")),
			Enabled: formBool(x, "enabled")}
		var err error
		if in.RatePerSecond, err = formInt(x, "ratePerSecond"); err != nil {
			return err
		}
		_, err = c.rooms.Limits.PutDispatchLimit(x.Context(), x.Actor, in)
		return err
	}()
	if err != nil {
		return c.again(x, err, func(status int, e *notify.Error) error { return c.renderLimits(x, status, e) })
	}
	return x.Redirect("/limits", Flash{Kind: "info", Text: "Dispatch limit saved."})
}

func (c limitPages) deleteDispatchLimit(x *Ctx) error {
	if err := c.rooms.Limits.DeleteDispatchLimit(x.Context(), x.Actor, x.R.PathValue("id")); err != nil {
		return err
	}
	return x.Redirect("/limits", Flash{Kind: "info", Text: "Dispatch limit deleted."})
}
