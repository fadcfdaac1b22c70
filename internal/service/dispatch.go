package service

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/notifyd/notifyd/internal/dispatch"
	"github.com/notifyd/notifyd/internal/notify"
	"github.com/notifyd/notifyd/internal/provider"
)

// RetryError asks the queue to run the job again at At (job-level retry).
type RetryError struct {
	At     time.Time
	Reason string
}

func (e *RetryError) Error() string { return "retry: " + e.Reason }

// dispatcher holds what lives across job runs: provider instances (they
// cache vendor tokens) keyed by account and config version.
type dispatcher struct {
	s       *Service
	mu      sync.Mutex
	clients map[string]provider.Provider
	breaker dispatch.BreakerPolicy
	// batches groups queued sends per account (batch.go).
	batches   *dispatch.Batcher
	batchCfgs batchConfigs
}

func newDispatcher(s *Service) *dispatcher {
	return &dispatcher{s: s, clients: map[string]provider.Provider{}, breaker: dispatch.DefaultBreakerPolicy(), batches: dispatch.NewBatcher(nil)}
}

// client returns the provider for an account, built once per config version.
func (d *dispatcher) client(p *notify.ProviderAccount) (provider.Provider, *provider.Error) {
	key := p.ID + "@" + itoa(p.UpdatedAt.UnixNano())
	d.mu.Lock()
	c, ok := d.clients[key]
	d.mu.Unlock()
	if ok {
		return c, nil
	}
	k, ok := d.s.kind(p.ProviderKind)
	if !ok {
		return nil, provider.Errorf(notify.FailureUnsupportedChannel, "unknown provider kind %s", p.ProviderKind)
	}
	cfg, err := d.s.OpenConfig(p)
	if err != nil {
		return nil, provider.Errorf(notify.FailureInvalidRequest, "provider configuration cannot be read")
	}
	c, err = k.New(cfg, d.s.deps)
	if err != nil {
		var pe *provider.Error
		if errors.As(err, &pe) {
			return nil, pe
		}
		return nil, provider.Errorf(notify.FailureInvalidRequest, "%v", err)
	}
	d.mu.Lock()
	d.clients[key] = c
	d.mu.Unlock()
	return c, nil
}

// candidate is a usable route with its account.
type candidate struct {
	route   *notify.Route
	account *notify.ProviderAccount
}

// run is one job run of one request.
type run struct {
	req      *notify.Request
	job      *notify.Job
	cands    []candidate
	breakers map[string]*notify.BreakerRecord
	attempts []*notify.Attempt
	touched  map[string]bool
}

