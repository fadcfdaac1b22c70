package delivery

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/notifyd/notifyd/internal/delivery/pacing"
	"github.com/notifyd/notifyd/internal/dispatch"
	"github.com/notifyd/notifyd/internal/notify"
	"github.com/notifyd/notifyd/internal/provider"
)

// Adapter batching (SPEC "Adapter batching"): a queued send joins the
// current batch of its provider account (pacing.Batcher); synchronous
// sends (OTP, test-send) go alone and at once.

// batchConfigs caches each account's batching per config version.
type batchConfigs struct {
	mu sync.Mutex
	m  map[string]dispatch.BatchConfig
}

// batchConfig returns the batching of account a: its kind's defaults with
// its dispatch_* overrides. A config stored with bad overrides (before
// they were checked) keeps the defaults.
func (e *Engine) batchConfig(a *notify.ProviderAccount) dispatch.BatchConfig {
	key := configKey(a)
	e.batchCfgs.mu.Lock()
	c, ok := e.batchCfgs.m[key]
	e.batchCfgs.mu.Unlock()
	if ok {
		return c
	}
	k := e.kinds[a.ProviderKind]
	cfg, err := e.openConfig(a)
	if err != nil {
		cfg = nil
	}
	c, notes := dispatch.BatchConfigFor(k.ID, dispatch.BatchConfig{CallsPerSecond: k.Batch.CallsPerSecond, Window: k.Batch.Window, MaxSize: k.Batch.MaxSize}, cfg)
	for _, n := range notes {
		// Once per account config version (cached below).
		e.log.Warn("provider batching override", "provider", a.ID, "note", n)
	}
	e.batchCfgs.mu.Lock()
	if e.batchCfgs.m == nil {
		e.batchCfgs.m = map[string]dispatch.BatchConfig{}
	}
	e.batchCfgs.m[key] = c
	e.batchCfgs.mu.Unlock()
	return c
}

// deliver sends m through p, the provider of account a: batched when
// batched (a queued job run), alone and at once otherwise (a caller waits). The result carries the
// message's place in its vendor call. A job whose context ends while its
// message waits in a batch gets a temporary_unavailable result for a
// message that was not sent; the run's own writes then fail on the ended
// context and the job runs again. A message leaves its batch earlier, with
// half the job's remaining time, and then gets a *dispatch.SnoozeError: a
// backlog the call budget cannot serve in time makes jobs snooze (no
// attempt spent) rather than time out, and no job outlives River's rescue
// while it waits (a rescued live job would send twice).
func (e *Engine) deliver(ctx context.Context, a *notify.ProviderAccount, p provider.Provider, m provider.Message, batched bool, within time.Duration) (provider.Result, *dispatch.SnoozeError) {
	acct := pacing.BatchAccount{Key: a.ID, Kind: a.ProviderKind, Config: e.batchConfig(a), Send: p.Send}
	var out pacing.Batched
	if batched {
		wctx, cancel := batchWaitContext(ctx)
		defer cancel()
		var err error
		if out, err = e.batches.SendWithin(wctx, acct, m, within); err != nil {
			var left *pacing.ErrLeftBatch
			if errors.As(err, &left) {
				if ctx.Err() == nil {
					return provider.Result{}, &dispatch.SnoozeError{After: batchSnooze, Reason: "waited too long in the batch of provider " + a.ID}
				}
				return provider.Result{Err: provider.Errorf(notify.FailureTemporaryUnavailable, "%v", err)}, nil
			}
			return provider.Result{Err: provider.Errorf(notify.FailureUnknown, "%v", err)}, nil
		}
	} else {
		out = e.batches.SendNow(ctx, acct, m)
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
