package workflows

import (
	"context"
	"slices"
	"time"

	"github.com/notifyd/notifyd/internal/notify"
)

// StepRef names one step of one run.
type StepRef struct {
	RunID string
	Step  int
}

// due is one pending step of a batch, due now, with the send its
// transaction accepts (a send step's, or the send step right after a
// delay's end; -1: none).
type due struct {
	ref   StepRef
	steps []notify.WorkflowStep
	send  int // index into the batch's sends, or -1
}

// RunSteps runs pending delay and send steps of many runs together (a
// jobs.WorkflowSteps job's work): one read of the runs outside any
// transaction, their sends built, and then one transaction of the send
// group commit that locks the runs, ends each step still pending,
// accepts the sends and reaches the next steps. A delay whose next step
// is a send sends it in that same transaction. A step that has ended
// (run before a crash, canceled) is left as is; steps not due yet answer
// *Snooze for the latest of them, after the due ones ran.
func (s *Service) RunSteps(ctx context.Context, ws string, refs []StepRef) error {
	ids := make([]string, len(refs))
	for i, r := range refs {
		ids[i] = r.RunID
	}
	var runs []*notify.WorkflowRun
	versions := map[string]*notify.WorkflowVersion{}
	err := s.Store.Lookup(ctx, func(tx notify.Tx) (err error) {
		if runs, err = tx.ReadWorkflowRuns(ctx, ws, ids, false); err != nil {
			return err
		}
		for _, r := range runs {
			k := r.WorkflowID + "\x00" + itoa(r.Version)
			if versions[k] != nil {
				continue
			}
			v, err := tx.FindWorkflowVersion(ctx, ws, r.WorkflowID, r.Version)
			if notify.IsNotFound(err) {
				continue // deleted with its workflow
			}
			if err != nil {
				return err
			}
			versions[k] = v
		}
		return nil
	})
	if err != nil {
		return err
	}
	byID := make(map[string]*notify.WorkflowRun, len(runs))
	for _, r := range runs {
		byID[r.ID] = r
	}
	now := s.Now()
	var wait time.Duration
	var todo []due
	var sends []Send
	for _, ref := range refs {
		r := byID[ref.RunID]
		if r == nil {
			continue
		}
		v := versions[r.WorkflowID+"\x00"+itoa(r.Version)]
		row := stepRow(r, ref.Step)
		if v == nil || r.Status != notify.RunRunning || row == nil || row.Status != notify.StepPending || ref.Step >= len(v.Steps) {
			continue
		}
		if w := row.DueAt.Sub(now); w > 0 {
			wait = max(wait, w)
			continue
		}
		d := due{ref: ref, steps: v.Steps, send: -1}
		switch st := v.Steps[ref.Step]; {
		case st.Type == notify.StepSend:
			d.send = len(sends)
			sends = append(sends, inTx(sendOf(r, st, ref.Step)))
		case st.Type == notify.StepDelay && ref.Step+1 < len(v.Steps) && v.Steps[ref.Step+1].Type == notify.StepSend:
			d.send = len(sends)
			sends = append(sends, inTx(sendOf(r, v.Steps[ref.Step+1], ref.Step+1)))
		case st.Type != notify.StepDelay:
			// Not a batch's kind of step (a job of an older build): alone.
			if err := s.RunStep(ctx, ws, ref.RunID, ref.Step); err != nil {
				return err
			}
			continue
		}
		todo = append(todo, d)
	}
	if len(todo) > 0 {
		err := s.accept.CommitWorkflow(ctx, ws, nil, sends, func(ctx context.Context, tx notify.Tx, requestIDs, refusals []string) ([]bool, error) {
			keep := make([]bool, len(sends))
			// The runs read above, with their state as it is under the
			// lock (a cancellation, or a run of this job before, may have
			// ended a step since): payloads are not read again.
			locked, err := tx.LockWorkflowRunStates(ctx, ws, ids)
			if err != nil {
				return nil, err
			}
			held := make(map[string]*notify.WorkflowRun, len(locked))
			for _, l := range locked {
				if r := byID[l.ID]; r != nil {
					r.Status, r.UpdatedAt, r.EndedAt, r.Steps = l.Status, l.UpdatedAt, l.EndedAt, l.Steps
					held[r.ID] = r
				}
			}
			// The events of the batch are built only when a webhook of
			// the workspace takes their type (emit's filter, read once).
			hooks, err := tx.FindWebhooks(ctx, ws)
			if err != nil {
				return nil, err
			}
			wants := func(typ string) bool {
				for _, w := range hooks {
					if slices.Contains(w.Events, typ) {
						return true
					}
				}
				return false
			}
			now := s.Now()
			var steps []*notify.WorkflowRunStep
			var saved []*notify.WorkflowRun
			var events []*notify.Event
			for _, d := range todo {
				r := held[d.ref.RunID]
				if r == nil {
					continue
				}
				row := stepRow(r, d.ref.Step)
				if r.Status != notify.RunRunning || row == nil || row.Status != notify.StepPending {
					continue // ended meanwhile: its send is not written
				}
				var then *sentStep
				if d.send >= 0 {
					keep[d.send] = true
					then = &sentStep{requestID: requestIDs[d.send], refusal: refusals[d.send]}
				}
				if row.Type == notify.StepSend {
					sent(row, then.requestID, then.refusal, now)
					then = nil
				} else {
					row.Status, row.Outcome, row.EndedAt = notify.RunStepDone, OutcomeWaited, &now
				}
				out, evs, err := s.advance(ctx, tx, r, d.steps, row, then, now, wants)
				if err != nil {
					return nil, err
				}
				steps, events = append(steps, out...), append(events, evs...)
				saved = append(saved, r)
			}
			if err := tx.SaveWorkflowRunSteps(ctx, steps); err != nil {
				return nil, err
			}
			if err := tx.SaveWorkflowRuns(ctx, saved); err != nil {
				return nil, err
			}
			if len(events) > 0 {
				if err := tx.CreateEvents(ctx, events); err != nil {
					return nil, err
				}
			}
			return keep, nil
		})
		if err != nil {
			return err
		}
	}
	if wait > 0 {
		return &Snooze{After: wait}
	}
	return nil
}

