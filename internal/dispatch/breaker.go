package dispatch

import (
	"fmt"
	"time"
)

// State is a circuit breaker state (SPEC "Circuit breaker"). The zero value
// is Closed, so a zero Breaker is a healthy account.
type State int

// The three breaker states.
const (
	Closed   State = iota // normal; failures are counted
	Open                  // attempts are skipped with circuit_open until OpenedUntil
	HalfOpen              // one trial attempt is let through
)

// String returns the state name SPEC and the dashboard use.
func (s State) String() string {
	switch s {
	case Closed:
		return "CLOSED"
	case Open:
		return "OPEN"
	case HalfOpen:
		return "HALF_OPEN"
	}
	return fmt.Sprintf("State(%d)", int(s))
}

// ParseState reads a name produced by String, for breakers kept in storage.
func ParseState(s string) (State, error) {
	switch s {
	case "CLOSED":
		return Closed, nil
	case "OPEN":
		return Open, nil
	case "HALF_OPEN":
		return HalfOpen, nil
	}
	return 0, fmt.Errorf("dispatch: unknown breaker state %q", s)
}

// Breaker is the circuit state of one provider account as a plain value, so
// it can be kept in memory or in a database row and its transitions tested
// without clocks or goroutines. Transitions are made only by BreakerPolicy.
//
// OpenedUntil means: in Open, the end of the open period; in HalfOpen with
// a trial in flight, the deadline after which the trial counts as lost.
type Breaker struct {
	State         State
	Failures      int // consecutive failures
	OpenedUntil   time.Time
	TrialInFlight bool
}

// BreakerPolicy holds the breaker's thresholds; DefaultBreakerPolicy has
// SPEC's values. Non-positive fields mean the defaults.
type BreakerPolicy struct {
	Threshold int           // consecutive failures that open the circuit
	OpenFor   time.Duration // how long it stays open (and how long a trial may take)
}

// Default breaker values of SPEC: open after 5 consecutive failures, for 60
// seconds.
const (
	DefaultBreakerThreshold = 5
	DefaultBreakerOpenFor   = 60 * time.Second
)

// DefaultBreakerPolicy returns SPEC's breaker values (5 failures, 60 s).
func DefaultBreakerPolicy() BreakerPolicy {
	return BreakerPolicy{Threshold: DefaultBreakerThreshold, OpenFor: DefaultBreakerOpenFor}
}

func (p BreakerPolicy) norm() BreakerPolicy {
	if p.Threshold <= 0 {
		p.Threshold = DefaultBreakerThreshold
	}
	if p.OpenFor <= 0 {
		p.OpenFor = DefaultBreakerOpenFor
	}
	return p
}

// Allow decides whether an attempt through the account may be made at now,
// and returns the breaker to store. When it returns false the caller skips
// the route and records circuit_open (which falls back).
//
//   - Closed: allowed.
//   - Open before OpenedUntil: refused.
//   - Open at or after OpenedUntil: becomes HalfOpen with one trial in
//     flight; allowed (the trial).
//   - HalfOpen with a trial in flight: refused, unless the trial started
//     OpenFor or longer ago; such a trial is considered lost (its worker
//     died or its result was never recorded) and a new trial is allowed,
//     so the account cannot stay stuck in HalfOpen.
//   - HalfOpen without a trial (as loaded from storage): allowed as the trial.
func (p BreakerPolicy) Allow(b Breaker, now time.Time) (allowed bool, next Breaker) {
	p = p.norm()
	switch b.State {
	case Open:
		if now.Before(b.OpenedUntil) {
			return false, b
		}
	case HalfOpen:
		if b.TrialInFlight && now.Before(b.OpenedUntil) {
			return false, b
		}
	default:
		return true, b
	}
	b.State = HalfOpen
	b.TrialInFlight = true
	b.OpenedUntil = now.Add(p.OpenFor)
	return true, b
}

// Record returns the breaker after the outcome of an attempt that Allow let
// through. Only outcomes that count against the provider should be recorded
// as failures (the caller decides which failure codes do).
//
//   - Success, in any state: Closed with the counter reset. A late success
//     arriving while Open also closes: the provider evidently works.
//   - Failure in Closed: the counter grows; at Threshold the circuit opens
//     until now+OpenFor.
//   - Failure in HalfOpen (the trial failed; SPEC leaves this open, we
//     decide): Open again for a full OpenFor.
//   - Failure in Open (an attempt begun before the circuit opened): the
//     counter grows, the open period is not extended.
func (p BreakerPolicy) Record(b Breaker, success bool, now time.Time) Breaker {
	p = p.norm()
	if success {
		return Breaker{State: Closed}
	}
	b.Failures++
	switch b.State {
	case HalfOpen:
		return Breaker{State: Open, Failures: b.Failures, OpenedUntil: now.Add(p.OpenFor)}
	case Open:
		return b
	default:
		if b.Failures >= p.Threshold {
			return Breaker{State: Open, Failures: b.Failures, OpenedUntil: now.Add(p.OpenFor)}
		}
		return Breaker{State: Closed, Failures: b.Failures}
	}
}
