package sqlstore

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/notifyd/notifyd/internal/notify"
)

// TakeCapRoom keeps the pair's sliding log in one row: the upsert takes
// the row's lock (a no-op update of an existing row, as LockRateCount
// does; SQLite's write transaction is exclusive anyway) and reads the
// log, which is pruned of sends out of the window and, when there is
// room, given now, then written back under the same lock.
func (t preferenceTx) TakeCapRoom(ctx context.Context, workspaceID, recipientID, categoryID string, max int,
	window time.Duration, now time.Time) (bool, time.Time, error) {
	if max < 1 {
		return false, time.Time{}, fmt.Errorf("a frequency cap of %d sends", max)
	}
	var raw string
	if err := t.c.QueryRow(ctx, `INSERT INTO frequency_cap_log (workspace_id, recipient_id, category_id, sent_at)
		VALUES (?, ?, ?, '[]')
		ON CONFLICT (workspace_id, recipient_id, category_id) DO UPDATE SET sent_at = frequency_cap_log.sent_at
		RETURNING sent_at`, workspaceID, recipientID, categoryID).Scan(&raw); err != nil {
		return false, time.Time{}, err
	}
	log, err := capLog(raw)
	if err != nil {
		return false, time.Time{}, err
	}
	kept, ok, until := notify.CapRoom(log, max, window, now)
	if ok {
		kept = append(kept, now)
	}
	stored := make([]int64, len(kept))
	for i, s := range kept {
		stored[i] = ms(s)
	}
	var last int64
	if len(stored) > 0 {
		last = stored[len(stored)-1]
	}
	if _, err := t.c.Exec(ctx, `UPDATE frequency_cap_log SET sent_at = ?, last_at = ?
		WHERE workspace_id = ? AND recipient_id = ? AND category_id = ?`, toJSON(stored), last, workspaceID, recipientID,
		categoryID); err != nil {
		return false, time.Time{}, err
	}
	return ok, until, nil
}

// capLog decodes a stored log (unix milliseconds) in time order:
// processes' clocks may differ by a little.
func capLog(raw string) ([]time.Time, error) {
	var log []int64
	if err := fromJSON(raw, &log); err != nil {
		return nil, err
	}
	slices.Sort(log)
	out := make([]time.Time, len(log))
	for i, s := range log {
		out[i] = fromMs(s)
	}
	return out, nil
}

func (t preferenceTx) FindCapLog(ctx context.Context, workspaceID, recipientID, categoryID string) ([]time.Time, error) {
	var raw string
	err := t.c.QueryRow(ctx, `SELECT sent_at FROM frequency_cap_log WHERE workspace_id = ? AND recipient_id = ? AND category_id = ?`,
		workspaceID, recipientID, categoryID).Scan(&raw)
	if notify.IsNotFound(err) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return capLog(raw)
}

// DeleteCapLogs deletes the logs whose newest counted send is before
// before (rows of pairs no longer sent to).
func (t preferenceTx) DeleteCapLogs(ctx context.Context, before time.Time) (int, error) {
	n, err := t.c.Exec(ctx, `DELETE FROM frequency_cap_log WHERE last_at < ?`, ms(before))
	return int(n), err
}
