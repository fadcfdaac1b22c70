package web

import (
	"net/http"
	"strings"

	"github.com/notifyd/notifyd/internal/notify"
	"github.com/notifyd/notifyd/internal/webhooks"
)

// webhookPages serve the webhook endpoint pages.
type webhookPages struct{ *Console }

// routes mirror the Dashboard API's webhook routes and roles:
// reading (endpoints, delivery log) for every role, writing for admins.
func (c webhookPages) routes() []Route {
	all, admin := notify.RolesAll, notify.RolesAdmin
	return []Route{
		{Method: "GET", Path: "/webhooks", Auth: Member, Roles: all, h: c.webhooksPage},
		{Method: "POST", Path: "/webhooks", Auth: Member, Roles: admin, h: c.createWebhook},
		{Method: "GET", Path: "/webhooks/{id}", Auth: Member, Roles: all, h: c.webhookPage},
		{Method: "POST", Path: "/webhooks/{id}", Auth: Member, Roles: admin, h: c.updateWebhook},
		{Method: "POST", Path: "/webhooks/{id}/enabled", Auth: Member, Roles: admin, h: c.enableWebhook},
		{Method: "POST", Path: "/webhooks/{id}/delete", Auth: Member, Roles: admin, h: c.deleteWebhook},
		{Method: "POST", Path: "/webhooks/{id}/rotate-secret", Auth: Member, Roles: admin, h: c.rotateWebhookSecret},
		{Method: "POST", Path: "/webhooks/{id}/deliveries/{deliveryId}/redeliver", Auth: Member, Roles: admin, h: c.redeliverWebhook},
	}
}

type webhooksData struct {
	Webhooks []*notify.Webhook
	Events   []string
	// Form is the create form's values, shown again with a problem.
	URL    string
	Chosen []string
}

// Checked reports whether event e is chosen in the form.
func (d webhooksData) Checked(e string) bool {
	for _, c := range d.Chosen {
		if c == e {
			return true
		}
	}
	return false
}

func (c webhookPages) webhooksPage(x *Ctx) error {
	return c.renderWebhooks(x, http.StatusOK, nil, webhooksData{Chosen: notify.EventTypes})
}

func (c webhookPages) renderWebhooks(x *Ctx, status int, problem *notify.Error, d webhooksData) error {
	var err error
	if d.Webhooks, err = c.rooms.Webhooks.ListWebhooks(x.Context(), x.Actor); err != nil {
		return err
	}
	d.Events = notify.WebhookEventTypes
	return x.Render(status, "webhooks.html", &Page{Title: "Webhooks", Section: "/webhooks", Problem: problem, Data: d})
}

// webhookInput reads the url and events fields (events: checkboxes).
func webhookInput(x *Ctx) webhooks.WebhookInput {
	u := strings.TrimSpace(x.R.PostFormValue("url"))
	ev := x.R.PostForm["events"]
	if ev == nil {
		ev = []string{}
	}
	return webhooks.WebhookInput{URL: &u, Events: &ev}
}

// createWebhook registers an endpoint and shows its signing secret, once,
// on the answer itself (never through a redirect or a cookie).
func (c webhookPages) createWebhook(x *Ctx) error {
	in := webhookInput(x)
	w, err := c.rooms.Webhooks.CreateWebhook(x.Context(), x.Actor, in)
	if err != nil {
		return c.again(x, err, func(status int, e *notify.Error) error {
			return c.renderWebhooks(x, status, e, webhooksData{URL: *in.URL, Chosen: *in.Events})
		})
	}
	return c.renderWebhook(x, http.StatusCreated, w.Webhook.ID, nil, w.Secret)
}

type webhookData struct {
	Webhook *notify.Webhook
	Events  []string
	// Secret is the signing secret just created or rotated (shown once).
	Secret     string
	Deliveries []*notify.WebhookDelivery
	Pager      *Pager
}

// Checked reports whether the endpoint subscribes to event e.
func (d webhookData) Checked(e string) bool { return webhooksData{Chosen: d.Webhook.Events}.Checked(e) }

func (c webhookPages) webhookPage(x *Ctx) error {
	return c.renderWebhook(x, http.StatusOK, x.R.PathValue("id"), nil, "")
}

func (c webhookPages) renderWebhook(x *Ctx, status int, id string, problem *notify.Error, secret string) error {
	w, err := c.rooms.Webhooks.GetWebhook(x.Context(), x.Actor, id)
	if err != nil {
		return err
	}
	p := NewPager(x.R)
	d := webhookData{Webhook: w, Events: notify.WebhookEventTypes, Secret: secret, Pager: p}
	var f notify.DeliveryFilter
	if x.R.Method == http.MethodGet {
		if f.Before, err = notify.DecodeCursor(p.Get("cursor")); err != nil {
			return err
		}
	}
	page, err := c.rooms.Webhooks.ListWebhookDeliveries(x.Context(), x.Actor, w.ID, f)
	if err != nil {
		return err
	}
	d.Deliveries = page.Deliveries
	p.SetNext("/webhooks/"+w.ID, page.Cursor, page.HasNext)
	return x.Render(status, "webhook.html", &Page{Title: "Webhook " + w.URL, Section: "/webhooks", Problem: problem, Data: d})
}

// updateWebhook changes the url and the events.
func (c webhookPages) updateWebhook(x *Ctx) error {
	id := x.R.PathValue("id")
	if _, err := c.rooms.Webhooks.UpdateWebhook(x.Context(), x.Actor, id, webhookInput(x)); err != nil {
		return c.again(x, err, func(status int, e *notify.Error) error { return c.renderWebhook(x, status, id, e, "") })
	}
	return x.Redirect("/webhooks/"+id, Flash{Kind: "info", Text: "Webhook saved."})
}

// enableWebhook turns deliveries on (enabled=true) or off.
func (c webhookPages) enableWebhook(x *Ctx) error {
	id := x.R.PathValue("id")
	on := x.R.PostFormValue("enabled") == "true"
	if _, err := c.rooms.Webhooks.UpdateWebhook(x.Context(), x.Actor, id, webhooks.WebhookInput{Enabled: &on}); err != nil {
		return err
	}
	text := "Webhook disabled: no new deliveries."
	if on {
		text = "Webhook enabled."
	}
	return x.Redirect("/webhooks/"+id, Flash{Kind: "info", Text: text})
}

func (c webhookPages) deleteWebhook(x *Ctx) error {
	if err := c.rooms.Webhooks.DeleteWebhook(x.Context(), x.Actor, x.R.PathValue("id")); err != nil {
		return err
	}
	return x.Redirect("/webhooks", Flash{Kind: "info", Text: "Webhook deleted with its delivery log."})
}

// rotateWebhookSecret issues a new secret and shows it once; the old one
// keeps signing beside it for the overlap (webhooks.Service.RotateWebhookSecret).
func (c webhookPages) rotateWebhookSecret(x *Ctx) error {
	id := x.R.PathValue("id")
	sec, err := c.rooms.Webhooks.RotateWebhookSecret(x.Context(), x.Actor, id)
	if err != nil {
		return err
	}
	return c.renderWebhook(x, http.StatusOK, id, nil, sec)
}

func (c webhookPages) redeliverWebhook(x *Ctx) error {
	id := x.R.PathValue("id")
	if _, err := c.rooms.Webhooks.RedeliverWebhook(x.Context(), x.Actor, id, x.R.PathValue("deliveryId")); err != nil {
		return err
	}
	return x.Redirect("/webhooks/"+id, Flash{Kind: "info", Text: "Delivery queued again."})
}
