package service

import (
	"context"
	"time"

	"github.com/notifyd/notifyd/internal/notify"
)

// Retention deletes old data. Every statement touches at most
// RetentionBatch rows in its own short transaction, so a large purge
// interleaves with delivery instead of holding the database (SQLite's one
// writer) for seconds.
const RetentionBatch = 1000

// Tables named in Purged (and in notifyd_retention_deleted_total).
const (
	TableRequests           = "notification_requests"
	TableJobs               = "notification_jobs"
	TableAttempts           = "attempts"
	TableEvents             = "events"
	TableCampaignRecipients = "campaign_recipients"
	TableAudit              = "audit_logs"
)

// Purged counts deleted rows per table.
type Purged = map[string]int

// PurgeExpired deletes what r no longer keeps, batch by batch, and
// reports how many rows of each table went (keys: the Table constants) and whether it finished (false:
// the budget ran out with more to delete). Dead letters are not touched:
// SPEC keeps the newest 10,000 per workspace (CreateDeadLetter drops the
// older ones), and the request of a dead-lettered job stays with it.
func (s *Service) PurgeExpired(ctx context.Context, r notify.Retention) (Purged, bool, error) {
	out := Purged{}
	batch := r.Batch
	if batch <= 0 {
		batch = RetentionBatch
	}
	now := s.Now()
	var deadline time.Time
	if r.Budget > 0 {
		deadline = now.Add(r.Budget)
	}
	spent := func() bool { return !deadline.IsZero() && time.Now().After(deadline) }
	// step runs one bounded delete, each in its own transaction, until a
	// run deletes less than a batch of table's rows (or none, with
	// untilNone: PurgeCampaignRecipients empties one campaign at a time).
	step := func(table string, untilNone bool, del func(tx notify.Tx) (Purged, error)) (bool, error) {
		for {
			if spent() {
				return false, nil
			}
			if err := ctx.Err(); err != nil {
				return false, err
			}
			var p Purged
			err := s.Store.Update(ctx, func(tx notify.Tx) (err error) {
				p, err = del(tx)
				return err
			})
			if err != nil {
				return false, err
			}
			for t, n := range p {
				out[t] += n
			}
			if n := p[table]; n == 0 || n < batch && !untilNone {
				return true, nil
			}
		}
	}
	one := func(table string, n int, err error) (Purged, error) { return Purged{table: n}, err }
	if r.Data > 0 {
		before := now.Add(-r.Data)
		var wss []string
		if err := s.Store.View(ctx, func(tx notify.Tx) (err error) {
			wss, err = tx.WorkspaceIDs(ctx)
			return err
		}); err != nil {
			return out, false, err
		}
		for _, ws := range wss {
			done, err := step(TableRequests, false, func(tx notify.Tx) (Purged, error) {
				p, err := tx.PurgeRequests(ctx, ws, before, batch)
				return Purged{TableRequests: p.Requests, TableJobs: p.Jobs, TableAttempts: p.Attempts}, err
			})
			if !done || err != nil {
				return out, false, err
			}
		}
		if done, err := step(TableEvents, false, func(tx notify.Tx) (Purged, error) {
			n, err := tx.PurgeEvents(ctx, before, batch)
			return one(TableEvents, n, err)
		}); !done || err != nil {
			return out, false, err
		}
		if done, err := step(TableCampaignRecipients, true, func(tx notify.Tx) (Purged, error) {
			n, err := tx.PurgeCampaignRecipients(ctx, before, batch)
			return one(TableCampaignRecipients, n, err)
		}); !done || err != nil {
			return out, false, err
		}
	}
	if r.Audit > 0 {
		before := now.Add(-r.Audit)
		if done, err := step(TableAudit, false, func(tx notify.Tx) (Purged, error) {
			n, err := tx.PurgeAudit(ctx, before, batch)
			return one(TableAudit, n, err)
		}); !done || err != nil {
			return out, false, err
		}
	}
	return out, true, nil
}
