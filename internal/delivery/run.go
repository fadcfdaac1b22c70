package delivery

import (
	"context"
	"errors"
	"fmt"
	"time"

	"go.opentelemetry.io/otel/trace"

	"github.com/notifyd/notifyd/internal/crashfault"
	"github.com/notifyd/notifyd/internal/delivery/pacing"
	"github.com/notifyd/notifyd/internal/dispatch"
	"github.com/notifyd/notifyd/internal/notify"
	"github.com/notifyd/notifyd/internal/tracing"
)

// RunJob runs queue job queueJobID (SPEC "Dispatch flow for one job run",
// for every request the job carries): one transaction claims the job's
// requests and reads their suppressions, routes, accounts and circuits;
// the requests are then sent concurrently; one transaction records every
// attempt, state, job row and event. A request that must retry, or wait
// for its turn, leaves the job for a queue job of its own.
//
// It returns a *dispatch.SnoozeError when a request of the job may still
// be in an earlier run (the queue hands back jobs it thinks stuck, and two
// live runs would send a message twice): the job comes back for it once
// that run must have ended, or its process is known dead (rescue.go). A
// run of a dead process is taken over at once.
func (e *Engine) RunJob(ctx context.Context, queueJobID int64) error {
	slots := e.runs
	if notify.LaneOf(ctx) == notify.LaneBulk {
		slots = e.bulkRuns
	}
	wait := time.NewTimer(e.runWait)
	select {
	case slots <- struct{}{}:
		wait.Stop()
		defer func() { <-slots }()
	case <-wait.C:
		return &dispatch.SnoozeError{After: time.Second, Reason: "as many job runs in progress as the process takes"}
	case <-ctx.Done():
		wait.Stop()
		return ctx.Err()
	}
	var reserved int64
	var runs []*run
	if slots == e.bulkRuns {
		var err error
		if reserved, err = e.reserveBulk(ctx); err != nil {
			return err
		}
		defer func() { e.bulkBytes.release(reserved, runBytes(runs)) }()
	}
	if e.tracer.On() {
		var span trace.Span
		ctx, span = e.startJob(ctx, queueJobID)
		defer span.End()
	}
	now := e.now()
	var bs *breakers
	var liveUntil time.Time
	// held are the job rows left queued because their campaign is paused;
	// the job comes back for them (a resume changes nothing else).
	held := map[string]bool{}
	_, hinted := e.paused.Load(queueJobID)
	var err error
	for {
		err = e.claimTx(ctx, func(tx notify.Tx) error {
			return e.claim(ctx, tx, queueJobID, now, hinted, held, &runs, &bs, &liveUntil)
		})
		if !errors.Is(err, errHeld) {
			break
		}
		// A claimed request's campaign was paused: the claim is rolled
		// back, and made again without the held rows.
	}
	if len(held) > 0 {
		e.paused.Store(queueJobID, true)
	} else if hinted {
		e.paused.Delete(queueJobID)
	}
	defer func() {
		for _, rn := range runs {
			e.active.Delete(rn.job.ID)
		}
	}()
	if err != nil {
		return err
	}
	e.sweepCapLogs(ctx, runs, now)
	e.countTakeovers(runs)
	if len(runs) > 0 {
		if err := e.sendAndRecord(ctx, runs, bs); err != nil {
			return err
		}
	}
	if !liveUntil.IsZero() {
		after := liveUntil.Sub(now) + time.Second
		if len(held) > 0 {
			after = min(after, PausedRecheck)
		}
		return &dispatch.SnoozeError{After: after, Reason: "an earlier run of a request of this job may still be live"}
	}
	if len(held) > 0 {
		return &dispatch.SnoozeError{After: PausedRecheck, Reason: "a request of this job belongs to a paused campaign"}
	}
	return nil
}

// reserveBulk reserves a bulk run's bytes (budget.go), waiting at most
// the run slots' wait while the runs in progress hold the budget; then
// the job snoozes, as for a run slot.
func (e *Engine) reserveBulk(ctx context.Context) (int64, error) {
	wait := time.NewTimer(e.runWait)
	for {
		n, freed := e.bulkBytes.tryReserve()
		if freed == nil {
			wait.Stop()
			return n, nil
		}
		select {
		case <-freed:
		case <-wait.C:
			return 0, &dispatch.SnoozeError{After: time.Second, Reason: "the bulk runs in progress hold as many bytes as the process takes"}
		case <-ctx.Done():
			wait.Stop()
			return 0, ctx.Err()
		}
	}
}

