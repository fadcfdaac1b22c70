package sqlstore

import (
	"context"
	"fmt"
	"slices"
	"time"
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
	var log []int64
	if err := fromJSON(raw, &log); err != nil {
		return false, time.Time{}, err
	}
	// Processes' clocks may differ by a little: kept in time order.
	slices.Sort(log)
	// A send at s counts while s > now-window: it leaves at s+window.
	from := ms(now.Add(-window))
	kept := log[:0]
	for _, s := range log {
		if s > from {
			kept = append(kept, s)
		}
	}
	ok := len(kept) < max
	var until time.Time
	switch {
	case ok:
		kept = append(kept, ms(now))
	default:
		until = fromMs(kept[len(kept)-max]).Add(window)
	}
	if kept == nil {
		kept = []int64{}
	}
	var last int64
	if len(kept) > 0 {
		last = kept[len(kept)-1]
	}
	if _, err := t.c.Exec(ctx, `UPDATE frequency_cap_log SET sent_at = ?, last_at = ?
		WHERE workspace_id = ? AND recipient_id = ? AND category_id = ?`, toJSON(kept), last, workspaceID, recipientID,
		categoryID); err != nil {
		return false, time.Time{}, err
	}
	return ok, until, nil
}

// DeleteCapLogs deletes the logs whose newest counted send is before
// before (rows of pairs no longer sent to).
func (t preferenceTx) DeleteCapLogs(ctx context.Context, before time.Time) (int, error) {
	n, err := t.c.Exec(ctx, `DELETE FROM frequency_cap_log WHERE last_at < ?`, ms(before))
	return int(n), err
}
