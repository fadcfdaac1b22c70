package pacing

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestBucketReserve(t *testing.T) {
	t.Parallel()
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	ms := time.Millisecond
	type step struct {
		at   time.Duration // offset from t0
		n    float64
		want time.Duration
	}
	tests := []struct {
		name  string
		rate  float64
		steps []step
	}{
		{"starts full, burst = rate", 2, []step{{0, 1, 0}, {0, 1, 0}, {0, 1, 500 * ms}, {0, 1, 1000 * ms}}},
		{"refills over time", 2, []step{{0, 1, 0}, {0, 1, 0}, {500 * ms, 1, 0}, {500 * ms, 1, 500 * ms}}},
		{"refill capped at burst", 2, []step{{0, 2, 0}, {10 * time.Second, 1, 0}, {10 * time.Second, 1, 0}, {10 * time.Second, 1, 500 * ms}}},
		{"debt is paid before refilling", 1, []step{{0, 1, 0}, {0, 1, time.Second}, {0, 1, 2 * time.Second}, {time.Second, 1, 2 * time.Second}}},
		{"n larger than burst", 10, []step{{0, 15, 500 * ms}}},
		{"fractional n", 4, []step{{0, 4, 0}, {0, 0.5, 125 * ms}}},
		{"high rate", 1_000_000, []step{{0, 1_000_000, 0}, {0, 1, time.Microsecond}}},
		{"rate below one has burst one", 0.5, []step{{0, 1, 0}, {0, 1, 2 * time.Second}}},
		{"zero rate unlimited", 0, []step{{0, 1000, 0}, {0, 1000, 0}}},
		{"negative rate unlimited", -3, []step{{0, 1, 0}}},
		{"clock going back refills nothing", 1, []step{{time.Second, 1, 0}, {0, 1, time.Second}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			b := NewBucket(tc.rate, t0)
			require.Equal(t, tc.rate, b.Rate())
			for i, s := range tc.steps {
				require.Equal(t, s.want, b.Reserve(t0.Add(s.at), s.n), "step %d", i)
			}
		})
	}
}

// fakeClock is a manual clock whose sleep advances time.
type fakeClock struct {
	mu     sync.Mutex
	now    time.Time
	slept  []time.Duration
	cancel bool // sleep reports context.Canceled instead of sleeping
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fakeClock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

func (c *fakeClock) Sleep(ctx context.Context, d time.Duration) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.slept = append(c.slept, d)
	if c.cancel {
		return context.Canceled
	}
	return nil // the sleeper does not advance time: callers control the clock
}

func (c *fakeClock) Slept() []time.Duration {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]time.Duration(nil), c.slept...)
}