// Dispatch runs one job run for a request (SPEC "Dispatch flow for one job
// run"). It returns nil when the request reached a final state or needs no
// work, or *RetryError when the job must run again.
func (s *Service) Dispatch(ctx context.Context, workspaceID, requestID string, attempt int) error {
	ctx = withBatching(ctx) // a queued send may wait for its batch
	now := s.now()
	var rn *run
	var done bool
	var busy *dispatch.SnoozeError
	err := s.store.Batch(ctx, func(tx notify.Tx) error {
		r, err := tx.LockRequest(ctx, workspaceID, requestID)
		if notify.IsNotFound(err) {
			done = true
			return nil
		}
		if err != nil {
			return err
		}
		j, err := tx.FindJobByRequest(ctx, workspaceID, requestID)
		if err != nil {
			return err
		}
		if notify.TerminalStatus(r.Status) || j.Status == notify.JobCanceled {
			done = true
			return nil
		}
		if busy = s.liveRun(r, j, now); busy != nil {
			return nil
		}
		r.Status, r.UpdatedAt = notify.StatusProcessing, now
		j.Status, j.AttemptsMade, j.StartedAt, j.NextRetryAt = notify.JobProcessing, attempt, &now, nil
		if err := tx.UpdateRequest(ctx, r); err != nil {
			return err
		}
		if err := tx.UpdateJob(ctx, j); err != nil {
			return err
		}
		rn = &run{req: r, job: j, touched: map[string]bool{}}
		// Pre-block: a suppressed email address gets no attempt.
		if r.Channel == notify.ChannelEmail {
			sup, err := tx.IsSuppressed(ctx, workspaceID, r.RecipientAddress)
			if err != nil {
				return err
			}
			if sup {
				done = true
				return s.finish(ctx, tx, rn, outcome{code: notify.FailureInvalidRequest,
					msg: "recipient address is on the suppression list", final: true}, now)
			}
		}
		if rn.cands, err = s.candidates(ctx, tx, r); err != nil {
			return err
		}
		if len(rn.cands) == 0 {
			done = true
			return s.finish(ctx, tx, rn, outcome{code: notify.FailureUnsupportedChannel,
				msg: "no usable route for channel " + string(r.Channel), final: true}, now)
		}
		ids := make([]string, len(rn.cands))
		for i, c := range rn.cands {
			ids[i] = c.account.ID
		}
		rn.breakers, err = tx.FindBreakers(ctx, ids)
		return err
	})
	if err != nil || done {
		return err
	}
	if busy != nil {
		return busy
	}
	out := s.tryRoutes(ctx, rn)
	if out.halt != nil && len(rn.attempts) == 0 {
		return s.haltRun(ctx, rn, out.halt) // dispatchlimit.go
	}
	if out.success && ctx.Err() != nil {
		// The vendor accepted the message after the job's context ended (a
		// batch call outlives its jobs' contexts): record it anyway, or the
		// retry would send it a second time.
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(context.WithoutCancel(ctx), recordGrace)
		defer cancel()
	}
	var retry *RetryError
	err = s.store.Batch(ctx, func(tx notify.Tx) error {
		if err := tx.CreateAttempts(ctx, rn.attempts); err != nil {
			return err
		}
		for id := range rn.touched {
			if err := tx.PutBreaker(ctx, rn.breakers[id]); err != nil {
				return err
			}
		}
		// A cancel may have landed while the attempt was in flight: the
		// request stays canceled (SPEC: the message may still arrive).
		cur, err := tx.LockRequest(ctx, workspaceID, requestID)
		if err != nil {
			return err
		}
		if cur.Status == notify.StatusCanceled {
			return nil
		}
		end := s.now()
		if !out.success && !out.final && attempt < rn.job.MaxAttempts {
			at := end.Add(dispatch.Backoff(s.backoff, attempt))
			retry = &RetryError{At: at, Reason: out.msg}
			rn.req.Status, rn.req.UpdatedAt = notify.StatusQueued, end
			rn.job.Status, rn.job.NextRetryAt = notify.JobRetrying, &at
			rn.job.LastErrorCode, rn.job.LastErrorMessage = string(out.code), out.msg
			if err := tx.UpdateRequest(ctx, rn.req); err != nil {
				return err
			}
			return tx.UpdateJob(ctx, rn.job)
		}
		return s.finish(ctx, tx, rn, out, end)
	})
	if err != nil {
		return err
	}
	if retry != nil {
		return retry
	}
	return nil
}

// recordGrace bounds the recording of a result the vendor accepted after
// the job's context ended.
const recordGrace = 30 * time.Second

// liveRun says whether an earlier run of the request may still be live:
// River hands a job back after its rescue time whether or not the run is
// still going (a run slowed by a loaded database, or waiting for its
// batch, can outlive it), and two live runs would send the message twice.
// Every run marks the request processing with its start time and leaves
// that state when it ends, so a request still processing whose run
// started within the run bound plus the record grace belongs to a run
// that may still send: this one snoozes until that run must have ended. A
// run of a crashed process is taken over once its bound has passed.
func (s *Service) liveRun(r *notify.Request, j *notify.Job, now time.Time) *dispatch.SnoozeError {
	if r.Status != notify.StatusProcessing || j.StartedAt == nil {
		return nil
	}
	until := j.StartedAt.Add(s.runLease)
	if !now.Before(until) {
		return nil
	}
	return &dispatch.SnoozeError{After: until.Sub(now) + time.Second, Reason: "an earlier run of this request may still be live"}
}

// outcome is how a run ended.
type outcome struct {
	success   bool
	accountID string
	messageID string
	code      notify.FailureCode
	msg       string
	final     bool  // no fallback and no job retry
	halt      error // the dispatch-limit wait stopped the run (dispatchlimit.go)
}

