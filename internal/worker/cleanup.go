// Package worker holds the River workers: thin adapters from a queued job
// to a service use case.
package worker

import (
	"context"
	"log/slog"

	"github.com/riverqueue/river"

	"github.com/notifyd/notifyd/internal/jobs"
)

// SessionCleaner deletes expired sessions, nonces and invitations (the
// accounts room).
type SessionCleaner interface {
	Cleanup(ctx context.Context) (sessions, nonces int, err error)
}

// OTPCleaner deletes old OTP sessions and ended send counters.
type OTPCleaner interface {
	CleanupOTP(ctx context.Context) (sessions, counters int, err error)
}

// Cleanup deletes expired sessions and nonces, old OTP sessions and ended
// OTP send counters.
type Cleanup struct {
	river.WorkerDefaults[jobs.Cleanup]
	Sessions SessionCleaner
	OTP      OTPCleaner
	Logger   *slog.Logger
}

// Work implements river.Worker.
func (w *Cleanup) Work(ctx context.Context, _ *river.Job[jobs.Cleanup]) error {
	s, n, err := w.Sessions.Cleanup(ctx)
	if err != nil {
		return err
	}
	otpSessions, otpCounters, err := w.OTP.CleanupOTP(ctx)
	if err != nil {
		return err
	}
	w.Logger.DebugContext(ctx, "cleanup", "sessions", s, "nonces", n, "otpSessions", otpSessions, "otpCounters", otpCounters)
	return nil
}
