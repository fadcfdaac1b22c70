package newsletter_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/notifyd/notifyd/client"
	"github.com/notifyd/notifyd/internal/notify"
	"github.com/notifyd/notifyd/internal/notifytest"
	"github.com/notifyd/notifyd/internal/store/sqlstore"
)

// Tests of campaign pause, resume and retry of failed recipients (issue
// 21, item 2; docs/DECISIONS.md). Helpers carry a hold prefix.

type holdAnswer struct {
	CampaignID       string `json:"campaignId"`
	Status           string `json:"status"`
	QueuedRequests   int    `json:"queuedRequests"`
	InFlightRequests int    `json:"inFlightRequests"`
}

type retryAnswer struct {
	CampaignID      string `json:"campaignId"`
	Status          string `json:"status"`
	RetriedRequests int    `json:"retriedRequests"`
	SkippedRequests int    `json:"skippedRequests"`
	// AlreadyRequeued: failed requests another action re-queued first.
	AlreadyRequeued int `json:"alreadyRequeuedRequests"`
}

func holdPost[T any](t *testing.T, c *client.Client, id, action string) T {
	t.Helper()
	r := subDo(t, c, "POST", "/v1/newsletter/campaigns/"+id+"/"+action, nil, http.StatusOK)
	return notifytest.Decode[T](t, r, http.StatusOK)
}

func holdFault(t *testing.T, env *notifytest.Env, body string) {
	t.Helper()
	resp, err := http.Post(env.SimURL+"/_sim/faults", "application/json", strings.NewReader(body))
	require.NoError(t, err)
	resp.Body.Close()
}

func holdAudits(t *testing.T, c *client.Client, action string) []map[string]any {
	t.Helper()
	r := subDo(t, c, "GET", "/v1/audit-logs?action="+action, nil, http.StatusOK)
	var logs struct {
		Logs []struct {
			TargetID string         `json:"targetId"`
			Payload  map[string]any `json:"payload"`
		} `json:"logs"`
	}
	require.NoError(t, r.Decode(&logs))
	var out []map[string]any
	for _, l := range logs.Logs {
		l.Payload["targetId"] = l.TargetID
		out = append(out, l.Payload)
	}
	return out
}

