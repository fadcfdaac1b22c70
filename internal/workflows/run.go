package workflows

import (
	"context"
	"errors"
	"math"
	"strconv"
	"time"

	"github.com/notifyd/notifyd/internal/notify"
	"github.com/notifyd/notifyd/internal/usecase"
)

// Step outcomes.
const (
	OutcomeSent       = "sent"
	OutcomeNotSent    = "not_sent" // the send was refused (no address for the channel, ...)
	OutcomeWaited     = "waited"
	OutcomeThen       = "then"
	OutcomeElse       = "else"
	OutcomePassed     = "passed"
	OutcomeThrottled  = "throttled"
	OutcomeCollecting = "collecting" // a digest's window is open; still pending
	OutcomeReleased   = "released"
	OutcomeDigested   = "digested"
)

// Snooze asks the worker to run the step's job again after After,
// without counting an attempt (a step not due yet, a digest's window).
type Snooze struct{ After time.Duration }

func (s *Snooze) Error() string { return "workflow step not due for " + s.After.String() }

// SnoozeFor is how long the job waits (the worker's view of Snooze).
func (s *Snooze) SnoozeFor() time.Duration { return s.After }

// reach makes the pending row of step idx of r, due when the step may
// run: a delay's end, or now.
func (s *Service) reach(ctx context.Context, tx notify.Tx, r *notify.WorkflowRun, steps []notify.WorkflowStep, idx int, now time.Time) (*notify.WorkflowRunStep, error) {
	st := steps[idx]
	due := now
	if st.Type == notify.StepDelay {
		var err error
		if due, err = s.delayEnd(ctx, tx, r, st, now); err != nil {
			return nil, err
		}
	}
	return &notify.WorkflowRunStep{RunID: r.ID, WorkspaceID: r.WorkspaceID, Index: idx, Key: st.Key, Type: st.Type,
		Status: notify.StepPending, DueAt: due, CreatedAt: now}, nil
}

// delayEnd is when a delay step reached at now ends: after its duration,
// or at the time its payload field holds. A time without an offset is
// read in the recipient's time zone (UTC when the profile has none); a
// field missing, unreadable or past waits not at all.
func (s *Service) delayEnd(ctx context.Context, tx notify.Tx, r *notify.WorkflowRun, st notify.WorkflowStep, now time.Time) (time.Time, error) {
	if st.Duration != "" {
		d, _ := time.ParseDuration(st.Duration)
		return now.Add(d), nil
	}
	raw, _ := r.Payload[st.Until].(string)
	if raw == "" {
		return now, nil
	}
	if t, err := time.Parse(time.RFC3339, raw); err == nil {
		return maxTime(t, now), nil
	}
	loc := time.UTC
	p, err := tx.FindRecipient(ctx, r.WorkspaceID, r.RecipientID)
	if err != nil && !notify.IsNotFound(err) {
		return now, err
	}
	if p != nil && p.TimeZone != "" {
		if l, err := time.LoadLocation(p.TimeZone); err == nil {
			loc = l
		}
	}
	for _, layout := range []string{"2006-01-02T15:04:05", "2006-01-02T15:04", "2006-01-02 15:04"} {
		if t, err := time.ParseInLocation(layout, raw, loc); err == nil {
			return maxTime(t.UTC(), now), nil
		}
	}
	return now, nil
}

