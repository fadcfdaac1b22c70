package web

import (
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/notifyd/notifyd/internal/engagement"
	"github.com/notifyd/notifyd/internal/newsletter"
	"github.com/notifyd/notifyd/internal/notify"
)

// campaignPages serve the newsletter campaign pages.
type campaignPages struct{ *Console }

// routes mirror the Dashboard API's campaign routes and roles
// (internal/api/campaigns.go); /progress is the campaign page's poll.
func (c campaignPages) routes() []Route {
	all, op, admin := notify.RolesAll, notify.RolesOperator, notify.RolesAdmin
	return []Route{
		{Method: "GET", Path: "/newsletter", Auth: Member, Roles: all, h: c.campaignsPage},
		{Method: "POST", Path: "/newsletter/campaigns", Auth: Member, Roles: op, h: c.createCampaign},
		{Method: "GET", Path: "/newsletter/campaigns/{id}", Auth: Member, Roles: all, h: c.campaignPage},
		{Method: "GET", Path: "/newsletter/campaigns/{id}/progress", Auth: Member, Roles: all, h: c.campaignProgress},
		{Method: "POST", Path: "/newsletter/campaigns/{id}", Auth: Member, Roles: op, h: c.updateCampaign},
		{Method: "POST", Path: "/newsletter/campaigns/{id}/delete", Auth: Member, Roles: admin, h: c.deleteCampaign},
		{Method: "POST", Path: "/newsletter/campaigns/{id}/send", Auth: Member, Roles: op, h: c.sendCampaign},
		{Method: "POST", Path: "/newsletter/campaigns/{id}/cancel", Auth: Member, Roles: op, h: c.campaignAction("cancel")},
		{Method: "POST", Path: "/newsletter/campaigns/{id}/pause", Auth: Member, Roles: op, h: c.campaignAction("pause")},
		{Method: "POST", Path: "/newsletter/campaigns/{id}/resume", Auth: Member, Roles: op, h: c.campaignAction("resume")},
		{Method: "POST", Path: "/newsletter/campaigns/{id}/retry-failed", Auth: Member, Roles: op, h: c.campaignAction("retry-failed")},
	}
}

// campaignForm is the create and edit form's values.
type campaignForm struct {
	Name, Subject, Text, HTML, Audience string
	Ad, Unsubscribe                     bool
}

type campaignsData struct {
	Detail     bool // false: the list (campaigns.html shows either)
	Status     string
	Statuses   []notify.CampaignStatus
	Campaigns  []*notify.Campaign
	Total      int
	Prev, Next string
	Form       campaignForm
}

func (c campaignPages) campaignsPage(x *Ctx) error {
	return c.renderCampaigns(x, http.StatusOK, campaignForm{Ad: true, Unsubscribe: true}, nil)
}

func (c campaignPages) renderCampaigns(x *Ctx, status int, form campaignForm, problem *notify.Error) error {
	q := x.R.URL.Query()
	d := campaignsData{Status: q.Get("status"), Statuses: notify.CampaignStatuses, Form: form}
	offset := 0
	if v := q.Get("offset"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil {
			return notify.Invalid("offset must be an integer")
		}
		offset = n
	}
	cs, total, limit, err := c.rooms.Newsletter.ListCampaigns(x.Context(), x.Actor, d.Status, subscriberPageSize, offset)
	if err != nil {
		e := problemOf(c.log, x.R, err)
		if e.Status() != http.StatusBadRequest {
			return err
		}
		problem, status = e, http.StatusBadRequest
	}
	d.Campaigns, d.Total = cs, total
	if offset > 0 {
		d.Prev = offsetLink("/newsletter", q, max(0, offset-limit))
	}
	if offset+len(cs) < total {
		d.Next = offsetLink("/newsletter", q, offset+len(cs))
	}
	return x.Render(status, "campaigns.html", &Page{Title: "Campaigns", Section: "/newsletter", Problem: problem, Data: d})
}

// readCampaignForm reads the create or edit form: the audience is
// key=value lines, sent as {"attributes": {...}} (none: everyone).
func readCampaignForm(x *Ctx) (campaignForm, newsletter.CampaignInput, error) {
	f := x.R.PostForm
	form := campaignForm{Name: f.Get("name"), Subject: f.Get("subject"), Text: f.Get("contentText"), HTML: f.Get("contentHtml"),
		Audience: f.Get("audience"), Ad: f.Get("isAdvertisement") != "", Unsubscribe: f.Get("includeUnsubscribe") != ""}
	in := newsletter.CampaignInput{Name: &form.Name, Subject: &form.Subject, ContentText: &form.Text, ContentHTML: &form.HTML,
		IsAdvertisement: &form.Ad, IncludeUnsubscribe: &form.Unsubscribe}
	attrs, err := parsePairs("audience", form.Audience)
	if err != nil {
		return form, in, err
	}
	filter := ""
	if len(attrs) > 0 {
		b, _ := json.Marshal(map[string]any{"attributes": attrs})
		filter = string(b)
	}
	in.AudienceFilter = &filter
	return form, in, nil
}

