package api

import (
	"net/http"
	"strings"

	"github.com/notifyd/notifyd/internal/identities"
	"github.com/notifyd/notifyd/internal/notify"
)

// identitiesAPI are the handlers of the identities room.
type identitiesAPI struct {
	*API
	room *identities.Service
}

// routes are the sending identities (sender addresses and domains)
// of the e-mail providers. Roles owner and admin: the calls act on the
// vendor account with its credentials.
func (a identitiesAPI) routes() []Route {
	admin := notify.RolesAdmin
	const base = "/v1/providers/{id}/identities"
	return []Route{
		{Method: "GET", Path: base, auth: authDashboard, Roles: admin, h: a.handleIdentityList},
		{Method: "POST", Path: base + "/email-addresses", auth: authDashboard, Roles: admin, h: a.handleIdentityVerify},
		{Method: "POST", Path: base + "/domains", auth: authDashboard, Roles: admin, h: a.handleDomainConnect},
		{Method: "POST", Path: base + "/domains/adopt", auth: authDashboard, Roles: admin, h: a.handleDomainAdopt},
		{Method: "GET", Path: base + "/{identityId}", auth: authDashboard, Roles: admin, h: a.handleIdentityGet},
		{Method: "GET", Path: base + "/{identityId}/dns", auth: authDashboard, Roles: admin, h: a.handleIdentityDNS},
	}
}

func identityBody(s *notify.SendingIdentity) map[string]any {
	records := s.Records
	if records == nil {
		records = []notify.DNSRecord{}
	}
	return map[string]any{"id": s.ID, "providerAccountId": s.ProviderAccountID, "type": s.Type, "name": s.Name,
		"status": s.Status, "origin": s.Origin, "mailFromDomain": strOrNil(s.MailFromDomain), "spfInclude": strOrNil(s.SPFInclude),
		"records": records, "createdAt": Timestamp(s.CreatedAt), "updatedAt": Timestamp(s.UpdatedAt),
		"checkedAt": Timestamp(s.CheckedAt), "verifiedAt": TimestampPtr(s.VerifiedAt)}
}

func (a identitiesAPI) handleIdentityList(c *call) error {
	l, err := a.room.ListIdentities(c.ctx, c.actor, c.r.PathValue("id"))
	if err != nil {
		return err
	}
	out := make([]map[string]any, len(l.Identities))
	for i, s := range l.Identities {
		out[i] = identityBody(s)
	}
	sender := map[string]any{"address": strOrNil(l.Sender.Address), "verified": l.Sender.Verified,
		"identityId": strOrNil(l.Sender.IdentityID), "warning": strOrNil(l.Sender.Warning)}
	return c.ok(http.StatusOK, map[string]any{"identities": out, "sender": sender})
}

func (a identitiesAPI) handleIdentityVerify(c *call) error {
	var in struct {
		Address *string `json:"address"`
	}
	if err := c.decode(&in); err != nil {
		return err
	}
	if in.Address == nil {
		return notify.Invalid("address is required")
	}
	s, err := a.room.VerifyEmailIdentity(c.ctx, c.actor, c.r.PathValue("id"), *in.Address)
	if err != nil {
		return err
	}
	return c.ok(http.StatusCreated, map[string]any{"identity": identityBody(s)})
}

func (a identitiesAPI) handleDomainConnect(c *call) error {
	var in struct {
		Domain            *string `json:"domain"`
		MailFromSubdomain string  `json:"mailFromSubdomain"`
	}
	if err := c.decode(&in); err != nil {
		return err
	}
	if in.Domain == nil {
		return notify.Invalid("domain is required")
	}
	s, err := a.room.ConnectDomain(c.ctx, c.actor, c.r.PathValue("id"), *in.Domain, in.MailFromSubdomain)
	if err != nil {
		return err
	}
	return c.ok(http.StatusCreated, map[string]any{"identity": identityBody(s)})
}

func (a identitiesAPI) handleDomainAdopt(c *call) error {
	var in struct {
		Domain *string `json:"domain"`
	}
	if err := c.decode(&in); err != nil {
		return err
	}
	if in.Domain == nil {
		return notify.Invalid("domain is required")
	}
	s, err := a.room.AdoptDomain(c.ctx, c.actor, c.r.PathValue("id"), *in.Domain)
	if err != nil {
		return err
	}
	return c.ok(http.StatusCreated, map[string]any{"identity": identityBody(s)})
}

func (a identitiesAPI) handleIdentityGet(c *call) error {
	s, err := a.room.GetIdentity(c.ctx, c.actor, c.r.PathValue("id"), c.r.PathValue("identityId"))
	if err != nil {
		return err
	}
	return c.ok(http.StatusOK, map[string]any{"identity": identityBody(s)})
}

func recordCheckBody(r identities.RecordCheck) map[string]any {
	out := map[string]any{"purpose": r.Purpose, "type": r.Type, "name": r.Name, "value": r.Value, "status": r.Status, "found": r.Found}
	if r.Priority != 0 {
		out["priority"] = r.Priority
	}
	return out
}

func (a identitiesAPI) handleIdentityDNS(c *call) error {
	d, err := a.room.CheckIdentityDNS(c.ctx, c.actor, c.r.PathValue("id"), c.r.PathValue("identityId"))
	if err != nil {
		return err
	}
	records := make([]map[string]any, len(d.Records))
	for i, r := range d.Records {
		records[i] = recordCheckBody(r)
	}
	warnings := d.Warnings
	if warnings == nil {
		warnings = []string{}
	}
	return c.ok(http.StatusOK, map[string]any{"identity": identityBody(d.Identity), "records": records,
		"spf": recordCheckBody(d.SPF), "dmarc": recordCheckBody(d.DMARC), "warnings": warnings})
}

// warnSender adds the Warning header (RFC 9110 warn-code 199, agent
// "notifyd") when an e-mail provider's from-address is not a verified
// identity: registration and test-send answer as SPEC says, with this
// beside them.
func (a *API) warnSender(c *call, providerID string) {
	w, err := a.rooms.Identities.SenderWarning(c.ctx, c.actor, providerID)
	if err != nil || w == "" {
		return
	}
	c.w.Header().Set("Warning", `199 notifyd "`+strings.NewReplacer(`\`, `\\`, `"`, `\"`).Replace(w)+`"`)
}
