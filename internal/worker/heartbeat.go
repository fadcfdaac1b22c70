package worker

import (
	"context"
	"log/slog"
	"time"
)

// HeartbeatService is what the dispatch-limit heartbeat calls.
type HeartbeatService interface {
	DispatchHeartbeat(ctx context.Context) error
	LeaveDispatchCluster(ctx context.Context) error
}

// StartHeartbeat publishes this worker process's dispatch-limit demand at
// once and then every interval (the live workers split each configured
// rate, service/dispatchlimit.go). stop ends the loop and deletes the
// process's row so the other workers take its share without waiting for
// it to go stale.
func StartHeartbeat(svc HeartbeatService, logger *slog.Logger, interval time.Duration) (stop func()) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		t := time.NewTicker(interval)
		defer t.Stop()
		for {
			if err := svc.DispatchHeartbeat(ctx); err != nil && ctx.Err() == nil {
				logger.Warn("dispatch heartbeat", "err", err)
			}
			select {
			case <-ctx.Done():
				return
			case <-t.C:
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
