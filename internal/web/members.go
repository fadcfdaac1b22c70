package web

import (
	"net/http"

	"github.com/notifyd/notifyd/internal/notify"
)

// memberPages serve the member pages.
type memberPages struct{ *Console }

// routes mirror the Dashboard API's member routes (same roles):
// list, add (POST /v1/workspace/members), change role and set a first
// password (PATCH), remove (DELETE).
func (c memberPages) routes() []Route {
	all, admin := notify.RolesAll, notify.RolesAdmin
	return []Route{
		{Method: "GET", Path: "/members", Auth: Member, Roles: all, h: c.membersPage},
		{Method: "POST", Path: "/members", Auth: Member, Roles: admin, h: c.addMember},
		{Method: "POST", Path: "/members/{userId}/role", Auth: Member, Roles: admin, h: c.changeMemberRole},
		{Method: "POST", Path: "/members/{userId}/password", Auth: Member, Roles: admin, h: c.setMemberPassword},
		{Method: "POST", Path: "/members/{userId}/remove", Auth: Member, Roles: admin, h: c.removeMember},
	}
}

var roles = []notify.Role{notify.RoleOwner, notify.RoleAdmin, notify.RoleOperator, notify.RoleViewer}

type membersData struct {
	Members []*notify.Member
	Roles   []notify.Role
	// Email and Role refill the add form after a problem.
	Email string
	Role  notify.Role
}

func (c memberPages) renderMembers(x *Ctx, status int, problem *notify.Error, d *membersData) error {
	ms, err := c.rooms.Accounts.ListMembers(x.Context(), x.Actor)
	if err != nil {
		return err
	}
	d.Members, d.Roles = ms, roles
	if d.Role == "" {
		d.Role = notify.RoleViewer
	}
	return x.Render(status, "members.html", &Page{Title: "Members", Section: "/members", Problem: problem, Data: d})
}

func (c memberPages) membersPage(x *Ctx) error {
	return c.renderMembers(x, http.StatusOK, nil, &membersData{})
}

// addMember adds a new user or invites an existing one (the room
// decides; the answer does not tell which, as the API's does not).
func (c memberPages) addMember(x *Ctx) error {
	f := x.R.PostForm
	email, role := f.Get("email"), notify.Role(f.Get("role"))
	res, err := c.rooms.Accounts.AddMember(x.Context(), x.Actor, email, role, f.Get("password"))
	if err != nil {
		e := problemOf(c.log, x.R, err)
		if e.Status() >= 500 {
			return err
		}
		return c.renderMembers(x, e.Status(), e, &membersData{Email: email, Role: role})
	}
	return x.Redirect("/members", Flash{Kind: "info", Text: res.Member.Email + " added as " + string(res.Member.Role) +
		" (an address that already has an account is invited, and joins on accepting)."})
}

func (c memberPages) changeMemberRole(x *Ctx) error {
	m, err := c.rooms.Accounts.UpdateMemberRole(x.Context(), x.Actor, x.R.PathValue("userId"), notify.Role(x.R.PostForm.Get("role")))
	if err != nil {
		return err
	}
	return x.Redirect("/members", Flash{Kind: "info", Text: m.Email + " is now " + string(m.Role) + "."})
}

// setMemberPassword sets the first password of a member added without
// one.
func (c memberPages) setMemberPassword(x *Ctx) error {
	m, err := c.rooms.Accounts.SetMemberPassword(x.Context(), x.Actor, x.R.PathValue("userId"), x.R.PostForm.Get("password"))
	if err != nil {
		e := problemOf(c.log, x.R, err)
		if e.Status() >= 500 {
			return err
		}
		return c.renderMembers(x, e.Status(), e, &membersData{})
	}
	return x.Redirect("/members", Flash{Kind: "info", Text: m.Email + " can now log in with the password you set."})
}

func (c memberPages) removeMember(x *Ctx) error {
	if err := c.rooms.Accounts.RemoveMember(x.Context(), x.Actor, x.R.PathValue("userId")); err != nil {
		return err
	}
	return x.Redirect("/members", Flash{Kind: "info", Text: "Member removed."})
}
