package web

import (
	"net/http"
	"strings"

	"github.com/notifyd/notifyd/internal/accounts"
	"github.com/notifyd/notifyd/internal/notify"
)

// apiKeyPages serve the API key pages.
type apiKeyPages struct{ *Console }

// routes mirror the Dashboard API's API key routes (same roles).
func (c apiKeyPages) routes() []Route {
	all, admin := notify.RolesAll, notify.RolesAdmin
	return []Route{
		{Method: "GET", Path: "/api-keys", Auth: Member, Roles: all, h: c.apiKeysPage},
		{Method: "POST", Path: "/api-keys", Auth: Member, Roles: admin, h: c.createAPIKey},
		{Method: "POST", Path: "/api-keys/{id}/rotate", Auth: Member, Roles: admin, h: c.rotateAPIKey},
		{Method: "POST", Path: "/api-keys/{id}/suspend", Auth: Member, Roles: admin, h: c.apiKeyStatus("suspend", "suspended")},
		{Method: "POST", Path: "/api-keys/{id}/resume", Auth: Member, Roles: admin, h: c.apiKeyStatus("resume", "resumed")},
		{Method: "POST", Path: "/api-keys/{id}/revoke", Auth: Member, Roles: admin, h: c.apiKeyStatus("revoke", "revoked")},
	}
}

type apiKeysData struct {
	Keys   []*notify.APIKey
	Scopes []string
	// New is a key just created or rotated: its secrets are shown on
	// this answer only (they are stored hashed or sealed).
	New     *accounts.NewAPIKey
	Rotated bool
	// Name, Checked and Templates refill the create form after a problem.
	Name      string
	Checked   map[string]bool
	Templates string
	Test      bool
}

func (c apiKeyPages) renderAPIKeys(x *Ctx, status int, problem *notify.Error, d *apiKeysData) error {
	ks, err := c.rooms.Accounts.ListAPIKeys(x.Context(), x.Actor)
	if err != nil {
		return err
	}
	d.Keys, d.Scopes = ks, notify.Scopes
	if d.Checked == nil {
		d.Checked = map[string]bool{notify.ScopeNotificationsSend: true}
	}
	return x.Render(status, "apikeys.html", &Page{Title: "API keys", Section: "/api-keys", Problem: problem, Data: d})
}

func (c apiKeyPages) apiKeysPage(x *Ctx) error {
	return c.renderAPIKeys(x, http.StatusOK, nil, &apiKeysData{})
}

// createAPIKey creates a key and answers the page with its secrets (no
// redirect: they exist in this answer only; console.js turns the
// address back into GET /api-keys so a reload shows them no more).
func (c apiKeyPages) createAPIKey(x *Ctx) error {
	f := x.R.PostForm
	name, scopes := f.Get("name"), f["scopes"]
	if scopes == nil {
		scopes = []string{}
	}
	in := accounts.APIKeyInput{Name: &name, Scopes: &scopes, Test: f.Get("test") != ""}
	if t := strings.TrimSpace(f.Get("templates")); t != "" {
		codes := strings.FieldsFunc(t, func(r rune) bool { return r == ',' || r == '\n' || r == '\r' || r == ' ' })
		in.AllowedTemplateCodes = &codes
	}
	k, err := c.rooms.Accounts.CreateAPIKey(x.Context(), x.Actor, in)
	if err != nil {
		e := problemOf(c.log, x.R, err)
		if e.Status() >= 500 {
			return err
		}
		checked := map[string]bool{}
		for _, s := range scopes {
			checked[s] = true
		}
		return c.renderAPIKeys(x, e.Status(), e, &apiKeysData{Name: name, Checked: checked, Templates: f.Get("templates"), Test: in.Test})
	}
	return c.renderAPIKeys(x, http.StatusOK, nil, &apiKeysData{New: k})
}

func (c apiKeyPages) rotateAPIKey(x *Ctx) error {
	k, err := c.rooms.Accounts.RotateAPIKey(x.Context(), x.Actor, x.R.PathValue("id"))
	if err != nil {
		return err
	}
	return c.renderAPIKeys(x, http.StatusOK, nil, &apiKeysData{New: k, Rotated: true})
}

func (c apiKeyPages) apiKeyStatus(action, done string) func(x *Ctx) error {
	return func(x *Ctx) error {
		k, err := c.rooms.Accounts.SetAPIKeyStatus(x.Context(), x.Actor, x.R.PathValue("id"), action)
		if err != nil {
			return err
		}
		return x.Redirect("/api-keys", Flash{Kind: "info", Text: "API key " + k.Name + " " + done + "."})
	}
}
