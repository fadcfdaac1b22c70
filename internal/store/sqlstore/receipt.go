package sqlstore

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/riverqueue/river"

	"github.com/notifyd/notifyd/internal/jobs"
	"github.com/notifyd/notifyd/internal/notify"
)

const receiptCols = `attempt_id, workspace_id, request_id, provider_account_id, provider_kind, provider_message_id, recipient,
	channel, fallback_step, status, code, text, reported_at, polls, created_at, deadline, fell_back`

func (t requestTx) CreateReceipts(ctx context.Context, rs []*notify.Receipt, polled []bool, firstPoll time.Duration) error {
	if len(rs) == 0 {
		return nil
	}
	rows := make([][]any, len(rs))
	var params []river.InsertManyParams
	for i, r := range rs {
		rows[i] = []any{r.AttemptID, r.WorkspaceID, r.RequestID, r.ProviderAccountID, r.ProviderKind, r.ProviderMessageID,
			r.Recipient, string(r.Channel), r.FallbackStep, r.Status, r.Code, r.Text, msPtr(r.ReportedAt), r.Polls,
			ms(r.CreatedAt), ms(r.Deadline), r.FellBack}
		if polled[i] && r.Status == notify.ReceiptPending {
			// The queue keeps real time whatever the service clock says.
			params = append(params, river.InsertManyParams{
				Args: jobs.ReceiptPoll{WorkspaceID: r.WorkspaceID, AttemptID: r.AttemptID},
				InsertOpts: &river.InsertOpts{Queue: jobs.QueueReceipts, MaxAttempts: jobs.ReceiptPollMaxAttempts,
					ScheduledAt: time.Now().Add(firstPoll)},
			})
		}
	}
	cols := strings.Split(strings.Join(strings.Fields(receiptCols), ""), ",")
	if err := t.insertRows(ctx, "delivery_receipts", cols, rows, 500); err != nil {
		return err
	}
	if len(params) == 0 {
		return nil
	}
	_, err := t.c.InsertJobs(ctx, params)
	return err
}

func scanReceipt(r Row) (*notify.Receipt, error) {
	var s receiptScan
	if err := r.Scan(s.dests()...); err != nil {
		return nil, err
	}
	return s.receipt(), nil
}

// receiptScan holds the columns of receiptCols as scanned (dests, then
// receipt), so a row may carry other columns after them.
type receiptScan struct {
	rc                notify.Receipt
	ch                string
	reported          *int64
	created, deadline int64
}

func (s *receiptScan) dests() []any {
	rc := &s.rc
	return []any{&rc.AttemptID, &rc.WorkspaceID, &rc.RequestID, &rc.ProviderAccountID, &rc.ProviderKind, &rc.ProviderMessageID,
		&rc.Recipient, &s.ch, &rc.FallbackStep, &rc.Status, &rc.Code, &rc.Text, &s.reported, &rc.Polls, &s.created, &s.deadline, &rc.FellBack}
}

func (s *receiptScan) receipt() *notify.Receipt {
	rc := s.rc
	rc.Channel, rc.ReportedAt, rc.CreatedAt, rc.Deadline = notify.Channel(s.ch), fromMsPtr(s.reported), fromMs(s.created), fromMs(s.deadline)
	return &rc
}

func (t requestTx) FindReceipt(ctx context.Context, workspaceID, attemptID string) (*notify.Receipt, error) {
	return scanReceipt(t.c.QueryRow(ctx, `SELECT `+receiptCols+` FROM delivery_receipts WHERE workspace_id = ? AND attempt_id = ?`,
		workspaceID, attemptID))
}

func (t requestTx) FindReceiptByMessage(ctx context.Context, kind, messageID string) (*notify.Receipt, error) {
	return scanReceipt(t.c.QueryRow(ctx, `SELECT `+receiptCols+` FROM delivery_receipts WHERE provider_kind = ? AND provider_message_id = ?
		ORDER BY created_at DESC LIMIT 1`, kind, messageID))
}

