package newsletter_test

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/notifyd/notifyd/internal/newsletter"
	"github.com/notifyd/notifyd/internal/notify"
	"github.com/notifyd/notifyd/internal/notifytest"
	"github.com/notifyd/notifyd/internal/store/sqlstore"
	"github.com/notifyd/notifyd/internal/usecase"
)

// hookStore calls hook once the retry has read the campaign's failed
// recipients and before it re-queues them.
type hookStore struct {
	notify.Store
	hook func()
}

func (h hookStore) Update(ctx context.Context, fn func(notify.Tx) error) error {
	return h.Store.Update(ctx, func(tx notify.Tx) error { return fn(hookTx{Tx: tx, hook: h.hook}) })
}

type hookTx struct {
	notify.Tx
	hook func()
}

func (h hookTx) FindFailedRecipients(ctx context.Context, workspaceID, campaignID string) ([]*notify.FailedRecipient, error) {
	out, err := h.Tx.FindFailedRecipients(ctx, workspaceID, campaignID)
	h.hook()
	return out, err
}

// TestCampaignRetryCountsAConcurrentReplay (issue 31, item 5): a dead-letter
// replay of one failed recipient's request commits while a retry of the
// campaign's failed recipients runs. The retry answers and audits that
// request as already re-queued (not as skipped, since its subscriber is
// still in the audience), and the recipient is mailed once. PostgreSQL
// only: on SQLite the retry holds the one writer, so the replay cannot
// commit in the middle of it.
func TestCampaignRetryCountsAConcurrentReplay(t *testing.T) {
	if os.Getenv(notifytest.EnvPostgres) == "" {
		t.Skip("the race needs two concurrent writers (PostgreSQL); SQLite has one")
	}
	t.Parallel()
	env := notifytest.StartDaemon(t, notifytest.WithQueueJobAttempts(1))
	campEmailRoute(t, env)
	const n = 40
	campImport(t, env, n, nil)
	holdFault(t, env, `{"kind":"mailx_email","status":500,"count":1}`) // retryable: dead letters
	o := env.Owner
	c := campCreate(t, o, map[string]any{"name": "n", "channel": "email", "subject": "s", "contentText": "t"})
	campSendIt(t, o, c.ID, nil)
	x := campWait(t, o, c.ID, 2*time.Minute, func(x campJSON) bool {
		return x.DeliveryStats["sent"]+x.DeliveryStats["failed"] == n
	})
	failed := x.DeliveryStats["failed"]
	require.GreaterOrEqual(t, failed, 2, "the refusals failed some mails (a batch call fails its batch)")

	ctx := context.Background()
	var jobID string
	require.NoError(t, env.Daemon.DB.View(ctx, func(tx notify.Tx) error {
		conn := tx.(interface{ Conn() sqlstore.Conn }).Conn()
		return conn.QueryRow(ctx, `SELECT d.job_id FROM dead_letters d JOIN notification_requests r ON r.id = d.request_id
			WHERE r.campaign_id = ? ORDER BY d.job_id LIMIT 1`, c.ID).Scan(&jobID)
	}))
	me := notifytest.Decode[struct {
		User struct {
			ID string `json:"id"`
		} `json:"user"`
	}](t, subDo(t, o, "GET", "/v1/me", nil, 200), 200)
	actor := &usecase.Actor{UserID: me.User.ID, WorkspaceID: env.Workspace, Role: notify.RoleOwner}

	// The replay commits, on a connection of its own, between the retry's
	// read of the failed recipients and its re-queue.
	replayed := false
	room := newsletter.New(newsletter.Options{Store: hookStore{Store: env.Daemon.DB, hook: func() {
		if replayed {
			return // a retried transaction reads again
		}
		replayed = true
		_, err := env.Daemon.Rooms.Sends.ReplayDeadLetter(ctx, actor, jobID)
		require.NoError(t, err)
	}}, JobAttempts: 1})
	res, err := room.RetryFailedCampaign(ctx, actor, c.ID)
	require.NoError(t, err)
	require.Equal(t, newsletter.CampaignRetryResult{CampaignID: c.ID, Status: "sending", Retried: failed - 1, Skipped: 0,
		AlreadyRequeued: 1}, *res)
	l := holdAudits(t, o, "campaign.retry")
	require.NotEmpty(t, l)
	require.EqualValues(t, 1, l[0]["alreadyRequeuedRequests"])
	require.EqualValues(t, 0, l[0]["skippedRequests"])

	// Whatever the vendor answers now (the refusal may have opened the
	// provider's circuit), no recipient gets the mail twice.
	x = campWait(t, o, c.ID, 2*time.Minute, func(x campJSON) bool { return x.Status == "sent" })
	require.Equal(t, n, x.DeliveryStats["sent"]+x.DeliveryStats["failed"])
	seen := map[string]int{}
	for _, m := range campMails(env) {
		seen[m.To]++
		require.Equal(t, 1, seen[m.To], "%s mailed twice", m.To)
	}
}
