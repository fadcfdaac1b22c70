package delivery

import (
	"context"
	"encoding/json"
	"strconv"
	"strings"
	"time"

	"github.com/notifyd/notifyd/internal/delivery/pacing"
	"github.com/notifyd/notifyd/internal/dispatch"
	"github.com/notifyd/notifyd/internal/notify"
	"github.com/notifyd/notifyd/internal/provider"
)

// candidate is a usable route with its account.
type candidate struct {
	route   *notify.Route
	account *notify.ProviderAccount
}

// run is one request's way through its routes.
type run struct {
	req *notify.Request
	// msg is what this run sends: req itself, or for a request that moved
	// along its cross-channel fallback, the current step's channel,
	// recipient and content (notify.Request.Target).
	msg      *notify.Request
	job      *notify.Job
	cands    []candidate
	attempts []*notify.Attempt
	out      outcome
	// decided: the outcome was known before any send (suppressed
	// recipient, no usable route).
	decided bool
	// sync: the caller waits for the answer (OTP, test-send): the send
	// never waits in an adapter batch nor on a dispatch limit.
	sync bool
	// secrets are plaintexts (an OTP code) kept out of what is recorded.
	secrets []string
	// noted: the outcome has an outcome note (notes.go), forgotten once
	// the run is recorded.
	noted bool
	// takenOver: the run took the request over from a run whose process
	// died.
	takenOver bool
	// admitted: the run belongs to a job of bulk work let through by
	// admitBulk; it waits in process for its dispatch-limit tokens.
	admitted bool
	// unkeyed holds a slot per run of the job with an unkeyed call
	// (unkeyed.go) not yet noted; nil for a run no job carries (OTP,
	// test-send). unkeyedHeld: this run holds one, and one of
	// unkeyedAccount, its account's slots.
	unkeyed        chan struct{}
	unkeyedHeld    bool
	unkeyedAccount chan struct{}
	// cat and profile are the request's category (nil: none, or deleted)
	// and its profile's row id ("" when none or erased), as
	// checkPreferences read them; checkCaps counts on them.
	cat     *notify.Category
	profile string
}

// outcome is how a run ended.
type outcome struct {
	success   bool
	accountID string
	messageID string
	code      notify.FailureCode
	msg       string
	final     bool  // no fallback and no job retry
	halt      error // the run stopped before its turn: a dispatch-limit wait or a batch it left unsent
	// quarantine: the request's job crashed its process too often; it
	// fails at once, into the dead-letter queue, without its fallback.
	quarantine bool
	// skip: the recipient's preferences forbid the channel (issue 32): no
	// call is made; the next step of a channel fallback takes over, else
	// the request ends canceled with code and msg.
	skip bool
	// whole: the outcome is the request's, not its channel's (a
	// frequency cap): no fallback step takes over.
	whole bool
}

// candidates are a request's usable routes in dispatch order: enabled
// routes of its channel whose account is enabled, by priority, preferred
// accounts first (SPEC "Dispatch flow for one job run", steps 2 and 3).
func candidates(routes []*notify.Route, accounts map[string]*notify.ProviderAccount, r *notify.Request) []candidate {
	var cs []candidate
	for _, rt := range routes {
		a := accounts[rt.ProviderAccountID]
		if rt.Channel != r.Channel || !rt.Enabled || a == nil || !a.Enabled {
			continue
		}
		cs = append(cs, candidate{route: rt, account: a})
	}
	return dispatch.Order(cs, func(c candidate) string { return c.account.ID },
		func(c candidate) int { return c.route.Priority }, r.PreferredProviderIDs)
}

// tryRoutes tries each candidate once, in order, until one succeeds or a
// failure ends the run.
func (e *Engine) tryRoutes(ctx context.Context, rn *run, bs *breakers) outcome {
	var last outcome
	for _, c := range rn.cands {
		out, stop := e.tryOne(ctx, rn, bs, c)
		if out.success || stop {
			return out
		}
		last = out
	}
	return last
}