// sendAndRecord sends the claimed requests not decided at the claim, each
// in a goroutine of its own within the process's send slots, and hands
// each outcome to the process's outcome writer as soon as its vendor call
// answers (recorder.go): a crash then resends only the calls in flight
// and the outcomes of the write being gathered, not a whole job.
func (e *Engine) sendAndRecord(ctx context.Context, runs []*run, bs *breakers) error {
	for _, rn := range runs {
		crashfault.Hit("text", rn.msg.Text) // crash tests only: a message that kills its process
	}
	done := make(chan error, len(runs))
	unkeyed := make(chan struct{}, unkeyedPerJob)
	for _, rn := range runs {
		rn.unkeyed = unkeyed
		var span trace.Span
		rctx := ctx
		if e.tracer.On() {
			rctx, span = e.startMessage(ctx, rn)
			// A retry's queue job continues the trace from this delivery.
			rn.job.TraceParent = tracing.Format(span.SpanContext())
		}
		if rn.decided {
			if span != nil {
				endMessage(span, rn.out)
			}
			e.recorder.Add(&recording{rn: rn, bs: bs, done: done, span: span})
			continue
		}
		slots := e.sends
		if rn.req.Lane() == notify.LaneBulk {
			slots = e.bulkSends
		}
		slots <- struct{}{} // a send slot before its goroutine
		go func() {
			rn.out = e.tryRoutes(rctx, rn, bs)
			if span != nil {
				endMessage(span, rn.out)
			}
			<-slots
			noted := e.note(rn)
			rn.noted = noted != nil
			e.recorder.Add(&recording{rn: rn, bs: bs, done: done, span: span})
			if rn.unkeyedHeld {
				// The job's next unkeyed call waits until this one is
				// noted (unkeyed.go).
				if noted != nil {
					<-noted
				}
				unkeyedRelease(rn)
			}
		}()
	}
	// Every outcome is waited for, even when the job's context has ended:
	// a message the vendor accepted must be recorded before the job may
	// run again.
	var first error
	for range runs {
		if err := <-done; err != nil && first == nil {
			first = err
		}
	}
	return first
}

// PausedRecheck is how often a queue job holding requests of a paused
// campaign comes back to see whether it was resumed (River's scheduler
// interval: a shorter snooze would wait for the scheduler anyway).
const PausedRecheck = 5 * time.Second

// errHeld rolls a claim back that took a request of a paused campaign.
var errHeld = errors.New("a claimed request belongs to a paused campaign")

