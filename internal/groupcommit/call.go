package groupcommit

import "context"

// Call is one caller waiting in a queue: the context it waits under, and
// how it gets its answer.
type Call interface {
	Context() context.Context
	Answer(err error)
}

// Wait adds c to q and returns its answer from done, or ctx's error when
// ctx ends first (the call may still run; its caller has given up).
func Wait[T Call](ctx context.Context, q *Queue[T], c T, done <-chan error) error {
	q.Add(c)
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Live returns the calls of a batch whose callers still wait; each call
// whose context ended is answered with its context's error and dropped.
func Live[T Call](calls []T) []T {
	live := calls[:0:0]
	for _, c := range calls {
		if err := c.Context().Err(); err != nil {
			c.Answer(err)
			continue
		}
		live = append(live, c)
	}
	return live
}

// Fail answers every call with err.
func Fail[T Call](calls []T, err error) {
	for _, c := range calls {
		c.Answer(err)
	}
}
