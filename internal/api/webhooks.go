package api

import (
	"net/http"

	"github.com/notifyd/notifyd/internal/notify"
	"github.com/notifyd/notifyd/internal/webhooks"
)

// webhooksAPI are the handlers of the webhooks room.
type webhooksAPI struct {
	*API
	room *webhooks.Service
}

// routes are the routes of webhook endpoints, their deliveries and the
// event outbox.
func (a webhooksAPI) routes() []Route {
	all, admin := notify.RolesAll, notify.RolesAdmin
	return []Route{
		{Method: "POST", Path: "/v1/webhooks", auth: authDashboard, Roles: admin, h: a.handleWebhookCreate},
		{Method: "GET", Path: "/v1/webhooks", auth: authDashboard, Roles: all, h: a.handleWebhookList},
		{Method: "GET", Path: "/v1/webhooks/{id}", auth: authDashboard, Roles: all, h: a.handleWebhookGet},
		{Method: "PATCH", Path: "/v1/webhooks/{id}", auth: authDashboard, Roles: admin, h: a.handleWebhookUpdate},
		{Method: "DELETE", Path: "/v1/webhooks/{id}", auth: authDashboard, Roles: admin, h: a.handleWebhookDelete},
		{Method: "POST", Path: "/v1/webhooks/{id}/rotate-secret", auth: authDashboard, Roles: admin, h: a.handleWebhookRotate},
		{Method: "GET", Path: "/v1/webhooks/{id}/deliveries", auth: authDashboard, Roles: all, h: a.handleWebhookDeliveries},
		{Method: "POST", Path: "/v1/webhooks/{id}/deliveries/{deliveryId}/redeliver", auth: authDashboard, Roles: admin, h: a.handleWebhookRedeliver},
	}
}

type webhookJSON struct {
	ID        string   `json:"id"`
	URL       string   `json:"url"`
	Events    []string `json:"events"`
	Enabled   bool     `json:"enabled"`
	CreatedAt string   `json:"createdAt"`
	UpdatedAt string   `json:"updatedAt"`
}

func webhookBody(w *notify.Webhook) webhookJSON {
	return webhookJSON{ID: w.ID, URL: w.URL, Events: w.Events, Enabled: w.Enabled,
		CreatedAt: Timestamp(w.CreatedAt), UpdatedAt: Timestamp(w.UpdatedAt)}
}

type webhookIn struct {
	URL     Optional[string]   `json:"url"`
	Events  Optional[[]string] `json:"events"`
	Enabled Optional[bool]     `json:"enabled"`
}

func (in webhookIn) input() (webhooks.WebhookInput, error) {
	var out webhooks.WebhookInput
	if in.URL.Set {
		if in.URL.Null {
			return out, notify.Invalid("url must be a string")
		}
		out.URL = &in.URL.Value
	}
	if in.Events.Set {
		if in.Events.Null {
			return out, notify.Invalid("events must be an array")
		}
		v := in.Events.Value
		if v == nil {
			v = []string{}
		}
		out.Events = &v
	}
	if in.Enabled.Set {
		if in.Enabled.Null {
			return out, notify.Invalid("enabled must be a boolean")
		}
		out.Enabled = &in.Enabled.Value
	}
	return out, nil
}

func (a webhooksAPI) handleWebhookCreate(c *call) error {
	var in webhookIn
	if err := c.decode(&in); err != nil {
		return err
	}
	input, err := in.input()
	if err != nil {
		return err
	}
	w, err := a.room.CreateWebhook(c.ctx, c.actor, input)
	if err != nil {
		return err
	}
	return c.ok(http.StatusCreated, map[string]any{"webhook": webhookBody(w.Webhook), "secret": w.Secret})
}

func (a webhooksAPI) handleWebhookList(c *call) error {
	ws, err := a.room.ListWebhooks(c.ctx, c.actor)
	if err != nil {
		return err
	}
	out := make([]webhookJSON, len(ws))
	for i, w := range ws {
		out[i] = webhookBody(w)
	}
	return c.ok(http.StatusOK, map[string]any{"webhooks": out})
}

