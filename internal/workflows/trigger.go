package workflows

import (
	"context"
	"encoding/json"
	"time"

	"github.com/notifyd/notifyd/internal/notify"
	"github.com/notifyd/notifyd/internal/usecase"
)

// Bounds of a trigger.
const (
	MaxRecipients = 1_000
	MaxPayload    = 64 << 10
	MaxTriggerKey = 120
)

// TriggerInput is the body of a trigger.
type TriggerInput struct {
	Recipients []string
	// Topic, in place of Recipients, starts one run per subscriber.
	Topic           string
	Payload         map[string]any
	IdempotencyKey  string
	CancellationKey string
}

// Started is one run a trigger answers: started now, or the run an
// earlier trigger with the same idempotency key started.
type Started struct {
	RunID       string
	RecipientID string
	Created     bool
}

// The outbound events of runs (notify/workflow.go).
const (
	EventRunStarted = notify.EventWorkflowRunStarted
	EventRunEnded   = notify.EventWorkflowRunEnded
	EventStepEnded  = notify.EventWorkflowStepEnded
)

// Trigger starts one run of the workflow's published version per
// recipient profile, each with its first step's queue job, all in one
// transaction. A recipient whose run with the same idempotency key exists
// starts nothing and answers that run.
//
// door, when set, is the signed call: its nonce and request limits are
// written in the transaction of the runs (the send group commit), as a
// signed send's are. A run whose first step is a send accepts that send
// in the same transaction instead of through a step job.
func (s *Service) Trigger(ctx context.Context, ws, key string, door *Door, in TriggerInput) ([]Started, error) {
	if in.Topic != "" {
		return s.triggerTopic(ctx, ws, key, door, in)
	}
	if err := checkTrigger(&in); err != nil {
		return nil, err
	}
	return s.start(ctx, ws, key, door, in, true)
}

// triggerTopic starts a run per subscriber of the topic, a transaction
// per page of MaxRecipients subscribers: a topic's trigger is atomic up
// to that many, and an idempotency key makes a retried one start only
// the runs that are missing.
func (s *Service) triggerTopic(ctx context.Context, ws, key string, door *Door, in TriggerInput) ([]Started, error) {
	if len(in.Recipients) > 0 {
		return nil, notify.Invalid("recipients and topic are exclusive: a trigger names its recipients or a topic")
	}
	if err := CheckKey("topic", in.Topic); err != nil {
		return nil, err
	}
	in.Recipients = []string{"-"} // checked apart from the subscribers
	if err := checkTrigger(&in); err != nil {
		return nil, err
	}
	out := []Started{}
	after := ""
	for {
		var page []string
		err := s.Store.View(ctx, func(tx notify.Tx) (err error) {
			if _, err := findWorkflow(ctx, tx, ws, key); err != nil {
				return err
			}
			page, err = tx.FindTopicSubscribers(ctx, ws, in.Topic, after, MaxRecipients)
			return err
		})
		if err != nil {
			return out, err
		}
		if len(page) == 0 && door == nil {
			return out, nil
		}
		// The first page carries the signed call's nonce, even empty.
		in.Recipients = page
		started, err := s.start(ctx, ws, key, door, in, false)
		door = nil
		if err != nil || len(page) == 0 {
			return out, err
		}
		out = append(out, started...)
		if len(page) < MaxRecipients {
			return out, nil
		}
		after = page[len(page)-1]
	}
}