// finish records a final state: sent, or failed (dead letter when the job
// spent its attempts on retryable failures), with its event.
func (s *Service) finish(ctx context.Context, tx notify.Tx, rn *run, out outcome, now time.Time) error {
	r, j := rn.req, rn.job
	r.UpdatedAt, j.FinishedAt, j.NextRetryAt = now, &now, nil
	ev := notify.EventDelivered
	if out.success {
		r.Status, r.SelectedProviderID, r.SelectedMessageID = notify.StatusSent, out.accountID, out.messageID
		r.FinalErrorCode, r.FinalErrorMessage = "", ""
		j.Status, j.LastErrorCode, j.LastErrorMessage = notify.JobCompleted, "", ""
	} else {
		ev = notify.EventFailed
		r.Status, r.FinalErrorCode, r.FinalErrorMessage = notify.StatusFailed, string(out.code), out.msg
		j.LastErrorCode, j.LastErrorMessage = string(out.code), out.msg
		j.Status = notify.JobFailed
		if !out.final {
			j.Status = notify.JobDeadLetter
			if err := tx.CreateDeadLetter(ctx, &notify.DeadLetter{ID: newID(), WorkspaceID: r.WorkspaceID, JobID: j.ID, RequestID: r.ID,
				Channel: r.Channel, FailedReason: fmt.Sprintf("%s: %s", out.code, out.msg), FailedAt: now, AttemptsMade: j.AttemptsMade}); err != nil {
				return err
			}
		}
	}
	if err := tx.UpdateRequest(ctx, r); err != nil {
		return err
	}
	if err := tx.UpdateJob(ctx, j); err != nil {
		return err
	}
	return s.event(ctx, tx, ev, r, now)
}

// candidates loads the request's usable routes in dispatch order: enabled
// routes of the channel whose account is enabled, by priority, preferred
// accounts first.
func (s *Service) candidates(ctx context.Context, tx notify.Tx, r *notify.Request) ([]candidate, error) {
	routes, err := tx.FindRoutes(ctx, r.WorkspaceID)
	if err != nil {
		return nil, err
	}
	accounts, err := tx.FindProviderAccounts(ctx, r.WorkspaceID)
	if err != nil {
		return nil, err
	}
	byID := make(map[string]*notify.ProviderAccount, len(accounts))
	for _, a := range accounts {
		byID[a.ID] = a
	}
	var cs []candidate
	for _, rt := range routes {
		a := byID[rt.ProviderAccountID]
		if rt.Channel != r.Channel || !rt.Enabled || a == nil || !a.Enabled {
			continue
		}
		cs = append(cs, candidate{route: rt, account: a})
	}
	return dispatch.Order(cs, func(c candidate) string { return c.account.ID },
		func(c candidate) int { return c.route.Priority }, r.PreferredProviderIDs), nil
}

// tryRoutes tries each candidate once, in order, until one succeeds or a
// failure ends the run.
func (s *Service) tryRoutes(ctx context.Context, rn *run) outcome {
	var last outcome
	for _, c := range rn.cands {
		out, stop := s.tryOne(ctx, rn, c)
		if out.success || stop {
			return out
		}
		last = out
	}
	return last
}