func newFakeLimiter() (*Limiter, *fakeClock) {
	c := &fakeClock{now: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	l := NewLimiter(c.Now)
	l.sleep = c.Sleep
	return l, c
}

func TestLimiterWait(t *testing.T) {
	t.Parallel()
	ms := time.Millisecond
	ctx := context.Background()

	t.Run("no limits", func(t *testing.T) {
		t.Parallel()
		l, c := newFakeLimiter()
		for range 100 {
			require.NoError(t, l.Wait(ctx))
		}
		require.NoError(t, l.Wait(ctx, Limit{Key: "w", Rate: 0}, Limit{Key: "x", Rate: -1}))
		require.Empty(t, c.Slept())
	})

	t.Run("single scope paces after burst", func(t *testing.T) {
		t.Parallel()
		l, c := newFakeLimiter()
		lim := Limit{Key: "workspace:1", Rate: 4}
		for range 4 {
			require.NoError(t, l.Wait(ctx, lim))
		}
		require.Empty(t, c.Slept())
		require.NoError(t, l.Wait(ctx, lim))
		require.NoError(t, l.Wait(ctx, lim))
		require.Equal(t, []time.Duration{250 * ms, 500 * ms}, c.Slept())
	})

	t.Run("AND of scopes takes the longest wait", func(t *testing.T) {
		t.Parallel()
		l, c := newFakeLimiter()
		ws := Limit{Key: "workspace:1", Rate: 10}
		prov := Limit{Key: "provider:a", Rate: 1}
		require.NoError(t, l.Wait(ctx, ws, prov))
		require.NoError(t, l.Wait(ctx, ws, prov))
		require.Equal(t, []time.Duration{time.Second}, c.Slept())
		// The workspace bucket was charged too: 8 left of 10.
		for range 8 {
			require.NoError(t, l.Wait(ctx, ws))
		}
		require.Len(t, c.Slept(), 1)
		require.NoError(t, l.Wait(ctx, ws))
		require.Equal(t, 100*ms, c.Slept()[1])
	})

	t.Run("keys are independent", func(t *testing.T) {
		t.Parallel()
		l, c := newFakeLimiter()
		require.NoError(t, l.Wait(ctx, Limit{Key: "provider:a", Rate: 1}))
		require.NoError(t, l.Wait(ctx, Limit{Key: "provider:b", Rate: 1}))
		require.Empty(t, c.Slept())
	})

	t.Run("duplicate key counts once", func(t *testing.T) {
		t.Parallel()
		l, c := newFakeLimiter()
		lim := Limit{Key: "k", Rate: 1}
		require.NoError(t, l.Wait(ctx, lim, lim, Limit{Key: "k", Rate: 5}))
		require.Empty(t, c.Slept())
		require.NoError(t, l.Wait(ctx, lim))
		require.Equal(t, []time.Duration{time.Second}, c.Slept())
	})

	t.Run("refills with the clock", func(t *testing.T) {
		t.Parallel()
		l, c := newFakeLimiter()
		lim := Limit{Key: "k", Rate: 2}
		require.NoError(t, l.Wait(ctx, lim))
		require.NoError(t, l.Wait(ctx, lim))
		c.Advance(500 * ms)
		require.NoError(t, l.Wait(ctx, lim))
		require.Empty(t, c.Slept())
	})

	t.Run("changed rate keeps the debt and refills at the new rate", func(t *testing.T) {
		t.Parallel()
		l, c := newFakeLimiter()
		require.NoError(t, l.Wait(ctx, Limit{Key: "k", Rate: 1}))
		require.NoError(t, l.Wait(ctx, Limit{Key: "k", Rate: 1}))
		require.Equal(t, []time.Duration{time.Second}, c.Slept())
		// No fresh burst: the debt of one token is kept, paid at 4/s.
		require.NoError(t, l.Wait(ctx, Limit{Key: "k", Rate: 4}))
		require.Equal(t, 500*ms, c.Slept()[1])
		c.Advance(10 * time.Second) // refills to the new burst of 4
		for range 4 {
			require.NoError(t, l.Wait(ctx, Limit{Key: "k", Rate: 4}))
		}
		require.Len(t, c.Slept(), 2)
		// Lowering the rate caps the tokens at the new burst.
		c.Advance(10 * time.Second)
		require.NoError(t, l.Wait(ctx, Limit{Key: "k", Rate: 1}))
		require.NoError(t, l.Wait(ctx, Limit{Key: "k", Rate: 1}))
		require.Equal(t, time.Second, c.Slept()[2])
	})

	t.Run("reserve and cancel", func(t *testing.T) {
		t.Parallel()
		l, _ := newFakeLimiter()
		ws, prov := Limit{Key: "workspace:w", Rate: 2}, Limit{Key: "provider:w:p", Rate: 1}
		r := l.Reserve(ws, prov)
		require.Zero(t, r.Wait)
		r = l.Reserve(ws, prov)
		require.Equal(t, time.Second, r.Wait)
		require.Equal(t, "provider:w:p", r.Binding)
		require.Equal(t, map[string]time.Duration{"workspace:w": 0, "provider:w:p": time.Second}, r.Waits)
		r.Cancel()
		r.Cancel() // once only
		require.Equal(t, time.Second, l.Reserve(ws, prov).Wait)
		require.Equal(t, "provider", Scope(r.Binding))
	})

	t.Run("prune forgets idle paid buckets", func(t *testing.T) {
		t.Parallel()
		l, c := newFakeLimiter()
		lim := Limit{Key: "k", Rate: 1}
		l.Reserve(lim)
		l.Reserve(lim) // debt of one token
		l.Prune(0)
		require.Equal(t, 2*time.Second, l.Reserve(lim).Wait, "a bucket in debt is kept")
		c.Advance(time.Minute)
		l.Prune(30 * time.Second)
		require.Empty(t, l.buckets)
	})

	t.Run("sharer scales the rate", func(t *testing.T) {
		t.Parallel()
		l, _ := newFakeLimiter()
		l.SetSharer(halfSharer{})
		lim := Limit{Key: "k", Rate: 4}
		l.Reserve(lim)
		l.Reserve(lim)
		require.Equal(t, 500*ms, l.Reserve(lim).Wait, "burst and rate are 2 of 4")
	})

	t.Run("ended context reserves nothing", func(t *testing.T) {
		t.Parallel()
		l, c := newFakeLimiter()
		cctx, cancel := context.WithCancel(ctx)
		cancel()
		lim := Limit{Key: "k", Rate: 1}
		require.ErrorIs(t, l.Wait(cctx, lim), context.Canceled)
		require.NoError(t, l.Wait(ctx, lim))
		require.Empty(t, c.Slept())
	})

	t.Run("canceled wait gives tokens back", func(t *testing.T) {
		t.Parallel()
		l, c := newFakeLimiter()
		lim := Limit{Key: "k", Rate: 1}
		require.NoError(t, l.Wait(ctx, lim))
		c.mu.Lock()
		c.cancel = true
		c.mu.Unlock()
		require.ErrorIs(t, l.Wait(ctx, lim), context.Canceled)
		c.mu.Lock()
		c.cancel = false
		c.mu.Unlock()
		// Had the canceled reservation been kept, this would wait 2 s.
		require.NoError(t, l.Wait(ctx, lim))
		require.Equal(t, []time.Duration{time.Second, time.Second}, c.Slept())
	})
}

func TestLimiterConcurrent(t *testing.T) {
	t.Parallel()
	l, c := newFakeLimiter()
	const n = 200
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			lim := []Limit{{Key: "ws", Rate: 50}}
			if i%2 == 0 {
				lim = append(lim, Limit{Key: "prov", Rate: 100})
			}
			assert.NoError(t, l.Wait(context.Background(), lim...)) // require must not stop the test from another goroutine
		})
	}
	wg.Wait()
	slept := c.Slept()
	// 50 go at once, the other 150 are spaced 20 ms apart: waits 20 ms .. 3 s.
	require.Len(t, slept, n-50)
	var longest time.Duration
	for _, d := range slept {
		longest = max(longest, d)
	}
	require.Equal(t, 3*time.Second, longest)
}

