package api

import (
	"net/http"

	"github.com/notifyd/notifyd/internal/notify"
	"github.com/notifyd/notifyd/internal/sends"
)

// requestRoutes are the Dashboard API reads the web console needs (issue
// 18): the filtered request list, one request with its attempts and raw
// provider exchange, a member's cancel, and the overview figures.
func (a sendsAPI) requestRoutes() []Route {
	all, op := notify.RolesAll, notify.RolesOperator
	return []Route{
		{Method: "GET", Path: "/v1/requests", auth: authDashboard, Roles: all, h: a.handleRequestList},
		{Method: "GET", Path: "/v1/requests/{requestId}", auth: authDashboard, Roles: all, h: a.handleDashboardRequestGet},
		{Method: "POST", Path: "/v1/requests/{requestId}/cancel", auth: authDashboard, Roles: op, h: a.handleDashboardRequestCancel},
		{Method: "GET", Path: "/v1/requests/{requestId}/explanation", auth: authDashboard, Roles: all, h: a.handleDashboardExplanation},
		{Method: "GET", Path: "/v1/overview", auth: authDashboard, Roles: all, h: a.handleOverview},
	}
}

// RequestQuery reads the request-list filter of a query string (the API's
// and the console's Messages page's parameters are the same).
func RequestQuery(r *http.Request) (sends.RequestQuery, error) {
	q := r.URL.Query()
	limit, err := intParam(q.Get("limit"), "limit")
	return sends.RequestQuery{Status: q.Get("status"), Channel: q.Get("channel"), From: q.Get("from"), To: q.Get("to"),
		Recipient: q.Get("recipient"), RequestID: q.Get("requestId"), Cursor: q.Get("cursor"), Limit: limit, Test: q.Get("test")}, err
}

func requestItem(r *notify.Request) map[string]any {
	return map[string]any{"requestId": r.ID, "channel": r.Channel, "status": r.Status, "source": r.Source,
		"recipientAddress": r.RecipientAddress, "recipientName": strOrNil(r.RecipientName), "recipientId": strOrNil(r.RecipientID), "templateCode": strOrNil(r.TemplateCode),
		"requestedAt": Timestamp(r.RequestedAt), "updatedAt": Timestamp(r.UpdatedAt),
		"finalErrorCode": strOrNil(r.FinalErrorCode), "finalErrorMessage": strOrNil(r.FinalErrorMessage), "test": r.Test}
}

func requestItems(rs []*notify.Request) []map[string]any {
	out := make([]map[string]any, len(rs))
	for i, r := range rs {
		out[i] = requestItem(r)
	}
	return out
}

func (a sendsAPI) handleRequestList(c *call) error {
	q, err := RequestQuery(c.r)
	if err != nil {
		return err
	}
	page, err := a.room.ListRequests(c.ctx, c.actor, q)
	if err != nil {
		return err
	}
	return c.ok(http.StatusOK, map[string]any{"requests": requestItems(page.Requests), "cursor": encodeCursor(page.Cursor), "hasNext": page.HasNext})
}

func (a sendsAPI) handleDashboardExplanation(c *call) error {
	d, err := a.room.GetRequestOf(c.ctx, c.actor, c.r.PathValue("requestId"))
	if err != nil {
		return err
	}
	return c.ok(http.StatusOK, explanationBody(d.Request))
}

func (a sendsAPI) handleDashboardRequestGet(c *call) error {
	d, err := a.room.GetRequestOf(c.ctx, c.actor, c.r.PathValue("requestId"))
	if err != nil {
		return err
	}
	body := requestBody(d)
	for i, m := range body["attempts"].([]map[string]any) {
		m["providerCall"], m["response"] = rawJSON(d.Attempts[i].RequestJSON), rawJSON(d.Attempts[i].ResponseJSON)
	}
	body["recipientName"], body["templateCode"], body["source"] = strOrNil(d.Request.RecipientName), strOrNil(d.Request.TemplateCode), d.Request.Source
	return c.ok(http.StatusOK, body)
}

func (a sendsAPI) handleDashboardRequestCancel(c *call) error {
	if err := decodeNone(c.body); err != nil {
		return err
	}
	res, err := a.room.CancelRequestOf(c.ctx, c.actor, c.r.PathValue("requestId"))
	if err != nil {
		return err
	}
	return c.ok(http.StatusOK, map[string]any{"requestId": res.RequestID, "status": res.Status, "canceled": res.Canceled})
}

func countsBody(cs *notify.Counts) map[string]any {
	return map[string]any{"totalRequests": cs.TotalRequests, "byStatus": cs.ByStatus, "byChannelStatus": cs.ByChannelStatus}
}

func (a sendsAPI) handleOverview(c *call) error {
	o, err := a.room.Overview(c.ctx, c.actor)
	if err != nil {
		return err
	}
	breakers := make([]map[string]any, len(o.OpenBreakers))
	for i, p := range o.OpenBreakers {
		breakers[i] = map[string]any{"providerAccountId": p.ID, "displayName": p.DisplayName, "providerKind": p.ProviderKind, "channel": p.Channel}
	}
	return c.ok(http.StatusOK, map[string]any{"last24h": countsBody(o.Day), "last7d": countsBody(o.Week), "queueDepth": o.QueueDepth,
		"openBreakers": breakers, "deadLetterCount": o.DeadLetters, "latestFailures": requestItems(o.LatestFailures)})
}
