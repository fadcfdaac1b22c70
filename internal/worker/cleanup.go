// Package worker holds the River workers: thin adapters from a queued job
// to a service use case.
package worker

import (
	"context"
	"log/slog"

	"github.com/riverqueue/river"

	"github.com/notifyd/notifyd/internal/jobs"
)

// Cleaner is the use case the cleanup job runs.
type Cleaner interface {
	Cleanup(ctx context.Context) (sessions, nonces int, err error)
	// CleanupOTP deletes old OTP sessions and ended send counters.
	CleanupOTP(ctx context.Context) (sessions, counters int, err error)
}

// Cleanup deletes expired sessions and nonces, old OTP sessions and ended
// OTP send counters.
type Cleanup struct {
	river.WorkerDefaults[jobs.Cleanup]
	Service Cleaner
	Logger  *slog.Logger
}

// Work implements river.Worker.
func (w *Cleanup) Work(ctx context.Context, _ *river.Job[jobs.Cleanup]) error {
	s, n, err := w.Service.Cleanup(ctx)
	if err != nil {
		return err
	}
	otpSessions, otpCounters, err := w.Service.CleanupOTP(ctx)
	if err != nil {
		return err
	}
	w.Logger.DebugContext(ctx, "cleanup", "sessions", s, "nonces", n, "otpSessions", otpSessions, "otpCounters", otpCounters)
	return nil
}