// claim is the first transaction of a run: it claims the requests of
// queue job queueJobID that no earlier run may still hold, and reads what
// their route choice needs. A request of a paused campaign is not
// claimed: the check runs after the claim, in a statement of its own, so
// a pause committed before it is seen (on PostgreSQL a read before the
// claim could miss a pause committing in between); it then adds the
// request's job row to held and answers errHeld to roll the claim back.
// hinted (the job held rows before) checks the job rows first, so a job
// that comes back while its campaign is still paused writes nothing.
func (e *Engine) claim(ctx context.Context, tx notify.Tx, queueJobID int64, now time.Time, hinted bool, held map[string]bool,
	runs *[]*run, bs **breakers, liveUntil *time.Time) error {
	*runs, *bs, *liveUntil = nil, nil, time.Time{}
	js, err := tx.FindJobsOfQueueJob(ctx, queueJobID)
	if err != nil || len(js) == 0 {
		return err
	}
	if hinted {
		if err := e.heldJobs(ctx, tx, js, func(i int) (string, string) { return js[i].WorkspaceID, js[i].RequestID }, held); err != nil {
			return err
		}
	}
	var claim []*notify.Job
	var live map[string]bool
	// was holds the job rows taken over from an earlier run, as they were:
	// that run may have noted its outcome (notes.go).
	was := map[string]*notify.Job{}
	for _, j := range js {
		if held[j.ID] {
			continue
		}
		if until := e.liveUntil(j); now.Before(until) {
			dead, err := e.ownerDead(ctx, tx, j, now, &live)
			if err != nil {
				return err
			}
			if !dead {
				*liveUntil = maxTime(*liveUntil, minTime(until, now.Add(liveRecheck)))
				continue
			}
		}
		if j.Status == notify.JobProcessing {
			was[j.ID] = j
		}
		claim = append(claim, j)
	}
	if len(claim) == 0 {
		return nil
	}
	reqs, claimed, err := tx.ClaimRequests(ctx, claim, now, e.lim.workerID)
	if err != nil {
		return err
	}
	n := len(held)
	if err := e.heldJobs(ctx, tx, claimed, func(i int) (string, string) {
		if reqs[i].CampaignID == "" {
			return "", "" // not a campaign's: no query for an API send
		}
		return reqs[i].WorkspaceID, reqs[i].ID
	}, held); err != nil {
		return err
	}
	if len(held) > n {
		return errHeld
	}
	*runs = make([]*run, len(reqs))
	for i := range reqs {
		(*runs)[i] = &run{req: reqs[i], msg: reqs[i].Target(), job: claimed[i]}
		e.active.Store(claimed[i].ID, true)
	}
	if *bs, err = e.prepare(ctx, tx, *runs); err != nil {
		return err
	}
	if err := e.checkPreferences(ctx, tx, *runs, now); err != nil {
		return err
	}
	if err := e.checkCaps(ctx, tx, *runs, now); err != nil {
		return err
	}
	deliverInApp(*runs)
	if err := e.admitBulk(ctx, tx, *runs); err != nil {
		return err
	}
	return e.takeNoted(ctx, *runs, was)
}

// heldJobs adds to held the job rows of js whose request (ref gives its
// workspace and id; an empty workspace skips it) belongs to a paused
// campaign.
func (e *Engine) heldJobs(ctx context.Context, tx notify.Tx, js []*notify.Job, ref func(i int) (ws, req string), held map[string]bool) error {
	byWS := map[string][]string{}
	jobOf := map[string]string{}
	for i, j := range js {
		if ws, req := ref(i); ws != "" {
			byWS[ws] = append(byWS[ws], req)
			jobOf[req] = j.ID
		}
	}
	for ws, ids := range byWS {
		paused, err := tx.FindPausedRequests(ctx, ws, ids)
		if err != nil {
			return err
		}
		for id := range paused {
			held[jobOf[id]] = true
		}
	}
	return nil
}

// liveUntil is when the earlier run of job j, if it is processing, must
// have ended: every run marks its requests processing with its start time
// and moves them on when it ends, so a request still processing whose run
// started within the run bound plus the record grace belongs to a run that
// may still send. Zero when no run is in progress.
func (e *Engine) liveUntil(j *notify.Job) time.Time {
	if j.Status != notify.JobProcessing || j.StartedAt == nil {
		return time.Time{}
	}
	return j.StartedAt.Add(e.runLease)
}

func minTime(a, b time.Time) time.Time {
	if b.Before(a) {
		return b
	}
	return a
}

func maxTime(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}

// prepare reads, once for the whole run, what the runs' route choice
// needs: the suppressed addresses among their email recipients, each
// workspace's routes and accounts, and the circuits of every candidate.
// A run with a suppressed recipient or no usable route is decided here.
func (e *Engine) prepare(ctx context.Context, tx notify.Tx, runs []*run) (*breakers, error) {
	byWS := map[string][]*run{}
	var order []string
	for _, rn := range runs {
		ws := rn.req.WorkspaceID
		if byWS[ws] == nil {
			order = append(order, ws)
		}
		byWS[ws] = append(byWS[ws], rn)
	}
	ids := map[string]bool{}
	for _, ws := range order {
		group := byWS[ws]
		var emails []string
		for _, rn := range group {
			if rn.msg.Channel == notify.ChannelEmail {
				emails = append(emails, rn.msg.RecipientAddress)
			}
		}
		suppressed := map[string]bool{}
		if len(emails) > 0 {
			var err error
			if suppressed, err = tx.FindSuppressed(ctx, ws, emails); err != nil {
				return nil, err
			}
		}
		routes, err := tx.FindRoutes(ctx, ws)
		if err != nil {
			return nil, err
		}
		list, err := tx.FindProviderAccounts(ctx, ws)
		if err != nil {
			return nil, err
		}
		accounts := make(map[string]*notify.ProviderAccount, len(list))
		for _, a := range list {
			accounts[a.ID] = a
		}
		for _, rn := range group {
			e.choose(rn, routes, accounts, suppressed)
			for _, c := range rn.cands {
				ids[c.account.ID] = true
			}
		}
	}
	list := make([]string, 0, len(ids))
	for id := range ids {
		list = append(list, id)
	}
	recs, err := tx.FindBreakers(ctx, list)
	if err != nil {
		return nil, err
	}
	return newBreakers(recs), nil
}