func (s *Service) tryOne(ctx context.Context, rn *run, c candidate) (outcome, bool) {
	id := c.account.ID
	b := rn.breakers[id]
	if b == nil {
		b = &notify.BreakerRecord{ProviderAccountID: id, State: dispatch.Closed.String()}
		rn.breakers[id] = b
	}
	start := s.now()
	allowed, next := s.dispatch.breaker.Allow(toBreaker(b), start)
	if !allowed {
		msg := "circuit open for provider " + c.account.DisplayName
		rn.attempts = append(rn.attempts, s.attempt(rn, c, start, start, provider.Result{Err: provider.Errorf(notify.FailureCircuitOpen, "%s", msg)}))
		return outcome{code: notify.FailureCircuitOpen, msg: msg}, false
	}
	if err := s.waitDispatchLimits(ctx, rn, c.account); err != nil {
		return outcome{code: notify.FailureTemporaryUnavailable, msg: "dispatch limit wait: " + err.Error(), halt: err}, true
	}
	claimed := next.State != toBreaker(b).State || next.TrialInFlight != b.TrialInFlight
	if claimed {
		// Claim the half-open trial in the shared state before calling, so
		// other workers keep skipping the provider meanwhile.
		fromBreaker(b, next, start)
		if err := s.store.Update(ctx, func(tx notify.Tx) error { return tx.PutBreaker(ctx, b) }); err != nil {
			s.log.WarnContext(ctx, "breaker claim failed", "provider", id, "err", err)
		}
	}
	res, left := s.send(ctx, rn.req, c.account)
	if left != nil && !claimed {
		// The message waited in its batch for half the job's time and left
		// unsent: the job snoozes (no attempt spent) instead of running
		// into its timeout.
		return outcome{code: notify.FailureTemporaryUnavailable, msg: left.Error(), halt: left}, true
	}
	end := s.now()
	rn.attempts = append(rn.attempts, s.attempt(rn, c, start, end, res))
	success := res.Err == nil
	// Failures caused by the request itself, or by the job's own end (a
	// message that left its batch unsent), say nothing of the provider's
	// health and do not count toward opening the circuit.
	if success || (res.Err.Code != notify.FailureInvalidRequest && ctx.Err() == nil) {
		fromBreaker(b, s.dispatch.breaker.Record(toBreaker(b), success, end), end)
		rn.touched[id] = true
	}
	if success {
		return outcome{success: true, accountID: id, messageID: res.MessageID}, true
	}
	out := outcome{code: res.Err.Code, msg: res.Err.Message, final: !res.Err.FallsBack()}
	return out, out.final
}

// send calls one provider with the request's rendered message. A
// *dispatch.SnoozeError instead of a result says the message left its
// batch unsent while the job still had time (it should snooze).
func (s *Service) send(ctx context.Context, r *notify.Request, a *notify.ProviderAccount) (provider.Result, *dispatch.SnoozeError) {
	p, perr := s.dispatch.client(a)
	if perr != nil {
		return provider.Result{Err: perr}, nil
	}
	return s.dispatch.deliver(ctx, a, p, message(r))
}

func message(r *notify.Request) provider.Message {
	return provider.Message{ID: r.ID, Channel: r.Channel, To: r.RecipientAddress, ToName: r.RecipientName, Title: r.Title,
		Text: r.Text, HTML: r.HTML, TemplateCode: r.TemplateCode, VendorTemplateID: r.VendorTemplateID,
		SenderProfileKey: r.SenderProfileKey, Variables: r.TemplateVariables, Headers: r.Headers, Data: r.Metadata}
}

// attempt builds the attempt record of one provider call.
func (s *Service) attempt(rn *run, c candidate, start, end time.Time, res provider.Result) *notify.Attempt {
	a := &notify.Attempt{ID: newID(), WorkspaceID: rn.req.WorkspaceID, RequestID: rn.req.ID, JobID: rn.job.ID,
		ProviderAccountID: c.account.ID, ProviderKind: c.account.ProviderKind, ProviderDisplayName: c.account.DisplayName,
		Channel: rn.req.Channel, Success: res.Err == nil, ProviderMessageID: res.MessageID, StartedAt: start, FinishedAt: end}
	if res.Err != nil {
		a.FailureCode, a.FailureMessage = string(res.Err.Code), res.Err.Message
	}
	reqJSON, _ := json.Marshal(batchCall(map[string]any{"method": res.Exchange.Method, "url": res.Exchange.URL, "body": res.Exchange.Request}, res))
	respJSON, _ := json.Marshal(res.Exchange.Response)
	a.RequestJSON, a.ResponseJSON = string(reqJSON), string(respJSON)
	rn.job.LastProviderAccountID = c.account.ID
	return a
}

func toBreaker(b *notify.BreakerRecord) dispatch.Breaker {
	st, _ := dispatch.ParseState(b.State)
	return dispatch.Breaker{State: st, Failures: b.Failures, OpenedUntil: b.OpenedUntil, TrialInFlight: b.TrialInFlight}
}

func fromBreaker(b *notify.BreakerRecord, x dispatch.Breaker, now time.Time) {
	b.State, b.Failures, b.OpenedUntil, b.TrialInFlight, b.UpdatedAt = x.State.String(), x.Failures, x.OpenedUntil, x.TrialInFlight, now
}
