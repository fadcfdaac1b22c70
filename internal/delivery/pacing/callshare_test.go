package pacing_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/notifyd/notifyd/internal/delivery/pacing"
	"github.com/notifyd/notifyd/internal/dispatch"
	"github.com/notifyd/notifyd/internal/provider"
)

// fixedShare is a Sharer giving a settable fraction of every rate and
// counting the demand per key.
type fixedShare struct {
	mu     sync.Mutex
	frac   float64
	counts map[string]int
}

func newFixedShare(f float64) *fixedShare { return &fixedShare{frac: f, counts: map[string]int{}} }

func (s *fixedShare) Share(key string, rate float64, count bool) float64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	if count {
		s.counts[key]++
	}
	return rate * s.frac
}

func (s *fixedShare) set(f float64) {
	s.mu.Lock()
	s.frac = f
	s.mu.Unlock()
}

func (s *fixedShare) count(key string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.counts[key]
}

func (v *fakeVendor) times() []time.Time {
	v.mu.Lock()
	defer v.mu.Unlock()
	return append([]time.Time(nil), v.at...)
}

// sendSerial sends n messages one after the other from concurrent
// goroutines started at once (one call per message: MaxSize 1).
func sendSerial(b *pacing.Batcher, a pacing.BatchAccount, n int) {
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, _ = b.Send(context.Background(), a, provider.Message{ID: fmt.Sprintf("m%d", i)})
		}()
	}
	wg.Wait()
}

// meanGap is the mean spacing of the calls at at. A call's recorded time
// is its release plus the scheduler's delay, which a loaded machine
// stretches for one call and not the next: two neighbours may then stand
// closer than the rate allows while the pace holds, so the pace is read
// over the whole run, less spacingJitter.
func meanGap(at []time.Time) time.Duration {
	if len(at) < 2 {
		return time.Hour
	}
	return at[len(at)-1].Sub(at[0])/time.Duration(len(at)-1) + spacingJitter
}

// spacingJitter is the scheduler delay meanGap allows.
const spacingJitter = 20 * time.Millisecond

// A process's share of the account's calls per second spaces its calls,
// and every call counts one unit of demand for the account's key.
func TestBatchCallBudgetUsesClusterShare(t *testing.T) {
	v := &fakeVendor{}
	sh := newFixedShare(0.5)
	b := pacing.NewBatcher(nil)
	b.SetSharer(sh)
	// 20 calls/s, half of it here: calls 105 ms apart instead of 52.5 ms.
	sendSerial(b, account(v, dispatch.BatchConfig{CallsPerSecond: 20, MaxSize: 1}), 6)
	at := v.times()
	require.Len(t, at, 6)
	require.GreaterOrEqual(t, meanGap(at), 100*time.Millisecond)
	require.Equal(t, 6, sh.count(pacing.CallKey("acct")))
	// Synchronous sends count too.
	b.SendNow(context.Background(), account(v, dispatch.BatchConfig{CallsPerSecond: 20, MaxSize: 1}), provider.Message{ID: "otp"})
	require.Equal(t, 7, sh.count(pacing.CallKey("acct")))
}

// A share that shrinks while calls wait never lets two calls closer than
// the new spacing (no burst on a change).
func TestBatchShareShrinkKeepsSpacing(t *testing.T) {
	v := &fakeVendor{}
	sh := newFixedShare(1)
	b := pacing.NewBatcher(nil)
	b.SetSharer(sh)
	done := make(chan struct{})
	go func() {
		sendSerial(b, account(v, dispatch.BatchConfig{CallsPerSecond: 20, MaxSize: 1}), 12)
		close(done)
	}()
	require.Eventually(t, func() bool { return len(v.times()) >= 4 }, 2*time.Second, time.Millisecond)
	changed := time.Now()
	sh.set(0.25) // 5 calls/s: 210 ms apart
	<-done
	at := v.times()
	require.GreaterOrEqual(t, meanGap(at), 50*time.Millisecond)
	after := 0
	for i := 1; i < len(at); i++ {
		if at[i].After(changed.Add(20 * time.Millisecond)) {
			after++
			require.GreaterOrEqual(t, at[i].Sub(at[i-1]), 200*time.Millisecond, "call %d after the change", i)
		}
	}
	require.Positive(t, after)
}