// TestCampaignPauseResume pauses a 5,000-subscriber campaign during its
// fan-out and dispatch (slow vendor): once the requests in flight have
// finished, nothing more is queued or sent while it is paused; after the
// resume every subscriber gets exactly one mail.
func TestCampaignPauseResume(t *testing.T) {
	t.Parallel()
	env := notifytest.StartDaemon(t)
	campEmailRoute(t, env)
	const n = 5000
	campImport(t, env, n, nil)
	// A slow vendor, and a dispatch limit that keeps dispatch behind the
	// fan-out (even under the race detector), so requests wait queued. A
	// campaign's run takes its messages when the limit pays them within
	// 10 s (delivery.admitBulk), so up to 10 s of the limit is in flight:
	// at 150/s that leaves most of the 5,000 queued at the pause.
	holdFault(t, env, `{"kind":"mailx_email","latencyMs":300,"count":100000}`)
	// The fan-out waits after its 6th batch (3,000 made) until the pause
	// is posted, so the pause lands mid fan-out however fast this machine
	// writes (on a quick one all 5,000 were made first; CI, stop 44).
	release := make(chan struct{})
	var releaseOnce sync.Once
	open := func() { releaseOnce.Do(func() { close(release) }) }
	t.Cleanup(open)
	env.Daemon.Rooms.Newsletter.SetFanoutFault(func(_ string, batch int) error {
		if batch == 6 {
			<-release
		}
		return nil
	})
	o := env.Owner
	subDo(t, o, "PUT", "/v1/limits/dispatch", map[string]any{"scope": "workspace", "ratePerSecond": 150}, http.StatusOK)
	c := campCreate(t, o, map[string]any{"name": "n", "channel": "email", "subject": "s", "contentText": "t"})
	campSendIt(t, o, c.ID, nil)
	// Mid fan-out, with more requests made than the slow vendor takes.
	campWait(t, o, c.ID, time.Minute, func(x campJSON) bool { return x.QueuedCount >= 3000 })

	p := holdPost[holdAnswer](t, o, c.ID, "pause")
	open()
	t.Logf("pause: %+v", p)
	require.Positive(t, p.QueuedRequests, "requests are held")
	require.Equal(t, holdAnswer{CampaignID: c.ID, Status: "paused", QueuedRequests: p.QueuedRequests,
		InFlightRequests: p.InFlightRequests}, p)
	x := campGet(t, o, c.ID)
	require.Equal(t, "paused", x.Status)
	require.Less(t, x.DeliveryStats["sent"]+x.DeliveryStats["processing"], n, "the pause came before the end")
	require.Equal(t, c.ID, campList(t, o, "?status=paused").byID(c.ID).ID, "the list filters by paused")
	// Wrong states while paused.
	campProblem(t, o, "POST", "/v1/newsletter/campaigns/"+c.ID+"/pause", nil, http.StatusConflict,
		"Campaign is paused; only a sending campaign can be paused")
	campProblem(t, o, "POST", "/v1/newsletter/campaigns/"+c.ID+"/retry-failed", nil, http.StatusConflict,
		"Campaign is paused; only a sent campaign can retry its failed recipients")
	campProblem(t, o, "POST", "/v1/newsletter/campaigns/"+c.ID+"/send", nil, http.StatusConflict, "")

	// The requests a run had taken before the pause finish; then nothing
	// moves, however long the campaign stays paused.
	held := campWait(t, o, c.ID, time.Minute, func(x campJSON) bool { return x.DeliveryStats["processing"] == 0 })
	time.Sleep(500 * time.Millisecond)
	held = campGet(t, o, c.ID)
	mails := len(campMails(env))
	for i := 0; i < 4; i++ {
		time.Sleep(500 * time.Millisecond)
		y := campGet(t, o, c.ID)
		require.Equal(t, "paused", y.Status)
		require.Equal(t, held.QueuedCount, y.QueuedCount, "the fan-out stays stopped")
		require.Equal(t, held.DeliveryStats, y.DeliveryStats, "no request moves while paused")
		require.Equal(t, mails, len(campMails(env)), "nothing is sent while paused")
	}
	require.Equal(t, held.DeliveryStats["sent"], mails)
	// The pause's in-flight count was true: every request a run had taken
	// ended (none waited on its dispatch limit and went back to the
	// queue), so the queued ones are the ones the pause answered.
	require.Equal(t, p.QueuedRequests, held.DeliveryStats["queued"], "in-flight requests finish; none is held back")
	require.Positive(t, held.DeliveryStats["queued"], "requests are held")
	require.Less(t, held.QueuedCount, n, "the fan-out is held")

	r := holdPost[holdAnswer](t, o, c.ID, "resume")
	require.Equal(t, "sending", r.Status)
	require.Equal(t, held.DeliveryStats["queued"], r.QueuedRequests)
	campProblem(t, o, "POST", "/v1/newsletter/campaigns/"+c.ID+"/resume", nil, http.StatusConflict,
		"Campaign is sending; only a paused campaign can be resumed")
	x = campWait(t, o, c.ID, 3*time.Minute, func(x campJSON) bool { return x.Status == "sent" })
	require.Equal(t, n, x.TotalRecipients)
	require.Equal(t, n, x.QueuedCount)
	require.Equal(t, n, x.DeliveryStats["sent"])
	campRequireUnique(t, env, n)

	pa, re := holdAudits(t, o, "campaign.pause"), holdAudits(t, o, "campaign.resume")
	require.Len(t, pa, 1)
	require.Len(t, re, 1)
	require.Equal(t, c.ID, pa[0]["targetId"])
	require.Equal(t, "paused", pa[0]["status"])
	require.EqualValues(t, r.QueuedRequests, re[0]["queuedRequests"])
}

