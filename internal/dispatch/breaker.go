package dispatch

import (
	"time"

	"github.com/notifyd/notifyd/internal/notify"
)

// BreakerPolicy makes every transition of a circuit (notify.BreakerRecord)
// and holds its thresholds; DefaultBreakerPolicy has SPEC's values.
// Non-positive fields mean the defaults.
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
func (p BreakerPolicy) Allow(b notify.BreakerRecord, now time.Time) (allowed bool, next notify.BreakerRecord) {
	p = p.norm()
	switch b.State {
	case notify.BreakerOpen:
		if now.Before(b.OpenedUntil) {
			return false, b
		}
	case notify.BreakerHalfOpen:
		if b.TrialInFlight && now.Before(b.OpenedUntil) {
			return false, b
		}
	default:
		return true, b
	}
	b.State = notify.BreakerHalfOpen
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
func (p BreakerPolicy) Record(b notify.BreakerRecord, success bool, now time.Time) notify.BreakerRecord {
	p = p.norm()
	// The account and UpdatedAt stay as given; the caller stamps the time.
	move := func(st notify.BreakerState, failures int, until time.Time) notify.BreakerRecord {
		b.State, b.Failures, b.OpenedUntil, b.TrialInFlight = st, failures, until, false
		return b
	}
	if success {
		return move(notify.BreakerClosed, 0, time.Time{})
	}
	switch {
	case b.State == notify.BreakerOpen:
		b.Failures++
		return b
	case b.State == notify.BreakerHalfOpen || b.Failures+1 >= p.Threshold:
		return move(notify.BreakerOpen, b.Failures+1, now.Add(p.OpenFor))
	}
	return move(notify.BreakerClosed, b.Failures+1, time.Time{})
}
