package sqlstore

import (
	"context"
	"strings"
	"time"

	"github.com/riverqueue/river"

	"github.com/notifyd/notifyd/internal/jobs"
	"github.com/notifyd/notifyd/internal/notify"
)

const webhookCols = `id, workspace_id, url, events, enabled, secret_enc, previous_secret_enc, previous_secret_expires_at, created_at, updated_at`

func (t webhookTx) CreateWebhook(ctx context.Context, w *notify.Webhook) error {
	_, err := t.c.Exec(ctx, `INSERT INTO webhooks (`+webhookCols+`) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		w.ID, w.WorkspaceID, w.URL, toJSON(w.Events), w.Enabled, w.SecretEnc, nullable(w.PreviousSecretEnc),
		msPtr(w.PreviousExpiresAt), ms(w.CreatedAt), ms(w.UpdatedAt))
	return err
}

func scanWebhook(r Row) (*notify.Webhook, error) {
	var w notify.Webhook
	var events string
	var prev *string
	var prevExp *int64
	var c, u int64
	if err := r.Scan(&w.ID, &w.WorkspaceID, &w.URL, &events, &w.Enabled, &w.SecretEnc, &prev, &prevExp, &c, &u); err != nil {
		return nil, err
	}
	if err := fromJSON(events, &w.Events); err != nil {
		return nil, err
	}
	w.PreviousSecretEnc, w.PreviousExpiresAt, w.CreatedAt, w.UpdatedAt = str(prev), fromMsPtr(prevExp), fromMs(c), fromMs(u)
	return &w, nil
}

func (t webhookTx) FindWebhook(ctx context.Context, workspaceID, id string) (*notify.Webhook, error) {
	return scanWebhook(t.c.QueryRow(ctx, `SELECT `+webhookCols+` FROM webhooks WHERE workspace_id = ? AND id = ?`, workspaceID, id))
}

func (t webhookTx) FindWebhooks(ctx context.Context, workspaceID string) ([]*notify.Webhook, error) {
	return queryAll(ctx, t.c, scanWebhook, `SELECT `+webhookCols+` FROM webhooks WHERE workspace_id = ? ORDER BY created_at, id`, workspaceID)
}

func (t webhookTx) UpdateWebhook(ctx context.Context, w *notify.Webhook) error {
	return expectOne(t.c.Exec(ctx, `UPDATE webhooks SET url = ?, events = ?, enabled = ?, secret_enc = ?, previous_secret_enc = ?,
		previous_secret_expires_at = ?, updated_at = ? WHERE workspace_id = ? AND id = ?`,
		w.URL, toJSON(w.Events), w.Enabled, w.SecretEnc, nullable(w.PreviousSecretEnc), msPtr(w.PreviousExpiresAt),
		ms(w.UpdatedAt), w.WorkspaceID, w.ID))
}

// DeleteWebhook removes the endpoint with its deliveries and tries; queue
// jobs still pending find no delivery and end.
func (t webhookTx) DeleteWebhook(ctx context.Context, workspaceID, id string) error {
	if _, err := t.c.Exec(ctx, `DELETE FROM webhook_tries WHERE delivery_id IN
		(SELECT id FROM webhook_deliveries WHERE workspace_id = ? AND webhook_id = ?)`, workspaceID, id); err != nil {
		return err
	}
	if _, err := t.c.Exec(ctx, `DELETE FROM webhook_deliveries WHERE workspace_id = ? AND webhook_id = ?`, workspaceID, id); err != nil {
		return err
	}
	return expectOne(t.c.Exec(ctx, `DELETE FROM webhooks WHERE workspace_id = ? AND id = ?`, workspaceID, id))
}

func (t webhookTx) PendingEvents(ctx context.Context, limit int) ([]*notify.OutboxEvent, error) {
	return queryAll(ctx, t.c, func(r Row) (*notify.OutboxEvent, error) {
		var e notify.OutboxEvent
		var c int64
		if err := r.Scan(&e.ID, &e.WorkspaceID, &e.Type, &e.RequestID, &e.PayloadJSON, &c); err != nil {
			return nil, err
		}
		e.CreatedAt = fromMs(c)
		return &e, nil
	}, `SELECT id, workspace_id, type, request_id, payload, created_at FROM events WHERE dispatched_at IS NULL
		ORDER BY created_at, id LIMIT ?`, limit)
}

func (t webhookTx) MarkEventsDispatched(ctx context.Context, ids []string, at time.Time) error {
	if len(ids) == 0 {
		return nil
	}
	args := make([]any, 0, len(ids)+1)
	args = append(args, ms(at))
	for _, id := range ids {
		args = append(args, id)
	}
	_, err := t.c.Exec(ctx, `UPDATE events SET dispatched_at = ? WHERE id IN (?`+strings.Repeat(", ?", len(ids)-1)+`)`, args...)
	return err
}

const deliveryCols = `id, workspace_id, webhook_id, event_id, event_type, request_id, body, status, attempts, run_attempts,
	queue_job_id, next_attempt_at, last_http_status, last_error, created_at, updated_at, finished_at`

// insertDeliveryJob queues the delivery's job on this transaction.
func (t webhookTx) insertDeliveryJob(ctx context.Context, d *notify.WebhookDelivery) error {
	ids, err := t.c.InsertJobs(ctx, []river.InsertManyParams{{
		Args:       jobs.WebhookDelivery{DeliveryID: d.ID, WorkspaceID: d.WorkspaceID},
		InsertOpts: &river.InsertOpts{Queue: jobs.QueueWebhooks, MaxAttempts: jobs.WebhookDeliveryMaxAttempts},
	}})
	if err != nil {
		return err
	}
	d.QueueJobID = ids[0]
	return nil
}

func (t webhookTx) CreateWebhookDelivery(ctx context.Context, d *notify.WebhookDelivery) (bool, error) {
	// The job id is filled in after the insert: a duplicate (the relay ran
	// twice for an event) must not leave a job behind.
	n, err := t.c.Exec(ctx, `INSERT INTO webhook_deliveries (`+deliveryCols+`)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (webhook_id, event_id) DO NOTHING`,
		d.ID, d.WorkspaceID, d.WebhookID, d.EventID, d.EventType, d.RequestID, d.Body, d.Status, d.Attempts, d.RunAttempts,
		0, msPtr(d.NextAttemptAt), d.LastHTTPStatus, nullable(d.LastError), ms(d.CreatedAt), ms(d.UpdatedAt), msPtr(d.FinishedAt))
	if err != nil || n == 0 {
		return false, err
	}
	if err := t.insertDeliveryJob(ctx, d); err != nil {
		return false, err
	}
	_, err = t.c.Exec(ctx, `UPDATE webhook_deliveries SET queue_job_id = ? WHERE id = ?`, d.QueueJobID, d.ID)
	return err == nil, err
}

func scanDelivery(r Row) (*notify.WebhookDelivery, error) {
	var d notify.WebhookDelivery
	var next, fin *int64
	var status *int64
	var lastErr *string
	var c, u int64
	if err := r.Scan(&d.ID, &d.WorkspaceID, &d.WebhookID, &d.EventID, &d.EventType, &d.RequestID, &d.Body, &d.Status,
		&d.Attempts, &d.RunAttempts, &d.QueueJobID, &next, &status, &lastErr, &c, &u, &fin); err != nil {
		return nil, err
	}
	if status != nil {
		v := int(*status)
		d.LastHTTPStatus = &v
	}
	d.NextAttemptAt, d.LastError, d.CreatedAt, d.UpdatedAt, d.FinishedAt = fromMsPtr(next), str(lastErr), fromMs(c), fromMs(u), fromMsPtr(fin)
	return &d, nil
}

func (t webhookTx) FindWebhookDelivery(ctx context.Context, workspaceID, id string) (*notify.WebhookDelivery, error) {
	return scanDelivery(t.c.QueryRow(ctx, `SELECT `+deliveryCols+` FROM webhook_deliveries WHERE workspace_id = ? AND id = ?`, workspaceID, id))
}

// FindWebhookDeliveries pages a webhook's deliveries newest first, each
// with its tries (oldest first).
func (t webhookTx) FindWebhookDeliveries(ctx context.Context, workspaceID, webhookID string, f notify.DeliveryFilter) ([]*notify.WebhookDelivery, error) {
	where := `workspace_id = ? AND webhook_id = ?`
	args := []any{workspaceID, webhookID}
	if f.Before != nil {
		where += ` AND (created_at < ? OR (created_at = ? AND id < ?))`
		args = append(args, ms(f.Before.At), ms(f.Before.At), f.Before.ID)
	}
	args = append(args, f.Limit)
	ds, err := queryAll(ctx, t.c, scanDelivery, `SELECT `+deliveryCols+` FROM webhook_deliveries WHERE `+where+`
		ORDER BY created_at DESC, id DESC LIMIT ?`, args...)
	if err != nil || len(ds) == 0 {
		return ds, err
	}
	byID := make(map[string]*notify.WebhookDelivery, len(ds))
	in := make([]any, 0, len(ds))
	for _, d := range ds {
		byID[d.ID] = d
		d.Tries = []*notify.WebhookTry{}
		in = append(in, d.ID)
	}
	tries, err := queryAll(ctx, t.c, scanTry, `SELECT `+tryCols+` FROM webhook_tries WHERE delivery_id IN (?`+
		strings.Repeat(", ?", len(in)-1)+`) ORDER BY attempt, created_at, id`, in...)
	if err != nil {
		return nil, err
	}
	for _, tr := range tries {
		d := byID[tr.DeliveryID]
		d.Tries = append(d.Tries, tr)
	}
	return ds, nil
}

func (t webhookTx) UpdateWebhookDelivery(ctx context.Context, d *notify.WebhookDelivery, requeue bool) error {
	if requeue {
		if err := t.c.CancelJob(ctx, d.QueueJobID); err != nil {
			return err
		}
		if err := t.insertDeliveryJob(ctx, d); err != nil {
			return err
		}
	}
	return expectOne(t.c.Exec(ctx, `UPDATE webhook_deliveries SET status = ?, attempts = ?, run_attempts = ?, queue_job_id = ?,
		next_attempt_at = ?, last_http_status = ?, last_error = ?, updated_at = ?, finished_at = ? WHERE workspace_id = ? AND id = ?`,
		d.Status, d.Attempts, d.RunAttempts, d.QueueJobID, msPtr(d.NextAttemptAt), d.LastHTTPStatus, nullable(d.LastError),
		ms(d.UpdatedAt), msPtr(d.FinishedAt), d.WorkspaceID, d.ID))
}

const tryCols = `id, delivery_id, attempt, http_status, error, duration_ms, response_excerpt, created_at`

func scanTry(r Row) (*notify.WebhookTry, error) {
	var tr notify.WebhookTry
	var status *int64
	var e, resp *string
	var c int64
	if err := r.Scan(&tr.ID, &tr.DeliveryID, &tr.Attempt, &status, &e, &tr.DurationMS, &resp, &c); err != nil {
		return nil, err
	}
	if status != nil {
		v := int(*status)
		tr.HTTPStatus = &v
	}
	tr.Error, tr.Response, tr.CreatedAt = str(e), str(resp), fromMs(c)
	return &tr, nil
}

func (t webhookTx) CreateWebhookTry(ctx context.Context, workspaceID string, tr *notify.WebhookTry) error {
	_, err := t.c.Exec(ctx, `INSERT INTO webhook_tries (id, workspace_id, delivery_id, attempt, http_status, error, duration_ms,
		response_excerpt, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`, tr.ID, workspaceID, tr.DeliveryID, tr.Attempt,
		tr.HTTPStatus, nullable(tr.Error), tr.DurationMS, nullable(tr.Response), ms(tr.CreatedAt))
	return err
}

func (t webhookTx) LockWebhookDelivery(ctx context.Context, workspaceID, id string) error {
	return expectOne(t.c.Exec(ctx, `UPDATE webhook_deliveries SET updated_at = updated_at WHERE workspace_id = ? AND id = ?`, workspaceID, id))
}

func (t webhookTx) PruneWebhookHistory(ctx context.Context, eventsBefore, deliveriesBefore time.Time, limit int) (int, int, error) {
	ev, err := t.c.Exec(ctx, `DELETE FROM events WHERE id IN (SELECT id FROM events
		WHERE dispatched_at IS NOT NULL AND dispatched_at < ? LIMIT ?)`, ms(eventsBefore), limit)
	if err != nil {
		return 0, 0, err
	}
	// Tries go with their deliveries (ON DELETE CASCADE).
	dv, err := t.c.Exec(ctx, `DELETE FROM webhook_deliveries WHERE id IN (SELECT id FROM webhook_deliveries
		WHERE finished_at IS NOT NULL AND finished_at < ? LIMIT ?)`, ms(deliveriesBefore), limit)
	if err != nil {
		return 0, 0, err
	}
	return int(ev), int(dv), nil
}
