package delivery

import (
	"context"

	"github.com/notifyd/notifyd/internal/notify"
)

// Unkeyed calls. A call through a kind whose vendor honours no
// idempotency key (provider.Kind.Idempotent) and that sends one message a
// call (a chat webhook, a bot, SES) is made again when its process dies
// before its outcome is noted (notes.go): its message arrives twice. A
// job run's requests went out all at once, so a kill while a job's 10–15
// calls were out resent all of them (issue 31, item 1: 7–14 duplicates of
// about 680 in the crash test on PostgreSQL). So at most unkeyedPerJob
// runs of one job have an unkeyed call made and not yet noted; the job's
// other requests wait for one of them to be noted. Concurrency across job
// runs is unchanged, so a process still has as many such calls out as it
// has jobs to send (docs/DECISIONS.md "Duplicates after a crash").
//
// Batched kinds are left alone: one vendor call carries many messages
// (bounding messages would shrink their batches), and keyed kinds drop
// their repeats.
const unkeyedPerJob = 2

// unkeyedSlot takes a slot of rn's job before an unkeyed call through
// account a, unless rn holds one already (a fallback's second call); the
// run's goroutine gives it back once the run's outcome is noted
// (sendAndRecord). ctx's error when the job ends first: the call is then
// not made.
func (e *Engine) unkeyedSlot(ctx context.Context, rn *run, a *notify.ProviderAccount) error {
	if rn.unkeyed == nil || rn.unkeyedHeld || !e.unkeyed(a) {
		return nil
	}
	select {
	case rn.unkeyed <- struct{}{}:
		rn.unkeyedHeld = true
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// unkeyed reports whether a call through account a is unkeyed: its kind's
// vendor honours no idempotency key, and it carries one message.
func (e *Engine) unkeyed(a *notify.ProviderAccount) bool {
	k, ok := e.kinds[a.ProviderKind]
	return ok && !k.Idempotent && e.batchConfig(a).MaxSize <= 1
}
