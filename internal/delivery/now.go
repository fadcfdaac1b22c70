package delivery

import (
	"context"

	"github.com/notifyd/notifyd/internal/notify"
)

// SendNow delivers a request whose caller waits for the answer (an OTP, a
// provider test-send) through its routes, or through d.Account alone with
// the circuit bypassed. The send neither waits in an adapter batch nor on
// a dispatch limit (it takes its tokens), and is not retried. The caller
// records the outcome in its own transaction.
func (e *Engine) SendNow(ctx context.Context, d notify.DirectSend) notify.DirectOutcome {
	rn := &run{req: d.Request, msg: d.Request, job: d.Job, sync: true, secrets: d.Secrets}
	var bs *breakers
	err := e.store.View(ctx, func(tx notify.Tx) error {
		r := d.Request
		suppressed := map[string]bool{}
		if r.Channel == notify.ChannelEmail {
			var err error
			if suppressed, err = tx.FindSuppressed(ctx, r.WorkspaceID, []string{r.RecipientAddress}); err != nil {
				return err
			}
		}
		if d.Account != nil {
			e.choose(rn, []*notify.Route{{Channel: r.Channel, ProviderAccountID: d.Account.ID, Enabled: true}},
				map[string]*notify.ProviderAccount{d.Account.ID: enabled(d.Account)}, suppressed)
			return nil
		}
		var err error
		bs, err = e.prepare(ctx, tx, []*run{rn})
		return err
	})
	switch {
	case err != nil:
		rn.out = outcome{code: notify.FailureTemporaryUnavailable, msg: "routes could not be read: " + err.Error(), final: true}
	case !rn.decided:
		rn.out = e.tryRoutes(ctx, rn, bs)
	}
	rn.out.final = true // no job retry: the caller waits for this answer
	return &direct{e: e, rn: rn, circuits: bs.take()}
}

// enabled is a test-send's account as a usable candidate: an instance
// test-send of a disabled account is refused before, and a "test" mode
// send reaches a disabled account on purpose.
func enabled(a *notify.ProviderAccount) *notify.ProviderAccount {
	c := *a
	c.Enabled = true
	return &c
}

// direct is the outcome of a SendNow.
type direct struct {
	e        *Engine
	rn       *run
	circuits outcomes
}

func (d *direct) Succeeded() bool { return d.rn.out.success }

func (d *direct) Failure() (notify.FailureCode, string) {
	msg := d.rn.out.msg
	for _, p := range d.rn.secrets {
		msg = redact(msg, p)
	}
	return d.rn.out.code, msg
}

// Record writes the attempts, the circuits that changed, the request's
// final state and its event in tx.
func (d *direct) Record(ctx context.Context, tx notify.Tx) error {
	now := d.e.now()
	if err := tx.CreateAttempts(ctx, d.rn.attempts); err != nil {
		return err
	}
	if err := recordTestBounces(ctx, tx, []*run{d.rn}, now); err != nil {
		return err
	}
	if err := d.circuits.save(ctx, tx, d.e.breaker, now); err != nil {
		return err
	}
	set, err := d.e.settle(d.rn, now)
	if err != nil {
		return err
	}
	if err := tx.UpdateRequest(ctx, d.rn.req); err != nil {
		return err
	}
	if err := tx.UpdateJob(ctx, d.rn.job); err != nil {
		return err
	}
	if set.event == "" {
		return nil
	}
	events, err := notify.Subscribed(ctx, tx, []*notify.Event{notify.RequestEvent(newID(), set.event, d.rn.req, now)})
	if err != nil {
		return err
	}
	return tx.CreateEvents(ctx, events)
}
