package notify

import (
	"errors"
	"testing"
	"time"
)

// The stored and API strings of every status, unchanged by the types.
func TestStatusStrings(t *testing.T) {
	t.Parallel()
	for got, want := range map[string]string{
		string(StatusQueued): "queued", string(StatusProcessing): "processing", string(StatusSent): "sent",
		string(StatusFailed): "failed", string(StatusCanceled): "canceled",
	} {
		if got != want {
			t.Errorf("request status %q, want %q", got, want)
		}
	}
	jobs := []JobStatus{JobScheduled, JobQueued, JobProcessing, JobRetrying, JobDeadLetter, JobCompleted, JobFailed, JobCanceled}
	want := []string{"scheduled", "queued", "processing", "retrying", "dead_letter", "completed", "failed", "canceled"}
	for i, s := range jobs {
		if string(s) != want[i] {
			t.Errorf("job status %q, want %q", s, want[i])
		}
	}
	camps := []string{"draft", "scheduled", "sending", "paused", "sent", "canceled", "failed"}
	for i, s := range CampaignStatuses {
		if string(s) != camps[i] {
			t.Errorf("campaign status %q, want %q", s, camps[i])
		}
	}
}

func TestRequestMoves(t *testing.T) {
	t.Parallel()
	allowed := map[[2]RequestStatus]bool{
		{StatusQueued, StatusProcessing}:     true, // a worker claims it
		{StatusQueued, StatusCanceled}:       true, // cancel
		{StatusProcessing, StatusProcessing}: true, // a claim takes over a dead run
		{StatusProcessing, StatusSent}:       true,
		{StatusProcessing, StatusFailed}:     true,
		{StatusProcessing, StatusQueued}:     true, // job retry, fallback step, halted run
		{StatusProcessing, StatusCanceled}:   true, // cancel in flight
		{StatusFailed, StatusQueued}:         true, // dead-letter replay, campaign retry
		{StatusSent, StatusQueued}:           true, // an undelivered report's channel fallback (issue 35)
	}
	checkTable(t, RequestStatuses, allowed, RequestStatus.CanMove)
	for _, s := range []RequestStatus{"", "unknown", "SENT"} {
		if s.Valid() || s.CanMove(StatusQueued) || StatusQueued.CanMove(s) {
			t.Errorf("%q is not a request status", s)
		}
	}
}

func TestRequestTerminal(t *testing.T) {
	t.Parallel()
	for s, want := range map[RequestStatus]bool{StatusQueued: false, StatusProcessing: false, StatusSent: true, StatusFailed: true, StatusCanceled: true} {
		if s.Terminal() != want {
			t.Errorf("%s terminal %v, want %v", s, !want, want)
		}
		// No worker or cancel moves a terminal request.
		if s.Terminal() && (s.CanMove(StatusProcessing) || s.CanMove(StatusCanceled)) {
			t.Errorf("terminal %s moves on", s)
		}
	}
}

func TestRequestMoveTo(t *testing.T) {
	t.Parallel()
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	t1 := t0.Add(time.Minute)
	tests := []struct {
		name string
		from RequestStatus
		to   RequestStatus
		ok   bool
	}{
		{"cancel a queued request", StatusQueued, StatusCanceled, true},
		{"deliver", StatusProcessing, StatusSent, true},
		{"retry", StatusProcessing, StatusQueued, true},
		{"replay", StatusFailed, StatusQueued, true},
		{"sent stays sent", StatusSent, StatusCanceled, false},
		{"canceled stays canceled", StatusCanceled, StatusQueued, false},
		{"queued is not sent without a run", StatusQueued, StatusSent, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			r := &Request{ID: "r1", Status: tc.from, UpdatedAt: t0}
			err := r.MoveTo(tc.to, t1)
			if !tc.ok {
				if !errors.Is(err, ErrIllegalMove) {
					t.Fatalf("MoveTo = %v, want ErrIllegalMove", err)
				}
				if r.Status != tc.from || !r.UpdatedAt.Equal(t0) {
					t.Fatalf("a refused move changed the request: %s at %v", r.Status, r.UpdatedAt)
				}
				return
			}
			if err != nil || r.Status != tc.to || !r.UpdatedAt.Equal(t1) {
				t.Fatalf("MoveTo = %v: %s at %v, want %s at %v", err, r.Status, r.UpdatedAt, tc.to, t1)
			}
		})
	}
}

