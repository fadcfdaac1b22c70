package groupcommit

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/notifyd/notifyd/internal/tracing"
)

// TestQueue: every item runs exactly once, batches never exceed max, no
// more than writers batches run at once, and items that arrive while a
// batch runs gather into the next one.
func TestQueue(t *testing.T) {
	const writers, batchMax, n = 2, 8, 400
	var running, peak atomic.Int32
	var mu sync.Mutex
	seen := map[int]int{}
	largest := 0
	release := make(chan struct{})
	var done sync.WaitGroup
	done.Add(n)
	q := New(writers, batchMax, func(batch []int) {
		r := running.Add(1)
		for {
			p := peak.Load()
			if r <= p || peak.CompareAndSwap(p, r) {
				break
			}
		}
		<-release
		mu.Lock()
		largest = max(largest, len(batch))
		for _, v := range batch {
			seen[v]++
		}
		mu.Unlock()
		running.Add(-1)
		for range batch {
			done.Done()
		}
	})
	for i := range n {
		q.Add(i)
	}
	close(release)
	done.Wait()
	if len(seen) != n {
		t.Fatalf("ran %d distinct items, want %d", len(seen), n)
	}
	for v, c := range seen {
		if c != 1 {
			t.Fatalf("item %d ran %d times", v, c)
		}
	}
	if largest != batchMax {
		t.Fatalf("largest batch %d, want %d (items added while batches were held must gather)", largest, batchMax)
	}
	if p := peak.Load(); p > writers {
		t.Fatalf("%d batches ran at once, want at most %d", p, writers)
	}
}

type testCall struct {
	ctx  context.Context
	done chan error
}

func (c *testCall) Context() context.Context { return c.ctx }
func (c *testCall) Answer(err error)         { c.done <- err }

// TestWaitAndLive: a call whose caller gave up is answered with its
// context's error and left out of the batch; the others get the run's
// answer.
func TestWaitAndLive(t *testing.T) {
	t.Parallel()
	gone, cancel := context.WithCancel(context.Background())
	cancel()
	var ran []*testCall
	q := New(1, 8, func(calls []*testCall) {
		live := Live(calls)
		ran = append(ran, live...)
		Fail(live, errors.New("ran"))
	})
	dropped := &testCall{ctx: gone, done: make(chan error, 1)}
	q.Add(dropped)
	require.ErrorIs(t, <-dropped.done, context.Canceled)
	kept := &testCall{ctx: context.Background(), done: make(chan error, 1)}
	require.EqualError(t, Wait(kept.ctx, q, kept, kept.done), "ran")
	require.Equal(t, []*testCall{kept}, ran)
	// A caller that stops waiting gets its context's error at once.
	release := make(chan struct{})
	defer close(release)
	blocked := New(1, 8, func([]*testCall) { <-release })
	ctx, stop := context.WithCancel(context.Background())
	c := &testCall{ctx: ctx, done: make(chan error, 1)}
	stop()
	require.ErrorIs(t, Wait(ctx, blocked, c, c.done), context.Canceled)
}

// TestTrace: a traced queue gives each batch a root span linked to the
// span of each caller (by its Context, or Link); an untraced one starts
// nothing.
func TestTrace(t *testing.T) {
	t.Parallel()
	exp := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp))
	tr := tracing.New(tp.Tracer("test"))
	callerCtx, caller := tr.Start(context.Background(), "caller")
	release := make(chan struct{})
	var done sync.WaitGroup
	done.Add(2)
	q := New(1, 8, func(batch []*testCall) {
		<-release
		for range batch {
			done.Done()
		}
	})
	q.Trace(tr, "batch")
	q.Add(&testCall{ctx: callerCtx, done: make(chan error, 1)})
	q.Add(&testCall{ctx: context.Background(), done: make(chan error, 1)}) // no span: no link
	close(release)
	done.Wait()
	caller.End()
	// A batch's span ends after its function returns, so after done: wait
	// for the span that links the caller.
	var batches []tracetest.SpanStub
	require.Eventually(t, func() bool {
		batches = batches[:0]
		linked := false
		for _, s := range exp.GetSpans() {
			if s.Name == "batch" {
				batches = append(batches, s)
				linked = linked || len(s.Links) > 0
			}
		}
		return linked
	}, 5*time.Second, time.Millisecond)
	var links []trace.SpanContext
	for _, b := range batches {
		require.False(t, b.Parent.IsValid(), "a batch span is a root")
		require.NotEqual(t, caller.SpanContext().TraceID(), b.SpanContext.TraceID())
		for _, l := range b.Links {
			links = append(links, l.SpanContext)
		}
	}
	require.Equal(t, []trace.SpanContext{caller.SpanContext()}, links)

	// Untraced (nil Tracer): nothing is started.
	exp.Reset()
	ran := make(chan struct{})
	plain := New(1, 8, func([]*testCall) { close(ran) })
	plain.Trace(nil, "batch")
	plain.Add(&testCall{ctx: callerCtx, done: make(chan error, 1)})
	<-ran
	require.Never(t, func() bool { return len(exp.GetSpans()) > 0 }, 100*time.Millisecond, 10*time.Millisecond)
}
