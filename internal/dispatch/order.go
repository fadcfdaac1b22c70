// Package dispatch holds the pure decisions of a job run (SPEC "Dispatch
// flow for one job run", "Job-level retry", "Circuit breaker", "Dispatch
// limits"): route order, retry backoff, the per-account circuit breaker as
// a value, and the in-memory token buckets that pace sends to providers.
package dispatch

import (
	"cmp"
	"slices"
	"time"
)

// Order returns routes in the order a run tries them (SPEC dispatch flow
// steps 2-3): by priority ascending, ties kept in input order, then the
// routes whose account is in preferred moved to the front. Preferred routes
// keep their priority order among themselves (not the order of preferred),
// and the other routes stay behind them as fallback. The input is not
// modified. Filtering out disabled routes is the caller's job.
func Order[T any](routes []T, accountID func(T) string, priority func(T) int, preferred []string) []T {
	out := slices.Clone(routes)
	slices.SortStableFunc(out, func(a, b T) int { return cmp.Compare(priority(a), priority(b)) })
	if len(preferred) == 0 || len(out) == 0 {
		return out
	}
	pref := make(map[string]struct{}, len(preferred))
	for _, id := range preferred {
		pref[id] = struct{}{}
	}
	isPref := func(r T) bool { _, ok := pref[accountID(r)]; return ok }
	// A stable sort on a boolean key is a stable partition.
	slices.SortStableFunc(out, func(a, b T) int {
		pa, pb := isPref(a), isPref(b)
		switch {
		case pa == pb:
			return 0
		case pa:
			return -1
		default:
			return 1
		}
	})
	return out
}

// MaxBackoff caps Backoff so that a large attempt count cannot park a job
// for days or overflow.
const MaxBackoff = time.Hour

// Backoff returns the delay before retry number attempt (1 for the first
// retry): initial * 2^(attempt-1), capped at MaxBackoff, as SPEC's job-level
// retry doubles from SVC_QUEUE_BACKOFF_MS. attempt < 1 counts as 1; a
// non-positive initial gives 0.
func Backoff(initial time.Duration, attempt int) time.Duration {
	if initial <= 0 {
		return 0
	}
	if initial >= MaxBackoff {
		return MaxBackoff
	}
	d := initial
	for i := 1; i < attempt; i++ {
		d *= 2
		if d >= MaxBackoff {
			return MaxBackoff
		}
	}
	return d
}
