package sends

import (
	"context"
	"time"

	"github.com/notifyd/notifyd/internal/notify"
	"github.com/notifyd/notifyd/internal/usecase"
)

// ListOpenJobs lists non-terminal jobs, newest enqueued first.
func (s *Service) ListOpenJobs(ctx context.Context, a *usecase.Actor) ([]*notify.OpenJob, error) {
	var out []*notify.OpenJob
	err := s.Store.View(ctx, func(tx notify.Tx) (err error) {
		out, err = tx.FindOpenJobs(ctx, a.WorkspaceID, 1000)
		return err
	})
	return out, err
}

// CancelScheduledJob cancels a job still waiting for its scheduled time:
// job and request both become canceled. Any other state is 409.
func (s *Service) CancelScheduledJob(ctx context.Context, a *usecase.Actor, jobID string) error {
	return s.Store.Update(ctx, func(tx notify.Tx) error {
		j, err := tx.FindJob(ctx, a.WorkspaceID, jobID)
		if err != nil {
			return usecase.NotFound(err, "Job")
		}
		if j.Status != notify.JobScheduled {
			return notify.Conflict("Only a job in scheduled state can be canceled; this job is %s", j.Status)
		}
		r, err := tx.FindRequest(ctx, a.WorkspaceID, j.RequestID)
		if err != nil {
			return err
		}
		return s.cancelInTx(ctx, tx, r, s.Now())
	})
}

// AttemptPage is one page of attempt history.
type AttemptPage struct {
	Attempts []*notify.Attempt
	Requests []*notify.Request
	Cursor   *notify.Cursor
	HasNext  bool
}

// ListAttempts pages attempt history newest first.
func (s *Service) ListAttempts(ctx context.Context, a *usecase.Actor, f notify.AttemptFilter) (*AttemptPage, error) {
	if f.Limit == 0 {
		f.Limit = 100
	}
	if f.Limit < 1 || f.Limit > 500 {
		return nil, notify.Invalid("limit must be between 1 and 500")
	}
	if f.RequestID != "" && !usecase.IsUUID(f.RequestID) {
		return nil, notify.Invalid("requestId must be a UUID")
	}
	want := f.Limit
	f.Limit++
	p := &AttemptPage{}
	err := s.Store.View(ctx, func(tx notify.Tx) (err error) {
		p.Attempts, p.Requests, err = tx.FindAttempts(ctx, a.WorkspaceID, f)
		return err
	})
	if err != nil {
		return nil, err
	}
	p.Attempts, p.Cursor, p.HasNext = usecase.Trim(p.Attempts, want, func(at *notify.Attempt) notify.Cursor {
		return notify.Cursor{At: at.StartedAt, ID: at.ID}
	})
	p.Requests = p.Requests[:len(p.Attempts)]
	return p, nil
}

// ListDeadLetters returns the newest 100 dead letters and the total.
func (s *Service) ListDeadLetters(ctx context.Context, a *usecase.Actor) ([]*notify.DeadLetter, int, error) {
	var out []*notify.DeadLetter
	var n int
	err := s.Store.View(ctx, func(tx notify.Tx) (err error) {
		out, n, err = tx.FindDeadLetters(ctx, a.WorkspaceID, 100)
		return err
	})
	return out, n, err
}

// Metrics counts requests accepted and attempts started in [from, to].
func (s *Service) Metrics(ctx context.Context, a *usecase.Actor, from, to time.Time) (*notify.Counts, error) {
	var c *notify.Counts
	err := s.Store.View(ctx, func(tx notify.Tx) (err error) {
		c, err = tx.CountActivity(ctx, a.WorkspaceID, from, to)
		return err
	})
	return c, err
}

// DeliveryRates counts the receipts of the sends in [from, to] (issue 35):
// per channel, per provider account, and per bucket of interval.
func (s *Service) DeliveryRates(ctx context.Context, a *usecase.Actor, from, to time.Time, interval time.Duration) (*notify.ReceiptStats, error) {
	var rows []notify.ReceiptCount
	err := s.Store.View(ctx, func(tx notify.Tx) (err error) {
		rows, err = tx.CountReceipts(ctx, a.WorkspaceID, from, to, s.Now(), interval)
		return err
	})
	if err != nil {
		return nil, err
	}
	return notify.NewReceiptStats(rows, from, to, interval), nil
}
