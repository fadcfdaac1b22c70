package web

import (
	"net/http"

	"github.com/notifyd/notifyd/internal/identities"
	"github.com/notifyd/notifyd/internal/notify"
)

// identityPages serve the sending-identity pages.
type identityPages struct{ *Console }

// routes mirror the Dashboard API's sending-identity routes
// (/v1/providers/{id}/identities…) with the same roles, owner and admin,
// reads included: they act on the vendor account with its credentials.
// Refresh is a POST here (it calls the vendor and stores what it answers,
// as GET /v1/providers/{id}/identities/{identityId} does).
func (c identityPages) routes() []Route {
	admin := notify.RolesAdmin
	const base = "/providers/{id}/identities"
	return []Route{
		{Method: "GET", Path: base, Auth: Member, Roles: admin, h: c.identitiesPage},
		{Method: "POST", Path: base + "/email-addresses", Auth: Member, Roles: admin, h: c.verifyIdentity},
		{Method: "POST", Path: base + "/domains", Auth: Member, Roles: admin, h: c.connectDomain},
		{Method: "POST", Path: base + "/domains/adopt", Auth: Member, Roles: admin, h: c.adoptDomain},
		{Method: "POST", Path: base + "/{identityId}/refresh", Auth: Member, Roles: admin, h: c.refreshIdentity},
		{Method: "GET", Path: base + "/{identityId}/dns", Auth: Member, Roles: admin, h: c.identityDNSPage},
	}
}

type identitiesData struct {
	Provider *notify.ProviderAccount
	List     *identities.IdentityList
	// Check is the DNS check shown above the list (GET …/{identityId}/dns).
	Check *identities.DNSCheck
	// The forms' values after a problem.
	Address, Domain, MailFrom, Adopt string
}

func (c identityPages) identitiesData(x *Ctx) (*identitiesData, error) {
	id := x.R.PathValue("id")
	l, err := c.rooms.Identities.ListIdentities(x.Context(), x.Actor, id)
	if err != nil {
		return nil, err
	}
	v, err := c.rooms.Providers.GetProvider(x.Context(), x.Actor, id)
	if err != nil {
		return nil, err
	}
	return &identitiesData{Provider: v.Account, List: l}, nil
}

func (c identityPages) identitiesPage(x *Ctx) error {
	d, err := c.identitiesData(x)
	if err != nil {
		return err
	}
	return c.renderIdentities(x, http.StatusOK, nil, d)
}

func (c identityPages) renderIdentities(x *Ctx, status int, problem *notify.Error, d *identitiesData) error {
	return x.Render(status, "identities.html", &Page{Title: "Sending identities of " + d.Provider.DisplayName,
		Section: "/providers", Problem: problem, Data: d})
}

// identityWrite runs one write of the page: on success back to the list
// with a flash, on a problem the page again with the form refilled.
func (c identityPages) identityWrite(x *Ctx, write func() (*notify.SendingIdentity, error), flash string, refill func(*identitiesData)) error {
	s, err := write()
	if err == nil {
		return x.Redirect("/providers/"+x.R.PathValue("id")+"/identities#identity-"+s.ID,
			Flash{Kind: "info", Text: flash + " " + s.Name + " (" + s.Status + ")."})
	}
	e := problemOf(c.log, x.R, err)
	d, derr := c.identitiesData(x)
	if derr != nil {
		return derr
	}
	refill(d)
	return c.renderIdentities(x, e.Status(), e, d)
}

func (c identityPages) verifyIdentity(x *Ctx) error {
	addr := x.R.PostFormValue("address")
	return c.identityWrite(x, func() (*notify.SendingIdentity, error) {
		return c.rooms.Identities.VerifyEmailIdentity(x.Context(), x.Actor, x.R.PathValue("id"), addr)
	}, "Verification asked for", func(d *identitiesData) { d.Address = addr })
}

func (c identityPages) connectDomain(x *Ctx) error {
	dom, mf := x.R.PostFormValue("domain"), x.R.PostFormValue("mailFromSubdomain")
	return c.identityWrite(x, func() (*notify.SendingIdentity, error) {
		return c.rooms.Identities.ConnectDomain(x.Context(), x.Actor, x.R.PathValue("id"), dom, mf)
	}, "Domain connected: publish its DNS records:", func(d *identitiesData) { d.Domain, d.MailFrom = dom, mf })
}

func (c identityPages) adoptDomain(x *Ctx) error {
	dom := x.R.PostFormValue("domain")
	return c.identityWrite(x, func() (*notify.SendingIdentity, error) {
		return c.rooms.Identities.AdoptDomain(x.Context(), x.Actor, x.R.PathValue("id"), dom)
	}, "Domain adopted:", func(d *identitiesData) { d.Adopt = dom })
}

func (c identityPages) refreshIdentity(x *Ctx) error {
	s, err := c.rooms.Identities.GetIdentity(x.Context(), x.Actor, x.R.PathValue("id"), x.R.PathValue("identityId"))
	if err != nil {
		return err
	}
	return x.Redirect("/providers/"+x.R.PathValue("id")+"/identities#identity-"+s.ID,
		Flash{Kind: "info", Text: "Status of " + s.Name + " refreshed: " + s.Status + "."})
}

// identityDNSPage shows the DNS check of a domain identity above the
// list (no vendor call: the records last read from the vendor, looked up
// in DNS).
func (c identityPages) identityDNSPage(x *Ctx) error {
	d, err := c.identitiesData(x)
	if err != nil {
		return err
	}
	if d.Check, err = c.rooms.Identities.CheckIdentityDNS(x.Context(), x.Actor, d.Provider.ID, x.R.PathValue("identityId")); err != nil {
		return err
	}
	return c.renderIdentities(x, http.StatusOK, nil, d)
}