// TestCampaignPauseBeforeFanout pauses a campaign whose fan-out has not
// run: the fan-out job waits, and the resume makes every request once.
func TestCampaignPauseBeforeFanout(t *testing.T) {
	t.Parallel()
	env := notifytest.StartDaemon(t)
	campEmailRoute(t, env)
	campImport(t, env, 1200, nil)
	release := make(chan struct{})
	t.Cleanup(func() {
		select {
		case <-release:
		default:
			close(release)
		}
	})
	env.Daemon.Rooms.Newsletter.SetFanoutFault(func(_ string, batch int) error {
		if batch == 1 {
			<-release // the pause lands between the first and second batch
		}
		return nil
	})
	o := env.Owner
	c := campCreate(t, o, map[string]any{"name": "n", "channel": "email", "subject": "s", "contentText": "t"})
	campSendIt(t, o, c.ID, nil)
	campWait(t, o, c.ID, 20*time.Second, func(x campJSON) bool { return x.QueuedCount == 500 })
	holdPost[holdAnswer](t, o, c.ID, "pause")
	close(release)
	time.Sleep(time.Second)
	x := campGet(t, o, c.ID)
	require.Equal(t, "paused", x.Status)
	require.Equal(t, 500, x.QueuedCount, "the fan-out stops at the pause")
	holdPost[holdAnswer](t, o, c.ID, "resume")
	x = campWait(t, o, c.ID, 3*time.Minute, func(x campJSON) bool { return x.Status == "sent" })
	require.Equal(t, 1200, x.QueuedCount)
	require.Equal(t, 1200, x.DeliveryStats["sent"])
	campRequireUnique(t, env, 1200)
}

