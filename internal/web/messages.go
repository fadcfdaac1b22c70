package web

import (
	"net/http"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/notifyd/notifyd/internal/notify"
	"github.com/notifyd/notifyd/internal/sends"
)

// messagePages serve the message pages.
type messagePages struct{ *Console }

func (c messagePages) routes() []Route {
	return []Route{
		{Method: "GET", Path: "/messages", Auth: Member, Roles: notify.RolesAll, h: c.messagesPage},
		{Method: "GET", Path: "/messages/{id}", Auth: Member, Roles: notify.RolesAll, h: c.messagePage},
		{Method: "POST", Path: "/messages/{id}/cancel", Auth: Member, Roles: notify.RolesOperator, h: c.cancelMessage},
	}
}

type messagesData struct {
	Pager    *Pager
	Requests []*notify.Request
	Statuses []notify.RequestStatus
	Channels []notify.Channel
}

// formTime reads a datetime-local field (no zone: UTC) as RFC 3339.
func formTime(v string) string {
	if v == "" {
		return ""
	}
	for _, layout := range []string{"2006-01-02T15:04", "2006-01-02T15:04:05"} {
		if t, err := time.Parse(layout, v); err == nil {
			return t.UTC().Format(time.RFC3339)
		}
	}
	return v // the service refuses it with its own detail
}

func (c messagePages) messagesPage(x *Ctx) error {
	p := NewPager(x.R)
	q := sends.RequestQuery{Status: p.Get("status"), Channel: p.Get("channel"), From: formTime(p.Get("from")), To: formTime(p.Get("to")),
		Recipient: p.Get("recipient"), RequestID: p.Get("requestId"), Cursor: p.Get("cursor"), Test: p.Get("test")}
	d := messagesData{Pager: p, Statuses: notify.RequestStatuses, Channels: notify.AllChannels}
	page, err := c.rooms.Sends.ListRequests(x.Context(), x.Actor, q)
	if err != nil {
		// A bad filter shows the form again with the problem.
		e := problemOf(c.log, x.R, err)
		if e.Status() != http.StatusBadRequest {
			return err
		}
		return x.Render(http.StatusBadRequest, "messages.html", &Page{Title: "Messages", Problem: e, Data: d})
	}
	d.Requests = page.Requests
	p.SetNext("/messages", page.Cursor, page.HasNext)
	return x.Render(http.StatusOK, "messages.html", &Page{Title: "Messages", Data: d})
}

// Event is one entry of a request's state timeline.
type Event struct {
	At   time.Time
	What string
}

type messageData struct {
	*sends.RequestDetail
	Timeline []Event
	Terminal bool
}

func timeline(d *sends.RequestDetail) []Event {
	r := d.Request
	ev := []Event{{r.RequestedAt, "accepted (queued)"}}
	if r.ScheduledAt != nil {
		ev = append(ev, Event{*r.ScheduledAt, "scheduled for"})
	}
	if j := d.Job; j != nil && j.StartedAt != nil {
		ev = append(ev, Event{*j.StartedAt, "processing started"})
	}
	for i, a := range d.Attempts {
		what := "attempt " + strconv.Itoa(i+1) + " via " + a.ProviderDisplayName + ": "
		if a.Success {
			what += "success"
		} else {
			what += "failure " + a.FailureCode
		}
		ev = append(ev, Event{a.FinishedAt, what})
	}
	// Delivery reports (issue 35): what the vendor said after accepting.
	names := map[string]string{}
	for _, a := range d.Attempts {
		names[a.ID] = a.ProviderDisplayName
	}
	for _, rc := range d.Receipts {
		if rc.ReportedAt == nil {
			continue
		}
		what := "delivery report via " + names[rc.AttemptID] + ": " + rc.Status
		if rc.Code != "" {
			what += " (" + strings.TrimSpace(rc.Code+" "+strings.TrimPrefix(rc.Text, rc.Code)) + ")"
		}
		ev = append(ev, Event{*rc.ReportedAt, what})
	}
	if r.Status.Terminal() {
		what := string(r.Status)
		if r.FinalErrorCode != "" {
			what += " (" + r.FinalErrorCode + ")"
		}
		ev = append(ev, Event{r.UpdatedAt, what})
	}
	sort.SliceStable(ev, func(i, j int) bool { return ev[i].At.Before(ev[j].At) })
	return ev
}

func (c messagePages) messagePage(x *Ctx) error {
	d, err := c.rooms.Sends.GetRequestOf(x.Context(), x.Actor, x.R.PathValue("id"))
	if err != nil {
		return err
	}
	return x.Render(http.StatusOK, "message.html", &Page{Title: "Message " + d.Request.ID, Section: "/messages",
		Data: messageData{RequestDetail: d, Timeline: timeline(d), Terminal: d.Request.Status.Terminal()}})
}

// cancelMessage cancels a request that is not yet terminal (SPEC's
// request state table), as POST /v1/requests/{id}/cancel does.
func (c messagePages) cancelMessage(x *Ctx) error {
	id := x.R.PathValue("id")
	res, err := c.rooms.Sends.CancelRequestOf(x.Context(), x.Actor, id)
	if err != nil {
		return err
	}
	if !res.Canceled {
		return x.Redirect("/messages/"+id, Flash{Kind: "error", Text: "Not canceled: the request is already " + res.Status + "."})
	}
	return x.Redirect("/messages/"+id, Flash{Kind: "info", Text: "The request is canceled."})
}
