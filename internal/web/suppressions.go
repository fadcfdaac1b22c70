package web

import (
	"net/http"
	"net/url"

	"github.com/notifyd/notifyd/internal/notify"
)

// suppressionPages serve the suppression pages.
type suppressionPages struct{ *Console }

// routes mirror the Dashboard API's suppression routes and
// roles: list for every role, add for operators, remove for admins.
func (c suppressionPages) routes() []Route {
	return []Route{
		{Method: "GET", Path: "/suppressions", Auth: Member, Roles: notify.RolesAll, h: c.suppressionsPage},
		{Method: "POST", Path: "/suppressions", Auth: Member, Roles: notify.RolesOperator, h: c.addSuppression},
		{Method: "POST", Path: "/suppressions/{address}/remove", Auth: Member, Roles: notify.RolesAdmin, h: c.removeSuppression},
	}
}

type suppressionsData struct {
	Pager        *Pager
	Suppressions []*notify.Suppression
	Reasons      []string
	// Address and Reason are the add form's values, shown again with a problem.
	Address, Reason string
}

// PathEscape is an address as one path segment (remove's action).
func (suppressionsData) PathEscape(s string) string { return url.PathEscape(s) }

func (c suppressionPages) suppressionsPage(x *Ctx) error {
	return c.renderSuppressions(x, http.StatusOK, nil, "", notify.SuppressManual)
}

func (c suppressionPages) renderSuppressions(x *Ctx, status int, problem *notify.Error, address, reason string) error {
	p := NewPager(x.R)
	d := suppressionsData{Pager: p, Reasons: []string{notify.SuppressManual, notify.SuppressUnsubscribe, notify.SuppressHardBounce, notify.SuppressComplaint},
		Address: address, Reason: reason}
	f := notify.SuppressionFilter{Address: p.Get("address")}
	var err error
	if f.Before, err = notify.DecodeCursor(p.Get("cursor")); err != nil {
		return err
	}
	page, err := c.rooms.Suppressions.ListSuppressions(x.Context(), x.Actor, f)
	if err != nil {
		if e := problemOf(c.log, x.R, err); e.Status() == http.StatusBadRequest && problem == nil {
			return x.Render(http.StatusBadRequest, "suppressions.html", &Page{Title: "Suppressions", Section: "/suppressions", Problem: e, Data: d})
		}
		return err
	}
	d.Suppressions = page.Suppressions
	p.SetNext("/suppressions", page.Cursor, page.HasNext)
	return x.Render(status, "suppressions.html", &Page{Title: "Suppressions", Section: "/suppressions", Problem: problem, Data: d})
}

func (c suppressionPages) addSuppression(x *Ctx) error {
	address, reason := x.R.PostFormValue("address"), x.R.PostFormValue("reason")
	s, err := c.rooms.Suppressions.AddSuppression(x.Context(), x.Actor, address, reason)
	if err != nil {
		return c.again(x, err, func(status int, e *notify.Error) error {
			return c.renderSuppressions(x, status, e, address, reason)
		})
	}
	return x.Redirect("/suppressions", Flash{Kind: "info", Text: s.Address + " is suppressed (" + s.Reason + ")."})
}

func (c suppressionPages) removeSuppression(x *Ctx) error {
	address := x.R.PathValue("address")
	if err := c.rooms.Suppressions.RemoveSuppression(x.Context(), x.Actor, address); err != nil {
		return err
	}
	return x.Redirect("/suppressions", Flash{Kind: "info", Text: address + " is no longer suppressed."})
}
