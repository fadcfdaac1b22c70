package notify

import (
	"errors"
	"fmt"
	"slices"
	"time"
)

// The statuses of requests, their jobs and campaigns, and the moves
// between them. As with the circuit breaker (dispatch.BreakerPolicy), a
// status is a plain value and a table says which moves are legal; the
// MoveTo methods refuse any other, so a use case cannot write a state the
// SPEC tables do not lead to. The strings are the stored values and the
// API's, unchanged.
//
// Some moves are made by the store in SQL, many rows at once (a claim, a
// dead-letter replay, a campaign retry, a campaign cancel); the tables
// list them too, so each lifecycle reads in one place.

// ErrIllegalMove is what a refused status move wraps.
var ErrIllegalMove = errors.New("illegal status move")

// moves is a state table: from each status, the statuses it may move to.
type moves[S ~string] map[S][]S

func (m moves[S]) allow(from, to S) bool { return slices.Contains(m[from], to) }

// move sets *cur to to when the table allows it, else leaves it and
// answers an error wrapping ErrIllegalMove; what names the record.
func (m moves[S]) move(what string, cur *S, to S) error {
	if !m.allow(*cur, to) {
		return fmt.Errorf("%w: %s cannot move from %q to %q", ErrIllegalMove, what, *cur, to)
	}
	*cur = to
	return nil
}

// RequestStatus is a notification request's status (SPEC "Notification
// request").
type RequestStatus string

// Request statuses.
const (
	StatusQueued     RequestStatus = "queued"
	StatusProcessing RequestStatus = "processing"
	StatusSent       RequestStatus = "sent"
	StatusFailed     RequestStatus = "failed"
	StatusCanceled   RequestStatus = "canceled"
)

// RequestStatuses lists the request statuses in SPEC's order.
var RequestStatuses = []RequestStatus{StatusQueued, StatusProcessing, StatusSent, StatusFailed, StatusCanceled}

// requestMoves is the request state table: from each status, the statuses
// it may move to. A new request starts queued (processing for a send
// whose caller waits: an OTP, a test-send).
var requestMoves = moves[RequestStatus]{
	// A worker claims it; or a cancel.
	StatusQueued: {StatusProcessing, StatusCanceled},
	// A provider took it; every provider failed for good; back to queued
	// for a job retry, a fallback step or a run halted before any call; a
	// cancel (the attempt in flight goes on). processing to processing is
	// a claim taking over a run that died.
	StatusProcessing: {StatusProcessing, StatusSent, StatusFailed, StatusQueued, StatusCanceled},
	// A dead-letter replay or a campaign retry sends it again (the store).
	StatusFailed: {StatusQueued},
	// A delivery report said the message did not arrive, and the request's
	// channel fallback moves on to its next step (issue 35, item 3; once).
	StatusSent: {StatusQueued},
}

// Valid reports whether s is a request status.
func (s RequestStatus) Valid() bool { return slices.Contains(RequestStatuses, s) }

// Terminal reports whether s is final: no worker or cancel moves it (a
// failed request moves again only when replayed or retried).
func (s RequestStatus) Terminal() bool {
	return s == StatusSent || s == StatusFailed || s == StatusCanceled
}

// CanMove reports whether the request state table has a move from s to to.
func (s RequestStatus) CanMove(to RequestStatus) bool { return requestMoves.allow(s, to) }

// MoveTo moves r to status to at at; an illegal move leaves r as it was
// and answers an error wrapping ErrIllegalMove.
func (r *Request) MoveTo(to RequestStatus, at time.Time) error {
	err := requestMoves.move("request "+r.ID, &r.Status, to)
	if err == nil {
		r.UpdatedAt = at
	}
	return err
}

// JobStatus is the status of a request's job row (SPEC "Queue job
// states").
type JobStatus string

// Job statuses.
const (
	JobScheduled  JobStatus = "scheduled"
	JobQueued     JobStatus = "queued"
	JobProcessing JobStatus = "processing"
	JobRetrying   JobStatus = "retrying"
	JobDeadLetter JobStatus = "dead_letter"
	JobCompleted  JobStatus = "completed"
	JobFailed     JobStatus = "failed"
	JobCanceled   JobStatus = "canceled"
)