func (t requestTx) FindReceiptsOfRequest(ctx context.Context, workspaceID, requestID string) ([]*notify.Receipt, error) {
	return queryAll(ctx, t.c, scanReceipt, `SELECT `+receiptCols+` FROM delivery_receipts WHERE workspace_id = ? AND request_id = ?
		ORDER BY created_at, attempt_id`, workspaceID, requestID)
}

func (t requestTx) SettleReceipt(ctx context.Context, r *notify.Receipt) (bool, error) {
	n, err := t.c.Exec(ctx, `UPDATE delivery_receipts SET status = ?, code = ?, text = ?, reported_at = ?
		WHERE workspace_id = ? AND attempt_id = ? AND status = ?`,
		r.Status, r.Code, r.Text, msPtr(r.ReportedAt), r.WorkspaceID, r.AttemptID, notify.ReceiptPending)
	return n == 1, err
}

// settleByMessagesPG is SettleReceiptsOfMessages in one statement of n
// reports: for each (the VALUES rows, numbered by i), the newest receipt
// of its message, updated only while pending and while its request
// exists, returned with the report's number, its request's row and the
// event lists of its workspace's webhooks. n is a power of two (unused
// rows are NULL and match nothing), so there are few statement texts,
// and each is prepared once and runs its generic plan: a VALUES list's
// rows are counted in that plan, where arrays' unnest (100 rows to the
// planner) made PostgreSQL plan every call again (1.3 ms of planning a
// call under load, more than the statement itself).
func settleByMessagesPG(n int) string {
	row := `(?::bigint, ?::text, ?::text, ?::text, ?::text, ?::text, ?::bigint)`
	return `WITH v (i, kind, mid, status, code, text, rat) AS (VALUES ` + row + strings.Repeat(", "+row, n-1) + `),
	rc AS (SELECT v.i, n.workspace_id, n.attempt_id FROM v CROSS JOIN LATERAL (SELECT workspace_id, attempt_id FROM delivery_receipts
		WHERE provider_kind = v.kind AND provider_message_id = v.mid ORDER BY created_at DESC LIMIT 1) n),
	s AS (UPDATE delivery_receipts d SET status = v.status, code = v.code, text = v.text, reported_at = v.rat
		FROM rc JOIN v ON v.i = rc.i WHERE d.workspace_id = rc.workspace_id AND d.attempt_id = rc.attempt_id AND d.status = ?
		AND EXISTS (SELECT 1 FROM notification_requests q WHERE q.workspace_id = d.workspace_id AND q.id = d.request_id)
		RETURNING ` + prefixCols("d.", receiptCols) + `, rc.i)
	SELECT s.*, ` + prefixCols("r.", requestCols) + `,
		ARRAY(SELECT w.events FROM webhooks w WHERE w.workspace_id = s.workspace_id ORDER BY w.created_at, w.id) FROM s
		JOIN notification_requests r ON r.workspace_id = s.workspace_id AND r.id = s.request_id`
}

// settleChunk bounds the reports of one settleByMessagesPG statement.
const settleChunk = 128

func (t requestTx) SettleReceiptOfMessage(ctx context.Context, kind, messageID string, c *notify.Receipt) (*notify.SettledReceipt, error) {
	out, err := t.SettleReceiptsOfMessages(ctx, []notify.MessageReport{{Kind: kind, MessageID: messageID, C: c}})
	if err != nil {
		return nil, err
	}
	return out[0], nil
}

