package notify

import "time"

// BreakerState is a circuit breaker state (SPEC "Circuit breaker"), as
// stored and shown. A state the policy does not know ("" included) counts
// as closed, so a zero BreakerRecord is a healthy account.
type BreakerState string

// The three breaker states.
const (
	BreakerClosed   BreakerState = "CLOSED"    // normal; failures are counted
	BreakerOpen     BreakerState = "OPEN"      // attempts are skipped with circuit_open until OpenedUntil
	BreakerHalfOpen BreakerState = "HALF_OPEN" // one trial attempt is let through
)

// BreakerRecord is the circuit of one provider account as a plain value:
// a delivery run keeps it in memory, the store keeps it as a row, and only
// dispatch.BreakerPolicy moves it, so its transitions are tested without
// clocks or goroutines.
//
// OpenedUntil means: in Open, the end of the open period; in HalfOpen with
// a trial in flight, the deadline after which the trial counts as lost.
type BreakerRecord struct {
	ProviderAccountID string
	State             BreakerState
	Failures          int // consecutive failures
	OpenedUntil       time.Time
	TrialInFlight     bool
	UpdatedAt         time.Time
}