func maxTime(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

// RunStep runs step idx of run runID (a queue job's work). A step that
// has ended, or a run that has, is left as is: the job ran before. A
// step not due answers *Snooze.
func (s *Service) RunStep(ctx context.Context, ws, runID string, idx int) error {
	var r *notify.WorkflowRun
	var v *notify.WorkflowVersion
	err := s.Store.View(ctx, func(tx notify.Tx) (err error) {
		if r, err = tx.FindWorkflowRun(ctx, ws, runID); err != nil {
			return err
		}
		v, err = tx.FindWorkflowVersion(ctx, ws, r.WorkflowID, r.Version)
		return err
	})
	if notify.IsNotFound(err) {
		return nil // the run or its workflow was deleted
	}
	if err != nil {
		return err
	}
	row := stepRow(r, idx)
	if r.Status != notify.RunRunning || row == nil || row.Status != notify.StepPending || idx >= len(v.Steps) {
		return nil
	}
	if wait := row.DueAt.Sub(s.Now()); wait > 0 {
		return &Snooze{After: wait}
	}
	st := v.Steps[idx]
	var requestID, refusal string
	if st.Type == notify.StepSend {
		// Outside the run's transaction: the acceptance has its own (the
		// send group commit). Its idempotency key finds the request a
		// run of this job before a crash made.
		requestID, err = s.accept.AcceptWorkflowSend(ctx, ws, sendOf(r, st, idx))
		var e *notify.Error
		if errors.As(err, &e) && e.Status() < 500 {
			refusal, err = e.Detail, nil
		}
		if err != nil {
			return err
		}
	}
	var snooze *Snooze
	err = s.Store.Update(ctx, func(tx notify.Tx) error {
		r, err := tx.LockWorkflowRun(ctx, ws, runID)
		if err != nil {
			return err
		}
		row := stepRow(r, idx)
		if r.Status != notify.RunRunning || row == nil || row.Status != notify.StepPending {
			return nil
		}
		now := s.Now()
		x := &exec{s: s, ctx: ctx, tx: tx, run: r, steps: v.Steps, row: row, now: now}
		switch st.Type {
		case notify.StepSend:
			row.RequestID, row.Outcome = requestID, OutcomeSent
			if refusal != "" {
				row.Status, row.Outcome = notify.StepFailed, OutcomeNotSent+": "+refusal
			}
			return x.next("")
		case notify.StepDelay:
			row.Outcome = OutcomeWaited
			return x.next("")
		case notify.StepBranch:
			ok, err := x.holds(st.Conditions)
			if err != nil {
				return err
			}
			if ok {
				row.Outcome = OutcomeThen
				return x.next(st.Then)
			}
			row.Outcome = OutcomeElse
			return x.next(cmpOr(st.Else, endTarget))
		case notify.StepThrottle:
			return x.throttle(st)
		case notify.StepDigest:
			snooze, err = x.digest(st)
			return err
		}
		return nil
	})
	if err == nil && snooze != nil {
		return snooze
	}
	return err
}

// FailStep ends a run whose step spent its job's attempts.
func (s *Service) FailStep(ctx context.Context, ws, runID string, idx int, cause error) error {
	return s.Store.Update(ctx, func(tx notify.Tx) error {
		r, err := tx.LockWorkflowRun(ctx, ws, runID)
		if notify.IsNotFound(err) {
			return nil
		}
		if err != nil {
			return err
		}
		row := stepRow(r, idx)
		if r.Status != notify.RunRunning || row == nil || row.Status != notify.StepPending {
			return nil
		}
		now := s.Now()
		row.Status, row.Outcome, row.EndedAt = notify.StepFailed, "error: "+truncate(cause.Error(), 200), &now
		if err := tx.EndWorkflowRunStep(ctx, row); err != nil {
			return err
		}
		events := []*notify.Event{stepEvent(r, row, now), endRun(r, notify.RunFailed, now)}
		if err := tx.UpdateWorkflowRun(ctx, r); err != nil {
			return err
		}
		return emit(ctx, tx, events)
	})
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n]
}

func stepRow(r *notify.WorkflowRun, idx int) *notify.WorkflowRunStep {
	for _, st := range r.Steps {
		if st.Index == idx {
			return st
		}
	}
	return nil
}

// exec is one step's decision inside the run's locked transaction.
type exec struct {
	s     *Service
	ctx   context.Context
	tx    notify.Tx
	run   *notify.WorkflowRun
	steps []notify.WorkflowStep
	row   *notify.WorkflowRunStep
	now   time.Time
}

// next ends the step (done unless it failed) and goes to target: the
// next step (""), a later step's key, or the end.
func (x *exec) next(target string) error {
	if x.row.Status == notify.StepPending {
		x.row.Status = notify.RunStepDone
	}
	x.row.EndedAt = &x.now
	if err := x.tx.EndWorkflowRunStep(x.ctx, x.row); err != nil {
		return err
	}
	events := []*notify.Event{stepEvent(x.run, x.row, x.now)}
	idx := x.row.Index + 1
	switch target {
	case "":
	case endTarget:
		idx = len(x.steps)
	default:
		for i, st := range x.steps {
			if st.Key == target {
				idx = i
			}
		}
	}
	if idx >= len(x.steps) {
		return x.end(notify.RunCompleted, events)
	}
	step, err := x.s.reach(x.ctx, x.tx, x.run, x.steps, idx, x.now)
	if err != nil {
		return err
	}
	if err := x.tx.AddWorkflowRunStep(x.ctx, step); err != nil {
		return err
	}
	x.run.UpdatedAt = x.now
	if err := x.tx.UpdateWorkflowRun(x.ctx, x.run); err != nil {
		return err
	}
	return emit(x.ctx, x.tx, events)
}

// end ends the run with status, after events.
func (x *exec) end(status string, events []*notify.Event) error {
	events = append(events, endRun(x.run, status, x.now))
	if err := x.tx.UpdateWorkflowRun(x.ctx, x.run); err != nil {
		return err
	}
	return emit(x.ctx, x.tx, events)
}

