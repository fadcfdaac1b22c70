package notify

import (
	"context"
	"time"
)

// LoginCounter is one login throttle counter: attempts counted under Key
// (a hash naming a client, an account or both) until ExpiresAt, and the
// time before which the key's next attempt is refused.
type LoginCounter struct {
	Key          string
	Attempts     int
	BlockedUntil time.Time
	ExpiresAt    time.Time
}

// AuthTx holds the store verbs of dashboard login throttling and of ending
// a user's sessions.
type AuthTx interface {
	// CountLoginAttempt adds one attempt to key's counter and returns it;
	// a missing or expired counter starts again at one attempt, not
	// blocked. The counter then expires at expiresAt. It holds the row's
	// lock (PostgreSQL) until the transaction ends, so concurrent counts
	// of other processes wait and see this one.
	CountLoginAttempt(ctx context.Context, key string, now, expiresAt time.Time) (*LoginCounter, error)
	// FindLoginCounter returns key's counter; ErrNotFound when it is
	// missing or expired at now.
	FindLoginCounter(ctx context.Context, key string, now time.Time) (*LoginCounter, error)
	// PutLoginCounter writes c whole, creating it when missing.
	PutLoginCounter(ctx context.Context, c *LoginCounter) error
	// DeleteLoginCounter removes key's counter; a missing one is no error.
	DeleteLoginCounter(ctx context.Context, key string) error
	// DeleteExpiredLoginCounters deletes counters expired at now.
	DeleteExpiredLoginCounters(ctx context.Context, now time.Time) (int, error)

	// DeleteSessionsOfUser ends every session of the user except the one
	// of exceptTokenHash ("" ends all) and returns how many ended.
	DeleteSessionsOfUser(ctx context.Context, userID, exceptTokenHash string) (int, error)
}