// audienceText is a stored filter as the form's key=value lines.
func audienceText(raw string) string {
	var f struct {
		Attributes map[string]any `json:"attributes"`
	}
	if raw == "" || json.Unmarshal([]byte(raw), &f) != nil {
		return ""
	}
	m := make(map[string]string, len(f.Attributes))
	for k, v := range f.Attributes {
		if s, ok := v.(string); ok {
			m[k] = s
		} else {
			b, _ := json.Marshal(v)
			m[k] = string(b)
		}
	}
	return formatPairs(m)
}

// createCampaign creates a draft as POST /v1/newsletter/campaigns does
// and shows its page (the audience preview count, send, schedule).
func (c campaignPages) createCampaign(x *Ctx) error {
	form, in, err := readCampaignForm(x)
	if err == nil {
		ch := string(notify.ChannelEmail)
		in.Channel = &ch
		if *in.AudienceFilter == "" {
			in.AudienceFilter = nil
		}
		var cp *notify.Campaign
		if cp, err = c.rooms.Newsletter.CreateCampaign(x.Context(), x.Actor, in); err == nil {
			return x.Redirect("/newsletter/campaigns/"+cp.ID, Flash{Kind: "info", Text: "Draft created: check the audience, then send."})
		}
	}
	e := problemOf(c.log, x.R, err)
	if e.Status() != http.StatusBadRequest {
		return err
	}
	return c.renderCampaigns(x, http.StatusBadRequest, form, e)
}

type campaignData struct {
	Detail bool // true: one campaign's page
	*newsletter.CampaignDetail
	Form campaignForm
	// Live campaigns (scheduled, sending, paused) are polled by the page.
	Live bool
	// Done is how many recipients have a final outcome (the progress bar).
	Done int
	// Stats are the campaign's engagement figures (issue 35); nil for a
	// draft.
	Stats *campaignStatsView
}

// campaignStatsView is a campaign's statistics with its rates as the page
// writes them.
type campaignStatsView struct {
	*engagement.CampaignStats
	Delivered, Bounced, Opened, Clicked, ClickToOpen string
}

// statsView reads the campaign's statistics for its page.
func (c campaignPages) statsView(x *Ctx, cp *notify.Campaign) (*campaignStatsView, error) {
	if cp.Status == notify.CampaignDraft {
		return nil, nil
	}
	st, err := c.rooms.Engagement.Stats(x.Context(), x.Actor, cp.ID)
	if err != nil {
		return nil, err
	}
	pct := func(r float64) string { return strconv.FormatFloat(r*100, 'f', 1, 64) + "%" }
	return &campaignStatsView{CampaignStats: st, Delivered: pct(st.Rates.Delivered), Bounced: pct(st.Rates.Bounced),
		Opened: pct(st.Rates.Opened), Clicked: pct(st.Rates.Clicked), ClickToOpen: pct(st.Rates.ClickToOpen)}, nil
}

func (c campaignPages) campaignPage(x *Ctx) error {
	d, err := c.rooms.Newsletter.GetCampaign(x.Context(), x.Actor, x.R.PathValue("id"))
	if err != nil {
		return err
	}
	return c.renderCampaign(x, http.StatusOK, d, formOf(d.Campaign), nil)
}

// formOf is a stored campaign as the edit form shows it.
func formOf(cp *notify.Campaign) campaignForm {
	return campaignForm{Name: cp.Name, Subject: cp.Subject, Text: cp.ContentText, HTML: cp.ContentHTML,
		Audience: audienceText(cp.AudienceFilter), Ad: cp.IsAdvertisement, Unsubscribe: cp.IncludeUnsubscribe}
}

func (c campaignPages) renderCampaign(x *Ctx, status int, d *newsletter.CampaignDetail, form campaignForm, problem *notify.Error) error {
	s := d.DeliveryStats
	data := campaignData{Detail: true, CampaignDetail: d, Form: form,
		Live: !d.Campaign.Status.Terminal() && d.Campaign.Status != notify.CampaignDraft,
		Done: s[string(notify.StatusSent)] + s[string(notify.StatusFailed)] + s[string(notify.StatusCanceled)]}
	var err error
	if data.Stats, err = c.statsView(x, d.Campaign); err != nil {
		return err
	}
	return x.Render(status, "campaigns.html", &Page{Title: "Campaign " + d.Campaign.Name, Section: "/newsletter", Problem: problem, Data: data})
}

// estimateText is an estimated finish as the page shows it.
func estimateText(at *time.Time) string {
	if at == nil {
		return "not known yet"
	}
	return at.UTC().Format("2006-01-02 15:04:05Z")
}

