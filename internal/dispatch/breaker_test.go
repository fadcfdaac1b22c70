package dispatch

import (
	"testing"
	"time"

	"github.com/notifyd/notifyd/internal/notify"
	"github.com/stretchr/testify/require"
)

func TestBreakerStates(t *testing.T) {
	t.Parallel()
	// The names SPEC and the dashboard use, stored as they are.
	require.Equal(t, []notify.BreakerState{"CLOSED", "OPEN", "HALF_OPEN"},
		[]notify.BreakerState{notify.BreakerClosed, notify.BreakerOpen, notify.BreakerHalfOpen})
	// A zero record, or a state the policy does not know, is closed: let
	// through unchanged, and closed by a success.
	p := DefaultBreakerPolicy()
	for _, b := range []notify.BreakerRecord{{}, {State: "closed"}} {
		ok, next := p.Allow(b, time.Time{})
		require.True(t, ok)
		require.Equal(t, b, next)
		require.Equal(t, notify.BreakerClosed, p.Record(b, true, time.Time{}).State, "zero breaker is closed")
	}
}

func TestDefaultBreakerPolicy(t *testing.T) {
	t.Parallel()
	require.Equal(t, BreakerPolicy{Threshold: 5, OpenFor: 60 * time.Second}, DefaultBreakerPolicy())
}

func TestBreakerAllow(t *testing.T) {
	t.Parallel()
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	p := DefaultBreakerPolicy()
	tests := []struct {
		name  string
		in    notify.BreakerRecord
		now   time.Time
		allow bool
		want  notify.BreakerRecord
	}{
		{"closed", notify.BreakerRecord{}, t0, true, notify.BreakerRecord{}},
		{"closed with failures", notify.BreakerRecord{Failures: 4}, t0, true, notify.BreakerRecord{Failures: 4}},
		{"open, before end", notify.BreakerRecord{State: notify.BreakerOpen, Failures: 5, OpenedUntil: t0.Add(time.Second)}, t0, false,
			notify.BreakerRecord{State: notify.BreakerOpen, Failures: 5, OpenedUntil: t0.Add(time.Second)}},
		{"open, one ns before end", notify.BreakerRecord{State: notify.BreakerOpen, Failures: 5, OpenedUntil: t0}, t0.Add(-1), false,
			notify.BreakerRecord{State: notify.BreakerOpen, Failures: 5, OpenedUntil: t0}},
		{"open, at end: trial", notify.BreakerRecord{State: notify.BreakerOpen, Failures: 5, OpenedUntil: t0}, t0, true,
			notify.BreakerRecord{State: notify.BreakerHalfOpen, Failures: 5, OpenedUntil: t0.Add(60 * time.Second), TrialInFlight: true}},
		{"open, past end: trial", notify.BreakerRecord{State: notify.BreakerOpen, Failures: 5, OpenedUntil: t0}, t0.Add(time.Hour), true,
			notify.BreakerRecord{State: notify.BreakerHalfOpen, Failures: 5, OpenedUntil: t0.Add(time.Hour + 60*time.Second), TrialInFlight: true}},
		{"half-open, trial in flight", notify.BreakerRecord{State: notify.BreakerHalfOpen, Failures: 5, OpenedUntil: t0.Add(time.Second), TrialInFlight: true}, t0, false,
			notify.BreakerRecord{State: notify.BreakerHalfOpen, Failures: 5, OpenedUntil: t0.Add(time.Second), TrialInFlight: true}},
		{"half-open, trial lost", notify.BreakerRecord{State: notify.BreakerHalfOpen, Failures: 5, OpenedUntil: t0, TrialInFlight: true}, t0, true,
			notify.BreakerRecord{State: notify.BreakerHalfOpen, Failures: 5, OpenedUntil: t0.Add(60 * time.Second), TrialInFlight: true}},
		{"half-open, no trial", notify.BreakerRecord{State: notify.BreakerHalfOpen, Failures: 5}, t0, true,
			notify.BreakerRecord{State: notify.BreakerHalfOpen, Failures: 5, OpenedUntil: t0.Add(60 * time.Second), TrialInFlight: true}},
		{"unknown state treated as closed", notify.BreakerRecord{State: "bogus"}, t0, true, notify.BreakerRecord{State: "bogus"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			allow, next := p.Allow(tc.in, tc.now)
			require.Equal(t, tc.allow, allow)
			require.Equal(t, tc.want, next)
		})
	}
}

