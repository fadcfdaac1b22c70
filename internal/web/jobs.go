package web

import (
	"net/http"
	"strconv"
	"strings"

	"github.com/notifyd/notifyd/internal/notify"
	"github.com/notifyd/notifyd/internal/sends"
)

// jobPages serve the job and dead-letter pages.
type jobPages struct{ *Console }

// routes mirror the Dashboard API's job and dead-letter routes and
// roles (internal/api/routes.go): the dead-letter list is admin's, as
// GET /v1/dead-letter is; replays are the operator's.
func (c jobPages) routes() []Route {
	all, op, admin := notify.RolesAll, notify.RolesOperator, notify.RolesAdmin
	return []Route{
		{Method: "GET", Path: "/jobs", Auth: Member, Roles: all, h: c.jobsPage},
		{Method: "POST", Path: "/jobs/{id}/cancel", Auth: Member, Roles: op, h: c.cancelJob},
		{Method: "GET", Path: "/dead-letters", Auth: Member, Roles: admin, h: c.deadLettersPage},
		{Method: "POST", Path: "/dead-letters/replay", Auth: Member, Roles: op, h: c.replayDeadLetters},
		{Method: "POST", Path: "/dead-letters/{jobId}/replay", Auth: Member, Roles: op, h: c.replayDeadLetter},
	}
}

type jobsData struct {
	Jobs []*notify.OpenJob
	// Scheduled is the status a cancel applies to.
	Scheduled notify.JobStatus
}

func (c jobPages) jobsPage(x *Ctx) error {
	jobs, err := c.rooms.Sends.ListOpenJobs(x.Context(), x.Actor)
	if err != nil {
		return err
	}
	return x.Render(http.StatusOK, "jobs.html", &Page{Title: "Jobs", Data: jobsData{Jobs: jobs, Scheduled: notify.JobScheduled}})
}

// cancelJob cancels a job waiting for its time, as POST
// /v1/jobs/{id}/cancel does.
func (c jobPages) cancelJob(x *Ctx) error {
	if err := c.rooms.Sends.CancelScheduledJob(x.Context(), x.Actor, x.R.PathValue("id")); err != nil {
		return err
	}
	return x.Redirect("/jobs", Flash{Kind: "info", Text: "The job and its request are canceled."})
}

type deadLettersData struct {
	Items    []*notify.DeadLetter
	Count    int
	Channels []notify.Channel
}

func (c jobPages) deadLettersPage(x *Ctx) error {
	return c.renderDeadLetters(x, http.StatusOK, nil)
}

func (c jobPages) renderDeadLetters(x *Ctx, status int, problem *notify.Error) error {
	items, n, err := c.rooms.Sends.ListDeadLetters(x.Context(), x.Actor)
	if err != nil {
		return err
	}
	return x.Render(status, "deadletters.html", &Page{Title: "Dead letters", Section: "/dead-letters", Problem: problem,
		Data: deadLettersData{Items: items, Count: n, Channels: notify.Channels}})
}

// afterReplay is where a replay sends the browser: the list if the
// member may read it, else the jobs.
func afterReplay(x *Ctx) string {
	if x.Actor.Role.Allowed(notify.RolesAdmin) {
		return "/dead-letters"
	}
	return "/jobs"
}

// replayDeadLetter replays one item (POST /v1/dead-letter/{jobId}/replay).
func (c jobPages) replayDeadLetter(x *Ctx) error {
	d, err := c.rooms.Sends.ReplayDeadLetter(x.Context(), x.Actor, x.R.PathValue("jobId"))
	if err != nil {
		return err
	}
	return x.Redirect(afterReplay(x), Flash{Kind: "info", Text: "Replayed: request " + d.RequestID + " is queued again."})
}

// replayDeadLetters replays the items the form's filter selects (POST
// /v1/dead-letter/replay); empty fields select everything.
func (c jobPages) replayDeadLetters(x *Ctx) error {
	f := x.R.PostForm
	var in sends.ReplayInput
	opt := func(v string) *string {
		if v = strings.TrimSpace(v); v == "" {
			return nil
		}
		return &v
	}
	in.Channel, in.FailureCode = opt(f.Get("channel")), opt(f.Get("failureCode"))
	in.From, in.To = opt(formTime(f.Get("from"))), opt(formTime(f.Get("to")))
	n, err := c.rooms.Sends.ReplayDeadLetters(x.Context(), x.Actor, in)
	if err != nil {
		e := problemOf(c.log, x.R, err)
		if e.Status() != http.StatusBadRequest || !x.Actor.Role.Allowed(notify.RolesAdmin) {
			return err
		}
		return c.renderDeadLetters(x, http.StatusBadRequest, e)
	}
	return x.Redirect(afterReplay(x), Flash{Kind: "info", Text: "Replayed " + strconv.Itoa(n) + " dead letters."})
}