// start starts the runs of in.Recipients in one transaction; check
// requires each to be a profile (a topic's subscribers are).
func (s *Service) start(ctx context.Context, ws, key string, door *Door, in TriggerInput, check bool) ([]Started, error) {
	var w *notify.Workflow
	var v *notify.WorkflowVersion
	err := s.Store.Lookup(ctx, func(tx notify.Tx) (err error) {
		if CheckKey("key", key) != nil {
			return notify.NotFound("Workflow")
		}
		var known []string
		if check {
			known = in.Recipients
		}
		var n int
		if w, v, n, err = tx.FindTriggerWorkflow(ctx, ws, key, known); err != nil {
			return usecase.NotFound(err, "Workflow")
		}
		if w.PublishedVersion == 0 || v == nil {
			return notify.Conflict("Workflow %s has no published version", w.Key)
		}
		if n == len(known) {
			return nil
		}
		// Some recipient is no profile: name the first.
		for i, id := range known {
			if _, err := tx.FindRecipient(ctx, ws, id); err != nil {
				if notify.IsNotFound(err) {
					return notify.Invalid("recipients[%d]: no recipient profile %q", i, id)
				}
				return err
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	now := s.Now()
	ids := make([]string, len(in.Recipients))
	for i := range ids {
		ids[i] = usecase.NewID()
	}
	newRun := func(i int) *notify.WorkflowRun {
		return &notify.WorkflowRun{ID: ids[i], WorkspaceID: ws, WorkflowID: w.ID, WorkflowKey: w.Key, Version: v.Version,
			RecipientID: in.Recipients[i], Payload: in.Payload, IdempotencyKey: in.IdempotencyKey, CancellationKey: in.CancellationKey,
			Status: notify.RunRunning, CreatedAt: now, UpdatedAt: now}
	}
	// A leading send step is sent by the trigger's own transaction.
	var sends []Send
	if v.Steps[0].Type == notify.StepSend {
		sends = make([]Send, len(ids))
		for i := range ids {
			sends[i] = inTx(sendOf(newRun(i), v.Steps[0], 0))
		}
	}
	var out []Started
	err = s.accept.CommitWorkflow(ctx, ws, door, sends, func(ctx context.Context, tx notify.Tx, requestIDs, refusals []string) ([]bool, error) {
		starts := make([]*notify.WorkflowRunStart, len(ids))
		for i := range ids {
			r := newRun(i)
			first, err := s.reach(ctx, tx, r, v.Steps, 0, now)
			if err != nil {
				return nil, err
			}
			st := &notify.WorkflowRunStart{Run: r, First: first}
			starts[i] = st
			if sends == nil {
				continue
			}
			sent(first, requestIDs[i], refusals[i], now)
			if len(v.Steps) == 1 {
				r.Status, r.EndedAt = notify.RunCompleted, &now
			} else if st.Then, err = s.reach(ctx, tx, r, v.Steps, 1, now); err != nil {
				return nil, err
			}
		}
		// The runs' rows and events are written with those of the other
		// triggers of the transaction (startBatch), or at once.
		created := make([]bool, len(starts))
		settle := func(got []bool) []*notify.Event {
			copy(created, got)
			out = make([]Started, len(starts))
			var events []*notify.Event
			for i, st := range starts {
				out[i] = Started{RunID: st.Run.ID, RecipientID: st.Run.RecipientID, Created: created[i]}
				if !created[i] {
					continue
				}
				running := *st.Run // the events of its start see it running
				running.Status, running.EndedAt = notify.RunRunning, nil
				events = append(events, runEvent(EventRunStarted, &running, now))
				if sends != nil {
					events = append(events, stepEvent(&running, st.First, now))
					if st.Run.Status == notify.RunCompleted {
						events = append(events, runEvent(EventRunEnded, st.Run, now))
					}
				}
			}
			return events
		}
		if share := usecase.TxShareOf(ctx); share != nil {
			b := share.Shared("workflows.start", func() (any, func(context.Context, notify.Tx) error) {
				b := &startBatch{}
				return b, b.flush
			}).(*startBatch)
			b.starts, b.settles, b.counts = append(b.starts, starts...), append(b.settles, settle), append(b.counts, len(starts))
			return created, nil // filled by b.flush before it is read
		}
		got, err := tx.StartWorkflowRuns(ctx, starts)
		if err != nil {
			return nil, err
		}
		return created, emit(ctx, tx, settle(got))
	})
	return out, err
}

// startBatch is the runs of every trigger of one group-commit
// transaction, started together: one multi-row insert of the runs, one
// of their steps, one read of the workspace's webhooks for the events.
type startBatch struct {
	starts []*notify.WorkflowRunStart
	// settles[i] takes which of its trigger's starts were created and
	// answers their events, in the order the triggers wrote.
	settles []func(created []bool) []*notify.Event
	counts  []int
}

func (b *startBatch) flush(ctx context.Context, tx notify.Tx) error {
	created, err := tx.StartWorkflowRuns(ctx, b.starts)
	if err != nil {
		return err
	}
	var events []*notify.Event
	off := 0
	for i, settle := range b.settles {
		events = append(events, settle(created[off:off+b.counts[i]])...)
		off += b.counts[i]
	}
	return emit(ctx, tx, events)
}

// inTx is a send accepted in the transaction that ends its step: the
// step row, written there, makes it once, so it needs no idempotency
// key (a keyed request is written a statement each; these go in bulk).
func inTx(x Send) Send {
	x.IdempotencyKey = ""
	return x
}

// sent ends a send step row with the request accepted in the same
// transaction, or as not sent when its send was refused.
func sent(row *notify.WorkflowRunStep, requestID, refusal string, now time.Time) {
	row.Status, row.Outcome, row.RequestID, row.EndedAt = notify.RunStepDone, OutcomeSent, requestID, &now
	if refusal != "" {
		row.Status, row.Outcome = notify.StepFailed, OutcomeNotSent+": "+refusal
	}
}

// checkTrigger holds a trigger to its bounds, its recipients deduplicated.
func checkTrigger(in *TriggerInput) error {
	in.Recipients = usecase.Dedupe(in.Recipients)
	if len(in.Recipients) == 0 || len(in.Recipients) > MaxRecipients {
		return notify.Invalid("recipients must hold 1 to %d recipient ids", MaxRecipients)
	}
	for i, id := range in.Recipients {
		if err := notify.CheckExternalID("recipients["+itoa(i)+"]", id); err != nil {
			return err
		}
	}
	if in.Payload == nil {
		in.Payload = map[string]any{}
	}
	if b, _ := json.Marshal(in.Payload); len(b) > MaxPayload {
		return notify.Invalid("payload must be at most %d bytes of JSON", MaxPayload)
	}
	for _, f := range []struct{ name, v string }{{"idempotencyKey", in.IdempotencyKey}, {"cancellationKey", in.CancellationKey}} {
		if err := usecase.MaxLen(f.name, f.v, MaxTriggerKey); err != nil {
			return err
		}
		if !usecase.Storable(f.v) || usecase.HasControl(f.v) {
			return notify.Invalid("%s must be printable text", f.name)
		}
	}
	return nil
}

// Cancel stops every running run of the workflow with the cancellation
// key: their pending steps' jobs are withdrawn and the runs end canceled.
// It answers how many runs it stopped.
func (s *Service) Cancel(ctx context.Context, ws, key, cancellationKey string) (int, error) {
	if cancellationKey == "" {
		return 0, notify.Invalid("cancellationKey is required")
	}
	if err := usecase.MaxLen("cancellationKey", cancellationKey, MaxTriggerKey); err != nil {
		return 0, err
	}
	if !usecase.Storable(cancellationKey) || usecase.HasControl(cancellationKey) {
		return 0, notify.Invalid("cancellationKey must be printable text")
	}
	n := 0
	err := s.Store.Update(ctx, func(tx notify.Tx) error {
		w, err := findWorkflow(ctx, tx, ws, key)
		if err != nil {
			return err
		}
		runs, err := tx.FindRunningWorkflowRuns(ctx, ws, w.ID, cancellationKey)
		if err != nil {
			return err
		}
		now := s.Now()
		var events []*notify.Event
		for _, found := range runs {
			r, err := tx.LockWorkflowRun(ctx, ws, found.ID)
			if err != nil {
				return err
			}
			if r.Status != notify.RunRunning {
				continue
			}
			for _, st := range r.Steps {
				if st.Status != notify.StepPending {
					continue
				}
				// A delay's or a send's job may be shared with other runs'
				// steps (jobs.WorkflowSteps): it stays, and passes over
				// this step as ended.
				if st.QueueJobID != 0 && st.Type != notify.StepDelay && st.Type != notify.StepSend {
					if err := tx.CancelScheduledWork(ctx, st.QueueJobID); err != nil {
						return err
					}
				}
				st.Status, st.Outcome, st.EndedAt = notify.StepCanceled, "canceled", &now
				if err := tx.EndWorkflowRunStep(ctx, st); err != nil {
					return err
				}
				events = append(events, stepEvent(r, st, now))
			}
			events = append(events, endRun(r, notify.RunCanceled, now))
			if err := tx.UpdateWorkflowRun(ctx, r); err != nil {
				return err
			}
			n++
		}
		return emit(ctx, tx, events)
	})
	return n, err
}

// endRun ends r with status and answers its event.
func endRun(r *notify.WorkflowRun, status string, now time.Time) *notify.Event {
	r.Status, r.UpdatedAt, r.EndedAt = status, now, &now
	return runEvent(EventRunEnded, r, now)
}

func runEvent(typ string, r *notify.WorkflowRun, now time.Time) *notify.Event {
	return &notify.Event{ID: usecase.NewID(), WorkspaceID: r.WorkspaceID, Type: typ, CreatedAt: now, Payload: map[string]any{
		"runId": r.ID, "workspaceId": r.WorkspaceID, "workflowKey": r.WorkflowKey, "version": r.Version,
		"recipientId": r.RecipientID, "status": r.Status}}
}

func stepEvent(r *notify.WorkflowRun, st *notify.WorkflowRunStep, now time.Time) *notify.Event {
	e := runEvent(EventStepEnded, r, now)
	e.RequestID = st.RequestID
	e.Payload["step"] = map[string]any{"key": st.Key, "type": st.Type, "status": st.Status, "outcome": st.Outcome,
		"requestId": nilIfEmpty(st.RequestID)}
	return e
}

func nilIfEmpty(s string) any {
	if s == "" {
		return nil
	}
	return s
}

// emit writes the events some webhook of their workspace subscribes to.
func emit(ctx context.Context, tx notify.Tx, events []*notify.Event) error {
	if len(events) == 0 {
		return nil
	}
	events, err := notify.Subscribed(ctx, tx, events)
	if err != nil || len(events) == 0 {
		return err
	}
	return tx.CreateEvents(ctx, events)
}
