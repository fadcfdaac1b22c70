package crash_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/notifyd/notifyd/client"
	"github.com/notifyd/notifyd/internal/delivery"
	"github.com/notifyd/notifyd/internal/jobs"
	"github.com/notifyd/notifyd/internal/notify"
	"github.com/notifyd/notifyd/internal/notifytest"
	"github.com/notifyd/notifyd/internal/simulator"
	"github.com/notifyd/notifyd/internal/store/sqlstore"
	"github.com/notifyd/notifyd/internal/store/testdb"
)

// The poison tests run a binary built with the crashfault tag, whose
// NOTIFYD_CRASH_FAULT makes a job kill its own process (SIGKILL, as the
// kernel's out-of-memory killer does) every time it runs. Each time the
// process dies the test starts it again on the same database, as a
// supervisor would; the queue must stop handing the job back blindly
// (jobs/crash.go), so that after a bounded number of deaths the process
// starts and stays up, the job's owner has ended with a recorded reason,
// and everything else is delivered.

// poisoned starts notifyd built with the crashfault tag, with fault set
// (crashfault.Env), on a fresh database, and a simulator; it answers the
// binary, the simulator's URL, the environment, the owner's client and
// the process.
func poisoned(t *testing.T, fault string) (bin, simURL string, env []string, owner *client.Client, n *node) {
	t.Helper()
	bin = notifytest.BuildBinary(t, "crashfault")
	simSrv := httptest.NewServer(simulator.New())
	t.Cleanup(simSrv.Close)
	env, baseURL, owner := bootstrap(t, bin, "NOTIFYD_CRASH_FAULT="+fault)
	return bin, simSrv.URL, env, owner, serve(t, bin, env, baseURL, "first notifyd")
}

// restartUntil waits for n to die and starts notifyd again each time,
// until done reports true (asked every 200 ms while a process runs; it
// must tolerate a process that is not ready or dying). It fails after
// more than maxDeaths deaths, or when within passes; it answers the
// process running at the end and how many died.
func restartUntil(t *testing.T, n *node, bin string, env []string, maxDeaths int, within time.Duration, done func() bool) (*node, int) {
	t.Helper()
	deaths := 0
	deadline := time.Now().Add(within)
	for {
		select {
		case <-n.done:
			deaths++
			require.LessOrEqual(t, deaths, maxDeaths, "notifyd keeps dying; last output:\n%s", n.logs.String())
			t.Logf("notifyd died (%d)", deaths)
			n = launch(t, bin, env, fmt.Sprintf("notifyd after %d deaths", deaths), "serve")
			continue
		default:
		}
		if done() {
			return n, deaths
		}
		require.True(t, time.Now().Before(deadline), "not done %s after the first death (%d deaths)", within, deaths)
		time.Sleep(200 * time.Millisecond)
	}
}

// stayedUp fails the test when n has exited.
func stayedUp(t *testing.T, n *node) {
	t.Helper()
	select {
	case <-n.done:
		t.Fatalf("notifyd died again:\n%s", n.logs.String())
	default:
	}
}

// poisonWithin bounds a poison test's restarts: on PostgreSQL a restarted
// process hands back the dead one's jobs only once its heartbeat is 8 s
// old (delivery.DeadAfter) and its own heartbeats have succeeded that long.
const poisonWithin = 2 * time.Minute

// sendPlain sends one SMS and waits until it is sent: the restarted
// process delivers ordinary work.
func sendPlain(t *testing.T, key *client.Client) {
	t.Helper()
	id := notifytest.Data[struct {
		RequestID string `json:"requestId"`
	}](t, notifytest.Signed(t, key, "POST", "/v1/notifications", map[string]any{"channel": "sms",
		"recipient": map[string]any{"address": "01099999999"}, "content": map[string]any{"text": "plain"}}), http.StatusCreated).RequestID
	deadline := time.Now().Add(30 * time.Second)
	for lookup(t, key, id).Status != "sent" {
		require.True(t, time.Now().Before(deadline), "the plain send was not delivered")
		time.Sleep(100 * time.Millisecond)
	}
}

