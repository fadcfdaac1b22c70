package delivery

import (
	"context"
	"time"

	"github.com/notifyd/notifyd/internal/notify"
)

// A worker process publishes a heartbeat every HeartbeatInterval. One
// silent for DeadAfter is dead: the queue jobs it was running are made
// available again (RescueOrphans, every RescueInterval in each worker),
// and a run that finds a request still processing under a dead owner
// takes it over at once instead of waiting out the run bound. A process
// that is only slow keeps its heartbeat, so its runs stay live.
const (
	DeadAfter      = 8 * time.Second
	RescueInterval = time.Second
	// liveRecheck is how often a run that waits on a live earlier run
	// looks again whether that run's process still lives.
	liveRecheck = 5 * time.Second
)

// RescueOrphans makes the queue jobs of dead worker processes available
// again, and those of this process that it neither works nor finished
// lately (busy): their end was never recorded. It reports how many.
func (e *Engine) RescueOrphans(ctx context.Context, busy []int64) (int, error) {
	var n int
	err := e.store.Update(ctx, func(tx notify.Tx) error {
		var err error
		n, err = tx.RescueQueueJobs(ctx, e.now().Add(-DeadAfter), time.Now().Add(-DeadAfter), e.lim.workerID, busy)
		return err
	})
	if n > 0 {
		e.log.WarnContext(ctx, "rescued the queue jobs of a dead worker process", "jobs", n)
	}
	return n, err
}

// RescueAll is RescueOrphans for a process that knows it is the only
// worker on its database (SQLite, under the worker lock): every other
// process's heartbeat row is a dead one's and every running queue job an
// orphan, whatever their age. Call it before the queue starts.
func (e *Engine) RescueAll(ctx context.Context) (int, error) {
	var n int
	err := e.store.Update(ctx, func(tx notify.Tx) error {
		if _, err := tx.DeleteStaleDispatchWorkers(ctx, e.now().Add(time.Hour)); err != nil {
			return err
		}
		var err error
		n, err = tx.RescueQueueJobs(ctx, e.now().Add(time.Hour), time.Now().Add(time.Hour), "", nil)
		return err
	})
	if n > 0 {
		e.log.WarnContext(ctx, "rescued the queue jobs of the previous process", "jobs", n)
	}
	return n, err
}

// ownerDead reports whether the run that claimed job j last is over: for
// this process, when none of its runs holds the row any more; for any
// other when this one is the only worker; otherwise when its process has
// no heartbeat within DeadAfter. live caches the heartbeat rows for one
// transaction.
func (e *Engine) ownerDead(ctx context.Context, tx notify.Tx, j *notify.Job, now time.Time, live *map[string]bool) (bool, error) {
	switch {
	case j.RunOwner == e.lim.workerID:
		_, running := e.active.Load(j.ID)
		return !running, nil
	case e.soleWorker:
		return true, nil
	case j.RunOwner == "":
		return false, nil // claimed before owners were recorded: the run bound decides
	}
	if *live == nil {
		ws, err := tx.FindDispatchWorkers(ctx, now.Add(-DeadAfter))
		if err != nil {
			return false, err
		}
		*live = make(map[string]bool, len(ws))
		for _, w := range ws {
			(*live)[w.ID] = true
		}
	}
	return !(*live)[j.RunOwner], nil
}

// RunningQueueJobs lists the queue jobs of queue that the database shows
// running under this process. A job's run ends before the queue records
// its end, so a job just finished can still be listed (worker.CrashGuard
// waits for that before it runs an isolated job).
func (e *Engine) RunningQueueJobs(ctx context.Context, queue string) ([]int64, error) {
	var ids []int64
	err := e.store.View(ctx, func(tx notify.Tx) (err error) {
		ids, err = tx.FindRunningQueueJobs(ctx, queue, e.lim.workerID)
		return err
	})
	return ids, err
}