// advance is next for a batch, in memory: row has ended; the run goes
// on to the step after it (with then, a send step ending at once with
// its request, and the step after that), or ends. It answers the step
// rows to save (row and the reached ones) and the events of the types
// wants takes; r is updated for saving.
func (s *Service) advance(ctx context.Context, tx notify.Tx, r *notify.WorkflowRun, steps []notify.WorkflowStep, row *notify.WorkflowRunStep,
	then *sentStep, now time.Time, wants func(typ string) bool) ([]*notify.WorkflowRunStep, []*notify.Event, error) {
	out := []*notify.WorkflowRunStep{row}
	var events []*notify.Event
	stepEnded := wants(EventStepEnded)
	if stepEnded {
		events = append(events, stepEvent(r, row, now))
	}
	idx := row.Index + 1
	if idx < len(steps) && then != nil && steps[idx].Type == notify.StepSend {
		st, err := s.reach(ctx, tx, r, steps, idx, now)
		if err != nil {
			return nil, nil, err
		}
		sent(st, then.requestID, then.refusal, now)
		out = append(out, st)
		if stepEnded {
			events = append(events, stepEvent(r, st, now))
		}
		idx++
	}
	if idx >= len(steps) {
		r.Status, r.UpdatedAt, r.EndedAt = notify.RunCompleted, now, &now // endRun's
		if wants(EventRunEnded) {
			events = append(events, runEvent(EventRunEnded, r, now))
		}
		return out, events, nil
	}
	st, err := s.reach(ctx, tx, r, steps, idx, now)
	if err != nil {
		return nil, nil, err
	}
	r.UpdatedAt = now
	return append(out, st), events, nil
}

// FailSteps ends the runs whose batch job spent its attempts.
func (s *Service) FailSteps(ctx context.Context, ws string, refs []StepRef, cause error) error {
	for _, r := range refs {
		if err := s.FailStep(ctx, ws, r.RunID, r.Step, cause); err != nil {
			return err
		}
	}
	return nil
}

// sentStep is the request of a send step reached by next, accepted in
// the same transaction.
type sentStep struct{ requestID, refusal string }
