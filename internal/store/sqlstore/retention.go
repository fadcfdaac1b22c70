package sqlstore

import (
	"context"
	"strings"
	"time"

	"github.com/notifyd/notifyd/internal/notify"
)

// hourMs is the width of an activity_rollup bucket (an hour in
// milliseconds; the statements below write it as a literal, so both
// dialects compute the bucket in integers).
const hourMs = 3600000

func (t deliveryTx) WorkspaceIDs(ctx context.Context) ([]string, error) {
	return queryAll(ctx, t.c, func(r Row) (string, error) {
		var id string
		return id, r.Scan(&id)
	}, `SELECT id FROM workspaces ORDER BY id`)
}

func (t deliveryTx) PurgeRequests(ctx context.Context, workspaceID string, before time.Time, limit int) (notify.PurgedRequests, error) {
	var p notify.PurgedRequests
	// The workspace's index on requested_at bounds the scan and gives the
	// order, so the LIMIT stops it early (a tie-breaker on id would sort
	// every old row first); updated_at keeps a request that ended recently
	// (scheduled long after it was accepted, or retried for days). The
	// no-op UPDATE locks the chosen rows: a concurrent purge of the same
	// rows waits, then finds them gone and counts nothing, where a plain
	// read would let both add the rows to the rollups.
	ids, err := queryAll(ctx, t.c, func(r Row) (any, error) {
		var id string
		return id, r.Scan(&id)
	}, `UPDATE notification_requests SET updated_at = updated_at WHERE id IN (
		SELECT id FROM notification_requests r WHERE workspace_id = ? AND requested_at < ? AND updated_at < ?
		AND status IN ('sent', 'failed', 'canceled')
		AND NOT EXISTS (SELECT 1 FROM dead_letters d WHERE d.request_id = r.id)
		ORDER BY requested_at LIMIT ?) RETURNING id`, workspaceID, ms(before), ms(before), limit)
	if err != nil || len(ids) == 0 {
		return p, err
	}
	in := `(?` + strings.Repeat(", ?", len(ids)-1) + `)`
	// The figures first, in this transaction: a reader sees either the
	// rows or their rollup, never both or neither.
	if _, err := t.c.Exec(ctx, `INSERT INTO activity_rollup (workspace_id, bucket, kind, channel, status, n)
		SELECT workspace_id, requested_at - requested_at % 3600000, 'request', channel, status, COUNT(*)
		FROM notification_requests WHERE id IN `+in+`
		GROUP BY workspace_id, requested_at - requested_at % 3600000, channel, status
		ON CONFLICT (workspace_id, bucket, kind, channel, status) DO UPDATE SET n = activity_rollup.n + excluded.n`, ids...); err != nil {
		return p, err
	}
	if _, err := t.c.Exec(ctx, `INSERT INTO activity_rollup (workspace_id, bucket, kind, channel, status, n)
		SELECT workspace_id, started_at - started_at % 3600000, 'attempt', '', status, COUNT(*)
		FROM attempts WHERE request_id IN `+in+`
		GROUP BY workspace_id, started_at - started_at % 3600000, status
		ON CONFLICT (workspace_id, bucket, kind, channel, status) DO UPDATE SET n = activity_rollup.n + excluded.n`, ids...); err != nil {
		return p, err
	}
	// A deleted campaign has no statistics to keep.
	if _, err := t.c.Exec(ctx, `INSERT INTO campaign_rollup (campaign_id, status, n)
		SELECT campaign_id, status, COUNT(*) FROM notification_requests r WHERE id IN `+in+`
		AND campaign_id IS NOT NULL AND EXISTS (SELECT 1 FROM campaigns c WHERE c.id = r.campaign_id)
		GROUP BY campaign_id, status
		ON CONFLICT (campaign_id, status) DO UPDATE SET n = campaign_rollup.n + excluded.n`, ids...); err != nil {
		return p, err
	}
	// Delivery receipts (issue 35) go with their requests, their figures
	// to the rollup the delivery rates read.
	if _, err := t.c.Exec(ctx, `INSERT INTO receipt_rollup (workspace_id, bucket, channel, provider_account_id, provider_kind, status, n)
		SELECT workspace_id, created_at - created_at % 3600000, channel, provider_account_id, provider_kind, `+receiptStatus+`, COUNT(*)
		FROM delivery_receipts WHERE request_id IN `+in+`
		GROUP BY 1, 2, 3, 4, 5, 6
		ON CONFLICT (workspace_id, bucket, channel, provider_account_id, provider_kind, status) DO UPDATE SET n = receipt_rollup.n + excluded.n`,
		append([]any{ms(time.Now())}, ids...)...); err != nil {
		return p, err
	}
	if _, err := t.c.Exec(ctx, `DELETE FROM delivery_receipts WHERE request_id IN `+in, ids...); err != nil {
		return p, err
	}
	// Engagement (issue 35) goes with its requests, except a campaign's,
	// which its statistics keep counting after the requests are gone.
	if _, err := t.c.Exec(ctx, `DELETE FROM request_engagement WHERE campaign_id = '' AND request_id IN `+in, ids...); err != nil {
		return p, err
	}
	n, err := t.c.Exec(ctx, `DELETE FROM attempts WHERE request_id IN `+in, ids...)
	if err != nil {
		return p, err
	}
	p.Attempts = int(n)
	if n, err = t.c.Exec(ctx, `DELETE FROM notification_jobs WHERE request_id IN `+in, ids...); err != nil {
		return p, err
	}
	p.Jobs = int(n)
	if n, err = t.c.Exec(ctx, `DELETE FROM notification_requests WHERE id IN `+in, ids...); err != nil {
		return p, err
	}
	p.Requests = int(n)
	return p, nil
}