// bulkSMS accepts one bulk call of SMS with the texts given (one
// group commit: one dispatch_batch queue job) and answers the request ids.
func bulkSMS(t *testing.T, key *client.Client, texts []string) []string {
	t.Helper()
	items := make([]any, len(texts))
	for i, text := range texts {
		items[i] = map[string]any{"channel": "sms", "recipient": map[string]any{"address": fmt.Sprintf("010%08d", i)},
			"content": map[string]any{"text": text}}
	}
	out := notifytest.Data[struct {
		Items []struct {
			RequestID string `json:"requestId"`
		} `json:"items"`
	}](t, notifytest.Signed(t, key, "POST", "/v1/notifications/bulk", map[string]any{"items": items}), http.StatusCreated)
	require.Len(t, out.Items, len(texts))
	ids := make([]string, len(texts))
	for i, it := range out.Items {
		ids[i] = it.RequestID
	}
	return ids
}

// TestPoisonFanout is issue 29's crash loop: a campaign fan-out that
// kills the process every time it runs (there, an out-of-memory render).
// After jobs.QuarantineAfterCrashes deaths the process starts and stays
// up, the campaign is failed with the reason in its campaign.fail audit
// entry, the SMS that were in flight at the first deaths are all sent
// (one or two crashes fail nothing), and a plain send is delivered.
func TestPoisonFanout(t *testing.T) {
	bin, simURL, env, owner, first := poisoned(t, "job=campaign_fanout")
	notifytest.PutRoutes(t, owner,
		notifytest.Route{Channel: "sms", Priority: 1, ProviderAccountID: notifytest.RegisterProvider(t, owner, smsKind, "sms", smsConfig(simURL))},
		notifytest.Route{Channel: "email", Priority: 1, ProviderAccountID: notifytest.RegisterProvider(t, owner, "mailx_email", "mail",
			map[string]string{"base_url": simURL, "mailx_api_key": "re_test", "mailx_from_email": "news@example.com"})})
	key, _ := sendKey(t, owner)
	subs := []map[string]any{}
	for i := range 3 {
		subs = append(subs, map[string]any{"channel": "email", "address": fmt.Sprintf("s%d@example.com", i)})
	}
	dashboard(t, owner, "POST", "/v1/newsletter/subscribers/import", map[string]any{"subscribers": subs}, http.StatusOK)

	// Ordinary work in flight when the process dies: a slow vendor keeps
	// the SMS batch running.
	simControl(t, simURL, "POST", "/_sim/faults", map[string]any{"kind": smsKind, "latencyMs": 2000, "count": 1_000_000})
	texts := make([]string, 20)
	for i := range texts {
		texts[i] = fmt.Sprintf("innocent %d", i)
	}
	ids := bulkSMS(t, key, texts)

	cid := sendCampaign(t, owner, "poison")

	started := time.Now()
	last, deaths := restartUntil(t, first, bin, env, jobs.QuarantineAfterCrashes+2, poisonWithin, func() bool {
		r, err := owner.Dashboard(ctx, "GET", "/v1/newsletter/campaigns/"+cid, nil)
		var c struct {
			Campaign campaignDetail `json:"campaign"`
		}
		return err == nil && r.Status == http.StatusOK && r.Decode(&c) == nil && c.Campaign.Status == "failed"
	})
	t.Logf("campaign failed %s after the send, after %d deaths", time.Since(started).Round(time.Millisecond), deaths)
	require.Equal(t, jobs.QuarantineAfterCrashes, deaths)
	require.Equal(t, "failed", getCampaign(t, owner, cid).Status)
	fails := notifytest.Audit(t, owner, "campaign.fail")
	require.Len(t, fails, 1)
	require.Equal(t, cid, fails[0].TargetID)
	require.Contains(t, fails[0].Payload["reason"], fmt.Sprintf("quarantined: the worker process died %d times", jobs.QuarantineAfterCrashes))

	simControl(t, simURL, "DELETE", "/_sim/faults?kind="+smsKind, nil)
	deadline := time.Now().Add(30 * time.Second)
	for {
		m := byStatus(t, owner)
		if m["sent"] == len(ids) {
			break
		}
		if m["failed"] > 0 {
			r := notifytest.Signed(t, key, "GET", "/v1/notifications/"+ids[0], nil)
			t.Fatalf("an SMS in flight at a crash failed: %v\n%s", m, r.Body)
		}
		require.True(t, time.Now().Before(deadline), "the SMS in flight at the crashes were not all sent: %v", m)
		time.Sleep(200 * time.Millisecond)
	}
	// The SMS batch was running at one death or two, and was handed back
	// each time: a crash it only witnessed failed none of its requests.
	batch := queueCrashes(t, env, jobs.DispatchBatch{}.Kind())
	t.Logf("crashes counted in the SMS batch: %v", batch)
	require.Len(t, batch, 1)
	require.GreaterOrEqual(t, batch[0], 1, "the SMS batch was not running at any death: nothing shows a crash fails nothing")
	require.Less(t, batch[0], jobs.QuarantineAfterCrashes)
	sendPlain(t, key)
	stayedUp(t, last)
}

