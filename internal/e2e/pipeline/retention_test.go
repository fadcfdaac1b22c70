package pipeline_test

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/riverqueue/river"
	"github.com/stretchr/testify/require"

	"github.com/notifyd/notifyd/internal/notify"
	"github.com/notifyd/notifyd/internal/notifytest"
	"github.com/notifyd/notifyd/internal/store/sqlstore"
	"github.com/notifyd/notifyd/internal/worker"
)

// seedOld writes n terminal requests accepted at old (one millisecond
// apart), each with its job row and one attempt, and an audit entry of
// auditAt, in three statements: as a month of traffic would have left them.
func seedOld(t *testing.T, b *bundle, n int, old, auditAt time.Time) {
	t.Helper()
	ws, at := b.env.Workspace, old.UnixMilli()
	require.NoError(t, b.env.Daemon.DB.Update(ctx, func(tx notify.Tx) error {
		c := tx.(*sqlstore.Tx).Conn()
		seq := fmt.Sprintf(`WITH RECURSIVE seq(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM seq WHERE i < %d) `, n)
		status := `CASE WHEN i % 10 = 0 THEN 'failed' ELSE 'sent' END`
		for _, q := range []string{
			seq + `INSERT INTO notification_requests (id, workspace_id, source, channel, status, recipient_address, text,
				requested_at, updated_at) SELECT 'old-' || i, ?, 'api', 'sms', ` + status + `, '01012345678', 'old', CAST(? AS BIGINT) + i, CAST(? AS BIGINT) + i + 500 FROM seq`,
			seq + `INSERT INTO notification_jobs (id, workspace_id, request_id, queue_job_id, status, attempts_made, max_attempts, queued_at)
				SELECT 'oldjob-' || i, ?, 'old-' || i, 0, 'completed', 1, 3, CAST(? AS BIGINT) + i FROM seq`,
			seq + `INSERT INTO attempts (id, workspace_id, request_id, job_id, provider_account_id, provider_kind, provider_display_name,
				channel, status, started_at, finished_at, request_json, response_json)
				SELECT 'oldatt-' || i, ?, 'old-' || i, 'oldjob-' || i, 'p', 'vendora_sms', 'A', 'sms',
				CASE WHEN i % 10 = 0 THEN 'failure' ELSE 'success' END, CAST(? AS BIGINT) + i + 100, CAST(? AS BIGINT) + i + 200, '{}', '{}' FROM seq`,
		} {
			args := []any{ws, at, at}
			if strings.Count(q, "?") == 2 {
				args = args[:2]
			}
			if _, err := c.Exec(ctx, q, args...); err != nil {
				return err
			}
		}
		return tx.CreateAudit(ctx, &notify.AuditEntry{ID: "old-audit", WorkspaceID: ws, Action: "route.replace",
			TargetType: "route", TargetID: ws, CreatedAt: auditAt})
	}))
}

func count(t *testing.T, b *bundle, q string, args ...any) int {
	t.Helper()
	var n int
	require.NoError(t, b.env.Daemon.DB.View(ctx, func(tx notify.Tx) error {
		return tx.(*sqlstore.Tx).Conn().QueryRow(ctx, q, args...).Scan(&n)
	}))
	return n
}