func (a webhooksAPI) handleWebhookGet(c *call) error {
	w, err := a.room.GetWebhook(c.ctx, c.actor, c.r.PathValue("id"))
	if err != nil {
		return err
	}
	return c.ok(http.StatusOK, map[string]any{"webhook": webhookBody(w)})
}

func (a webhooksAPI) handleWebhookUpdate(c *call) error {
	var in webhookIn
	if err := c.decode(&in); err != nil {
		return err
	}
	input, err := in.input()
	if err != nil {
		return err
	}
	w, err := a.room.UpdateWebhook(c.ctx, c.actor, c.r.PathValue("id"), input)
	if err != nil {
		return err
	}
	return c.ok(http.StatusOK, map[string]any{"webhook": webhookBody(w)})
}

func (a webhooksAPI) handleWebhookDelete(c *call) error {
	if err := decodeNone(c.body); err != nil {
		return err
	}
	if err := a.room.DeleteWebhook(c.ctx, c.actor, c.r.PathValue("id")); err != nil {
		return err
	}
	return c.noContent()
}

func (a webhooksAPI) handleWebhookRotate(c *call) error {
	if err := decodeNone(c.body); err != nil {
		return err
	}
	sec, err := a.room.RotateWebhookSecret(c.ctx, c.actor, c.r.PathValue("id"))
	if err != nil {
		return err
	}
	return c.ok(http.StatusOK, map[string]any{"secret": sec})
}

func (a webhooksAPI) handleWebhookDeliveries(c *call) error {
	q := c.r.URL.Query()
	var f notify.DeliveryFilter
	var err error
	if f.Limit, err = intParam(q.Get("limit"), "limit"); err != nil {
		return err
	}
	if f.Before, err = decodeCursor(q.Get("cursor")); err != nil {
		return err
	}
	page, err := a.room.ListWebhookDeliveries(c.ctx, c.actor, c.r.PathValue("id"), f)
	if err != nil {
		return err
	}
	out := make([]map[string]any, len(page.Deliveries))
	for i, d := range page.Deliveries {
		out[i] = deliveryBody(d)
	}
	return c.ok(http.StatusOK, map[string]any{"deliveries": out, "cursor": encodeCursor(page.Cursor), "hasNext": page.HasNext})
}

func (a webhooksAPI) handleWebhookRedeliver(c *call) error {
	if err := decodeNone(c.body); err != nil {
		return err
	}
	d, err := a.room.RedeliverWebhook(c.ctx, c.actor, c.r.PathValue("id"), c.r.PathValue("deliveryId"))
	if err != nil {
		return err
	}
	return c.ok(http.StatusOK, map[string]any{"delivery": deliveryBody(d)})
}

// deliveryBody is one delivery with its latest outcome and, when loaded,
// every try of it.
func deliveryBody(d *notify.WebhookDelivery) map[string]any {
	m := map[string]any{
		"id": d.ID, "webhookId": d.WebhookID, "eventId": d.EventID, "eventType": d.EventType, "requestId": d.RequestID,
		"status": d.Status, "attempt": d.Attempts, "httpStatus": d.LastHTTPStatus, "error": strOrNil(d.LastError),
		"nextRetryAt": TimestampPtr(d.NextAttemptAt), "createdAt": Timestamp(d.CreatedAt), "updatedAt": Timestamp(d.UpdatedAt),
		"finishedAt": TimestampPtr(d.FinishedAt),
	}
	if d.Status != notify.DeliveryPending {
		m["nextRetryAt"] = nil
	}
	var dur any
	tries := make([]map[string]any, len(d.Tries))
	for i, t := range d.Tries {
		tries[i] = map[string]any{"attempt": t.Attempt, "httpStatus": t.HTTPStatus, "error": strOrNil(t.Error),
			"durationMs": t.DurationMS, "response": strOrNil(t.Response), "createdAt": Timestamp(t.CreatedAt)}
		dur = t.DurationMS
	}
	m["durationMs"] = dur
	if d.Tries != nil {
		m["tries"] = tries
	}
	return m
}
