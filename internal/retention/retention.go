// Package retention is the room that deletes old data: requests with their
// jobs and attempts, events, campaign recipients, inbox messages
// (NOTIFYD_RETENTION),
// audit entries (NOTIFYD_AUDIT_RETENTION) and the inbox streams' event
// logs (a week), batch by batch, each batch in its own short transaction. The maintenance worker runs it on a schedule.
package retention

import (
	"context"
	"log/slog"
	"time"

	"github.com/notifyd/notifyd/internal/notify"
	"github.com/notifyd/notifyd/internal/usecase"
)

// Batch is how many rows one statement deletes at most when the policy
// names no batch: each batch is its own short transaction, so a large
// purge interleaves with delivery instead of holding the database
// (SQLite's one writer) for seconds.
const Batch = 1000

// Tables named in Purged (and in notifyd_retention_deleted_total).
const (
	TableRequests           = "notification_requests"
	TableJobs               = "notification_jobs"
	TableAttempts           = "attempts"
	TableEvents             = "events"
	TableCampaignRecipients = "campaign_recipients"
	TableAudit              = "audit_logs"
	TableInboxEvents        = "inbox_events"
	TableInboxMessages      = "inbox_messages"
)

// InboxEventHorizon is how long the inbox streams' event logs keep an
// entry, whatever the data retention: long enough for a laptop closed
// over a weekend to resume its stream without a reload.
const InboxEventHorizon = 7 * 24 * time.Hour

// Purged counts deleted rows per table.
type Purged = map[string]int

// Options are what the room is built with.
type Options struct {
	Store  notify.Store
	Now    func() time.Time
	Logger *slog.Logger
}

// Service is the retention room.
type Service struct {
	usecase.Kit
}

// New builds the room.
func New(o Options) *Service {
	return &Service{Kit: usecase.NewKit(o.Store, o.Now, o.Logger)}
}

// PurgeExpired deletes what r no longer keeps, batch by batch, and
// reports how many rows of each table went (keys: the Table constants) and whether it finished (false:
// the budget ran out with more to delete). Dead letters are not touched:
// SPEC keeps the newest 10,000 per workspace (CreateDeadLetter drops the
// older ones), and the request of a dead-lettered job stays with it.
func (s *Service) PurgeExpired(ctx context.Context, r notify.Retention) (Purged, bool, error) {
	now := s.Now()
	p := &purge{s: s, ctx: ctx, out: Purged{}, batch: r.Batch}
	if p.batch <= 0 {
		p.batch = Batch
	}
	if r.Budget > 0 {
		p.deadline = now.Add(r.Budget)
	}
	if r.Data > 0 {
		if done, err := p.data(now.Add(-r.Data)); !done || err != nil {
			return p.out, false, err
		}
	}
	before := now.Add(-InboxEventHorizon)
	if done, err := p.step(TableInboxEvents, false, func(tx notify.Tx) (Purged, error) {
		n, err := tx.PurgeInboxEvents(ctx, before, p.batch)
		return one(TableInboxEvents, n, err)
	}); !done || err != nil {
		return p.out, false, err
	}
	if r.Audit > 0 {
		before := now.Add(-r.Audit)
		if done, err := p.step(TableAudit, false, func(tx notify.Tx) (Purged, error) {
			n, err := tx.PurgeAudit(ctx, before, p.batch)
			return one(TableAudit, n, err)
		}); !done || err != nil {
			return p.out, false, err
		}
	}
	return p.out, true, nil
}

// purge is one run of PurgeExpired: what it deleted so far and when its
// budget runs out.
type purge struct {
	s        *Service
	ctx      context.Context
	out      Purged
	batch    int
	deadline time.Time // zero: no budget
}

func (p *purge) spent() bool { return !p.deadline.IsZero() && time.Now().After(p.deadline) }

// step runs one bounded delete, each in its own transaction, until a run
// deletes less than a batch of table's rows (or none, with untilNone:
// PurgeCampaignRecipients empties one campaign at a time). False: the
// budget ran out first.
func (p *purge) step(table string, untilNone bool, del func(tx notify.Tx) (Purged, error)) (bool, error) {
	for {
		if p.spent() {
			return false, nil
		}
		if err := p.ctx.Err(); err != nil {
			return false, err
		}
		var got Purged
		err := p.s.Store.Update(p.ctx, func(tx notify.Tx) (err error) {
			got, err = del(tx)
			return err
		})
		if err != nil {
			return false, err
		}
		for t, n := range got {
			p.out[t] += n
		}
		if n := got[table]; n == 0 || n < p.batch && !untilNone {
			return true, nil
		}
	}
}

// data deletes requests (with their jobs and attempts) workspace by
// workspace, then events, inbox messages and campaign recipients, older
// than before.
func (p *purge) data(before time.Time) (bool, error) {
	ctx := p.ctx
	var wss []string
	if err := p.s.Store.View(ctx, func(tx notify.Tx) (err error) {
		wss, err = tx.WorkspaceIDs(ctx)
		return err
	}); err != nil {
		return false, err
	}
	for _, ws := range wss {
		done, err := p.step(TableRequests, false, func(tx notify.Tx) (Purged, error) {
			r, err := tx.PurgeRequests(ctx, ws, before, p.batch)
			return Purged{TableRequests: r.Requests, TableJobs: r.Jobs, TableAttempts: r.Attempts}, err
		})
		if !done || err != nil {
			return false, err
		}
	}
	if done, err := p.step(TableEvents, false, func(tx notify.Tx) (Purged, error) {
		n, err := tx.PurgeEvents(ctx, before, p.batch)
		return one(TableEvents, n, err)
	}); !done || err != nil {
		return false, err
	}
	if done, err := p.step(TableInboxMessages, false, func(tx notify.Tx) (Purged, error) {
		n, err := tx.PurgeInboxMessages(ctx, before, p.batch)
		return one(TableInboxMessages, n, err)
	}); !done || err != nil {
		return false, err
	}
	return p.step(TableCampaignRecipients, true, func(tx notify.Tx) (Purged, error) {
		n, err := tx.PurgeCampaignRecipients(ctx, before, p.batch)
		return one(TableCampaignRecipients, n, err)
	})
}

// one is the count of a delete that touches one table.
func one(table string, n int, err error) (Purged, error) { return Purged{table: n}, err }
