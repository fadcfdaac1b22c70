package delivery

import (
	"context"
	"strconv"
	"time"

	"github.com/notifyd/notifyd/internal/notify"
	"github.com/notifyd/notifyd/internal/provider"
	"github.com/notifyd/notifyd/internal/testmode"
)

// Test requests (issue 36, item 1) run the same claim, route choice,
// preferences, fallback, retries, recording and events as live ones, but
// each vendor call goes to the in-process simulator (Options.TestHTTP),
// in the vendor's real format, through an adapter built for the account
// with that client: whatever address its configJson names, nothing is
// dialled. A test call stays out of live traffic's budgets: it takes no
// dispatch-limit token, joins no adapter batch (so never shares a vendor
// call with live messages, nor spends the account's call budget), and
// neither reads nor moves the account's circuit breaker. Its magic
// recipient (testmode.Recipients) picks the simulator's answer.

// testUnavailable answers the calls of test requests in a process built
// without a simulator: they must not reach a vendor.
var testUnavailable = provider.Errorf(notify.FailureTemporaryUnavailable, "test mode: this process has no built-in simulator")

// tryTest is tryOne for a test request.
func (e *Engine) tryTest(ctx context.Context, rn *run, c candidate) (outcome, bool) {
	start := e.now()
	res := e.sendTest(ctx, rn, c.account)
	rn.attempts = append(rn.attempts, e.attempt(rn, c, start, e.now(), res))
	if res.Err == nil {
		return outcome{success: true, accountID: c.account.ID, messageID: res.MessageID}, true
	}
	out := outcome{code: res.Err.Code, msg: res.Err.Message, final: !res.Err.FallsBack()}
	return out, out.final
}

// sendTest makes the vendor call of a test request, alone, to the
// simulator, with the fault its magic recipient calls for.
func (e *Engine) sendTest(ctx context.Context, rn *run, a *notify.ProviderAccount) provider.Result {
	if e.testDeps.HTTP == nil {
		return provider.Result{Err: testUnavailable}
	}
	p, perr := e.clientWith(a, configKey(a)+"#test", e.testDeps)
	if perr != nil {
		return provider.Result{Err: perr}
	}
	m := e.outgoing(ctx, rn)
	if !rn.sync && rn.job != nil {
		m.IdempotencyKey = rn.req.ID + "/" + strconv.Itoa(rn.job.AttemptsMade) + "/" + a.ID
	}
	// The request's first vendor call: its first run (the claim counts it)
	// before any attempt of this run.
	first := len(rn.attempts) == 0 && (rn.job == nil || rn.job.AttemptsMade <= 1)
	if f, ok := testmode.FaultFor(a.ProviderKind, testmode.OutcomeOf(rn.msg.Channel, rn.msg.RecipientAddress), first); ok {
		ctx = testmode.WithFault(ctx, f)
	}
	res := p.Send(ctx, []provider.Message{m})
	if len(res) == 0 {
		return provider.Result{Err: provider.Errorf(notify.FailureUnknown, "no result")}
	}
	out := res[0]
	out.Batch = &provider.BatchPlace{Size: 1}
	return out
}

// testBounces are the delivery feedback rows of the runs whose test
// message went to the magic bounce address and was accepted: the
// permanent bounce the vendor would report later, recorded with the
// outcome (its callback would name the attempt's message id). The address
// is not suppressed, so the test can be repeated.
func testBounces(runs []*run, now time.Time) []*notify.DeliveryFeedback {
	var out []*notify.DeliveryFeedback
	for _, rn := range runs {
		if !rn.req.Test || !rn.out.success || rn.msg.Channel != notify.ChannelEmail ||
			testmode.OutcomeOf(rn.msg.Channel, rn.msg.RecipientAddress) != testmode.Bounce || len(rn.attempts) == 0 {
			continue
		}
		at := rn.attempts[len(rn.attempts)-1]
		out = append(out, &notify.DeliveryFeedback{ID: newID(), WorkspaceID: rn.req.WorkspaceID, ProviderAccountID: at.ProviderAccountID,
			ProviderMessageID: at.ProviderMessageID, RequestID: rn.req.ID, AttemptID: at.ID, RecipientAddress: rn.msg.RecipientAddress,
			Type: notify.FeedbackBounce, BounceType: notify.BouncePermanent, Detail: "test mode: the magic bounce address bounces",
			VendorEventID: "test-bounce:" + at.ID, OccurredAt: now, ReceivedAt: now})
	}
	return out
}

// recordTestBounces stores testBounces(runs) in tx.
func recordTestBounces(ctx context.Context, tx notify.Tx, runs []*run, now time.Time) error {
	for _, f := range testBounces(runs, now) {
		if _, err := tx.CreateDeliveryFeedback(ctx, f); err != nil {
			return err
		}
	}
	return nil
}
