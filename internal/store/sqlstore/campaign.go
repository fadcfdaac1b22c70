package sqlstore

import (
	"context"
	"strings"
	"time"

	"github.com/riverqueue/river"

	"github.com/notifyd/notifyd/internal/jobs"
	"github.com/notifyd/notifyd/internal/notify"
)

const campaignCols = `id, workspace_id, name, channel, status, subject, content_text, content_html, is_advertisement,
	include_unsubscribe, audience_filter, scheduled_at, total_recipients, queued_count, failed_count, fanout_job_id,
	link_base, started_at, fanout_done_at, finished_at, created_at, updated_at`

func scanCampaign(row Row) (*notify.Campaign, error) {
	var c notify.Campaign
	var ch string
	var filter *string
	var sched, started, done, finished *int64
	var job *int64
	var created, updated int64
	if err := row.Scan(&c.ID, &c.WorkspaceID, &c.Name, &ch, &c.Status, &c.Subject, &c.ContentText, &c.ContentHTML,
		&c.IsAdvertisement, &c.IncludeUnsubscribe, &filter, &sched, &c.TotalRecipients, &c.QueuedCount, &c.FailedCount,
		&job, &c.LinkBase, &started, &done, &finished, &created, &updated); err != nil {
		return nil, err
	}
	c.Channel, c.AudienceFilter = notify.Channel(ch), str(filter)
	if job != nil {
		c.FanoutRef = *job
	}
	c.ScheduledAt, c.StartedAt, c.FanoutDoneAt, c.FinishedAt = fromMsPtr(sched), fromMsPtr(started), fromMsPtr(done), fromMsPtr(finished)
	c.CreatedAt, c.UpdatedAt = fromMs(created), fromMs(updated)
	return &c, nil
}

func int64OrNil(v int64) *int64 {
	if v == 0 {
		return nil
	}
	return &v
}

