package postgres

import (
	"context"
	"time"

	"github.com/notifyd/notifyd/internal/store/sqlstore"
)

// Inbox wake-ups across processes (issue 33): the transaction that
// appends to a profile's inbox log sends NOTIFY on inboxChannel with the
// profile's row id, which PostgreSQL delivers at its commit to every
// session listening (docs/DECISIONS.md "Inbox streams across
// processes"). A wake-up carries no event: the streams read the log.

// inboxChannel is the NOTIFY channel of inbox wake-ups.
const inboxChannel = "notifyd_inbox"

var _ sqlstore.Waker = (*Backend)(nil)

// WakeTx sends one NOTIFY per profile in the transaction of c
// (PostgreSQL folds repeats of one payload within a transaction).
func (b *Backend) WakeTx(ctx context.Context, c sqlstore.Conn, recipientIDs []string) error {
	_, err := c.Exec(ctx, `SELECT pg_notify('`+inboxChannel+`', id) FROM unnest(?::text[]) AS id`, recipientIDs)
	return err
}

// Listen holds a connection of its own that LISTENs on inboxChannel and
// calls fn with each payload until ctx ends. A lost connection is opened
// again after a pause. Once it listens, fn("") wakes every stream: what
// was notified before (at start, or while the connection was lost) is
// not known.
func (b *Backend) Listen(ctx context.Context, fn func(recipientID string)) error {
	for ctx.Err() == nil {
		if err := b.listenOnce(ctx, fn); err == nil || ctx.Err() != nil {
			return nil
		}
		select {
		case <-ctx.Done():
		case <-time.After(time.Second):
		}
	}
	return nil
}

func (b *Backend) listenOnce(ctx context.Context, fn func(string)) error {
	pc, err := b.pool.Acquire(ctx)
	if err != nil {
		return err
	}
	// The connection leaves the pool: a LISTEN must not be handed to
	// another caller, and it is closed with the listener.
	conn := pc.Hijack()
	defer conn.Close(context.WithoutCancel(ctx))
	if _, err := conn.Exec(ctx, `LISTEN `+inboxChannel); err != nil {
		return err
	}
	fn("")
	for {
		n, err := conn.WaitForNotification(ctx)
		if err != nil {
			return err
		}
		fn(n.Payload)
	}
}
