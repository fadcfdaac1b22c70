package worker

import (
	"context"
	"log/slog"
	"time"
)

// HeartbeatService is what the worker heartbeat calls.
type HeartbeatService interface {
	DispatchHeartbeat(ctx context.Context) error
	LeaveDispatchCluster(ctx context.Context) error
	// RescueOrphans hands back the queue jobs of dead worker processes,
	// and this process's running jobs other than busy.
	RescueOrphans(ctx context.Context, busy []int64) (int, error)
}

// StartHeartbeat publishes this worker process's heartbeat (and its
// dispatch-limit demand: the live workers split each configured rate,
// service/dispatchlimit.go) before it returns, so the process is known
// alive before its queue fetches a job, and then every interval; every
// rescueEvery it also hands back the jobs of dead workers, once its own
// heartbeats have succeeded for rescueAfter (a worker's death is only
// known from the others' fresh heartbeats). stop ends the
// loop and deletes the process's row so the other workers take its share
// without waiting for it to go stale: call it only once the queue has
// stopped, or the jobs still running would look orphaned.
func StartHeartbeat(svc HeartbeatService, tracker *Tracker, logger *slog.Logger, interval, rescueEvery, rescueAfter time.Duration) (stop func()) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	// healthySince is when the heartbeats last started to succeed. After
	// a database outage every worker's row is stale at once: this one
	// rescues nothing until the others have had rescueAfter to beat again.
	healthySince := time.Now()
	failing := false
	beat := func() {
		err := svc.DispatchHeartbeat(ctx)
		if err != nil && ctx.Err() == nil {
			logger.Warn("dispatch heartbeat", "err", err)
		}
		if err != nil {
			failing = true
		} else if failing {
			failing, healthySince = false, time.Now()
		}
	}
	beat()
	go func() {
		defer close(done)
		t := time.NewTicker(interval)
		defer t.Stop()
		lastRescue := time.Now()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			}
			beat()
			if rescueEvery > 0 && time.Since(lastRescue) >= rescueEvery && !failing && time.Since(healthySince) >= rescueAfter {
				lastRescue = time.Now()
				if _, err := svc.RescueOrphans(ctx, tracker.Busy()); err != nil && ctx.Err() == nil {
					logger.Warn("rescue of dead workers' jobs", "err", err)
				}
			}
		}
	}()
	return func() {
		cancel()
		<-done
		lctx, lcancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer lcancel()
		if err := svc.LeaveDispatchCluster(lctx); err != nil {
			logger.Warn("dispatch heartbeat: leave", "err", err)
		}
	}
}
