package web

import (
	"encoding/json"
	"net/http"

	"github.com/notifyd/notifyd/internal/accounts"
	"github.com/notifyd/notifyd/internal/notify"
)

// auditPages serve the audit log page.
type auditPages struct{ *Console }

// routes: the audit log, as GET /v1/audit-logs (every role).
func (c auditPages) routes() []Route {
	return []Route{{Method: "GET", Path: "/audit-log", Auth: Member, Roles: notify.RolesAll, h: c.auditPage}}
}

// auditRow is one audit entry as the page shows it.
type auditRow struct {
	*notify.AuditEntry
	// Actor is the acting member's email ("" when the user is no longer
	// a member: the page shows the id).
	Actor   string
	Payload string
}

type auditData struct {
	Pager *Pager
	Rows  []auditRow
}

// auditPageSize is the console's page of the audit log.
const auditPageSize = 50

func (c auditPages) auditPage(x *Ctx) error {
	p := NewPager(x.R)
	d := auditData{Pager: p}
	f := notify.AuditFilter{Action: p.Get("action"), TargetType: p.Get("targetType"), Limit: auditPageSize}
	cur, err := notify.DecodeCursor(p.Get("cursor"))
	if err == nil {
		f.Before = cur
		var page *accounts.AuditPage
		if page, err = c.rooms.Accounts.ListAudit(x.Context(), x.Actor, f); err == nil {
			ms, merr := c.rooms.Accounts.ListMembers(x.Context(), x.Actor)
			if merr != nil {
				return merr
			}
			emails := map[string]string{}
			for _, m := range ms {
				emails[m.UserID] = m.Email
			}
			for _, e := range page.Logs {
				row := auditRow{AuditEntry: e}
				if e.ActorUserID != nil {
					row.Actor = emails[*e.ActorUserID]
				}
				if len(e.Payload) > 0 {
					b, _ := json.Marshal(e.Payload)
					row.Payload = string(b)
				}
				d.Rows = append(d.Rows, row)
			}
			p.SetNext("/audit-log", page.Cursor, page.HasNext)
			return x.Render(http.StatusOK, "audit.html", &Page{Title: "Audit log", Data: d})
		}
	}
	// A bad filter or cursor shows the form again with the problem.
	e := problemOf(c.log, x.R, err)
	if e.Status() != http.StatusBadRequest {
		return err
	}
	return x.Render(http.StatusBadRequest, "audit.html", &Page{Title: "Audit log", Problem: e, Data: d})
}