func (e *Engine) tryOne(ctx context.Context, rn *run, bs *breakers, c candidate) (outcome, bool) {
	if rn.req.Test {
		return e.tryTest(ctx, rn, c)
	}
	id := c.account.ID
	start := e.now()
	allowed, claimed := bs.allow(e.breaker, id, start)
	if !allowed {
		msg := "circuit open for provider " + c.account.DisplayName
		rn.attempts = append(rn.attempts, e.attempt(rn, c, start, start, provider.Result{Err: provider.Errorf(notify.FailureCircuitOpen, "%s", msg)}))
		return outcome{code: notify.FailureCircuitOpen, msg: msg}, false
	}
	if err := e.waitDispatchLimits(ctx, rn, c.account); err != nil {
		bs.release(id, claimed)
		return outcome{code: notify.FailureTemporaryUnavailable, msg: "dispatch limit wait: " + err.Error(), halt: err}, true
	}
	if claimed != nil {
		// Claim the half-open trial in the shared state before calling, so
		// other workers keep skipping the provider meanwhile.
		if err := e.store.Update(ctx, func(tx notify.Tx) error { return tx.PutBreaker(ctx, claimed) }); err != nil {
			e.log.WarnContext(ctx, "breaker claim failed", "provider", id, "err", err)
		}
	}
	if err := e.unkeyedSlot(ctx, rn, c.account); err != nil {
		bs.release(id, claimed)
		return outcome{code: notify.FailureTemporaryUnavailable, msg: "unkeyed call wait: " + err.Error(), halt: err}, true
	}
	// The attempt is the vendor call: it starts after the wait for a
	// dispatch-limit token (notifyd_dispatch_limit_wait_seconds records
	// that wait), so a rate limit does not look like a slow vendor in the
	// attempt history.
	start = e.now()
	var res provider.Result
	var left *dispatch.SnoozeError
	if e.tracer.On() {
		vctx, span := e.startVendor(ctx, rn, c.account)
		res, left = e.send(vctx, rn, c.account)
		endVendor(span, res)
	} else {
		res, left = e.send(ctx, rn, c.account)
	}
	if left != nil && claimed == nil {
		// The message waited in its batch for half the job's time and left
		// unsent: it waits again later (no attempt spent) instead of
		// running into the job's timeout.
		return outcome{code: notify.FailureTemporaryUnavailable, msg: left.Error(), halt: left}, true
	}
	end := e.now()
	rn.attempts = append(rn.attempts, e.attempt(rn, c, start, end, res))
	success := res.Err == nil
	// Failures caused by the request itself, or by the job's own end (a
	// message that left its batch unsent), say nothing of the provider's
	// health and do not count toward opening the circuit.
	if success || (res.Err.Code != notify.FailureInvalidRequest && ctx.Err() == nil) {
		bs.record(e.breaker, id, success, end)
	}
	if success {
		return outcome{success: true, accountID: id, messageID: res.MessageID}, true
	}
	out := outcome{code: res.Err.Code, msg: res.Err.Message, final: !res.Err.FallsBack()}
	return out, out.final
}

// send calls one provider with the request's message. A
// *dispatch.SnoozeError instead of a result says the message left its
// batch unsent while the job still had time.
func (e *Engine) send(ctx context.Context, rn *run, a *notify.ProviderAccount) (provider.Result, *dispatch.SnoozeError) {
	p, perr := e.client(a)
	if perr != nil {
		return provider.Result{Err: perr}, nil
	}
	m := e.outgoing(ctx, rn)
	if !rn.sync && rn.job != nil {
		// A run taken over after a crash keeps the attempt number
		// (ClaimRequests), so its repeat carries the same key.
		m.IdempotencyKey = rn.req.ID + "/" + strconv.Itoa(rn.job.AttemptsMade) + "/" + a.ID
	}
	// A transactional message waits for company in its vendor batch at
	// most TransactionalBatchWait; bulk work waits the account's window.
	within := TransactionalBatchWait
	if rn.req.Lane() == notify.LaneBulk {
		within = 0
	}
	return e.deliver(ctx, a, p, m, !rn.sync, within)
}

