package api

import (
	"net/http"

	"github.com/notifyd/notifyd/internal/notify"
	"github.com/notifyd/notifyd/internal/recipients"
)

// consentsAPI serves the consents a recipient gave (issue 32, item 5),
// under the profile's path, on both APIs with the profiles' scopes and
// roles.
type consentsAPI struct {
	*API
	room *recipients.Service
}

func (a consentsAPI) routes() []Route {
	all, op := notify.RolesAll, notify.RolesOperator
	read, write := notify.ScopeRecipientsRead, notify.ScopeRecipientsWrite
	return []Route{
		{Method: "GET", Path: "/v1/recipients/{externalId}/consents", auth: authEither, Roles: all, Scope: read, h: a.handleList},
		{Method: "PUT", Path: "/v1/recipients/{externalId}/consents/{kind}", auth: authEither, Roles: op, Scope: write, h: a.handlePut},
		{Method: "DELETE", Path: "/v1/recipients/{externalId}/consents/{kind}", auth: authEither, Roles: op, Scope: write, h: a.handleDelete},
	}
}

// consentKindNames are the path names of the stored kinds.
var consentKindNames = func() map[string]string {
	m := map[string]string{}
	for path, stored := range recipients.ConsentKinds {
		m[stored] = path
	}
	return m
}()

func consentBody(c *notify.RecipientConsent) map[string]any {
	return map[string]any{"kind": consentKindNames[c.Kind], "givenAt": Timestamp(c.GivenAt), "source": c.Source,
		"recordedBy": c.RecordedBy}
}

func (a consentsAPI) handleList(c *call) error {
	cs, err := a.room.Consents(c.ctx, c.caller(), c.r.PathValue("externalId"))
	if err != nil {
		return err
	}
	out := make([]map[string]any, len(cs))
	for i, con := range cs {
		out[i] = consentBody(con)
	}
	return c.ok(http.StatusOK, map[string]any{"consents": out})
}

func (a consentsAPI) handlePut(c *call) error {
	var in struct {
		Source string `json:"source"`
	}
	if len(c.body) > 0 {
		if err := decodeJSON(c.body, &in); err != nil {
			return err
		}
	}
	con, err := a.room.GiveConsent(c.ctx, c.caller(), c.r.PathValue("externalId"), c.r.PathValue("kind"), in.Source)
	if err != nil {
		return err
	}
	return c.ok(http.StatusOK, map[string]any{"consent": consentBody(con)})
}

func (a consentsAPI) handleDelete(c *call) error {
	if err := a.room.WithdrawConsent(c.ctx, c.caller(), c.r.PathValue("externalId"), c.r.PathValue("kind")); err != nil {
		return err
	}
	return c.noContent()
}
