package service

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/notifyd/notifyd/internal/dispatch"
	"github.com/notifyd/notifyd/internal/notify"
	"github.com/notifyd/notifyd/internal/provider"
)

// Adapter batching (SPEC "Adapter batching"): a queued send joins the
// current batch of its provider account (dispatch.Batcher); synchronous
// sends (OTP, test-send) go alone and at once.

// batchedKey marks the context of a queued job run: its sends may wait in
// a batch. Every other send is synchronous.
type batchedKey struct{}

func withBatching(ctx context.Context) context.Context {
	return context.WithValue(ctx, batchedKey{}, true)
}

func batching(ctx context.Context) bool {
	v, _ := ctx.Value(batchedKey{}).(bool)
	return v
}

// batchConfigs caches each account's batching per config version.
type batchConfigs struct {
	mu sync.Mutex
	m  map[string]dispatch.BatchConfig
}

// batchConfig returns the batching of account a: its kind's defaults with
// its dispatch_* overrides. A config stored with bad overrides (before
// they were checked) keeps the defaults.
func (d *dispatcher) batchConfig(a *notify.ProviderAccount) dispatch.BatchConfig {
	key := a.ID + "@" + itoa(a.UpdatedAt.UnixNano())
	d.batchCfgs.mu.Lock()
	c, ok := d.batchCfgs.m[key]
	d.batchCfgs.mu.Unlock()
	if ok {
		return c
	}
	k, _ := d.s.kind(a.ProviderKind)
	cfg, err := d.s.OpenConfig(a)
	if err != nil {
		cfg = nil
	}
	c, notes := dispatch.BatchConfigFor(k, cfg)
	for _, n := range notes {
		// Once per account config version (cached below).
		d.s.log.Warn("provider batching override", "provider", a.ID, "note", n)
	}
	d.batchCfgs.mu.Lock()
	if d.batchCfgs.m == nil {
		d.batchCfgs.m = map[string]dispatch.BatchConfig{}
	}
	d.batchCfgs.m[key] = c
	d.batchCfgs.mu.Unlock()
	return c
}

// deliver sends m through p, the provider of account a: batched for a
// queued job run, alone and at once otherwise. The result carries the
// message's place in its vendor call. A job whose context ends while its
// message waits in a batch gets a temporary_unavailable result for a
// message that was not sent; the run's own writes then fail on the ended
// context and the job runs again. A message leaves its batch earlier, with
// half the job's remaining time, and then gets a *dispatch.SnoozeError: a
// backlog the call budget cannot serve in time makes jobs snooze (no
// attempt spent) rather than time out, and no job outlives River's rescue
// while it waits (a rescued live job would send twice).
func (d *dispatcher) deliver(ctx context.Context, a *notify.ProviderAccount, p provider.Provider, m provider.Message) (provider.Result, *dispatch.SnoozeError) {
	acct := dispatch.BatchAccount{Key: a.ID, Kind: a.ProviderKind, Config: d.batchConfig(a), Send: p.Send}
	var out dispatch.Batched
	if batching(ctx) {
		wctx, cancel := batchWaitContext(ctx)
		defer cancel()
		var err error
		if out, err = d.batches.Send(wctx, acct, m); err != nil {
			var left *dispatch.ErrLeftBatch
			if errors.As(err, &left) {
				if ctx.Err() == nil {
					return provider.Result{}, &dispatch.SnoozeError{After: batchSnooze, Reason: "waited too long in the batch of provider " + a.ID}
				}
				return provider.Result{Err: provider.Errorf(notify.FailureTemporaryUnavailable, "%v", err)}, nil
			}
			return provider.Result{Err: provider.Errorf(notify.FailureUnknown, "%v", err)}, nil
		}
	} else {
		out = d.batches.SendNow(ctx, acct, m)
	}
	res := out.Result
	res.Batch = &provider.BatchPlace{Size: out.Size, Index: out.Index}
	return res, nil
}

// batchSnooze is how long a job that left its batch unsent sleeps before
// it queues again.
const batchSnooze = time.Second

// batchWaitContext bounds a message's wait in its batch to half the job's
// remaining time, leaving the rest for the call, the writes and a snooze.
func batchWaitContext(ctx context.Context) (context.Context, context.CancelFunc) {
	dl, ok := ctx.Deadline()
	if !ok {
		return context.WithCancel(ctx)
	}
	return context.WithTimeout(ctx, time.Until(dl)/2)
}

// batchCall adds the message's place in its vendor call to the providerCall
// record of an attempt.
func batchCall(call map[string]any, res provider.Result) map[string]any {
	if res.Batch != nil {
		call["batchSize"], call["batchIndex"] = res.Batch.Size, res.Batch.Index
	}
	return call
}
