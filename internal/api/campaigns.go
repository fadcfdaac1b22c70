package api

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"strconv"

	"github.com/notifyd/notifyd/internal/newsletter"
	"github.com/notifyd/notifyd/internal/notify"
	"github.com/notifyd/notifyd/internal/usecase"
)

// newsletterAPI are the handlers of the newsletter room.
type newsletterAPI struct {
	*API
	room *newsletter.Service
}

// routes are the newsletter's: subscribers, double opt-in, campaigns.
func (a newsletterAPI) routes() []Route {
	return append(append(a.subscriberRoutes(), a.optInRoutes()...), a.campaignRoutes()...)
}

// campaignRoutes are the routes of newsletter campaigns and their fan-out.
func (a newsletterAPI) campaignRoutes() []Route {
	all, op, admin := notify.RolesAll, notify.RolesOperator, notify.RolesAdmin
	return []Route{
		{Method: "GET", Path: "/v1/newsletter/campaigns", auth: authDashboard, Roles: all, h: a.handleCampaignList},
		{Method: "POST", Path: "/v1/newsletter/campaigns", auth: authDashboard, Roles: op, h: a.handleCampaignCreate},
		{Method: "GET", Path: "/v1/newsletter/campaigns/{id}", auth: authDashboard, Roles: all, h: a.handleCampaignGet},
		{Method: "PATCH", Path: "/v1/newsletter/campaigns/{id}", auth: authDashboard, Roles: op, h: a.handleCampaignUpdate},
		{Method: "DELETE", Path: "/v1/newsletter/campaigns/{id}", auth: authDashboard, Roles: admin, h: a.handleCampaignDelete},
		{Method: "GET", Path: "/v1/newsletter/campaigns/{id}/audience", auth: authDashboard, Roles: all, h: a.handleCampaignAudience},
		{Method: "POST", Path: "/v1/newsletter/campaigns/{id}/send", auth: authDashboard, Roles: op, h: a.handleCampaignSend},
		{Method: "POST", Path: "/v1/newsletter/campaigns/{id}/cancel", auth: authDashboard, Roles: op, h: a.handleCampaignCancel},
		{Method: "POST", Path: "/v1/newsletter/campaigns/{id}/pause", auth: authDashboard, Roles: op, h: a.handleCampaignPause},
		{Method: "POST", Path: "/v1/newsletter/campaigns/{id}/resume", auth: authDashboard, Roles: op, h: a.handleCampaignResume},
		{Method: "POST", Path: "/v1/newsletter/campaigns/{id}/retry-failed", auth: authDashboard, Roles: op, h: a.handleCampaignRetryFailed},
		{Method: "POST", Path: "/v1/newsletter/campaigns/{id}/preview", auth: authDashboard, Roles: all, h: a.handleCampaignPreview},
	}
}

// campaignJSON is a campaign as the API shows it; the detail adds
// audienceSize and deliveryStats.
type campaignJSON struct {
	ID                 string          `json:"id"`
	Name               string          `json:"name"`
	Channel            notify.Channel  `json:"channel"`
	Status             string          `json:"status"`
	Subject            string          `json:"subject"`
	ContentText        string          `json:"contentText"`
	ContentHTML        *string         `json:"contentHtml"`
	IsAdvertisement    bool            `json:"isAdvertisement"`
	IncludeUnsubscribe bool            `json:"includeUnsubscribe"`
	AudienceFilter     json.RawMessage `json:"audienceFilter"`
	ScheduledAt        *string         `json:"scheduledAt"`
	TotalRecipients    int             `json:"totalRecipients"`
	QueuedCount        int             `json:"queuedCount"`
	FailedCount        int             `json:"failedCount"`
	AudienceSize       *int            `json:"audienceSize,omitempty"`
	DeliveryStats      map[string]int  `json:"deliveryStats,omitempty"`
	// EstimatedFinishAt is the detail's estimate of a sending campaign's
	// end (issue 31); absent from lists.
	EstimatedFinishAt *string `json:"estimatedFinishAt,omitempty"`
	FinishedAt        *string `json:"finishedAt"`
	CreatedAt         string  `json:"createdAt"`
	UpdatedAt         string  `json:"updatedAt"`
}

