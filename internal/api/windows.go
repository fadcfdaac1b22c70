package api

import (
	"net/http"

	"github.com/notifyd/notifyd/internal/notify"
	"github.com/notifyd/notifyd/internal/windows"
)

// windowsAPI serves the send windows (issue 32, item 5) on the Dashboard
// API: reads for every role, changes for admins and up.
type windowsAPI struct {
	*API
	room *windows.Service
}

func (a windowsAPI) routes() []Route {
	all, admin := notify.RolesAll, notify.RolesAdmin
	return []Route{
		{Method: "GET", Path: "/v1/send-windows", auth: authDashboard, Roles: all, h: a.handleList},
		{Method: "PUT", Path: "/v1/send-windows/workspace", auth: authDashboard, Roles: admin, h: a.handlePut},
		{Method: "DELETE", Path: "/v1/send-windows/workspace", auth: authDashboard, Roles: admin, h: a.handleDelete},
		{Method: "PUT", Path: "/v1/send-windows/categories/{key}", auth: authDashboard, Roles: admin, h: a.handlePut},
		{Method: "DELETE", Path: "/v1/send-windows/categories/{key}", auth: authDashboard, Roles: admin, h: a.handleDelete},
	}
}

// windowIn is a window's body, also a send's sendWindow.
type windowIn struct {
	Hours    string   `json:"hours"`
	Days     []string `json:"days"`
	TimeZone string   `json:"timeZone"`
}

func windowBody(w *notify.SendWindow) map[string]any {
	if w == nil {
		return nil
	}
	days := w.Days
	if days == nil {
		days = []string{}
	}
	out := map[string]any{"hours": w.Hours, "days": days, "updatedAt": Timestamp(w.UpdatedAt)}
	if w.CategoryKey != "" {
		out["category"] = w.CategoryKey
	} else {
		out["timeZone"] = strOrNil(w.TimeZone)
	}
	return out
}

func (a windowsAPI) handleList(c *call) error {
	own, cats, err := a.room.List(c.ctx, c.actor)
	if err != nil {
		return err
	}
	list := make([]map[string]any, len(cats))
	for i, w := range cats {
		list[i] = windowBody(w)
	}
	return c.ok(http.StatusOK, map[string]any{"workspace": windowBody(own), "categories": list})
}

func (a windowsAPI) handlePut(c *call) error {
	var in windowIn
	if err := c.decode(&in); err != nil {
		return err
	}
	w, err := a.room.Put(c.ctx, c.actor, c.r.PathValue("key"), windows.Input{Hours: in.Hours, Days: in.Days, TimeZone: in.TimeZone})
	if err != nil {
		return err
	}
	return c.ok(http.StatusOK, map[string]any{"sendWindow": windowBody(w)})
}

func (a windowsAPI) handleDelete(c *call) error {
	if err := a.room.Delete(c.ctx, c.actor, c.r.PathValue("key")); err != nil {
		return err
	}
	return c.noContent()
}
