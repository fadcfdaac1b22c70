package pacing

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// Transactional sends go ahead of a bulk backlog; bulk sends wait behind
// them and use the whole rate when none come (issue 31, item 2).
func TestBucketLanes(t *testing.T) {
	t.Parallel()
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	ms := time.Millisecond

	t.Run("transactional goes ahead of bulk", func(t *testing.T) {
		t.Parallel()
		b := NewBucket(10, t0)
		for range 10 {
			require.Zero(t, b.ReserveAs(t0, 1, Bulk)) // the burst
		}
		for i := range 50 {
			require.Equal(t, time.Duration(i+1)*100*ms, b.ReserveAs(t0, 1, Bulk))
		}
		// Without a kept share, a transactional send waits one token, not
		// behind the 50 bulk ones.
		require.Equal(t, 100*ms, b.ReserveAs(t0, 1, Transactional))
		require.Equal(t, 200*ms, b.ReserveAs(t0, 1, Transactional))
		// The last bulk send now waits for the two transactional tokens too.
		require.Equal(t, 5200*ms, b.waitTicket(Bulk, b.issued[Bulk]))
	})

	t.Run("kept share: transactional does not wait", func(t *testing.T) {
		t.Parallel()
		b := NewBucket(100, t0)
		b.Keep(0.1) // 10 tokens kept
		for range 90 {
			require.Zero(t, b.ReserveAs(t0, 1, Bulk))
		}
		require.Equal(t, 10*ms, b.ReserveAs(t0, 1, Bulk), "the kept 10 tokens are not bulk's")
		for range 10 {
			require.Zero(t, b.ReserveAs(t0, 1, Transactional))
		}
		require.Equal(t, 10*ms, b.ReserveAs(t0, 1, Transactional))
	})

	t.Run("bulk uses the whole rate without transactional traffic", func(t *testing.T) {
		t.Parallel()
		b := NewBucket(100, t0)
		b.Keep(0.1)
		for range 1090 { // the burst less the kept share, and 10 s of refill
			b.ReserveAs(t0, 1, Bulk)
		}
		// The kept share is full already: bulk gets all of the rate, and
		// the 1,000 owed are paid 10 s later.
		require.Equal(t, 10*time.Second, b.waitTicket(Bulk, b.issued[Bulk]))
		b.refill(t0.Add(10 * time.Second))
		require.Zero(t, b.owed(Bulk))
		require.InDelta(t, 10, b.avail, 1e-9)
	})

	t.Run("a drained kept share refills before bulk", func(t *testing.T) {
		t.Parallel()
		b := NewBucket(100, t0)
		b.Keep(0.1)
		for range 100 {
			b.ReserveAs(t0, 1, Transactional)
		}
		require.Equal(t, 1100*ms, b.ReserveAs(t0, 100, Bulk), "10 kept, then 100 bulk")
	})

	t.Run("a canceled bulk reservation gives its place back", func(t *testing.T) {
		t.Parallel()
		l, _ := newFakeLimiter()
		lim := Limit{Key: "k", Rate: 1}
		require.Zero(t, l.ReserveAs(Bulk, lim).Wait)
		r := l.ReserveAs(Bulk, lim)
		require.Equal(t, time.Second, r.Wait)
		r.Cancel()
		require.Equal(t, time.Second, l.ReserveAs(Bulk, lim).Wait)
	})
}

// BulkWait says how long a bulk batch would wait, reserving nothing, and
// SnoozeSlotN spaces held batches by their size.
func TestLimiterBulkWait(t *testing.T) {
	t.Parallel()
	l, c := newFakeLimiter()
	lim := Limit{Key: "provider:w:a", Rate: 100}
	require.Zero(t, l.BulkWait(lim, 100), "a full bucket covers a batch")
	require.Equal(t, time.Second, l.BulkWait(lim, 200))
	for range 300 {
		l.ReserveAs(Bulk, lim)
	}
	require.Equal(t, 3*time.Second, l.BulkWait(lim, 100), "behind the 200 owed")
	require.Equal(t, 2*time.Second, l.SnoozeSlotN(lim.Key, 100, 0))
	require.Equal(t, 3*time.Second, l.SnoozeSlotN(lim.Key, 100, 0), "the next batch's turn is 100 sends later")
	c.Advance(2 * time.Second)
	require.Zero(t, l.Debts()[lim.Key])
}

// AdmitBulk holds an admitted batch's place until its sends reserve:
// batches admitted before any of them reserved (claims sharing one
// transaction) are not all let through (the flaky pause test of session
// 21: 3,000 requests in flight under a 150/s limit).
func TestLimiterAdmitBulkHoldsTheLine(t *testing.T) {
	t.Parallel()
	l, _ := newFakeLimiter()
	lim := Limit{Key: "workspace:w", Rate: 150}
	lims := map[string]Limit{lim.Key: lim}
	n := map[string]float64{lim.Key: 500}
	admitted := 0
	for range 6 {
		if w, _ := l.AdmitBulk(lims, n, 10*time.Second); w <= 10*time.Second {
			admitted++
		}
	}
	// 150 free, then 10 s at 150/s: 1,650 sends, three batches of 500.
	require.Equal(t, 3, admitted)
	w, key := l.AdmitBulk(lims, n, 10*time.Second)
	require.Equal(t, lim.Key, key)
	require.InDelta(t, float64(2000-150)/150, w.Seconds(), 0.001, "behind the 1,500 held")

	// The admitted sends reserve: the holds turn into the same debt.
	for range 1500 {
		l.ReserveAs(Bulk, lim)
	}
	w2, _ := l.AdmitBulk(lims, n, 10*time.Second)
	require.InDelta(t, w.Seconds(), w2.Seconds(), 0.001, "a reservation takes its hold's place")

	// A hold that no send takes (its claim rolled back) ends.
	l2, c2 := newFakeLimiter()
	_, _ = l2.AdmitBulk(lims, n, 10*time.Second)
	require.InDelta(t, float64(1000-150)/150, l2.BulkWait(lim, 500).Seconds(), 0.001)
	c2.Advance(BulkHoldFor)
	require.Zero(t, l2.BulkWait(lim, 100), "the hold ended; the bucket refilled")
}
