package sqlstore

import (
	"context"
	"sync"

	"github.com/notifyd/notifyd/internal/notify"
)

// Waker is an optional part of a Backend whose database carries inbox
// wake-ups between processes (PostgreSQL: NOTIFY and LISTEN). WakeTx
// runs in the transaction that appended to the logs, before its commit:
// the database delivers the wake-ups when, and only when, it commits.
// Listen calls fn with each woken profile, "" after it reconnected (any
// wake-up may have been missed: every stream looks again), until ctx
// ends.
type Waker interface {
	WakeTx(ctx context.Context, c Conn, recipientIDs []string) error
	Listen(ctx context.Context, fn func(recipientID string)) error
}

var _ notify.InboxFeed = (*Store)(nil)

// ListenInbox calls fn with the profile of every inbox log a committed
// transaction appended to, until ctx ends: through the database on a
// backend that is a Waker, else for this process's own commits (SQLite:
// a single process holds the database).
func (s *Store) ListenInbox(ctx context.Context, fn func(recipientID string)) error {
	if w, ok := s.b.(Waker); ok {
		return w.Listen(ctx, fn)
	}
	remove := s.feed.add(fn)
	defer remove()
	<-ctx.Done()
	return nil
}

// wakeTx hands the profiles tx woke to a Waker backend, in tx.
func (s *Store) wakeTx(ctx context.Context, tx *Tx) error {
	if w, ok := s.b.(Waker); ok && len(tx.woken) > 0 {
		return w.WakeTx(ctx, tx.c, tx.woken)
	}
	return nil
}

// woke tells this process's listeners, after tx committed, when the
// backend does not.
func (s *Store) woke(tx *Tx) {
	if _, ok := s.b.(Waker); !ok && len(tx.woken) > 0 {
		s.feed.publish(tx.woken)
	}
}

// localFeed is the in-process list of inbox listeners.
type localFeed struct {
	mu   sync.Mutex
	next int
	fns  map[int]func(string)
}

func (f *localFeed) add(fn func(string)) (remove func()) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.fns == nil {
		f.fns = map[int]func(string){}
	}
	id := f.next
	f.next++
	f.fns[id] = fn
	return func() {
		f.mu.Lock()
		defer f.mu.Unlock()
		delete(f.fns, id)
	}
}

func (f *localFeed) publish(ids []string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, fn := range f.fns {
		for _, id := range ids {
			fn(id)
		}
	}
}
