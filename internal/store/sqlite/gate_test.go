package sqlite

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/notifyd/notifyd/internal/notify"
)

// TestGateOrder: waiting urgent writers go before waiting background
// ones, but never more than maxUrgentRun in a row while one waits; a
// waiter whose context ends leaves the queue.
func TestGateOrder(t *testing.T) {
	t.Parallel()
	var g gate
	b := &Backend{}
	ctx := context.Background()
	require.NoError(t, g.acquire(ctx)) // held
	order := make(chan string, 8)
	wait := func(name string, urgent bool) {
		c := ctx
		if urgent {
			c = b.Urgent(ctx)
		}
		go func() {
			if g.acquire(c) == nil {
				order <- name
			}
		}()
		time.Sleep(20 * time.Millisecond) // queue in this order
	}
	wait("bg1", false)
	wait("bg2", false)
	wait("u1", true)
	wait("u2", true)
	wait("u3", true)
	gone, cancel := context.WithCancel(b.Urgent(ctx))
	go func() { _ = g.acquire(gone) }()
	time.Sleep(20 * time.Millisecond)
	cancel()
	time.Sleep(20 * time.Millisecond)
	var got []string
	for range 5 {
		g.release()
		got = append(got, <-order)
	}
	require.Equal(t, []string{"u1", "bg1", "u2", "bg2", "u3"}, got)
	g.release()
	require.False(t, g.busy, "free once every waiter went")
}

// TestGateBulkLast: writers of bulk work go after every other waiting
// writer, but not after more than maxAheadOfBulk of them.
func TestGateBulkLast(t *testing.T) {
	t.Parallel()
	var g gate
	ctx := context.Background()
	bulk := notify.WithLane(ctx, notify.LaneBulk)
	require.NoError(t, g.acquire(ctx)) // held
	order := make(chan string, 32)
	wait := func(name string, c context.Context) {
		go func() {
			if g.acquire(c) == nil {
				order <- name
			}
		}()
		time.Sleep(20 * time.Millisecond) // queue in this order
	}
	wait("bulk1", bulk)
	wait("bg1", ctx)
	wait("bg2", ctx)
	var got []string
	for range 3 {
		g.release()
		got = append(got, <-order)
	}
	require.Equal(t, []string{"bg1", "bg2", "bulk1"}, got)

	// Ten background writers queued behind a bulk one: it goes after
	// maxAheadOfBulk of them.
	wait("bulk2", bulk)
	for i := range 10 {
		wait("bg"+string(rune('a'+i)), ctx)
	}
	got = nil
	for range 11 {
		g.release()
		got = append(got, <-order)
	}
	require.Equal(t, "bulk2", got[maxAheadOfBulk])
	g.release()
}