// choose applies the pre-block and the route choice to one run (SPEC
// "Dispatch flow", steps 1 to 3), on the channel of its current step.
func (e *Engine) choose(rn *run, routes []*notify.Route, accounts map[string]*notify.ProviderAccount, suppressed map[string]bool) {
	r := rn.msg
	if r.Channel == notify.ChannelEmail && suppressed[r.RecipientAddress] {
		rn.decided, rn.out = true, outcome{code: notify.FailureInvalidRequest, msg: "recipient address is on the suppression list", final: true}
		return
	}
	if r.Channel == notify.ChannelInApp {
		return // no route: delivered to the inbox (inapp.go)
	}
	rn.cands = candidates(routes, accounts, r)
	if len(rn.cands) == 0 {
		rn.decided, rn.out = true, outcome{code: notify.FailureUnsupportedChannel, msg: "no usable route for channel " + string(r.Channel), final: true}
	}
}

// settlement is what recording a run writes beside its request and job
// rows.
type settlement struct {
	own   bool          // the request leaves the shared job for one of its own, due after
	after time.Duration // (zero: at once)
	event string        // the event of a final state
	dead  bool          // a dead letter (retryable failures spent every attempt)
	next  bool          // the request moved to the next step of its channel fallback
}

// settle moves a run's request and job to their state after the run.
// Both were claimed (processing), so a refused move is a bug: the run is
// not recorded, and the requests wait for the run bound to go again.
func (e *Engine) settle(rn *run, now time.Time) (settlement, error) {
	r, j, out := rn.req, rn.job, rn.out
	for _, p := range rn.secrets {
		out.msg = redact(out.msg, p)
	}
	var snooze *dispatch.SnoozeError
	switch {
	case out.halt != nil && len(rn.attempts) == 0:
		// Stopped before any call (a dispatch-limit wait too long to hold a
		// worker, a batch it left unsent, or shutdown): back to queued, no
		// attempt spent, and its turn later.
		var after time.Duration
		if errors.As(out.halt, &snooze) {
			after = snooze.After
		}
		if err := move(r, notify.StatusQueued, j, notify.JobQueued, now); err != nil {
			return settlement{}, err
		}
		j.AttemptsMade, j.StartedAt, j.NextRetryAt = max(j.AttemptsMade-1, 0), nil, nil
		return settlement{own: true, after: after}, nil
	case out.success:
		if err := move(r, notify.StatusSent, j, notify.JobCompleted, now); err != nil {
			return settlement{}, err
		}
		r.SelectedProviderID, r.SelectedMessageID = out.accountID, out.messageID
		r.FinalErrorCode, r.FinalErrorMessage = "", ""
		j.LastErrorCode, j.LastErrorMessage, j.FinishedAt, j.NextRetryAt = "", "", &now, nil
		return settlement{event: notify.EventDelivered}, nil
	case out.quarantine:
		return fail(r, j, out, now)
	case !out.final && j.AttemptsMade < j.MaxAttempts:
		// Job-level retry with SPEC's backoff, in a queue job of its own.
		wait := dispatch.Backoff(e.backoff, stepAttempt(r, j))
		at := now.Add(wait)
		if err := move(r, notify.StatusQueued, j, notify.JobRetrying, now); err != nil {
			return settlement{}, err
		}
		j.NextRetryAt = &at
		j.LastErrorCode, j.LastErrorMessage = string(out.code), out.msg
		return settlement{own: true, after: wait}, nil
	}
	if out.skip {
		// No call was made for this step: the claim's attempt is given back.
		j.AttemptsMade = max(j.AttemptsMade-1, 0)
	}
	if r.HasNextStep() && !out.whole {
		// Cross-channel fallback: the step would fail the request, so the
		// next channel takes over, with an attempt budget of its own, in a
		// queue job of its own due at once. Its step number is saved with
		// this outcome, so no run sends through this channel again.
		if err := move(r, notify.StatusQueued, j, notify.JobQueued, now); err != nil {
			return settlement{}, err
		}
		r.FallbackStep++
		j.NextRetryAt, j.MaxAttempts = nil, j.AttemptsMade+r.Fallback.Attempts
		j.LastErrorCode, j.LastErrorMessage = string(out.code), out.msg
		return settlement{own: true, next: true}, nil
	}
	if out.skip {
		if err := move(r, notify.StatusCanceled, j, notify.JobCanceled, now); err != nil {
			return settlement{}, err
		}
		r.FinalErrorCode, r.FinalErrorMessage = string(out.code), out.msg
		j.LastErrorCode, j.LastErrorMessage, j.FinishedAt, j.NextRetryAt = string(out.code), out.msg, &now, nil
		return settlement{event: notify.EventCanceled}, nil
	}
	return fail(r, j, out, now)
}