// TestRetentionPurge: the retention job deletes a month-old backlog of
// 20,000 terminal requests (with their job rows and attempts) and the audit
// entries past a year, in short batches, while new sends keep arriving:
// every send is delivered, the recent data stays, /v1/metrics over the old
// hours counts the same before and after, and
// notifyd_retention_deleted_total counts what went.
func TestRetentionPurge(t *testing.T) {
	t.Parallel()
	// The test runs the purge itself. The daemon's own periodic purge
	// (run on start, 30 days by default) would take the same old rows
	// at the same time: each of two purges then meets a batch the other
	// emptied, takes it for the end, and stops with rows left.
	b := setup(t, notifytest.WithRetention(0, 0))
	p := b.env.SimProvider(t, "vendora_sms", "A", nil)
	notifytest.PutRoutes(t, b.env.Owner, notifytest.Route{Channel: "sms", ProviderAccountID: p, Priority: 1})

	const n = 20000
	old := time.Now().Add(-40 * 24 * time.Hour)
	seedOld(t, b, n, old, time.Now().Add(-400*24*time.Hour))
	recentAudit := count(t, b, `SELECT COUNT(*) FROM audit_logs WHERE id <> 'old-audit'`)
	require.Positive(t, recentAudit, "provider.create and route.replace")
	from := old.UTC().Truncate(time.Hour)
	q := "?" + url.Values{"from": {from.Format(time.RFC3339Nano)},
		"to": {from.Add(2*time.Hour - time.Millisecond).Format(time.RFC3339Nano)}}.Encode()
	before := b.metrics(t, q)
	require.Equal(t, n, before.TotalRequests)
	require.Equal(t, n, before.TotalAttempts)

	// The purge runs as the periodic job does, in runs of a short budget
	// that snooze while there is more.
	w := &worker.Retention{Service: b.env.Daemon.Rooms.Retention, Metrics: b.env.Daemon.Metrics.Retention,
		Policy: notify.Retention{Data: 30 * 24 * time.Hour, Audit: 365 * 24 * time.Hour, Budget: 300 * time.Millisecond}}
	purgeDone := make(chan struct{})
	runs := 0
	var purgeErr error
	go func() {
		defer close(purgeDone)
		for {
			runs++
			err := w.Work(ctx, nil)
			var snooze *river.JobSnoozeError
			if !errors.As(err, &snooze) {
				purgeErr = err
				return
			}
		}
	}()

	// Sends keep arriving while the purge runs, and a while after.
	var mu sync.Mutex
	var ids []string
	var wg sync.WaitGroup
	sendCtx, stop := context.WithCancel(ctx)
	for g := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			// At most 120 each: the key's default request limit is 600 a
			// minute.
			for i := 0; i < 120 && sendCtx.Err() == nil; i++ {
				out := notifytest.Send(t, b.key, notifytest.SMS("0101234"+fmt.Sprintf("%04d", i), fmt.Sprintf("g%d #%d", g, i)))
				mu.Lock()
				ids = append(ids, out.RequestID)
				mu.Unlock()
				time.Sleep(5 * time.Millisecond)
			}
		}()
	}
	<-purgeDone
	mu.Lock()
	duringPurge := len(ids)
	mu.Unlock()
	time.Sleep(200 * time.Millisecond)
	stop()
	wg.Wait()
	require.NoError(t, purgeErr)
	require.Positive(t, duringPurge, "sends were accepted while the purge ran")
	t.Logf("purge: %d runs; %d sends accepted during it, %d in all", runs, duringPurge, len(ids))

	// Delivered, all of them (read from the database: status lookups
	// would count against the key's request limit).
	deadline := time.Now().Add(30 * time.Second)
	for count(t, b, `SELECT COUNT(*) FROM notification_requests WHERE status = 'sent' AND id NOT LIKE 'old-%'`) < len(ids) {
		require.True(t, time.Now().Before(deadline), "not all sends delivered")
		time.Sleep(50 * time.Millisecond)
	}
	require.Equal(t, "sent", notifytest.Lookup(t, b.key, ids[len(ids)-1]).Status)
	require.Zero(t, count(t, b, `SELECT COUNT(*) FROM notification_requests WHERE id LIKE 'old-%'`))
	require.Zero(t, count(t, b, `SELECT COUNT(*) FROM notification_jobs WHERE id LIKE 'oldjob-%'`))
	require.Zero(t, count(t, b, `SELECT COUNT(*) FROM attempts WHERE id LIKE 'oldatt-%'`))
	require.Equal(t, len(ids), count(t, b, `SELECT COUNT(*) FROM notification_requests`), "the recent requests stay")
	require.Zero(t, count(t, b, `SELECT COUNT(*) FROM audit_logs WHERE id = 'old-audit'`))
	require.Equal(t, recentAudit, count(t, b, `SELECT COUNT(*) FROM audit_logs`))

	require.Equal(t, before, b.metrics(t, q), "the old hours count the same after the purge")
	reg := b.env.Daemon.Metrics.Registry
	for table, want := range map[string]float64{"notification_requests": n, "notification_jobs": n, "attempts": n, "audit_logs": 1} {
		require.Equal(t, want, notifytest.Counter(t, reg, "notifyd_retention_deleted_total", map[string]string{"table": table}), table)
	}
}

// TestRetentionJobRuns: the daemon registers the retention job as a
// periodic job run at start, and its worker completes it.
func TestRetentionJobRuns(t *testing.T) {
	t.Parallel()
	b := setup(t)
	deadline := time.Now().Add(20 * time.Second)
	for count(t, b, `SELECT COUNT(*) FROM river_job WHERE kind = 'retention' AND state = 'completed'`) == 0 {
		require.True(t, time.Now().Before(deadline), "no completed retention job")
		time.Sleep(50 * time.Millisecond)
	}
}