// queueCrashes reads the crash counts the rescue stored in the queue
// jobs of kind (on the database of the notifyd environment env).
func queueCrashes(t *testing.T, env []string, kind string) []int {
	t.Helper()
	var url string
	for _, e := range env {
		if v, ok := strings.CutPrefix(e, "NOTIFYD_DATABASE_URL="); ok {
			url = v
		}
	}
	db := testdb.OpenDB(t, url)
	meta := `metadata::text`
	if db.Dialect == "sqlite" {
		meta = `json(metadata)`
	}
	var out []int
	require.NoError(t, db.View(ctx, func(tx notify.Tx) error {
		rows, err := tx.(*sqlstore.Tx).Conn().Query(ctx, `SELECT `+meta+` FROM river_job WHERE kind = ? ORDER BY id`, kind)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var m string
			if err := rows.Scan(&m); err != nil {
				return err
			}
			out = append(out, jobs.Crashes([]byte(m)))
		}
		return rows.Err()
	}))
	return out
}

// TestPoisonMessage: one message of a batch kills the process whenever a
// run sends it. The batch is handed back, isolated, then split into one
// job per request (jobs/crash.go), so the nine good messages are sent and
// only the poison one fails, with crash_quarantined, into the dead-letter
// queue. A batch needs one death more than a single job: the one that
// shows it kills the process even when run alone.
func TestPoisonMessage(t *testing.T) {
	bin, simURL, env, owner, first := poisoned(t, "text=POISON")
	key, _ := smsRoute(t, owner, simURL)

	texts := make([]string, 10)
	for i := range texts {
		texts[i] = fmt.Sprintf("good %d", i)
	}
	const poison = 3
	texts[poison] = "POISON pill"
	ids := bulkSMS(t, key, texts)

	started := time.Now()
	last, deaths := restartUntil(t, first, bin, env, jobs.QuarantineAfterCrashes+3, poisonWithin, func() bool {
		r, err := owner.Dashboard(ctx, "GET", "/v1/metrics", nil)
		var m struct {
			ByStatus map[string]int `json:"byStatus"`
		}
		return err == nil && r.Status == http.StatusOK && r.Decode(&m) == nil && m.ByStatus["sent"]+m.ByStatus["failed"] == len(ids)
	})
	t.Logf("all requests terminal %s after the send, after %d deaths", time.Since(started).Round(time.Millisecond), deaths)
	require.Equal(t, jobs.QuarantineAfterCrashes+1, deaths)

	for i, id := range ids {
		out := notifytest.Data[struct {
			Status            string `json:"status"`
			FinalErrorCode    string `json:"finalErrorCode"`
			FinalErrorMessage string `json:"finalErrorMessage"`
		}](t, notifytest.Signed(t, key, "GET", "/v1/notifications/"+id, nil), http.StatusOK)
		if i != poison {
			require.Equal(t, "sent", out.Status, "good request %d", i)
			continue
		}
		require.Equal(t, "failed", out.Status)
		require.Equal(t, string(delivery.QuarantineCode), out.FinalErrorCode)
		require.Contains(t, out.FinalErrorMessage, fmt.Sprintf("quarantined: the worker process died %d times", jobs.QuarantineAfterCrashes))
	}
	dl := notifytest.Decode[struct {
		Items []struct {
			Data struct {
				NotificationRequestID string `json:"notificationRequestId"`
			} `json:"data"`
			FailedReason string `json:"failedReason"`
		} `json:"items"`
	}](t, notifytest.Dash(t, owner, "GET", "/v1/dead-letter", nil), http.StatusOK)
	require.Len(t, dl.Items, 1, "the poison message can be replayed")
	require.Equal(t, ids[poison], dl.Items[0].Data.NotificationRequestID)
	require.True(t, strings.HasPrefix(dl.Items[0].FailedReason, string(delivery.QuarantineCode)+": "), dl.Items[0].FailedReason)
	sendPlain(t, key)
	stayedUp(t, last)
}