// fail ends a run's request failed with its outcome, a retryable one in
// the dead-letter queue.
func fail(r *notify.Request, j *notify.Job, out outcome, now time.Time) (settlement, error) {
	jobTo := notify.JobFailed
	if !out.final {
		jobTo = notify.JobDeadLetter
	}
	if err := move(r, notify.StatusFailed, j, jobTo, now); err != nil {
		return settlement{}, err
	}
	r.FinalErrorCode, r.FinalErrorMessage = string(out.code), out.msg
	j.LastErrorCode, j.LastErrorMessage, j.FinishedAt, j.NextRetryAt = string(out.code), out.msg, &now, nil
	return settlement{event: notify.EventFailed, dead: !out.final}, nil
}

// move moves a run's request and its job; a refusal ends the recording,
// so a half move is never written.
func move(r *notify.Request, rto notify.RequestStatus, j *notify.Job, jto notify.JobStatus, now time.Time) error {
	if err := r.MoveTo(rto, now); err != nil {
		return err
	}
	return j.MoveTo(jto)
}

// stepAttempt is the attempt number the backoff counts from: the job's,
// or for a request that moved along its cross-channel fallback, the
// number within the current step (whose budget ends at MaxAttempts), so
// each channel's retries follow SPEC's schedule from its first attempt.
func stepAttempt(r *notify.Request, j *notify.Job) int {
	if r.Fallback == nil || r.FallbackStep == 0 {
		return j.AttemptsMade
	}
	return max(j.AttemptsMade-(j.MaxAttempts-r.Fallback.Attempts), 1)
}

// record writes the outcomes of runs in one transaction: every attempt,
// the circuits that changed, each request's new state (unless a cancel
// landed while its attempt was in flight: SPEC lets the message arrive,
// and the request stays canceled), job rows, queue jobs of the requests
// that leave, events and dead letters. A run whose settlement is refused
// (a bug) is left out and answered with the error; the others are
// written.
func (e *Engine) record(ctx context.Context, runs []*run, circuits outcomes) (refused map[*run]error, err error) {
	now := e.now()
	sets := make([]settlement, 0, len(runs))
	kept := runs[:0:0]
	var attempts []*notify.Attempt
	for _, rn := range runs {
		set, err := e.settle(rn, now)
		if err != nil {
			if refused == nil {
				refused = map[*run]error{}
			}
			refused[rn] = err
			continue
		}
		kept, sets = append(kept, rn), append(sets, set)
		attempts = append(attempts, rn.attempts...)
	}
	// A failed write is tried again (a deadlock against a concurrent
	// cancel, a dropped connection): the messages are sent, and requests
	// left processing would wait for the run bound to pass and go again.
	// While the database is unreachable it is tried until ctx ends
	// (recordGrace): a restart or a network cut lasts seconds, and an
	// outcome given up is a request processing under a live owner, sent
	// again 20 s or more later (the chaos run, docs/DECISIONS.md).
	for try := 0; try < recordTries || errors.Is(err, notify.ErrUnavailable); try++ {
		if try > 0 {
			e.log.WarnContext(ctx, "recording a run failed; trying again", "err", err)
			if pacing.Sleep(ctx, min(time.Duration(try)*100*time.Millisecond, time.Second)) != nil {
				break
			}
		}
		if err = e.write(ctx, kept, sets, attempts, circuits, now); err == nil {
			return refused, nil
		}
	}
	return refused, err
}