// rollupActivity adds the purged figures of the hours wholly inside
// [from, to] (CountActivity's inclusive range) to c.
func (t deliveryTx) rollupActivity(ctx context.Context, c *notify.Counts, workspaceID string, from, to time.Time) error {
	rows, err := t.c.Query(ctx, `SELECT kind, channel, status, SUM(n) FROM activity_rollup
		WHERE workspace_id = ? AND bucket >= ? AND bucket <= ? GROUP BY kind, channel, status`,
		workspaceID, ms(from), ms(to)-(hourMs-1))
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		var kind, ch, status string
		var n int
		if err := rows.Scan(&kind, &ch, &status, &n); err != nil {
			return err
		}
		if kind == "attempt" {
			c.TotalAttempts += n
			if status == "success" {
				c.SuccessAttempts += n
			}
			continue
		}
		c.AddRequests(ch, status, n)
	}
	return rows.Err()
}

// rollupCampaign adds a campaign's purged requests to counts.
func (t deliveryTx) rollupCampaign(ctx context.Context, counts map[notify.RequestStatus]int, campaignID string) error {
	rows, err := t.c.Query(ctx, `SELECT status, n FROM campaign_rollup WHERE campaign_id = ?`, campaignID)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		var s notify.RequestStatus
		var n int
		if err := rows.Scan(&s, &n); err != nil {
			return err
		}
		counts[s] += n
	}
	return rows.Err()
}

func (t deliveryTx) PurgeEvents(ctx context.Context, before time.Time, limit int) (int, error) {
	n, err := t.c.Exec(ctx, `DELETE FROM events WHERE id IN (SELECT id FROM events
		WHERE dispatched_at IS NULL AND created_at < ? ORDER BY created_at LIMIT ?)`, ms(before), limit)
	return int(n), err
}

func (t deliveryTx) PurgeInboxEvents(ctx context.Context, before time.Time, limit int) (int, error) {
	n, err := t.c.Exec(ctx, `DELETE FROM inbox_events WHERE (recipient_id, seq) IN (SELECT recipient_id, seq FROM inbox_events
		WHERE created_at < ? ORDER BY created_at LIMIT ?)`, ms(before), limit)
	return int(n), err
}

func (t deliveryTx) PurgeInboxMessages(ctx context.Context, before time.Time, limit int) (int, error) {
	n, err := t.c.Exec(ctx, `DELETE FROM inbox_messages WHERE id IN (SELECT id FROM inbox_messages
		WHERE created_at < ? ORDER BY created_at LIMIT ?)`, ms(before), limit)
	return int(n), err
}

func (t deliveryTx) PurgeCampaignRecipients(ctx context.Context, before time.Time, limit int) (int, error) {
	var id string
	err := t.c.QueryRow(ctx, `SELECT c.id FROM campaigns c WHERE c.status IN ('sent', 'canceled', 'failed') AND c.updated_at < ?
		AND EXISTS (SELECT 1 FROM campaign_recipients r WHERE r.campaign_id = c.id) ORDER BY c.updated_at, c.id LIMIT 1`, ms(before)).Scan(&id)
	if IsNotFound(err) {
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	n, err := t.c.Exec(ctx, `DELETE FROM campaign_recipients WHERE campaign_id = ? AND subscriber_id IN
		(SELECT subscriber_id FROM campaign_recipients WHERE campaign_id = ? LIMIT ?)`, id, id, limit)
	return int(n), err
}

func (t deliveryTx) PurgeAudit(ctx context.Context, before time.Time, limit int) (int, error) {
	n, err := t.c.Exec(ctx, `DELETE FROM audit_logs WHERE id IN (SELECT id FROM audit_logs
		WHERE created_at < ? ORDER BY created_at LIMIT ?)`, ms(before), limit)
	return int(n), err
}