func TestBreakerRecord(t *testing.T) {
	t.Parallel()
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	p := DefaultBreakerPolicy()
	until := t0.Add(60 * time.Second)
	tests := []struct {
		name    string
		in      notify.BreakerRecord
		success bool
		want    notify.BreakerRecord
	}{
		{"closed success", notify.BreakerRecord{}, true, notify.BreakerRecord{State: notify.BreakerClosed}},
		{"closed success resets counter", notify.BreakerRecord{Failures: 4}, true, notify.BreakerRecord{State: notify.BreakerClosed}},
		{"closed first failure", notify.BreakerRecord{}, false, notify.BreakerRecord{State: notify.BreakerClosed, Failures: 1}},
		{"closed fourth failure", notify.BreakerRecord{Failures: 3}, false, notify.BreakerRecord{State: notify.BreakerClosed, Failures: 4}},
		{"closed fifth failure opens", notify.BreakerRecord{Failures: 4}, false, notify.BreakerRecord{State: notify.BreakerOpen, Failures: 5, OpenedUntil: until}},
		{"closed beyond threshold opens", notify.BreakerRecord{Failures: 9}, false, notify.BreakerRecord{State: notify.BreakerOpen, Failures: 10, OpenedUntil: until}},
		{"half-open trial success closes", notify.BreakerRecord{State: notify.BreakerHalfOpen, Failures: 5, OpenedUntil: until, TrialInFlight: true}, true, notify.BreakerRecord{State: notify.BreakerClosed}},
		{"half-open trial failure reopens", notify.BreakerRecord{State: notify.BreakerHalfOpen, Failures: 5, OpenedUntil: t0.Add(5 * time.Second), TrialInFlight: true}, false,
			notify.BreakerRecord{State: notify.BreakerOpen, Failures: 6, OpenedUntil: until}},
		{"open late failure keeps period", notify.BreakerRecord{State: notify.BreakerOpen, Failures: 5, OpenedUntil: t0.Add(10 * time.Second)}, false,
			notify.BreakerRecord{State: notify.BreakerOpen, Failures: 6, OpenedUntil: t0.Add(10 * time.Second)}},
		{"open late success closes", notify.BreakerRecord{State: notify.BreakerOpen, Failures: 5, OpenedUntil: t0.Add(10 * time.Second)}, true, notify.BreakerRecord{State: notify.BreakerClosed}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			require.Equal(t, tc.want, p.Record(tc.in, tc.success, t0))
		})
	}
}

func TestBreakerPolicyZeroUsesDefaults(t *testing.T) {
	t.Parallel()
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	var p BreakerPolicy
	b := notify.BreakerRecord{}
	for range 4 {
		b = p.Record(b, false, t0)
	}
	require.Equal(t, notify.BreakerClosed, b.State)
	b = p.Record(b, false, t0)
	require.Equal(t, notify.BreakerRecord{State: notify.BreakerOpen, Failures: 5, OpenedUntil: t0.Add(60 * time.Second)}, b)
}

func TestBreakerScenario(t *testing.T) {
	t.Parallel()
	// The SPEC story end to end with a custom policy: 3 failures open for
	// 10 s, a failed trial reopens, a successful one closes.
	p := BreakerPolicy{Threshold: 3, OpenFor: 10 * time.Second}
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	at := func(s int) time.Time { return t0.Add(time.Duration(s) * time.Second) }
	var b notify.BreakerRecord
	step := func(now time.Time, wantAllow bool, success bool) {
		t.Helper()
		ok, next := p.Allow(b, now)
		require.Equal(t, wantAllow, ok, "at %v in %v", now.Sub(t0), b.State)
		b = next
		if ok {
			b = p.Record(b, success, now)
		}
	}
	step(at(0), true, false)
	step(at(1), true, false)
	step(at(2), true, false)
	require.Equal(t, notify.BreakerOpen, b.State)
	step(at(5), false, false)  // skipped: circuit_open
	step(at(11), false, false) // 2 + 10 = 12 not reached
	ok, b2 := p.Allow(b, at(12))
	require.True(t, ok)
	require.Equal(t, notify.BreakerHalfOpen, b2.State)
	ok, _ = p.Allow(b2, at(13)) // second caller while the trial runs
	require.False(t, ok)
	b = p.Record(b2, false, at(13)) // trial failed
	require.Equal(t, notify.BreakerOpen, b.State)
	require.Equal(t, at(23), b.OpenedUntil)
	step(at(20), false, false)
	step(at(23), true, true) // trial succeeds
	require.Equal(t, notify.BreakerRecord{State: notify.BreakerClosed}, b)
	step(at(24), true, true)
}

// The policy moves the stored record itself: the account and the time it
// was written stay as they were (the caller stamps UpdatedAt).
func TestBreakerKeepsRecordIdentity(t *testing.T) {
	t.Parallel()
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	p := BreakerPolicy{Threshold: 1, OpenFor: time.Second}
	b := notify.BreakerRecord{ProviderAccountID: "acc", UpdatedAt: t0}
	b = p.Record(b, false, t0.Add(time.Hour))
	require.Equal(t, notify.BreakerOpen, b.State)
	_, b = p.Allow(b, t0.Add(2*time.Hour))
	require.Equal(t, notify.BreakerHalfOpen, b.State)
	b = p.Record(b, true, t0.Add(2*time.Hour))
	require.Equal(t, notify.BreakerRecord{ProviderAccountID: "acc", State: notify.BreakerClosed, UpdatedAt: t0}, b)
}