// stop ends the step with outcome and the run with status.
func (x *exec) stop(outcome, status string) error {
	x.row.Status, x.row.Outcome, x.row.EndedAt = notify.RunStepDone, outcome, &x.now
	if err := x.tx.EndWorkflowRunStep(x.ctx, x.row); err != nil {
		return err
	}
	return x.end(status, []*notify.Event{stepEvent(x.run, x.row, x.now)})
}

// scopeKey is the run's recipient, and the value of the step's key field
// when it names one: the scope of a throttle or a digest.
func (x *exec) scopeKey(field string) string {
	k := x.run.RecipientID
	if field != "" {
		k += "\x1f" + scalar(x.run.Payload[field])
	}
	return k
}

// throttle lets the run through when fewer than the step's limit passed
// it within its window for the same recipient (and key), else ends it as
// throttled. The recipient's row lock serializes concurrent runs.
func (x *exec) throttle(st notify.WorkflowStep) error {
	window, _ := time.ParseDuration(st.Window)
	if _, err := x.tx.LockRecipient(x.ctx, x.run.WorkspaceID, x.run.RecipientID); err != nil && !notify.IsNotFound(err) {
		return err
	}
	key := x.scopeKey(st.KeyField)
	n, err := x.tx.CountWorkflowThrottle(x.ctx, x.run.WorkspaceID, x.run.WorkflowID, key, x.now.Add(-window))
	if err != nil {
		return err
	}
	if n >= st.Limit {
		return x.stop(OutcomeThrottled, notify.RunThrottled)
	}
	if err := x.tx.AddWorkflowThrottle(x.ctx, x.run.WorkspaceID, x.run.WorkflowID, key, x.run.ID, x.now); err != nil {
		return err
	}
	x.row.Outcome = OutcomePassed
	return x.next("")
}

// digest joins the run's payload to the open window of its workflow,
// recipient and key. The run that opens the window waits for its end
// (the step stays pending, collecting) and then goes on once with every
// item; a run that joins an open window ends there, as digested. The
// release happens in the transaction that ends the step, so it happens
// once whatever ran or crashed before.
func (x *exec) digest(st notify.WorkflowStep) (*Snooze, error) {
	maxItems := st.MaxItems
	if maxItems == 0 {
		maxItems = DefaultItems
	}
	if x.row.Outcome == OutcomeCollecting {
		if wait := x.row.DueAt.Sub(x.now); wait > 0 {
			return &Snooze{After: wait}, nil
		}
		d, items, released, err := x.tx.ReleaseWorkflowDigest(x.ctx, x.run.WorkspaceID, x.run.ID, maxItems)
		if err != nil {
			return nil, err
		}
		if released {
			x.run.Digest = &notify.WorkflowDigestResult{Count: d.Count, Items: items}
		}
		x.row.Outcome = OutcomeReleased
		return nil, x.next("")
	}
	window, _ := time.ParseDuration(st.Window)
	end := x.now.Add(window)
	if st.WindowType == "fixed" {
		w := window.Milliseconds()
		end = time.UnixMilli((x.now.UnixMilli()/w + 1) * w).UTC()
	}
	open := &notify.WorkflowDigest{ID: usecase.NewID(), WorkspaceID: x.run.WorkspaceID, WorkflowID: x.run.WorkflowID,
		RecipientID: x.run.RecipientID, DigestKey: x.scopeKey(st.KeyField), RunID: x.run.ID, WindowEnd: end}
	d, opened, err := x.tx.JoinWorkflowDigest(x.ctx, open, x.run.ID, x.run.Payload, x.now)
	if err != nil {
		return nil, err
	}
	if !opened {
		x.row.Outcome = OutcomeDigested + " into run " + d.RunID
		return nil, x.stop(x.row.Outcome, notify.RunDigested)
	}
	x.row.Outcome, x.row.DueAt = OutcomeCollecting, d.WindowEnd
	if err := x.tx.EndWorkflowRunStep(x.ctx, x.row); err != nil {
		return nil, err
	}
	return &Snooze{After: max(d.WindowEnd.Sub(x.now), time.Millisecond)}, nil
}

// scalar is a payload value as template and key text.
func scalar(v any) string {
	switch t := v.(type) {
	case nil:
		return ""
	case string:
		return t
	case bool:
		return strconv.FormatBool(t)
	case float64:
		if t == math.Trunc(t) && math.Abs(t) < 1e15 {
			return strconv.FormatInt(int64(t), 10)
		}
		return strconv.FormatFloat(t, 'g', -1, 64)
	}
	return toJSON(v)
}