// TestCampaignRetryFailed: a sent campaign whose vendor refused some
// mails re-sends to exactly those recipients, once; a suppressed one is
// skipped; a second retry takes only the requests that failed again.
func TestCampaignRetryFailed(t *testing.T) {
	t.Parallel()
	env := notifytest.StartDaemon(t, notifytest.WithQueueJobAttempts(1))
	campEmailRoute(t, env)
	const n = 300
	campImport(t, env, n, nil)
	// A permanent refusal (job failed) and a retryable one that spends
	// the only attempt (a dead letter).
	holdFault(t, env, `{"kind":"mailx_email","status":422,"count":1}`)
	holdFault(t, env, `{"kind":"mailx_email","status":500,"count":1}`)
	o := env.Owner
	c := campCreate(t, o, map[string]any{"name": "n", "channel": "email", "subject": "s", "contentText": "t"})
	campProblem(t, o, "POST", "/v1/newsletter/campaigns/"+c.ID+"/retry-failed", nil, http.StatusConflict,
		"Campaign is draft; only a sent campaign can retry its failed recipients")
	campSendIt(t, o, c.ID, nil)
	x := campWait(t, o, c.ID, 2*time.Minute, func(x campJSON) bool {
		return x.DeliveryStats["sent"]+x.DeliveryStats["failed"] == n
	})
	failed := x.DeliveryStats["failed"]
	require.Positive(t, failed)
	require.Len(t, campMails(env), n-failed)
	ctx := context.Background()
	addrs := func(status string) []string {
		var out []string
		require.NoError(t, env.Daemon.DB.View(ctx, func(tx notify.Tx) error {
			conn := tx.(interface{ Conn() sqlstore.Conn }).Conn()
			rows, err := conn.Query(ctx, `SELECT recipient_address FROM notification_requests WHERE campaign_id = ? AND status = ?
				ORDER BY recipient_address`, c.ID, status)
			if err != nil {
				return err
			}
			defer rows.Close()
			for rows.Next() {
				var a string
				if err := rows.Scan(&a); err != nil {
					return err
				}
				out = append(out, a)
			}
			return rows.Err()
		}))
		return out
	}
	failedAddrs := addrs("failed")
	require.Len(t, failedAddrs, failed)
	var dl struct {
		Count int `json:"count"`
	}
	require.NoError(t, subDo(t, o, "GET", "/v1/dead-letter", nil, http.StatusOK).Decode(&dl))
	require.Positive(t, dl.Count, "the retryable refusal made dead letters")

	// One failed recipient is suppressed meanwhile: it is skipped.
	subDo(t, o, "POST", "/v1/suppressions", map[string]any{"address": failedAddrs[0], "reason": "manual"}, http.StatusCreated)
	// Some of the retried mails are refused again.
	holdFault(t, env, `{"kind":"mailx_email","status":422,"count":1}`)
	// Two retries at once: one re-queues the failed requests; the other
	// finds the campaign sending again (409), or nothing failed left.
	answers := make(chan *client.Response, 2)
	for i := 0; i < 2; i++ {
		go func() {
			r, err := o.Dashboard(ctx, "POST", "/v1/newsletter/campaigns/"+c.ID+"/retry-failed", nil)
			if err != nil {
				r = &client.Response{Body: []byte(err.Error())}
			}
			answers <- r
		}()
	}
	var r retryAnswer
	retried := 0
	for i := 0; i < 2; i++ {
		resp := <-answers
		if resp.Status == http.StatusConflict {
			continue
		}
		require.Equal(t, http.StatusOK, resp.Status, string(resp.Body))
		var a retryAnswer
		require.NoError(t, resp.Decode(&a))
		if a.RetriedRequests > 0 {
			r = a
		}
		retried += a.RetriedRequests
	}
	require.Equal(t, retryAnswer{CampaignID: c.ID, Status: "sending", RetriedRequests: failed - 1, SkippedRequests: 1}, r)
	require.Equal(t, failed-1, retried, "each failed request is re-queued once")
	x = campWait(t, o, c.ID, 2*time.Minute, func(x campJSON) bool { return x.Status == "sent" })
	again := x.DeliveryStats["failed"]
	require.Greater(t, again, 1, "the suppressed recipient and the refused retries")
	require.Equal(t, n, x.DeliveryStats["sent"]+again)
	// The retried requests' dead letters left the queue (the skipped one
	// keeps its own, if it had one).
	var stale, left int
	require.NoError(t, env.Daemon.DB.View(ctx, func(tx notify.Tx) error {
		conn := tx.(interface{ Conn() sqlstore.Conn }).Conn()
		if err := conn.QueryRow(ctx, `SELECT COUNT(*) FROM dead_letters d JOIN notification_requests r ON r.id = d.request_id
			WHERE r.campaign_id = ? AND r.status <> 'failed'`, c.ID).Scan(&stale); err != nil {
			return err
		}
		return conn.QueryRow(ctx, `SELECT COUNT(*) FROM dead_letters`).Scan(&left)
	}))
	require.Zero(t, stale)
	require.LessOrEqual(t, left, 1)

	// The second retry takes only the requests that failed again.
	r = holdPost[retryAnswer](t, o, x.ID, "retry-failed")
	require.Equal(t, retryAnswer{CampaignID: c.ID, Status: "sending", RetriedRequests: again - 1, SkippedRequests: 1}, r)
	x = campWait(t, o, c.ID, 2*time.Minute, func(x campJSON) bool { return x.Status == "sent" })
	require.Equal(t, 1, x.DeliveryStats["failed"])
	require.Equal(t, n-1, x.DeliveryStats["sent"])
	require.Equal(t, []string{failedAddrs[0]}, addrs("failed"))
	// Everyone but the suppressed recipient has exactly one mail.
	campRequireUnique(t, env, n-1)
	for _, m := range campMails(env) {
		require.NotEqual(t, failedAddrs[0], m.To)
	}
	// Nothing left to retry: 200 with zero counts, the campaign stays sent.
	r = holdPost[retryAnswer](t, o, x.ID, "retry-failed")
	require.Equal(t, retryAnswer{CampaignID: c.ID, Status: "sent", RetriedRequests: 0, SkippedRequests: 1}, r)
	require.Equal(t, "sent", campGet(t, o, c.ID).Status)
	require.GreaterOrEqual(t, len(holdAudits(t, o, "campaign.retry")), 3)
	campProblem(t, o, "POST", "/v1/newsletter/campaigns/"+c.ID+"/pause", nil, http.StatusConflict,
		"Campaign is sent; only a sending campaign can be paused")
	campProblem(t, o, "POST", "/v1/newsletter/campaigns/"+c.ID+"/resume", nil, http.StatusConflict,
		"Campaign is sent; only a paused campaign can be resumed")
}

