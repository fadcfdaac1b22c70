package server

import (
	"context"
	"io"
	"log/slog"
	"sync"
)

// LogWriter takes the log's lines off the request path: Write copies a
// line into memory and returns, and one goroutine writes what gathered to
// the underlying writer, in order, one write(2) per batch. Without it
// every request's access-log line was a write system call under the log
// handler's mutex, on the answer's path: a writer descheduled while it
// held that mutex (a busy machine, a slow disk) stalled every request
// behind it (docs/DECISIONS.md "The log is written behind the requests").
//
// Lines are kept in order. A process killed outright loses the lines
// not yet written (the few written in the last instant); Close writes
// the rest. When the underlying writer falls behind by maxPending bytes,
// Write waits for it (bounded memory) rather than drop lines.
type LogWriter struct {
	w io.Writer

	mu      sync.Mutex
	cond    *sync.Cond // signalled when a batch is written
	pending []byte     // lines not yet handed to the writer
	writing bool       // a batch is being written
	closed  bool
	err     error // the underlying writer's last error

	wake chan struct{}
	done chan struct{}
}

// maxPending is how far the lines may run ahead of the writer.
const maxPending = 1 << 20

// NewLogWriter starts a LogWriter over w; Close stops it.
func NewLogWriter(w io.Writer) *LogWriter {
	l := &LogWriter{w: w, wake: make(chan struct{}, 1), done: make(chan struct{})}
	l.cond = sync.NewCond(&l.mu)
	go l.loop()
	return l
}

// Write queues p (one log line: slog writes a record with one call).
func (l *LogWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	for len(l.pending) >= maxPending && !l.closed {
		l.cond.Wait()
	}
	if l.closed {
		// After Close, straight through, once the last batch is out.
		l.mu.Unlock()
		<-l.done
		l.mu.Lock()
		defer l.mu.Unlock()
		return l.w.Write(p)
	}
	l.pending = append(l.pending, p...)
	l.signal()
	l.mu.Unlock()
	return len(p), nil
}

// signal wakes the writing goroutine; l.mu is held and l is not closed.
func (l *LogWriter) signal() {
	select {
	case l.wake <- struct{}{}:
	default:
	}
}

func (l *LogWriter) loop() {
	defer close(l.done)
	var spare []byte
	for {
		_, open := <-l.wake
		l.mu.Lock()
		for len(l.pending) > 0 {
			batch := l.pending
			l.pending, l.writing = spare[:0], true
			l.mu.Unlock()
			_, err := l.w.Write(batch)
			l.mu.Lock()
			if err != nil {
				l.err = err
			}
			spare, l.writing = batch, false
			l.cond.Broadcast()
		}
		l.mu.Unlock()
		if !open {
			return
		}
	}
}

// Flush waits until every line written before it is handed to the
// underlying writer, and answers the writer's last error.
func (l *LogWriter) Flush() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	for (len(l.pending) > 0 || l.writing) && !l.closed {
		l.signal()
		l.cond.Wait()
	}
	return l.err
}

// Close writes what is queued and stops the writer; later lines are
// written straight through.
func (l *LogWriter) Close() error {
	l.mu.Lock()
	if l.closed {
		l.mu.Unlock()
		return l.err
	}
	l.closed = true
	close(l.wake)
	l.cond.Broadcast()
	l.mu.Unlock()
	<-l.done
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.err
}

// Handler wraps h, a handler writing to l, so that a warning or an error
// is written before its call returns, as without l: the lines that
// explain a crash are not among those it loses.
func (l *LogWriter) Handler(h slog.Handler) slog.Handler { return flushingHandler{h, l} }

type flushingHandler struct {
	slog.Handler
	l *LogWriter
}

func (h flushingHandler) Handle(ctx context.Context, r slog.Record) error {
	err := h.Handler.Handle(ctx, r)
	if r.Level >= slog.LevelWarn {
		_ = h.l.Flush()
	}
	return err
}

func (h flushingHandler) WithAttrs(as []slog.Attr) slog.Handler {
	return flushingHandler{h.Handler.WithAttrs(as), h.l}
}

func (h flushingHandler) WithGroup(name string) slog.Handler {
	return flushingHandler{h.Handler.WithGroup(name), h.l}
}