func (t newsletterTx) CreateCampaign(ctx context.Context, c *notify.Campaign) error {
	_, err := t.c.Exec(ctx, `INSERT INTO campaigns (`+campaignCols+`)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		c.ID, c.WorkspaceID, c.Name, string(c.Channel), c.Status, c.Subject, c.ContentText, c.ContentHTML, c.IsAdvertisement,
		c.IncludeUnsubscribe, nullable(c.AudienceFilter), msPtr(c.ScheduledAt), c.TotalRecipients, c.QueuedCount, c.FailedCount,
		int64OrNil(c.FanoutRef), c.LinkBase, msPtr(c.StartedAt), msPtr(c.FanoutDoneAt), msPtr(c.FinishedAt), ms(c.CreatedAt),
		ms(c.UpdatedAt))
	return err
}

func (t newsletterTx) FindCampaign(ctx context.Context, workspaceID, id string) (*notify.Campaign, error) {
	return scanCampaign(t.c.QueryRow(ctx, `SELECT `+campaignCols+` FROM campaigns WHERE workspace_id = ? AND id = ?`, workspaceID, id))
}

func (t newsletterTx) FindCampaigns(ctx context.Context, workspaceID string, status notify.CampaignStatus, limit, offset int) ([]*notify.Campaign, int, error) {
	where := ` WHERE workspace_id = ?`
	args := []any{workspaceID}
	if status != "" {
		where += ` AND status = ?`
		args = append(args, status)
	}
	var total int
	if err := t.c.QueryRow(ctx, `SELECT COUNT(*) FROM campaigns`+where, args...).Scan(&total); err != nil {
		return nil, 0, err
	}
	cs, err := queryAll(ctx, t.c, scanCampaign, `SELECT `+campaignCols+` FROM campaigns`+where+
		` ORDER BY created_at DESC, id DESC LIMIT ? OFFSET ?`, append(args, limit, offset)...)
	return cs, total, err
}

func (t newsletterTx) UpdateCampaign(ctx context.Context, c *notify.Campaign) error {
	return expectOne(t.c.Exec(ctx, `UPDATE campaigns SET name = ?, status = ?, subject = ?, content_text = ?, content_html = ?,
		is_advertisement = ?, include_unsubscribe = ?, audience_filter = ?, scheduled_at = ?, fanout_job_id = ?, link_base = ?,
		started_at = ?, fanout_done_at = ?, finished_at = ?, updated_at = ? WHERE workspace_id = ? AND id = ?`,
		c.Name, c.Status, c.Subject, c.ContentText, c.ContentHTML, c.IsAdvertisement, c.IncludeUnsubscribe,
		nullable(c.AudienceFilter), msPtr(c.ScheduledAt), int64OrNil(c.FanoutRef), c.LinkBase, msPtr(c.StartedAt),
		msPtr(c.FanoutDoneAt), msPtr(c.FinishedAt), ms(c.UpdatedAt), c.WorkspaceID, c.ID))
}

func (t newsletterTx) MoveCampaign(ctx context.Context, workspaceID, id string, from []notify.CampaignStatus, to notify.CampaignStatus, now time.Time) (bool, error) {
	args := []any{to, ms(now), workspaceID, id}
	for _, f := range from {
		args = append(args, f)
	}
	n, err := t.c.Exec(ctx, `UPDATE campaigns SET status = ?, updated_at = ? WHERE workspace_id = ? AND id = ?
		AND status IN (?`+strings.Repeat(", ?", len(from)-1)+`)`, args...)
	return n == 1, err
}

func (t newsletterTx) DeleteCampaign(ctx context.Context, workspaceID, id string) error {
	return expectOne(t.c.Exec(ctx, `DELETE FROM campaigns WHERE workspace_id = ? AND id = ?`, workspaceID, id))
}

func (t newsletterTx) ScheduleFanout(ctx context.Context, workspaceID, campaignID string, at *time.Time) (int64, error) {
	opts := &river.InsertOpts{Queue: jobs.QueueCampaign, MaxAttempts: jobs.FanoutMaxAttempts}
	if at != nil {
		opts.ScheduledAt = *at
	}
	ids, err := t.c.InsertJobs(ctx, []river.InsertManyParams{{Args: jobs.Fanout{CampaignID: campaignID, WorkspaceID: workspaceID}, InsertOpts: opts}})
	if err != nil {
		return 0, err
	}
	return ids[0], nil
}

// sendable is the audience rule's SQL part: the workspace's subscribed
// subscribers of a channel whose address is not suppressed. The attribute
// conditions are applied by the caller (notify.Audience).
const sendable = ` FROM subscribers s WHERE s.workspace_id = ? AND s.channel = ? AND s.consent_status = 'subscribed'
	AND NOT EXISTS (SELECT 1 FROM suppressions x WHERE x.workspace_id = s.workspace_id AND x.address = s.address)`

const notRecipient = ` AND NOT EXISTS (SELECT 1 FROM campaign_recipients cr WHERE cr.campaign_id = ? AND cr.subscriber_id = s.id)`

func (t newsletterTx) CountAudience(ctx context.Context, workspaceID string, channel notify.Channel, aud *notify.Audience, exceptCampaign string) (int, error) {
	q, args := sendable, []any{workspaceID, string(channel)}
	if exceptCampaign != "" {
		q += notRecipient
		args = append(args, exceptCampaign)
	}
	if aud == nil {
		var n int
		err := t.c.QueryRow(ctx, `SELECT COUNT(*)`+q, args...).Scan(&n)
		return n, err
	}
	if aud.Never {
		return 0, nil
	}
	// Attributes are JSON text, matched here rather than with the two
	// dialects' different JSON operators.
	rows, err := t.c.Query(ctx, `SELECT s.attributes`+q, args...)
	if err != nil {
		return 0, err
	}
	defer rows.Close()
	n := 0
	for rows.Next() {
		var raw string
		if err := rows.Scan(&raw); err != nil {
			return 0, err
		}
		var attrs map[string]string
		if err := fromJSON(raw, &attrs); err != nil {
			return 0, err
		}
		if aud.Match(attrs) {
			n++
		}
	}
	return n, rows.Err()
}

// FindFanoutPage bounds the campaign_recipients probe by the cursor too
// (cr.subscriber_id > ?, implied by s.id > ? as cr.subscriber_id = s.id),
// so whatever plan PostgreSQL picks the probe reads only the campaign's
// recipients past the cursor, which a fan-out has not written yet.
// Without it, once ANALYZE had seen other campaigns' rows and not this
// one's (estimated at 1 row), PostgreSQL materialized all of this
// campaign's recipients and compared each subscriber of the page with
// every one of them: each page cost more than the one before, and a
// database's second 100,000-subscriber campaign spent minutes in this
// statement instead of a second (docs/BENCHMARKS.md, session 22 fan3).
// LIMIT 1 OFFSET 0 keeps the NOT EXISTS from being turned into a join
// (PostgreSQL leaves a subquery with an OFFSET as it is): the probe stays
// one index lookup per subscriber whatever the estimate, which also
// covers a resumed fan-out, whose cursor starts before the recipients
// already written. SQLite reads it as before.
func (t newsletterTx) FindFanoutPage(ctx context.Context, workspaceID, campaignID string, channel notify.Channel, after string, limit int) ([]*notify.Subscriber, error) {
	return queryAll(ctx, t.c, scanSubscriber, `SELECT `+subscriberColsOf("s")+sendable+`
		AND NOT EXISTS (SELECT 1 FROM campaign_recipients cr WHERE cr.campaign_id = ? AND cr.subscriber_id = s.id AND cr.subscriber_id > ? LIMIT 1 OFFSET 0)
		AND s.id > ? ORDER BY s.id LIMIT ?`, workspaceID, string(channel), campaignID, after, after, limit)
}

var recipientCols = []string{"campaign_id", "subscriber_id", "request_id"}

func (t newsletterTx) AddCampaignRecipients(ctx context.Context, campaignID string, rs []notify.CampaignRecipient) error {
	rows := make([][]any, len(rs))
	for i, r := range rs {
		rows[i] = []any{campaignID, r.SubscriberID, nullable(r.RequestID)}
	}
	return t.insertRows(ctx, "campaign_recipients", recipientCols, rows, 1000)
}

func (t newsletterTx) CountCampaignRecipients(ctx context.Context, campaignID string) (int, error) {
	var n int
	err := t.c.QueryRow(ctx, `SELECT COUNT(*) FROM campaign_recipients WHERE campaign_id = ?`, campaignID).Scan(&n)
	return n, err
}

func (t newsletterTx) SetCampaignProgress(ctx context.Context, workspaceID, id string, total, queued, failed int, now time.Time) error {
	return expectOne(t.c.Exec(ctx, `UPDATE campaigns SET total_recipients = ?, queued_count = queued_count + ?,
		failed_count = failed_count + ?, updated_at = ? WHERE workspace_id = ? AND id = ?`,
		total, queued, failed, ms(now), workspaceID, id))
}

func (t newsletterTx) CampaignRequestCounts(ctx context.Context, workspaceID, id string) (map[notify.RequestStatus]int, error) {
	rows, err := t.c.Query(ctx, `SELECT status, COUNT(*) FROM notification_requests WHERE campaign_id = ? AND workspace_id = ?
		GROUP BY status`, id, workspaceID)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := map[notify.RequestStatus]int{}
	for rows.Next() {
		var s notify.RequestStatus
		var n int
		if err := rows.Scan(&s, &n); err != nil {
			return nil, err
		}
		out[s] = n
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	// Purged requests count through the campaign's rollup (retention.go).
	return out, t.rollupCampaign(ctx, out, id)
}

func (t newsletterTx) CancelCampaignRequests(ctx context.Context, workspaceID, id, code, message string, now time.Time) ([]*notify.Request, error) {
	// Requests first, then their jobs: the dispatch locks a request and
	// then its job, so the opposite order deadlocks against a dispatch in
	// flight on PostgreSQL. The queue jobs stay; a dispatch run of a
	// canceled request does nothing.
	canceled, err := queryAll(ctx, t.c, scanRequest, `UPDATE notification_requests SET status = 'canceled', final_error_code = ?,
		final_error_message = ?, updated_at = ? WHERE campaign_id = ? AND workspace_id = ? AND status IN ('queued', 'processing')
		RETURNING `+requestCols, code, message, ms(now), id, workspaceID)
	if err != nil || len(canceled) == 0 {
		return canceled, err
	}
	// Every job of a canceled request of the campaign ends canceled (those
	// of requests canceled earlier are terminal already).
	if _, err := t.c.Exec(ctx, `UPDATE notification_jobs SET status = 'canceled', finished_at = ?
		WHERE workspace_id = ? AND status NOT IN ('completed', 'failed', 'canceled', 'dead_letter')
		AND request_id IN (SELECT id FROM notification_requests WHERE campaign_id = ? AND workspace_id = ?
			AND status = 'canceled')`, ms(now), workspaceID, id, workspaceID); err != nil {
		return nil, err
	}
	return canceled, nil
}

// inChunk bounds the ids of one IN list.
const inChunk = 500

// eachIn runs fn on ids in chunks, with the placeholders of an IN list.
func eachIn(ids []string, fn func(in string, part []any) error) error {
	for start := 0; start < len(ids); start += inChunk {
		part := make([]any, 0, inChunk)
		for _, id := range ids[start:min(start+inChunk, len(ids))] {
			part = append(part, id)
		}
		if err := fn(`(?`+strings.Repeat(", ?", len(part)-1)+`)`, part); err != nil {
			return err
		}
	}
	return nil
}

func scanID(r Row) (string, error) {
	var id string
	return id, r.Scan(&id)
}

func (t newsletterTx) FindPausedRequests(ctx context.Context, workspaceID string, ids []string) (map[string]bool, error) {
	out := map[string]bool{}
	// The workspace's paused campaigns first: there are seldom any, and
	// a join let SQLite's planner walk every request of the campaign
	// being sent for each claim (docs/BENCHMARKS.md, issue 15 step 10).
	paused, err := queryAll(ctx, t.c, scanID, `SELECT id FROM campaigns WHERE workspace_id = ? AND status = 'paused'`, workspaceID)
	if err != nil || len(paused) == 0 {
		return out, err
	}
	err = eachIn(ids, func(in string, part []any) error {
		held, err := queryAll(ctx, t.c, scanID, `SELECT id FROM notification_requests
			WHERE workspace_id = ? AND id IN `+in+` AND campaign_id IN
			(SELECT id FROM campaigns WHERE workspace_id = ? AND status = 'paused')`,
			append(append([]any{workspaceID}, part...), workspaceID)...)
		for _, id := range held {
			out[id] = true
		}
		return err
	})
	return out, err
}

func (t newsletterTx) LockQueuedCampaignRequests(ctx context.Context, workspaceID, id string) error {
	if !locksRows(t.c) {
		return nil
	}
	// A claim that took a queued request holds its row until it commits:
	// the lock waits for it, and the row, read again, is then processing
	// and no longer matches.
	var n int
	return t.c.QueryRow(ctx, `SELECT count(*) FROM (SELECT 1 FROM notification_requests
		WHERE workspace_id = ? AND campaign_id = ? AND status = 'queued' FOR UPDATE) AS q`, workspaceID, id).Scan(&n)
}

// locksRows says whether c's database takes row locks (SELECT ... FOR
// UPDATE): PostgreSQL does; SQLite has one writer at a time instead.
func locksRows(c Conn) bool {
	l, ok := c.(interface{ LocksRows() bool })
	return ok && l.LocksRows()
}

func (t newsletterTx) FindFailedRecipients(ctx context.Context, workspaceID, campaignID string) ([]*notify.FailedRecipient, error) {
	type pair struct{ req, sub string }
	pairs, err := queryAll(ctx, t.c, func(r Row) (pair, error) {
		var p pair
		return p, r.Scan(&p.req, &p.sub)
	}, `SELECT r.id, cr.subscriber_id FROM campaign_recipients cr JOIN notification_requests r ON r.id = cr.request_id
		WHERE cr.campaign_id = ? AND r.workspace_id = ? AND r.campaign_id = ? AND r.status = 'failed' ORDER BY r.id`,
		campaignID, workspaceID, campaignID)
	if err != nil || len(pairs) == 0 {
		return nil, err
	}
	subIDs := make([]string, len(pairs))
	for i, p := range pairs {
		subIDs[i] = p.sub
	}
	subs := map[string]*notify.Subscriber{}
	err = eachIn(subIDs, func(in string, part []any) error {
		list, err := queryAll(ctx, t.c, scanSubscriber, `SELECT `+subscriberCols+` FROM subscribers
			WHERE workspace_id = ? AND id IN `+in, append([]any{workspaceID}, part...)...)
		for _, s := range list {
			subs[s.ID] = s
		}
		return err
	})
	out := make([]*notify.FailedRecipient, len(pairs))
	for i, p := range pairs {
		out[i] = &notify.FailedRecipient{RequestID: p.req, Subscriber: subs[p.sub]}
	}
	return out, err
}

func (t newsletterTx) RequeueFailedRequests(ctx context.Context, workspaceID string, ids []string, budget int, now time.Time) (int, error) {
	if len(ids) == 0 {
		return 0, nil
	}
	// Dead letters, then job rows, then requests: the order of a
	// dead-letter replay, so the two never deadlock; a replay that took an
	// item first leaves its job queued and its request no longer failed,
	// and this call then moves neither.
	var jobIDs []string
	err := eachIn(ids, func(in string, part []any) error {
		args := append([]any{workspaceID}, part...)
		if _, err := t.c.Exec(ctx, `DELETE FROM dead_letters WHERE workspace_id = ? AND request_id IN `+in, args...); err != nil {
			return err
		}
		js, err := queryAll(ctx, t.c, scanID, `SELECT id FROM notification_jobs WHERE workspace_id = ? AND request_id IN `+in+`
			AND status IN ('failed', 'dead_letter') ORDER BY id`, args...)
		jobIDs = append(jobIDs, js...)
		return err
	})
	if err != nil || len(jobIDs) == 0 {
		return 0, err
	}
	qids, err := t.insertBatchJobs(ctx, len(jobIDs), notify.LaneBulk)
	if err != nil {
		return 0, err
	}
	rows := make([][]any, len(jobIDs))
	for i, id := range jobIDs {
		rows[i] = []any{id, workspaceID, qids[i/jobs.DispatchBatchMax], ms(now), budget}
	}
	// The attempt count goes on, so the next attempt has a number, and a
	// vendor idempotency key, of its own.
	var moved []string
	if err := t.updateFromValues(ctx, `UPDATE notification_jobs SET status = 'queued', queue_job_id = CAST(v.column3 AS BIGINT),
		queued_at = CAST(v.column4 AS BIGINT), max_attempts = notification_jobs.attempts_made + CAST(v.column5 AS INTEGER),
		started_at = NULL, finished_at = NULL, next_retry_at = NULL FROM `, rows,
		` AS v WHERE notification_jobs.id = v.column1 AND notification_jobs.workspace_id = v.column2
		AND notification_jobs.status IN ('failed', 'dead_letter') RETURNING notification_jobs.request_id`, func(r Rows) error {
			id, err := scanID(r)
			moved = append(moved, id)
			return err
		}); err != nil {
		return 0, err
	}
	n := 0
	err = eachIn(moved, func(in string, part []any) error {
		k, err := t.c.Exec(ctx, `UPDATE notification_requests SET status = 'queued', updated_at = ?, final_error_code = NULL,
			final_error_message = NULL WHERE workspace_id = ? AND id IN `+in+` AND status = 'failed'`,
			append([]any{ms(now), workspaceID}, part...)...)
		n += int(k)
		return err
	})
	return n, err
}