func campaignBody(c *notify.Campaign) campaignJSON {
	filter := json.RawMessage(`{}`)
	if c.AudienceFilter != "" {
		filter = json.RawMessage(c.AudienceFilter)
	}
	var html *string
	if c.ContentHTML != "" {
		v := c.ContentHTML
		html = &v
	}
	return campaignJSON{ID: c.ID, Name: c.Name, Channel: c.Channel, Status: string(c.Status), Subject: c.Subject,
		ContentText: c.ContentText, ContentHTML: html, IsAdvertisement: c.IsAdvertisement, IncludeUnsubscribe: c.IncludeUnsubscribe,
		AudienceFilter: filter, ScheduledAt: TimestampPtr(c.ScheduledAt), TotalRecipients: c.TotalRecipients,
		QueuedCount: c.QueuedCount, FailedCount: c.FailedCount, FinishedAt: TimestampPtr(c.FinishedAt),
		CreatedAt: Timestamp(c.CreatedAt), UpdatedAt: Timestamp(c.UpdatedAt)}
}

// campaignIn is the body of create and update.
type campaignIn struct {
	Name               Optional[string]          `json:"name"`
	Channel            Optional[string]          `json:"channel"`
	Subject            Optional[string]          `json:"subject"`
	ContentText        Optional[string]          `json:"contentText"`
	ContentHTML        Optional[string]          `json:"contentHtml"`
	IsAdvertisement    Optional[bool]            `json:"isAdvertisement"`
	IncludeUnsubscribe Optional[bool]            `json:"includeUnsubscribe"`
	AudienceFilter     Optional[json.RawMessage] `json:"audienceFilter"`
	ScheduledAt        Optional[string]          `json:"scheduledAt"`
}

func boolIn(field string, o Optional[bool]) (*bool, error) {
	if !o.Set {
		return nil, nil
	}
	if o.Null {
		return nil, notify.Invalid("%s must be a boolean", field)
	}
	return &o.Value, nil
}

// input maps the body; update says whether null clears scheduledAt and
// audienceFilter (on create null is absent).
func (in campaignIn) input(update bool) (newsletter.CampaignInput, error) {
	var out newsletter.CampaignInput
	var err error
	for _, f := range []struct {
		name string
		o    Optional[string]
		dst  **string
	}{{"name", in.Name, &out.Name}, {"channel", in.Channel, &out.Channel}, {"subject", in.Subject, &out.Subject},
		{"contentText", in.ContentText, &out.ContentText}} {
		if *f.dst, err = required(f.name, f.o); err != nil {
			return out, err
		}
	}
	out.ContentHTML = clearable(in.ContentHTML)
	if out.IsAdvertisement, err = boolIn("isAdvertisement", in.IsAdvertisement); err != nil {
		return out, err
	}
	if out.IncludeUnsubscribe, err = boolIn("includeUnsubscribe", in.IncludeUnsubscribe); err != nil {
		return out, err
	}
	if f := in.AudienceFilter; f.Set {
		raw := string(bytes.TrimSpace(f.Value))
		switch {
		case f.Null && update:
			out.AudienceFilter = &raw // "": remove the filter
		case f.Null:
		case len(raw) == 0 || raw[0] != '{':
			return out, notify.Invalid("audienceFilter must be an object")
		default:
			out.AudienceFilter = &raw
		}
	}
	if s := in.ScheduledAt; s.Set {
		if s.Null {
			out.ClearSchedule = update
		} else {
			v := s.Value
			out.ScheduledAt = &v
		}
	}
	return out, nil
}

func (a newsletterAPI) handleCampaignCreate(c *call) error {
	var in campaignIn
	if err := c.decode(&in); err != nil {
		return err
	}
	input, err := in.input(false)
	if err != nil {
		return err
	}
	x, err := a.room.CreateCampaign(c.ctx, c.actor, input)
	if err != nil {
		return err
	}
	return c.ok(http.StatusCreated, map[string]any{"campaign": campaignBody(x)})
}

func (a newsletterAPI) handleCampaignList(c *call) error {
	q := c.r.URL.Query()
	limit, err := intParam(q.Get("limit"), "limit")
	if err != nil {
		return err
	}
	offset := 0
	if v := q.Get("offset"); v != "" {
		if offset, err = strconv.Atoi(v); err != nil {
			return notify.Invalid("offset must be an integer")
		}
	}
	cs, total, limit, err := a.room.ListCampaigns(c.ctx, c.actor, q.Get("status"), limit, offset)
	if err != nil {
		return err
	}
	out := make([]campaignJSON, len(cs))
	for i, x := range cs {
		out[i] = campaignBody(x)
	}
	return c.ok(http.StatusOK, map[string]any{"campaigns": out, "total": total, "limit": limit, "offset": offset})
}

func (a newsletterAPI) handleCampaignGet(c *call) error {
	d, err := a.room.GetCampaign(c.ctx, c.actor, c.r.PathValue("id"))
	if err != nil {
		return err
	}
	body := campaignBody(d.Campaign)
	body.AudienceSize, body.DeliveryStats = &d.AudienceSize, d.DeliveryStats
	body.EstimatedFinishAt = TimestampPtr(d.EstimatedFinishAt)
	return c.ok(http.StatusOK, map[string]any{"campaign": body})
}