func TestJobMoves(t *testing.T) {
	t.Parallel()
	all := []JobStatus{JobScheduled, JobQueued, JobProcessing, JobRetrying, JobDeadLetter, JobCompleted, JobFailed, JobCanceled}
	allowed := map[[2]JobStatus]bool{
		{JobScheduled, JobProcessing}:  true, // due and claimed
		{JobScheduled, JobCanceled}:    true, // dashboard job-cancel, request cancel
		{JobQueued, JobProcessing}:     true,
		{JobQueued, JobCanceled}:       true,
		{JobRetrying, JobProcessing}:   true,
		{JobRetrying, JobCanceled}:     true,
		{JobProcessing, JobProcessing}: true, // a claim takes over a dead run
		{JobProcessing, JobCompleted}:  true,
		{JobProcessing, JobFailed}:     true,
		{JobProcessing, JobDeadLetter}: true,
		{JobProcessing, JobRetrying}:   true,
		{JobProcessing, JobQueued}:     true, // fallback step, halted run
		{JobProcessing, JobCanceled}:   true,
		{JobFailed, JobQueued}:         true, // campaign retry
		{JobDeadLetter, JobQueued}:     true, // dead-letter replay, campaign retry
		{JobCompleted, JobQueued}:      true, // an undelivered report's channel fallback (issue 35)
	}
	checkTable(t, all, allowed, JobStatus.CanMove)
	j := &Job{ID: "j1", Status: JobCompleted}
	if err := j.MoveTo(JobCanceled); !errors.Is(err, ErrIllegalMove) || j.Status != JobCompleted {
		t.Fatalf("completed -> canceled: %v, status %s", err, j.Status)
	}
	j.Status = JobScheduled
	if err := j.MoveTo(JobCanceled); err != nil || j.Status != JobCanceled {
		t.Fatalf("scheduled -> canceled: %v, status %s", err, j.Status)
	}
}

func TestCampaignMoves(t *testing.T) {
	t.Parallel()
	allowed := map[[2]CampaignStatus]bool{
		{CampaignDraft, CampaignSending}:       true, // sent now
		{CampaignDraft, CampaignScheduled}:     true, // sent for later
		{CampaignScheduled, CampaignScheduled}: true, // sent again with a new schedule
		{CampaignScheduled, CampaignSending}:   true, // its fan-out starts, or sent now
		{CampaignScheduled, CampaignSent}:      true, // the detail lookup finds it done
		{CampaignScheduled, CampaignCanceled}:  true,
		{CampaignScheduled, CampaignFailed}:    true,
		{CampaignSending, CampaignPaused}:      true,
		{CampaignSending, CampaignSent}:        true,
		{CampaignSending, CampaignCanceled}:    true,
		{CampaignSending, CampaignFailed}:      true,
		{CampaignPaused, CampaignSending}:      true, // resume
		{CampaignPaused, CampaignCanceled}:     true,
		{CampaignPaused, CampaignFailed}:       true,
		{CampaignSent, CampaignSending}:        true, // retry its failed recipients
	}
	checkTable(t, CampaignStatuses, allowed, CampaignStatus.CanMove)
	for _, s := range CampaignStatuses {
		if !s.Valid() {
			t.Errorf("%s is not valid", s)
		}
	}
	if CampaignStatus("archived").Valid() || CampaignStatus("").Valid() {
		t.Error("unknown campaign status is valid")
	}
	for s, want := range map[CampaignStatus]bool{CampaignDraft: false, CampaignScheduled: false, CampaignSending: false,
		CampaignPaused: false, CampaignSent: true, CampaignCanceled: true, CampaignFailed: true} {
		if s.Terminal() != want {
			t.Errorf("%s terminal %v, want %v", s, !want, want)
		}
	}

	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	c := &Campaign{ID: "c1", Status: CampaignCanceled, UpdatedAt: t0}
	if err := c.MoveTo(CampaignSending, t0.Add(time.Hour)); !errors.Is(err, ErrIllegalMove) || c.Status != CampaignCanceled || !c.UpdatedAt.Equal(t0) {
		t.Fatalf("canceled -> sending: %v, %s at %v", err, c.Status, c.UpdatedAt)
	}
	c.Status = CampaignSending
	if err := c.MoveTo(CampaignPaused, t0.Add(time.Hour)); err != nil || c.Status != CampaignPaused || !c.UpdatedAt.Equal(t0.Add(time.Hour)) {
		t.Fatalf("sending -> paused: %v, %s at %v", err, c.Status, c.UpdatedAt)
	}
}

// checkTable checks every pair of statuses against the moves allowed,
// so a move added to or dropped from a table shows here.
func checkTable[S ~string](t *testing.T, all []S, allowed map[[2]S]bool, can func(S, S) bool) {
	t.Helper()
	for _, from := range all {
		for _, to := range all {
			if want := allowed[[2]S{from, to}]; can(from, to) != want {
				t.Errorf("%s -> %s: CanMove %v, want %v", from, to, !want, want)
			}
		}
	}
}