// jobMoves is the job state table. A job starts scheduled (a future
// send), queued, or processing (a send whose caller waits).
var jobMoves = moves[JobStatus]{
	// Due, a worker claims it; or its request is canceled.
	JobScheduled: {JobProcessing, JobCanceled},
	JobQueued:    {JobProcessing, JobCanceled},
	JobRetrying:  {JobProcessing, JobCanceled},
	// The run's outcome: sent; failed for good, or after its last attempt
	// (a dead letter); a retry after backoff; back to queued (a fallback
	// step, or a run halted before any call); a cancel. processing to
	// processing is a claim taking over a run that died.
	JobProcessing: {JobProcessing, JobCompleted, JobFailed, JobDeadLetter, JobRetrying, JobQueued, JobCanceled},
	// A dead-letter replay or a campaign retry queues it again (the store).
	JobFailed:     {JobQueued},
	JobDeadLetter: {JobQueued},
	// The fallback of an undelivered report (issue 35) queues it again.
	JobCompleted: {JobQueued},
}

// CanMove reports whether the job state table has a move from s to to.
func (s JobStatus) CanMove(to JobStatus) bool { return jobMoves.allow(s, to) }

// MoveTo moves j to status to; an illegal move leaves j as it was and
// answers an error wrapping ErrIllegalMove.
func (j *Job) MoveTo(to JobStatus) error { return jobMoves.move("job "+j.ID, &j.Status, to) }

// CampaignStatus is a campaign's status (SPEC "Campaign").
type CampaignStatus string

// Campaign statuses.
const (
	CampaignDraft     CampaignStatus = "draft"
	CampaignScheduled CampaignStatus = "scheduled"
	CampaignSending   CampaignStatus = "sending"
	CampaignSent      CampaignStatus = "sent"
	CampaignCanceled  CampaignStatus = "canceled"
	CampaignFailed    CampaignStatus = "failed"
	// CampaignPaused is an addition to SPEC's statuses: a sending campaign
	// whose fan-out and undispatched requests are held until resumed.
	CampaignPaused CampaignStatus = "paused"
)

// CampaignStatuses lists the campaign statuses, paused after sending.
var CampaignStatuses = []CampaignStatus{CampaignDraft, CampaignScheduled, CampaignSending, CampaignPaused,
	CampaignSent, CampaignCanceled, CampaignFailed}

// campaignMoves is the campaign state table. A campaign starts as a draft.
var campaignMoves = moves[CampaignStatus]{
	// Sent now or for later.
	CampaignDraft: {CampaignSending, CampaignScheduled},
	// Sent again with a new schedule; its fan-out starts; the detail
	// lookup finds it done; canceled; its fan-out failed.
	CampaignScheduled: {CampaignScheduled, CampaignSending, CampaignSent, CampaignCanceled, CampaignFailed},
	CampaignSending:   {CampaignPaused, CampaignSent, CampaignCanceled, CampaignFailed},
	CampaignPaused:    {CampaignSending, CampaignCanceled, CampaignFailed},
	// Its failed recipients are retried.
	CampaignSent: {CampaignSending},
}

// Valid reports whether s is a campaign status.
func (s CampaignStatus) Valid() bool { return slices.Contains(CampaignStatuses, s) }

// Terminal reports whether s is final (a sent campaign moves again only
// to retry its failed recipients).
func (s CampaignStatus) Terminal() bool {
	return s == CampaignSent || s == CampaignCanceled || s == CampaignFailed
}

// CanMove reports whether the campaign state table has a move from s to
// to.
func (s CampaignStatus) CanMove(to CampaignStatus) bool { return campaignMoves.allow(s, to) }

// MoveTo moves c to status to at at; an illegal move leaves c as it was
// and answers an error wrapping ErrIllegalMove.
func (c *Campaign) MoveTo(to CampaignStatus, at time.Time) error {
	err := campaignMoves.move("campaign "+c.ID, &c.Status, to)
	if err == nil {
		c.UpdatedAt = at
	}
	return err
}
