package delivery

import (
	"context"
	"sync"

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

// unkeyedPerAccount bounds the same across the process's job runs, for
// each provider account (Options.UnkeyedPerAccount: the daemon gives
// PostgreSQL 8): with many jobs sending at once (claims share a
// group commit on SQLite), 2 per job still let a kill find 6-8 unkeyed
// calls out (1.2% of the crash test's accepted messages). Per account, so
// a slow webhook of one workspace never holds another's calls back; the
// chat vendors such accounts reach allow a few messages a second per
// webhook anyway (docs/DECISIONS.md "Duplicates after a crash").
const unkeyedPerAccount = 4

// unkeyedSlots are the per-account slots (size each), made on an
// account's first unkeyed call.
type unkeyedSlots struct {
	size int
	mu   sync.Mutex
	by   map[string]chan struct{}
}

func (u *unkeyedSlots) of(accountID string) chan struct{} {
	u.mu.Lock()
	defer u.mu.Unlock()
	if u.by == nil {
		u.by = map[string]chan struct{}{}
	}
	c, ok := u.by[accountID]
	if !ok {
		c = make(chan struct{}, u.size)
		u.by[accountID] = c
	}
	return c
}

// unkeyedSlot takes a slot of rn's job, then one of account a, before an
// unkeyed call through a, unless rn holds them already (a fallback's
// second call); the run's goroutine gives them back once the run's
// outcome is noted (sendAndRecord, unkeyedRelease). ctx's error when the
// job ends first: the call is then not made. The job's slot is taken
// first and the account's is never held while waiting for a job's, so
// waits cannot cross.
func (e *Engine) unkeyedSlot(ctx context.Context, rn *run, a *notify.ProviderAccount) error {
	if rn.unkeyed == nil || rn.unkeyedHeld || !e.unkeyed(a) {
		return nil
	}
	select {
	case rn.unkeyed <- struct{}{}:
	case <-ctx.Done():
		return ctx.Err()
	}
	acct := e.unkeyedAccounts.of(a.ID)
	select {
	case acct <- struct{}{}:
		rn.unkeyedHeld, rn.unkeyedAccount = true, acct
		return nil
	case <-ctx.Done():
		<-rn.unkeyed
		return ctx.Err()
	}
}

// unkeyedRelease gives back the slots rn took in unkeyedSlot.
func unkeyedRelease(rn *run) {
	<-rn.unkeyedAccount
	<-rn.unkeyed
	rn.unkeyedHeld, rn.unkeyedAccount = false, nil
}

// unkeyed reports whether a call through account a is unkeyed: its kind's
// vendor honours no idempotency key, and it carries one message.
func (e *Engine) unkeyed(a *notify.ProviderAccount) bool {
	k, ok := e.kinds[a.ProviderKind]
	return ok && !k.Idempotent && e.batchConfig(a).MaxSize <= 1
}