func TestLimiterRealClock(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("real-time pacing")
	}
	l := NewLimiter(nil)
	const rate = 100
	lim := Limit{Key: "k", Rate: rate}
	start := time.Now()
	// The first 100 use the full bucket; the next 30 need ~300 ms.
	for range rate + 30 {
		require.NoError(t, l.Wait(context.Background(), lim))
	}
	elapsed := time.Since(start)
	require.GreaterOrEqual(t, elapsed, 280*time.Millisecond)
	require.Less(t, elapsed, 1500*time.Millisecond)
}

func TestLimiterRealCancel(t *testing.T) {
	t.Parallel()
	l := NewLimiter(nil)
	lim := Limit{Key: "k", Rate: 1}
	require.NoError(t, l.Wait(context.Background(), lim))
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	start := time.Now()
	err := l.Wait(ctx, lim)
	require.True(t, errors.Is(err, context.DeadlineExceeded))
	require.Less(t, time.Since(start), 500*time.Millisecond)
}

type halfSharer struct{}

func (halfSharer) Share(_ string, rate float64, _ bool) float64 { return rate / 2 }

func TestLimiterRemaining(t *testing.T) {
	t.Parallel()
	l, c := newFakeLimiter()
	sh := &setSharer{part: 0.5}
	l.SetSharer(sh)
	lim := Limit{Key: "k", Rate: 4} // 2/s here, burst 2
	l.Reserve(lim)
	l.Reserve(lim)
	r3 := l.Reserve(lim)
	r4 := l.Reserve(lim)
	require.Equal(t, 500*time.Millisecond, r3.Wait)
	require.Equal(t, time.Second, r4.Wait)
	require.Equal(t, map[string]float64{"k": 2}, l.Debts())
	c.Advance(250 * time.Millisecond)
	require.Equal(t, 250*time.Millisecond, l.Remaining(r3))
	require.Equal(t, 750*time.Millisecond, l.Remaining(r4))
	// The share doubles: the waits left are paid twice as fast.
	sh.set(1)
	require.Equal(t, 125*time.Millisecond, l.Remaining(r3))
	require.Equal(t, 375*time.Millisecond, l.Remaining(r4))
	// An earlier reservation given back moves the later ones up.
	r3.Cancel()
	require.Equal(t, 125*time.Millisecond, l.Remaining(r4))
	c.Advance(time.Second)
	require.Zero(t, l.Remaining(r4))
	require.Empty(t, l.Debts())
}

