// Package groupcommit is the waiting room of a group commit: callers add
// themselves, and up to writers loops take what waits, up to max at a
// time, and run it as one batch. There is no fixed delay: while one batch
// runs, the next one gathers, so batches grow with load and a lone caller
// never waits. The store's Batch and the service's send and rate-check
// batches share it.
package groupcommit

import (
	"context"
	"sync"

	"go.opentelemetry.io/otel/trace"

	"github.com/notifyd/notifyd/internal/tracing"
)

// Queue gathers items of type T for run.
type Queue[T any] struct {
	mu      sync.Mutex
	pending []T
	running int
	writers int
	max     int
	run     func([]T)
	// tracer and name trace each batch (Trace); nil: untraced.
	tracer *tracing.Tracer
	name   string
}

// New returns a queue running at most writers batches at once, each of at
// most max items.
func New[T any](writers, max int, run func([]T)) *Queue[T] {
	return &Queue[T]{writers: writers, max: max, run: run}
}

// Add queues c for the next batch.
func (q *Queue[T]) Add(c T) {
	q.mu.Lock()
	q.pending = append(q.pending, c)
	if q.running < q.writers {
		q.running++
		go q.loop()
	}
	q.mu.Unlock()
}

func (q *Queue[T]) loop() {
	for {
		q.mu.Lock()
		n := min(len(q.pending), q.max)
		if n == 0 {
			q.running--
			q.mu.Unlock()
			return
		}
		batch := q.pending[:n:n]
		q.pending = append([]T(nil), q.pending[n:]...)
		q.mu.Unlock()
		if q.tracer.On() {
			q.runTraced(batch)
			continue
		}
		q.run(batch)
	}
}

// Linked is an item that names the span its batch's span links to (when
// its Context is not the caller's: a write that outlives its caller).
type Linked interface {
	Link() trace.SpanContext
}

// Trace gives every batch a span named name, linked to the span of each
// caller (Linked, else the span its Context carries): one batch serves
// many callers' traces, so it is a root of its own that links to each of
// them, not a child of one. Call it before the first Add.
func (q *Queue[T]) Trace(t *tracing.Tracer, name string) {
	q.tracer, q.name = t, name
}

func (q *Queue[T]) runTraced(batch []T) {
	links := make([]trace.Link, 0, len(batch))
	for _, c := range batch {
		var sc trace.SpanContext
		switch c := any(c).(type) {
		case Linked:
			sc = c.Link()
		case interface{ Context() context.Context }:
			sc = trace.SpanContextFromContext(c.Context())
		}
		if sc.IsValid() {
			links = append(links, trace.Link{SpanContext: sc})
		}
	}
	_, span := q.tracer.Start(context.Background(), q.name, trace.WithNewRoot(), trace.WithLinks(links...),
		trace.WithAttributes(tracing.KeyBatchSize.Int(len(batch))))
	defer span.End()
	q.run(batch)
}