// TransactionalBatchWait bounds a transactional message's wait for
// company in its vendor batch (issue 31, item 2): the accounts' windows
// (750–1,000 ms by default for the email kinds) are for bulk work; a
// password reset leaves within this, with the messages that joined its
// batch so far, when the vendor's call budget allows.
const TransactionalBatchWait = 200 * time.Millisecond

// outgoing is the run's message as it leaves: with open and click
// tracking when the engagement settings say so (issue 35).
func (e *Engine) outgoing(ctx context.Context, rn *run) provider.Message {
	m := message(rn.msg)
	if e.tracker != nil && m.HTML != "" {
		m.HTML = e.tracker.Instrument(ctx, rn.req, m.Channel, m.HTML, e.now())
	}
	return m
}

func message(r *notify.Request) provider.Message {
	return provider.Message{ID: r.ID, Channel: r.Channel, To: r.RecipientAddress, ToName: r.RecipientName, Title: r.Title,
		Text: r.Text, HTML: r.HTML, TemplateCode: r.TemplateCode, VendorTemplateID: r.VendorTemplateID,
		SenderProfileKey: r.SenderProfileKey, Variables: r.TemplateVariables, Headers: r.Headers, Data: r.Metadata}
}

// attempt builds the attempt record of one provider call, with the run's
// secrets redacted.
func (e *Engine) attempt(rn *run, c candidate, start, end time.Time, res provider.Result) *notify.Attempt {
	a := &notify.Attempt{ID: newID(), WorkspaceID: rn.req.WorkspaceID, RequestID: rn.req.ID, JobID: rn.job.ID,
		ProviderAccountID: c.account.ID, ProviderKind: c.account.ProviderKind, ProviderDisplayName: c.account.DisplayName,
		Channel: rn.msg.Channel, Success: res.Err == nil, ProviderMessageID: res.MessageID, StartedAt: start, FinishedAt: end}
	result := "success"
	if res.Err != nil {
		a.FailureCode, a.FailureMessage = string(res.Err.Code), res.Err.Message
		result = a.FailureCode
	}
	e.attempts.Observe(a.ProviderKind, result, rn.req.Test)
	respJSON, _ := json.Marshal(res.Exchange.Response)
	a.RequestJSON, a.ResponseJSON = string(providerCall(res)), string(respJSON)
	for _, p := range rn.secrets {
		a.RequestJSON, a.ResponseJSON, a.FailureMessage = redact(a.RequestJSON, p), redact(a.ResponseJSON, p), redact(a.FailureMessage, p)
	}
	rn.job.LastProviderAccountID = c.account.ID
	return a
}

// providerCall is the providerCall record of an attempt: json.Marshal of
// {method, url, body} with the message's place in its batch call. A body
// that is a message's part of a batch call (pacing.JSONPart) is JSON as
// json.Marshal writes it already and is copied, not encoded again.
func providerCall(res provider.Result) []byte {
	part, ok := res.Exchange.Request.(pacing.JSONPart)
	if !ok {
		out, _ := json.Marshal(batchCall(map[string]any{"method": res.Exchange.Method, "url": res.Exchange.URL, "body": res.Exchange.Request}, res))
		return out
	}
	// The keys in json.Marshal's order for a map: sorted.
	out := make([]byte, 0, len(part)+len(res.Exchange.URL)+64)
	out = append(out, '{')
	if res.Batch != nil {
		out = append(out, `"batchIndex":`...)
		out = strconv.AppendInt(out, int64(res.Batch.Index), 10)
		out = append(out, `,"batchSize":`...)
		out = strconv.AppendInt(out, int64(res.Batch.Size), 10)
		out = append(out, ',')
	}
	out = append(append(out, `"body":`...), part...)
	method, _ := json.Marshal(res.Exchange.Method)
	url, _ := json.Marshal(res.Exchange.URL)
	out = append(append(out, `,"method":`...), method...)
	out = append(append(out, `,"url":`...), url...)
	return append(out, '}')
}

func redact(s, secret string) string {
	if secret == "" {
		return s
	}
	return strings.ReplaceAll(s, secret, "[redacted]")
}
