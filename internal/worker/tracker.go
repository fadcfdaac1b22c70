package worker

import (
	"context"
	"sync"
	"time"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"
)

// Tracker is a River worker middleware that knows which queue jobs this
// process works now or finished lately. A job the database still shows
// running under this process but that is in neither set was abandoned:
// River could not record its end (the database was away longer than its
// completer retries), and it is handed back at once instead of after
// River's stuck-job rescue (minutes).
type Tracker struct {
	river.MiddlewareDefaults
	mu   sync.Mutex
	jobs map[int64]time.Time // zero: working now; else when it ended
}

// trackerGrace covers River's completer, which records a job's end after
// Work returns and retries for up to about half a minute.
const trackerGrace = 45 * time.Second

// NewTracker builds an empty Tracker.
func NewTracker() *Tracker { return &Tracker{jobs: map[int64]time.Time{}} }

// Work implements rivertype.WorkerMiddleware.
func (t *Tracker) Work(ctx context.Context, job *rivertype.JobRow, doInner func(context.Context) error) error {
	t.mu.Lock()
	t.jobs[job.ID] = time.Time{}
	t.mu.Unlock()
	defer func() {
		t.mu.Lock()
		t.jobs[job.ID] = time.Now()
		t.mu.Unlock()
	}()
	return doInner(ctx)
}

// Busy lists the jobs worked now or ended within the grace, and forgets
// older ones.
func (t *Tracker) Busy() []int64 {
	t.mu.Lock()
	defer t.mu.Unlock()
	out := make([]int64, 0, len(t.jobs))
	for id, ended := range t.jobs {
		if !ended.IsZero() && time.Since(ended) > trackerGrace {
			delete(t.jobs, id)
			continue
		}
		out = append(out, id)
	}
	return out
}
