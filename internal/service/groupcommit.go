package service

import "sync"

// queue is the waiting room of a group commit: callers add themselves,
// and up to writers loops take what waits, up to max at a time, and run
// it as one batch. There is no fixed delay: while one batch runs, the next
// one gathers, so batches grow with load and a lone caller never waits.
type queue[T any] struct {
	mu      sync.Mutex
	pending []T
	running int
	writers int
	max     int
	run     func([]T)
}

func newQueue[T any](writers, max int, run func([]T)) *queue[T] {
	return &queue[T]{writers: writers, max: max, run: run}
}

// add queues c for the next batch.
func (q *queue[T]) add(c T) {
	q.mu.Lock()
	q.pending = append(q.pending, c)
	if q.running < q.writers {
		q.running++
		go q.loop()
	}
	q.mu.Unlock()
}

func (q *queue[T]) loop() {
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
		q.run(batch)
	}
}