type setSharer struct {
	mu   sync.Mutex
	part float64
}

func (s *setSharer) set(p float64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.part = p
}

func (s *setSharer) Share(_ string, rate float64, _ bool) float64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return rate * s.part
}

func TestLimiterSnoozeSlot(t *testing.T) {
	t.Parallel()
	l, c := newFakeLimiter()
	require.Zero(t, l.SnoozeSlot("none", time.Second))
	lim := Limit{Key: "k", Rate: 2}
	for range 22 { // burst 2, then 20 waiting: the last waits 10 s
		l.Reserve(lim)
	}
	// Snoozed sends get turns 10, 10.5, 11 s ahead, back 5 s before each.
	require.Equal(t, 5*time.Second, l.SnoozeSlot("k", 5*time.Second))
	require.Equal(t, 5500*time.Millisecond, l.SnoozeSlot("k", 5*time.Second))
	require.Equal(t, 6*time.Second, l.SnoozeSlot("k", 5*time.Second))
	c.Advance(time.Minute) // all paid: the horizon is in the past
	require.Zero(t, l.SnoozeSlot("k", 5*time.Second))
}

// A worker holding half of a limit reckons snoozed turns at the whole
// rate: when its share grows, the sends waiting here go sooner, and
// turns reckoned at the share would leave the bucket idle meanwhile.
func TestLimiterSnoozeSlotClusterRate(t *testing.T) {
	t.Parallel()
	l, _ := newFakeLimiter()
	l.SetSharer(&setSharer{part: 0.5})
	lim := Limit{Key: "k", Rate: 4} // this worker's share: 2/s, burst 2
	for range 22 {                  // 20 waiting: at the share the last waits 10 s
		l.Reserve(lim)
	}
	// At the cluster's 4/s the debt of 20 is paid in 5 s at the earliest.
	require.Equal(t, 3*time.Second, l.SnoozeSlot("k", 2*time.Second))
	require.Equal(t, 3250*time.Millisecond, l.SnoozeSlot("k", 2*time.Second))
}

func TestLimiterDrain(t *testing.T) {
	t.Parallel()
	l, _ := newFakeLimiter()
	lim := Limit{Key: "k", Rate: 2}
	l.Reserve(lim)
	l.Drain([]string{"k", "unknown"})
	require.Equal(t, 500*time.Millisecond, l.Reserve(lim).Wait, "no burst left")
	l.Drain([]string{"k"}) // a debt stays a debt
	require.Equal(t, time.Second, l.Reserve(lim).Wait)
}