// A share that grows shortens a wait already in progress.
func TestBatchShareGrowShortensWait(t *testing.T) {
	v := &fakeVendor{}
	sh := newFixedShare(0.1) // 10 calls/s × 0.1: 1.05 s apart
	b := pacing.NewBatcher(nil)
	b.SetSharer(sh)
	a := account(v, dispatch.BatchConfig{CallsPerSecond: 10, MaxSize: 1})
	_, err := b.Send(context.Background(), a, provider.Message{ID: "m0"})
	require.NoError(t, err)
	go func() {
		time.Sleep(100 * time.Millisecond)
		sh.set(1)
	}()
	_, err = b.Send(context.Background(), a, provider.Message{ID: "m1"})
	require.NoError(t, err)
	at := v.times()
	require.Len(t, at, 2)
	require.Less(t, at[1].Sub(at[0]), 600*time.Millisecond, "the grown share applied to the waiting call")
	require.GreaterOrEqual(t, at[1].Sub(at[0]), 100*time.Millisecond)
}

// Backlog reports the calls queued messages still need; Drain makes the
// first call after a pause wait one spacing.
func TestBatchBacklogAndDrain(t *testing.T) {
	v := &fakeVendor{}
	b := pacing.NewBatcher(nil)
	a := account(v, dispatch.BatchConfig{CallsPerSecond: 1, Window: 10 * time.Second, MaxSize: 2})
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	for i := range 3 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, _ = b.Send(ctx, a, provider.Message{ID: fmt.Sprintf("m%d", i)})
		}()
	}
	// Two messages fill a batch that leaves at once; the third waits.
	require.Eventually(t, func() bool {
		return len(v.times()) == 1 && b.Backlog()[pacing.CallKey("acct")] == 1
	}, 2*time.Second, 5*time.Millisecond)
	cancel()
	wg.Wait()
	require.Empty(t, b.Backlog())

	v2 := &fakeVendor{}
	b2 := pacing.NewBatcher(nil)
	b2.Drain([]string{pacing.CallKey("acct"), "workspace:w1"}, 0)
	start := time.Now()
	_, err := b2.Send(context.Background(), account(v2, dispatch.BatchConfig{CallsPerSecond: 5, MaxSize: 1}), provider.Message{ID: "x"})
	require.NoError(t, err)
	require.GreaterOrEqual(t, v2.times()[0].Sub(start), 190*time.Millisecond, "a drained budget has no call ready")
	// With a hold: the first call waits for it (peers' heartbeats).
	b2.Drain([]string{pacing.CallKey("acct")}, 500*time.Millisecond)
	start = time.Now()
	_, err = b2.Send(context.Background(), account(v2, dispatch.BatchConfig{CallsPerSecond: 5, MaxSize: 1}), provider.Message{ID: "y"})
	require.NoError(t, err)
	require.GreaterOrEqual(t, v2.times()[1].Sub(start), 490*time.Millisecond, "held until the peers' parts shrink")
}

// With the real Cluster: two workers wanting the account's calls split
// them; alone, a worker gets the whole rate.
func TestBatchCallBudgetWithCluster(t *testing.T) {
	c := pacing.NewCluster()
	b := pacing.NewBatcher(nil)
	b.SetSharer(c)
	v := &fakeVendor{}
	a := account(v, dispatch.BatchConfig{CallsPerSecond: 10, MaxSize: 1})
	sendSerial(b, a, 2) // counts demand and records the rate
	key := pacing.CallKey("acct")
	d := c.TakeDemand(time.Now())
	require.Equal(t, 2.0, d[key])
	c.Update("w1", []pacing.WorkerDemand{{ID: "w1", Demand: map[string]float64{key: 10}}, {ID: "w2", Demand: map[string]float64{key: 10}}})
	f, ok := c.Part(key)
	require.True(t, ok)
	require.InDelta(t, 0.5, f, 1e-9)
	n := len(v.times())
	sendSerial(b, a, 4)
	at := v.times()[n:]
	require.GreaterOrEqual(t, meanGap(at), 200*time.Millisecond, "5 calls/s here")

	c.TakeDemand(time.Now())
	c.Update("w1", []pacing.WorkerDemand{{ID: "w1", Demand: map[string]float64{key: 10}}})
	f, _ = c.Part(key)
	require.InDelta(t, 1, f, 1e-9)
	n = len(v.times())
	start := time.Now()
	sendSerial(b, a, 4)
	at = v.times()[n:]
	require.GreaterOrEqual(t, meanGap(at), 100*time.Millisecond)
	require.Less(t, time.Since(start), 700*time.Millisecond, "alone: the whole 10 calls/s")
}
