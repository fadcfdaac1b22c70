package delivery

import (
	"context"

	"go.opentelemetry.io/otel/trace"

	"github.com/notifyd/notifyd/internal/groupcommit"
)

// recording is one run whose outcome waits to be written, and the
// channel its job run waits on.
type recording struct {
	rn   *run
	bs   *breakers
	done chan<- error
	// span is the run's delivery span, which the write's span links to;
	// nil when tracing is off.
	span trace.Span
}

// Link is the delivery span the outcome write's span links to.
func (r *recording) Link() trace.SpanContext {
	if r.span == nil {
		return trace.SpanContext{}
	}
	return r.span.SpanContext()
}

// Context is never done: an outcome is written whatever happened to the
// job that produced it (a message the vendor accepted must be recorded).
func (r *recording) Context() context.Context { return context.Background() }
func (r *recording) Answer(err error)         { r.done <- err }

// Outcome writer. Each run's outcome is written as soon as its send
// answers, in a group commit shared by every job run of the process: one
// writer, which takes whatever outcomes arrived while it wrote the last
// batch. Under load that is as few transactions as a write per job, and a
// crash (kill -9) resends only the calls in flight and the outcomes of the
// batch being gathered or written (docs/DECISIONS.md "Duplicates after a
// crash"). recordWriters is 1 because every batch locks the same rows of
// the providers' circuits and the dispatch schedule; maxRecordBatch keeps
// one transaction's statements bounded.
const (
	recordWriters  = 1
	maxRecordBatch = 512
)

func (e *Engine) newRecorder() *groupcommit.Queue[*recording] {
	q := groupcommit.New(recordWriters, maxRecordBatch, e.recordBatch)
	q.Trace(e.tracer, "groupcommit record")
	return q
}

// recordBatch writes the outcomes of batch in one transaction with the
// circuit outcomes of every run in it, and answers each.
func (e *Engine) recordBatch(batch []*recording) {
	ctx, cancel := context.WithTimeout(context.Background(), recordGrace)
	defer cancel()
	runs := make([]*run, len(batch))
	circuits := outcomes{}
	seen := map[*breakers]bool{}
	for i, r := range batch {
		runs[i] = r.rn
		if r.bs != nil && !seen[r.bs] {
			seen[r.bs] = true
			circuits.add(r.bs.take())
		}
	}
	refused, err := e.record(ctx, runs, circuits)
	if err == nil {
		e.forget(runs)
	}
	for _, r := range batch {
		if rerr, ok := refused[r.rn]; ok {
			r.Answer(rerr)
			continue
		}
		r.Answer(err)
	}
}