// campaignProgress answers the campaign's live figures as JSON for the
// page's poll (static/campaign.js); reading them also moves a finished
// campaign to sent, as the API's detail does.
func (c campaignPages) campaignProgress(x *Ctx) error {
	d, err := c.rooms.Newsletter.GetCampaign(x.Context(), x.Actor, x.R.PathValue("id"))
	if err != nil {
		return err
	}
	cp := d.Campaign
	stats := map[string]int{}
	for k, v := range d.DeliveryStats {
		stats[k] = v
	}
	stats["done"] = stats[string(notify.StatusSent)] + stats[string(notify.StatusFailed)] + stats[string(notify.StatusCanceled)]
	b, err := json.Marshal(map[string]any{"status": cp.Status, "totalRecipients": cp.TotalRecipients, "audienceSize": d.AudienceSize,
		"fanoutDone": cp.FanoutDoneAt != nil, "deliveryStats": stats, "terminal": cp.Status.Terminal(),
		"estimatedFinish": estimateText(d.EstimatedFinishAt)})
	if err != nil {
		return err
	}
	x.W.Header().Set("Content-Type", "application/json")
	_, err = x.W.Write(b)
	return err
}

// updateCampaign saves a draft's edit form (PATCH
// /v1/newsletter/campaigns/{id}); the page then shows the new audience
// count.
func (c campaignPages) updateCampaign(x *Ctx) error {
	id := x.R.PathValue("id")
	form, in, err := readCampaignForm(x)
	if err == nil {
		if _, err = c.rooms.Newsletter.UpdateCampaign(x.Context(), x.Actor, id, in); err == nil {
			return x.Redirect("/newsletter/campaigns/"+id, Flash{Kind: "info", Text: "Campaign saved."})
		}
	}
	return c.campaignProblem(x, id, form, err)
}

// campaignProblem shows the campaign's page again with a 4xx problem
// (the form as sent, if any); anything else is the error page.
func (c campaignPages) campaignProblem(x *Ctx, id string, form campaignForm, err error) error {
	e := problemOf(c.log, x.R, err)
	if e.Status() != http.StatusBadRequest && e.Status() != http.StatusConflict {
		return err
	}
	d, gerr := c.rooms.Newsletter.GetCampaign(x.Context(), x.Actor, id)
	if gerr != nil {
		return gerr
	}
	if form == (campaignForm{}) {
		form = formOf(d.Campaign)
	}
	return c.renderCampaign(x, e.Status(), d, form, e)
}

// sendCampaign sends now, or schedules when the form has a time (UTC).
func (c campaignPages) sendCampaign(x *Ctx) error {
	id := x.R.PathValue("id")
	var sched *string
	if v := strings.TrimSpace(x.R.PostFormValue("scheduledAt")); v != "" {
		v = formTime(v)
		sched = &v
	}
	res, err := c.rooms.Newsletter.SendCampaign(x.Context(), x.Actor, id, sched, c.baseURL)
	if err != nil {
		return c.campaignProblem(x, id, campaignForm{}, err)
	}
	text := "Sending to " + strconv.Itoa(res.AudienceSize) + " subscribers."
	if res.ScheduledAt != nil {
		text = "Scheduled for " + res.ScheduledAt.UTC().Format("2006-01-02 15:04Z") + " (" + strconv.Itoa(res.AudienceSize) + " subscribers today)."
	}
	return x.Redirect("/newsletter/campaigns/"+id, Flash{Kind: "info", Text: text})
}

// campaignAction runs cancel, pause, resume or retry-failed as the API's
// route of the same name does, and says what it did.
func (c campaignPages) campaignAction(action string) func(x *Ctx) error {
	return func(x *Ctx) error {
		id, ctx, a := x.R.PathValue("id"), x.Context(), x.Actor
		var text string
		switch action {
		case "cancel":
			n, err := c.rooms.Newsletter.CancelCampaign(ctx, a, id)
			if err != nil {
				return c.campaignProblem(x, id, campaignForm{}, err)
			}
			text = "Campaign canceled; " + strconv.Itoa(n) + " pending messages canceled."
		case "pause", "resume":
			move, verb := c.rooms.Newsletter.PauseCampaign, "paused"
			if action == "resume" {
				move, verb = c.rooms.Newsletter.ResumeCampaign, "resumed"
			}
			res, err := move(ctx, a, id)
			if err != nil {
				return c.campaignProblem(x, id, campaignForm{}, err)
			}
			text = "Campaign " + verb + ": " + strconv.Itoa(res.Queued) + " queued, " + strconv.Itoa(res.InFlight) + " in flight."
		default:
			res, err := c.rooms.Newsletter.RetryFailedCampaign(ctx, a, id)
			if err != nil {
				return c.campaignProblem(x, id, campaignForm{}, err)
			}
			text = "Retrying " + strconv.Itoa(res.Retried) + " failed recipients (" + strconv.Itoa(res.Skipped) + " no longer in the audience"
			if res.AlreadyRequeued > 0 {
				text += ", " + strconv.Itoa(res.AlreadyRequeued) + " already queued again by a replay"
			}
			text += ")."
		}
		return x.Redirect("/newsletter/campaigns/"+id, Flash{Kind: "info", Text: text})
	}
}

func (c campaignPages) deleteCampaign(x *Ctx) error {
	id := x.R.PathValue("id")
	if err := c.rooms.Newsletter.DeleteCampaign(x.Context(), x.Actor, id); err != nil {
		return c.campaignProblem(x, id, campaignForm{}, err)
	}
	return x.Redirect("/newsletter", Flash{Kind: "info", Text: "Campaign deleted."})
}