// TestCampaignPauseRefusals: roles, another workspace's campaign, bodies,
// and cancel of a paused campaign.
func TestCampaignPauseRefusals(t *testing.T) {
	t.Parallel()
	env := notifytest.StartDaemon(t)
	campEmailRoute(t, env)
	subCreate(t, env.Owner, map[string]any{"channel": "email", "address": "a@example.com"})
	holdFault(t, env, `{"kind":"mailx_email","latencyMs":5000,"count":100000}`)
	o := env.Owner
	c := campCreate(t, o, map[string]any{"name": "n", "channel": "email", "subject": "s", "contentText": "t"})
	viewer, operator := env.Member(t, "viewer"), env.Member(t, "operator")
	other, _ := env.NewWorkspace(t, "Other", fmt.Sprintf("other-%d@example.com", time.Now().UnixNano()))
	for _, action := range []string{"pause", "resume", "retry-failed"} {
		path := "/v1/newsletter/campaigns/" + c.ID + "/" + action
		campProblem(t, viewer, "POST", path, nil, http.StatusForbidden, "")
		campProblem(t, other, "POST", path, nil, http.StatusNotFound, "")
		campProblem(t, o, "POST", "/v1/newsletter/campaigns/"+zeroCampaign+"/"+action, nil, http.StatusNotFound, "")
		for _, body := range []string{`[]`, `{"zzUnknownField":1}`, `{"a":`} {
			campProblem(t, o, "POST", path, body, http.StatusBadRequest, "")
		}
	}
	campProblem(t, operator, "POST", "/v1/newsletter/campaigns/"+c.ID+"/pause", nil, http.StatusConflict,
		"Campaign is draft; only a sending campaign can be paused")
	campSendIt(t, o, c.ID, nil)
	campWait(t, o, c.ID, 20*time.Second, func(x campJSON) bool { return x.QueuedCount == 1 })
	// An operator pauses and resumes (the roles of send and cancel), with
	// an empty object as body.
	r := subDo(t, operator, "POST", "/v1/newsletter/campaigns/"+c.ID+"/pause", `{}`, http.StatusOK)
	var p holdAnswer
	require.NoError(t, r.Decode(&p))
	require.Equal(t, "paused", p.Status)
	require.Len(t, holdAudits(t, o, "campaign.pause"), 1, "refused calls leave no audit entry")
	// A paused campaign can be canceled; its held request is canceled.
	subDo(t, operator, "POST", "/v1/newsletter/campaigns/"+c.ID+"/cancel", nil, http.StatusOK)
	x := campGet(t, o, c.ID)
	require.Equal(t, "canceled", x.Status)
	require.Zero(t, x.DeliveryStats["queued"])
	campProblem(t, o, "POST", "/v1/newsletter/campaigns/"+c.ID+"/resume", nil, http.StatusConflict,
		"Campaign is canceled; only a paused campaign can be resumed")
}

const zeroCampaign = "00000000-0000-7000-8000-000000000000"
