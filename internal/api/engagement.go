package api

import (
	"net/http"

	"github.com/notifyd/notifyd/internal/engagement"
	"github.com/notifyd/notifyd/internal/notify"
)

// engagementAPI serves e-mail engagement (issue 35, items 4 and 5) on the
// Dashboard API: the tracking settings (reads for every role, changes
// for admins and up) and a campaign's statistics.
type engagementAPI struct {
	*API
	room *engagement.Service
}

func (a engagementAPI) routes() []Route {
	all, admin := notify.RolesAll, notify.RolesAdmin
	return []Route{
		{Method: "GET", Path: "/v1/tracking", auth: authDashboard, Roles: all, h: a.handleList},
		{Method: "PUT", Path: "/v1/tracking/workspace", auth: authDashboard, Roles: admin, h: a.handlePut(notify.TrackingWorkspace)},
		{Method: "PUT", Path: "/v1/tracking/categories/{key}", auth: authDashboard, Roles: admin, h: a.handlePut(notify.TrackingCategory)},
		{Method: "DELETE", Path: "/v1/tracking/categories/{key}", auth: authDashboard, Roles: admin, h: a.handleDelete(notify.TrackingCategory)},
		{Method: "PUT", Path: "/v1/tracking/campaigns/{id}", auth: authDashboard, Roles: admin, h: a.handlePut(notify.TrackingCampaign)},
		{Method: "DELETE", Path: "/v1/tracking/campaigns/{id}", auth: authDashboard, Roles: admin, h: a.handleDelete(notify.TrackingCampaign)},
		{Method: "GET", Path: "/v1/newsletter/campaigns/{id}/stats", auth: authDashboard, Roles: all, h: a.handleCampaignStats},
	}
}

// trackingIn is a setting's body: null (or absent) inherits, except for
// the workspace, which needs both.
type trackingIn struct {
	Opens  *bool `json:"opens"`
	Clicks *bool `json:"clicks"`
}

func trackingBody(s *notify.TrackingSetting) map[string]any {
	out := map[string]any{"opens": s.Opens, "clicks": s.Clicks}
	switch s.Scope {
	case notify.TrackingCategory:
		out["category"] = s.Key
	case notify.TrackingCampaign:
		out["campaignId"] = s.Key
	}
	if !s.UpdatedAt.IsZero() {
		out["updatedAt"] = Timestamp(s.UpdatedAt)
	} else {
		out["updatedAt"] = nil
	}
	return out
}

// scopeKey is the path's category key or campaign id.
func scopeKey(c *call, scope string) string {
	switch scope {
	case notify.TrackingCategory:
		return c.r.PathValue("key")
	case notify.TrackingCampaign:
		return c.r.PathValue("id")
	}
	return ""
}

func (a engagementAPI) handleList(c *call) error {
	s, err := a.room.List(c.ctx, c.actor)
	if err != nil {
		return err
	}
	cats, camps := []map[string]any{}, []map[string]any{}
	for _, x := range s.Scoped {
		if x.Scope == notify.TrackingCategory {
			cats = append(cats, trackingBody(x))
		} else {
			camps = append(camps, trackingBody(x))
		}
	}
	return c.ok(http.StatusOK, map[string]any{"enabled": s.Enabled, "workspace": trackingBody(s.Workspace),
		"categories": cats, "campaigns": camps})
}

func (a engagementAPI) handlePut(scope string) func(*call) error {
	return func(c *call) error {
		var in trackingIn
		if err := c.decode(&in); err != nil {
			return err
		}
		s, err := a.room.Put(c.ctx, c.actor, scope, scopeKey(c, scope), in.Opens, in.Clicks)
		if err != nil {
			return err
		}
		return c.ok(http.StatusOK, map[string]any{"tracking": trackingBody(s), "enabled": a.room.Enabled()})
	}
}

func (a engagementAPI) handleDelete(scope string) func(*call) error {
	return func(c *call) error {
		if err := a.room.Delete(c.ctx, c.actor, scope, scopeKey(c, scope)); err != nil {
			return err
		}
		return c.noContent()
	}
}

func (a engagementAPI) handleCampaignStats(c *call) error {
	st, err := a.room.Stats(c.ctx, c.actor, c.r.PathValue("id"))
	if err != nil {
		return err
	}
	return c.ok(http.StatusOK, CampaignStatsBody(st))
}

// CampaignStatsBody is a campaign's statistics as the API (and the
// console) show them.
func CampaignStatsBody(st *engagement.CampaignStats) map[string]any {
	links := make([]map[string]any, len(st.Links))
	for i, l := range st.Links {
		links[i] = map[string]any{"url": l.URL, "index": l.Index, "clicks": l.Clicks, "likelyScannerClicks": l.ScannerClicks}
	}
	return map[string]any{
		"campaignId": st.Campaign.ID, "status": st.Campaign.Status, "totalRecipients": st.Recipients,
		"sent": st.Sent, "failed": st.Failed, "delivered": st.Delivered, "bounced": st.Bounced,
		"opened": st.Opened, "clicked": st.Clicked, "likelyScannerOpened": st.ScannerOpened, "likelyScannerClicked": st.ScannerClicked,
		"rates": map[string]any{"delivered": st.Rates.Delivered, "bounced": st.Rates.Bounced, "opened": st.Rates.Opened,
			"clicked": st.Rates.Clicked, "clickToOpen": st.Rates.ClickToOpen},
		"tracking": map[string]any{"opens": st.TrackOpens, "clicks": st.TrackClicks},
		"links":    links,
	}
}
