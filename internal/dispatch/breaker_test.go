package dispatch

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestStateString(t *testing.T) {
	t.Parallel()
	tests := []struct {
		s    State
		want string
	}{{Closed, "CLOSED"}, {Open, "OPEN"}, {HalfOpen, "HALF_OPEN"}, {State(9), "State(9)"}}
	for _, tc := range tests {
		require.Equal(t, tc.want, tc.s.String())
		if tc.s <= HalfOpen {
			got, err := ParseState(tc.want)
			require.NoError(t, err)
			require.Equal(t, tc.s, got)
		}
	}
	_, err := ParseState("closed")
	require.Error(t, err)
	require.Equal(t, Closed, Breaker{}.State, "zero breaker is closed")
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
		in    Breaker
		now   time.Time
		allow bool
		want  Breaker
	}{
		{"closed", Breaker{}, t0, true, Breaker{}},
		{"closed with failures", Breaker{Failures: 4}, t0, true, Breaker{Failures: 4}},
		{"open, before end", Breaker{State: Open, Failures: 5, OpenedUntil: t0.Add(time.Second)}, t0, false,
			Breaker{State: Open, Failures: 5, OpenedUntil: t0.Add(time.Second)}},
		{"open, one ns before end", Breaker{State: Open, Failures: 5, OpenedUntil: t0}, t0.Add(-1), false,
			Breaker{State: Open, Failures: 5, OpenedUntil: t0}},
		{"open, at end: trial", Breaker{State: Open, Failures: 5, OpenedUntil: t0}, t0, true,
			Breaker{State: HalfOpen, Failures: 5, OpenedUntil: t0.Add(60 * time.Second), TrialInFlight: true}},
		{"open, past end: trial", Breaker{State: Open, Failures: 5, OpenedUntil: t0}, t0.Add(time.Hour), true,
			Breaker{State: HalfOpen, Failures: 5, OpenedUntil: t0.Add(time.Hour + 60*time.Second), TrialInFlight: true}},
		{"half-open, trial in flight", Breaker{State: HalfOpen, Failures: 5, OpenedUntil: t0.Add(time.Second), TrialInFlight: true}, t0, false,
			Breaker{State: HalfOpen, Failures: 5, OpenedUntil: t0.Add(time.Second), TrialInFlight: true}},
		{"half-open, trial lost", Breaker{State: HalfOpen, Failures: 5, OpenedUntil: t0, TrialInFlight: true}, t0, true,
			Breaker{State: HalfOpen, Failures: 5, OpenedUntil: t0.Add(60 * time.Second), TrialInFlight: true}},
		{"half-open, no trial", Breaker{State: HalfOpen, Failures: 5}, t0, true,
			Breaker{State: HalfOpen, Failures: 5, OpenedUntil: t0.Add(60 * time.Second), TrialInFlight: true}},
		{"unknown state treated as closed", Breaker{State: State(7)}, t0, true, Breaker{State: State(7)}},
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
		in      Breaker
		success bool
		want    Breaker
	}{
		{"closed success", Breaker{}, true, Breaker{}},
		{"closed success resets counter", Breaker{Failures: 4}, true, Breaker{}},
		{"closed first failure", Breaker{}, false, Breaker{Failures: 1}},
		{"closed fourth failure", Breaker{Failures: 3}, false, Breaker{Failures: 4}},
		{"closed fifth failure opens", Breaker{Failures: 4}, false, Breaker{State: Open, Failures: 5, OpenedUntil: until}},
		{"closed beyond threshold opens", Breaker{Failures: 9}, false, Breaker{State: Open, Failures: 10, OpenedUntil: until}},
		{"half-open trial success closes", Breaker{State: HalfOpen, Failures: 5, OpenedUntil: until, TrialInFlight: true}, true, Breaker{}},
		{"half-open trial failure reopens", Breaker{State: HalfOpen, Failures: 5, OpenedUntil: t0.Add(5 * time.Second), TrialInFlight: true}, false,
			Breaker{State: Open, Failures: 6, OpenedUntil: until}},
		{"open late failure keeps period", Breaker{State: Open, Failures: 5, OpenedUntil: t0.Add(10 * time.Second)}, false,
			Breaker{State: Open, Failures: 6, OpenedUntil: t0.Add(10 * time.Second)}},
		{"open late success closes", Breaker{State: Open, Failures: 5, OpenedUntil: t0.Add(10 * time.Second)}, true, Breaker{}},
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
	b := Breaker{}
	for range 4 {
		b = p.Record(b, false, t0)
	}
	require.Equal(t, Closed, b.State)
	b = p.Record(b, false, t0)
	require.Equal(t, Breaker{State: Open, Failures: 5, OpenedUntil: t0.Add(60 * time.Second)}, b)
}

func TestBreakerScenario(t *testing.T) {
	t.Parallel()
	// The SPEC story end to end with a custom policy: 3 failures open for
	// 10 s, a failed trial reopens, a successful one closes.
	p := BreakerPolicy{Threshold: 3, OpenFor: 10 * time.Second}
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	at := func(s int) time.Time { return t0.Add(time.Duration(s) * time.Second) }
	var b Breaker
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
	require.Equal(t, Open, b.State)
	step(at(5), false, false)  // skipped: circuit_open
	step(at(11), false, false) // 2 + 10 = 12 not reached
	ok, b2 := p.Allow(b, at(12))
	require.True(t, ok)
	require.Equal(t, HalfOpen, b2.State)
	ok, _ = p.Allow(b2, at(13)) // second caller while the trial runs
	require.False(t, ok)
	b = p.Record(b2, false, at(13)) // trial failed
	require.Equal(t, Open, b.State)
	require.Equal(t, at(23), b.OpenedUntil)
	step(at(20), false, false)
	step(at(23), true, true) // trial succeeds
	require.Equal(t, Breaker{}, b)
	step(at(24), true, true)
}