// recordTries bounds the attempts to write a run's outcomes.
const recordTries = 5

// write is one attempt to record runs.
func (e *Engine) write(ctx context.Context, runs []*run, sets []settlement, attempts []*notify.Attempt, circuits outcomes, now time.Time) error {
	var finals, created []*notify.Receipt
	err := e.store.Update(ctx, func(tx notify.Tx) error {
		finals, created = nil, nil
		if err := tx.CreateAttempts(ctx, attempts); err != nil {
			return err
		}
		if err := recordTestBounces(ctx, tx, runs, now); err != nil {
			return err
		}
		if err := circuits.save(ctx, tx, e.breaker, now); err != nil {
			return err
		}
		reqs := make([]*notify.Request, len(runs))
		for i, rn := range runs {
			reqs[i] = rn.req
		}
		settled, err := tx.SettleRequests(ctx, reqs)
		if err != nil {
			return err
		}
		var jobs, own []*notify.Job
		var at []time.Time
		var lanes []notify.Lane
		var events []*notify.Event
		var moved []*notify.Request
		var movedJobs []*notify.Job
		for i, rn := range runs {
			if !settled[i] {
				continue
			}
			jobs = append(jobs, rn.job)
			if sets[i].next {
				moved, movedJobs = append(moved, rn.req), append(movedJobs, rn.job)
			}
			if sets[i].own {
				// The queue keeps real time whatever the service clock says.
				due := time.Time{}
				if sets[i].after > 0 {
					due = time.Now().Add(sets[i].after)
				}
				own, at, lanes = append(own, rn.job), append(at, due), append(lanes, rn.req.Lane())
			}
			if sets[i].event != "" {
				events = append(events, notify.RequestEvent(newID(), sets[i].event, rn.req, now))
			}
			if sets[i].dead {
				r := rn.req
				if err := tx.CreateDeadLetter(ctx, &notify.DeadLetter{ID: newID(), WorkspaceID: r.WorkspaceID, JobID: rn.job.ID,
					RequestID: r.ID, Channel: r.Channel, FailedReason: fmt.Sprintf("%s: %s", r.FinalErrorCode, r.FinalErrorMessage),
					FailedAt: now, AttemptsMade: rn.job.AttemptsMade}); err != nil {
					return err
				}
			}
		}
		if err := storeInbox(ctx, tx, runs, sets, settled, now); err != nil {
			return err
		}
		if events, err = e.saveReceipts(ctx, tx, runs, sets, settled, now, events, &created, &finals); err != nil {
			return err
		}
		if len(moved) > 0 {
			if err := tx.MoveFallbackSteps(ctx, moved, movedJobs); err != nil {
				return err
			}
		}
		if err := tx.ScheduleDispatch(ctx, own, at, lanes); err != nil {
			return err
		}
		if err := tx.UpdateJobs(ctx, jobs); err != nil {
			return err
		}
		events, err = notify.Subscribed(ctx, tx, events)
		if err != nil {
			return err
		}
		return tx.CreateEvents(ctx, events)
	})
	if err == nil {
		for _, rc := range created {
			e.receiptMetrics.Created(string(rc.Channel), rc.ProviderKind, 1)
		}
		for _, rc := range finals {
			e.receiptMetrics.Final(string(rc.Channel), rc.ProviderKind, rc.Status)
		}
	}
	return err
}

// claimTx runs a claim in a write transaction of its own, or, with
// ShareClaims, in one it shares with the claims of other job runs. A
// shared claim is waited for even when ctx ends first: its function fills
// the caller's variables, and a claim committed for nobody would hold its
// requests until the run bound.
func (e *Engine) claimTx(ctx context.Context, fn func(tx notify.Tx) error) error {
	if !e.shareClaims {
		return e.store.Update(ctx, fn)
	}
	return e.store.Batch(context.WithoutCancel(ctx), fn)
}