func (t requestTx) SettleReceiptsOfMessages(ctx context.Context, reps []notify.MessageReport) ([]*notify.SettledReceipt, error) {
	out := make([]*notify.SettledReceipt, len(reps))
	if len(reps) == 0 {
		return out, nil
	}
	if !locksRows(t.c) {
		for i, r := range reps {
			st, err := t.settleOfMessage(ctx, r.Kind, r.MessageID, r.C)
			if err != nil {
				return nil, err
			}
			out[i] = st
		}
		return out, nil
	}
	for from := 0; from < len(reps); from += settleChunk {
		if err := t.settleChunkPG(ctx, reps[from:min(len(reps), from+settleChunk)], out[from:]); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// settleChunkPG settles reps (at most settleChunk) in one statement,
// answering into out.
func (t requestTx) settleChunkPG(ctx context.Context, reps []notify.MessageReport, out []*notify.SettledReceipt) error {
	n := 1
	for n < len(reps) {
		n *= 2
	}
	args := make([]any, 0, 7*n+1)
	for i, r := range reps {
		args = append(args, i+1, r.Kind, r.MessageID, r.C.Status, r.C.Code, r.C.Text, msPtr(r.C.ReportedAt))
	}
	for range n - len(reps) {
		args = append(args, nil, nil, nil, nil, nil, nil, nil)
	}
	args = append(args, notify.ReceiptPending)
	rows, err := t.c.Query(ctx, settleByMessagesPG(n), args...)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		var rs receiptScan
		var qs requestScan
		var i int64
		var hooks []string
		if err := rows.Scan(append(append(append(rs.dests(), &i), qs.dests()...), &hooks)...); err != nil {
			return err
		}
		if i < 1 || int(i) > len(reps) {
			return fmt.Errorf("settle receipts: report number %d of %d", i, len(reps))
		}
		st := &notify.SettledReceipt{Receipt: rs.receipt(), Hooks: make([][]string, len(hooks))}
		if st.Request, err = qs.request(); err != nil {
			return err
		}
		for j, h := range hooks {
			if err := fromJSON(h, &st.Hooks[j]); err != nil {
				return err
			}
		}
		out[i-1] = st
	}
	return rows.Err()
}

// settleOfMessage is SettleReceiptOfMessage on SQLite (one writer): the
// same steps as statements of their own.
func (t requestTx) settleOfMessage(ctx context.Context, kind, messageID string, c *notify.Receipt) (*notify.SettledReceipt, error) {
	rc, err := t.FindReceiptByMessage(ctx, kind, messageID)
	if errors.Is(err, notify.ErrNotFound) {
		return nil, nil
	}
	if err != nil || rc.Final() {
		return nil, err
	}
	r, err := t.FindRequest(ctx, rc.WorkspaceID, rc.RequestID)
	if errors.Is(err, notify.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	rc.Status, rc.Code, rc.Text, rc.ReportedAt = c.Status, c.Code, c.Text, c.ReportedAt
	if ok, err := t.SettleReceipt(ctx, rc); err != nil || !ok {
		return nil, err
	}
	ws, err := webhookTx(t).FindWebhooks(ctx, rc.WorkspaceID)
	if err != nil {
		return nil, err
	}
	out := &notify.SettledReceipt{Receipt: rc, Request: r, Hooks: make([][]string, len(ws))}
	for i, w := range ws {
		out.Hooks[i] = w.Events
	}
	return out, nil
}

func (t requestTx) CountReceiptPoll(ctx context.Context, workspaceID, attemptID string) error {
	_, err := t.c.Exec(ctx, `UPDATE delivery_receipts SET polls = polls + 1 WHERE workspace_id = ? AND attempt_id = ?`,
		workspaceID, attemptID)
	return err
}

func (t requestTx) MarkReceiptFellBack(ctx context.Context, workspaceID, attemptID string) (bool, error) {
	n, err := t.c.Exec(ctx, `UPDATE delivery_receipts SET fell_back = ? WHERE workspace_id = ? AND attempt_id = ? AND fell_back = ?`,
		true, workspaceID, attemptID, false)
	return n == 1, err
}

// earlyReportKeep is how long a report about an unknown message is kept:
// a send's record lands within seconds, so an older one was never ours.
const earlyReportKeep = 7 * 24 * time.Hour

func (t requestTx) PutEarlyReport(ctx context.Context, kind, messageID string, rep *notify.VendorReport, now time.Time) error {
	if _, err := t.c.Exec(ctx, `DELETE FROM early_delivery_reports WHERE created_at < ?`, ms(now.Add(-earlyReportKeep))); err != nil {
		return err
	}
	_, err := t.c.Exec(ctx, `INSERT INTO early_delivery_reports (provider_kind, provider_message_id, status, code, text, reported_at, created_at)
		VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT (provider_kind, provider_message_id, status) DO NOTHING`,
		kind, messageID, rep.Status, rep.Code, rep.Text, ms(rep.At), ms(now))
	return err
}

// earlyChunk bounds the ids of one early-report statement (parameter
// limits; a write may record thousands of e-mails).
const earlyChunk = 500

func (t requestTx) TakeEarlyReports(ctx context.Context, kind string, messageIDs []string) (map[string]*notify.VendorReport, error) {
	out := map[string]*notify.VendorReport{}
	for len(messageIDs) > 0 {
		part := messageIDs[:min(len(messageIDs), earlyChunk)]
		messageIDs = messageIDs[len(part):]
		if err := t.takeEarly(ctx, kind, part, out); err != nil {
			return nil, err
		}
	}
	return out, nil
}

type earlyRow struct {
	id  string
	rep notify.VendorReport
}

func (t requestTx) takeEarly(ctx context.Context, kind string, messageIDs []string, out map[string]*notify.VendorReport) error {
	args := []any{kind}
	for _, id := range messageIDs {
		args = append(args, id)
	}
	in := `(?` + strings.Repeat(", ?", len(messageIDs)-1) + `)`
	list, err := queryAll(ctx, t.c, func(r Row) (earlyRow, error) {
		var e earlyRow
		var at int64
		err := r.Scan(&e.id, &e.rep.Status, &e.rep.Code, &e.rep.Text, &at)
		e.rep.At = fromMs(at)
		return e, err
	}, `SELECT provider_message_id, status, code, text, reported_at FROM early_delivery_reports
		WHERE provider_kind = ? AND provider_message_id IN `+in+` ORDER BY reported_at`, args...)
	if err != nil || len(list) == 0 {
		return err
	}
	if _, err := t.c.Exec(ctx, `DELETE FROM early_delivery_reports WHERE provider_kind = ? AND provider_message_id IN `+in, args...); err != nil {
		return err
	}
	for _, e := range list {
		// A final report wins over an intermediate one; the first final
		// one (by the vendor's time) is the one applied.
		if prev, ok := out[e.id]; ok && prev.Status != notify.ReceiptPending {
			continue
		}
		rep := e.rep
		out[e.id] = &rep
	}
	return nil
}

// receiptStatus is a receipt's status as counts see it: pending past its
// deadline (the first ? is now) is unknown, as lookups show it.
const receiptStatus = `CASE WHEN status = 'pending' AND deadline <= ? THEN 'unknown' ELSE status END`

func (t requestTx) CountReceipts(ctx context.Context, workspaceID string, from, to, now time.Time, interval time.Duration) ([]notify.ReceiptCount, error) {
	// The bucket width is written as an integer literal (a whole number
	// of hours from the caller, never input), so both dialects compute
	// it in integers.
	width := strconv.FormatInt(interval.Milliseconds(), 10)
	scan := func(r Row) (notify.ReceiptCount, error) {
		var c notify.ReceiptCount
		var bucket int64
		var ch string
		err := r.Scan(&bucket, &ch, &c.ProviderAccountID, &c.ProviderKind, &c.Status, &c.N)
		c.Bucket, c.Channel = fromMs(bucket), notify.Channel(ch)
		return c, err
	}
	live, err := queryAll(ctx, t.c, scan, `SELECT created_at - created_at % `+width+`, channel, provider_account_id, provider_kind,
		`+receiptStatus+`, COUNT(*) FROM delivery_receipts WHERE workspace_id = ? AND created_at >= ? AND created_at <= ?
		GROUP BY 1, 2, 3, 4, 5`, ms(now), workspaceID, ms(from), ms(to))
	if err != nil {
		return nil, err
	}
	// Purged receipts, the hours wholly inside [from, to] (as the
	// activity rollup).
	purged, err := queryAll(ctx, t.c, scan, `SELECT bucket - bucket % `+width+`, channel, provider_account_id, provider_kind, status, SUM(n)
		FROM receipt_rollup WHERE workspace_id = ? AND bucket >= ? AND bucket <= ?
		GROUP BY 1, 2, 3, 4, 5`,
		workspaceID, ms(from), ms(to)-(hourMs-1))
	return append(live, purged...), err
}
