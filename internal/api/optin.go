package api

import (
	"net/http"

	"github.com/notifyd/notifyd/internal/newsletter"
	"github.com/notifyd/notifyd/internal/notify"
)

// Double opt-in (issue 21, item 5; docs/DECISIONS.md "Double opt-in"):
// the newsletter settings and the resend of a confirmation mail. The
// public confirmation page is internal/web's (confirm.go).

// optInRoutes are the dashboard routes of double opt-in.
func (a newsletterAPI) optInRoutes() []Route {
	all, op, admin := notify.RolesAll, notify.RolesOperator, notify.RolesAdmin
	return []Route{
		{Method: "GET", Path: "/v1/newsletter/settings", auth: authDashboard, Roles: all, h: a.handleNewsletterSettingsGet},
		{Method: "PATCH", Path: "/v1/newsletter/settings", auth: authDashboard, Roles: admin, h: a.handleNewsletterSettingsUpdate},
		{Method: "POST", Path: "/v1/newsletter/subscribers/{id}/resend-confirmation", auth: authDashboard, Roles: op,
			h: a.handleResendConfirmation},
	}
}

type newsletterSettingsJSON struct {
	DoubleOptIn bool    `json:"doubleOptIn"`
	UpdatedAt   *string `json:"updatedAt"`
}

func newsletterSettingsBody(s *notify.NewsletterSettings) map[string]any {
	return map[string]any{"settings": newsletterSettingsJSON{DoubleOptIn: s.DoubleOptIn, UpdatedAt: TimestampPtr(s.UpdatedAt)}}
}

func (a newsletterAPI) handleNewsletterSettingsGet(c *call) error {
	s, err := a.room.GetNewsletterSettings(c.ctx, c.actor)
	if err != nil {
		return err
	}
	return c.ok(http.StatusOK, newsletterSettingsBody(s))
}

func (a newsletterAPI) handleNewsletterSettingsUpdate(c *call) error {
	var in struct {
		DoubleOptIn *bool `json:"doubleOptIn"`
	}
	if err := c.decode(&in); err != nil {
		return err
	}
	if in.DoubleOptIn == nil {
		return notify.Invalid("doubleOptIn is required")
	}
	s, err := a.room.UpdateNewsletterSettings(c.ctx, c.actor, in.DoubleOptIn)
	if err != nil {
		return err
	}
	return c.ok(http.StatusOK, newsletterSettingsBody(s))
}

func (a newsletterAPI) handleResendConfirmation(c *call) error {
	if err := decodeNone(c.body); err != nil {
		return err
	}
	sent, err := a.room.ResendConfirmation(c.ctx, c.actor, c.r.PathValue("id"))
	if err != nil {
		return err
	}
	return c.ok(http.StatusAccepted, map[string]any{"subscriberId": sent.SubscriberID, "requestId": sent.RequestID,
		"sentAt": Timestamp(sent.SentAt), "sends": sent.Sends})
}

// importBody is the answer of an import: SPEC's counts, and
// confirmationsSent when the import queued confirmation mails.
func importBody(res *newsletter.ImportResult) map[string]any {
	out := map[string]any{"total": res.Total, "created": res.Created, "updated": res.Updated, "skipped": res.Skipped}
	if res.ConfirmationsSent > 0 {
		out["confirmationsSent"] = res.ConfirmationsSent
	}
	return out
}