func (a newsletterAPI) handleCampaignUpdate(c *call) error {
	var in campaignIn
	if err := c.decode(&in); err != nil {
		return err
	}
	if in.Channel.Set {
		return notify.Invalid("channel cannot be changed")
	}
	input, err := in.input(true)
	if err != nil {
		return err
	}
	x, err := a.room.UpdateCampaign(c.ctx, c.actor, c.r.PathValue("id"), input)
	if err != nil {
		return err
	}
	return c.ok(http.StatusOK, map[string]any{"campaign": campaignBody(x)})
}

func (a newsletterAPI) handleCampaignDelete(c *call) error {
	if err := a.room.DeleteCampaign(c.ctx, c.actor, c.r.PathValue("id")); err != nil {
		return err
	}
	return c.noContent()
}

func (a newsletterAPI) handleCampaignAudience(c *call) error {
	n, err := a.room.CampaignAudience(c.ctx, c.actor, c.r.PathValue("id"))
	if err != nil {
		return err
	}
	return c.ok(http.StatusOK, map[string]any{"audienceSize": n})
}

func (a newsletterAPI) handleCampaignSend(c *call) error {
	var in struct {
		ScheduledAt Optional[string] `json:"scheduledAt"`
	}
	if len(bytes.TrimSpace(c.body)) > 0 {
		if err := c.decode(&in); err != nil {
			return err
		}
	}
	var sched *string
	if in.ScheduledAt.Set && !in.ScheduledAt.Null {
		sched = &in.ScheduledAt.Value
	}
	res, err := a.room.SendCampaign(c.ctx, c.actor, c.r.PathValue("id"), sched, a.baseURL)
	if err != nil {
		return err
	}
	return c.ok(http.StatusOK, map[string]any{"campaignId": res.CampaignID, "status": res.Status,
		"audienceSize": res.AudienceSize, "scheduledAt": TimestampPtr(res.ScheduledAt), "fanoutJobId": res.FanoutJobID})
}

func (a newsletterAPI) handleCampaignCancel(c *call) error {
	if err := decodeNone(c.body); err != nil {
		return err
	}
	n, err := a.room.CancelCampaign(c.ctx, c.actor, c.r.PathValue("id"))
	if err != nil {
		return err
	}
	return c.ok(http.StatusOK, map[string]any{"campaignId": c.r.PathValue("id"), "status": notify.CampaignCanceled, "canceledRequests": n})
}

func (a newsletterAPI) handleCampaignPause(c *call) error {
	return a.campaignHold(c, a.room.PauseCampaign)
}

func (a newsletterAPI) handleCampaignResume(c *call) error {
	return a.campaignHold(c, a.room.ResumeCampaign)
}

// campaignHold runs a pause or a resume (no body) and answers its counts.
func (a newsletterAPI) campaignHold(c *call, move func(context.Context, *usecase.Actor, string) (*newsletter.CampaignPauseResult, error)) error {
	if err := decodeNone(c.body); err != nil {
		return err
	}
	res, err := move(c.ctx, c.actor, c.r.PathValue("id"))
	if err != nil {
		return err
	}
	return c.ok(http.StatusOK, map[string]any{"campaignId": res.CampaignID, "status": res.Status,
		"queuedRequests": res.Queued, "inFlightRequests": res.InFlight})
}

func (a newsletterAPI) handleCampaignRetryFailed(c *call) error {
	if err := decodeNone(c.body); err != nil {
		return err
	}
	res, err := a.room.RetryFailedCampaign(c.ctx, c.actor, c.r.PathValue("id"))
	if err != nil {
		return err
	}
	return c.ok(http.StatusOK, map[string]any{"campaignId": res.CampaignID, "status": res.Status,
		"retriedRequests": res.Retried, "skippedRequests": res.Skipped, "alreadyRequeuedRequests": res.AlreadyRequeued})
}

// handleCampaignPreview renders a campaign for sample attributes (issue 21).
func (a newsletterAPI) handleCampaignPreview(c *call) error {
	var in struct {
		Attributes map[string]string `json:"attributes"`
	}
	if err := c.decode(&in); err != nil {
		return err
	}
	p, err := a.room.PreviewCampaign(c.ctx, c.actor, c.r.PathValue("id"), in.Attributes, a.baseURL)
	if err != nil {
		return err
	}
	return c.ok(http.StatusOK, map[string]any{"preview": map[string]any{
		"subject": p.Subject, "text": p.Text, "html": strOrNil(p.HTML), "missingVariables": p.MissingVariables}})
}
