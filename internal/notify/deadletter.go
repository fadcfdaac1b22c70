package notify

import (
	"context"
	"time"
)

// DeadLetterFilter selects the dead letters a replay takes out of the
// queue. Every field left zero selects everything.
type DeadLetterFilter struct {
	// JobID names one item (the dead letter's jobId).
	JobID   string
	Channel Channel
	// FailureCode is the last failure code of the item's job (the code
	// that opens its failedReason).
	FailureCode FailureCode
	// From and To bound failedAt, both inclusive.
	From, To *time.Time
}

// DeadLetterTx holds the verbs of dead-letter replay.
type DeadLetterTx interface {
	// ReplayDeadLetters takes the dead letters of workspaceID that f
	// selects out of the queue and puts their requests back to queued:
	// each job row is queued again in a new queue job, with budget more
	// attempts than it has made (its attempt count, and so its attempts
	// and their vendor idempotency keys, go on), and the request loses
	// its final error. The dead letters leave through one conditional
	// DELETE, so of concurrent replays of one item exactly one gets it;
	// the others answer nothing for it. It answers the items replayed,
	// oldest failure first.
	ReplayDeadLetters(ctx context.Context, workspaceID string, f DeadLetterFilter, budget int, now time.Time) ([]*DeadLetter, error)
}

// failureCodes lists the failure codes of SPEC "Attempt record".
var failureCodes = []FailureCode{
	FailureCreditExhausted, FailureRateLimited, FailureTemporaryUnavailable, FailureInvalidRequest,
	FailureUnauthorized, FailureUnsupportedChannel, FailureUnknown, FailureCircuitOpen,
}

// Valid reports whether c is one of SPEC's failure codes.
func (c FailureCode) Valid() bool {
	for _, v := range failureCodes {
		if v == c {
			return true
		}
	}
	return false
}
