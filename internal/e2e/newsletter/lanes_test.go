package newsletter_test

import (
	"context"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/notifyd/notifyd/client"
	"github.com/notifyd/notifyd/internal/notifytest"
)

// TestTransactionalAheadOfCampaign is issue 31's item 2 at small scale: a
// 1,500-subscriber campaign on one email provider limited to 100
// messages/s; while it drains, a transactional email to the same provider
// every 250 ms, and an sms of another workspace through its own provider
// every 250 ms. The transactional mails and the other workspace's sms
// reach their vendor within 1 s of their 201 (p99; 3 s under -race),
// the campaign still goes out at 0.9 of the limit or more, and the
// estimate of its end shown at its start is within 10% of its run.
func TestTransactionalAheadOfCampaign(t *testing.T) {
	env := notifytest.StartDaemon(t)
	o := env.Owner
	const n, rate = 1500, 100
	// Short batch windows: the sends' lateness is then the queue's and the
	// budget's, not the time a message waits in its vendor batch for
	// company (750 and 800 ms by default).
	window := map[string]string{"dispatch_batch_window_ms": "200"}
	mail := env.MailConfig(campMailKind, "news@example.com")
	maps.Copy(mail, window)
	acct := notifytest.RegisterRoute(t, o, "email", campMailKind, mail)
	subDo(t, o, "PUT", "/v1/limits/dispatch", map[string]any{"scope": "provider", "targetId": acct, "ratePerSecond": rate}, http.StatusOK)
	campImport(t, env, n, nil)
	key := env.SendKey(t)

	other, _ := env.NewWorkspace(t, "other", "other-owner@example.com")
	notifytest.RegisterRoute(t, other, "sms", "vendora_sms", env.SimConfig("vendora_sms", window))
	otherKey, _, err := other.CreateAPIKey(context.Background(), "other", "notifications:send")
	require.NoError(t, err)

	c := campCreate(t, o, map[string]any{"name": "big", "channel": "email", "subject": "news", "contentText": "hello"})
	sentAt := time.Now()
	campSendIt(t, o, c.ID, nil)

	// Transactional traffic until the campaign has ended.
	var mu sync.Mutex
	accepted := map[string]time.Time{} // text -> when its 201 arrived
	stop := make(chan struct{})
	var wg sync.WaitGroup
	send := func(k *client.Client, body func(i int) (map[string]any, string)) {
		defer wg.Done()
		tick := time.NewTicker(250 * time.Millisecond)
		defer tick.Stop()
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			case <-tick.C:
			}
			b, text := body(i)
			r, err := k.Signed(context.Background(), "POST", "/v1/notifications", b)
			if err != nil || r.Status != http.StatusCreated {
				t.Errorf("send %s: %v %v", text, err, r)
				return
			}
			mu.Lock()
			accepted[text] = time.Now()
			mu.Unlock()
		}
	}
	wg.Add(2)
	go send(key, func(i int) (map[string]any, string) {
		text := fmt.Sprintf("reset-%d", i)
		return notifytest.Email("reset@example.com", "Your code", text), text
	})
	go send(otherKey, func(i int) (map[string]any, string) {
		text := fmt.Sprintf("other-%d", i)
		return notifytest.SMS("01012345678", text), text
	})

	est := campWait(t, o, c.ID, 30*time.Second, func(x campJSON) bool { return x.EstimatedFinishAt != nil })
	estimate, err := time.Parse(time.RFC3339Nano, *est.EstimatedFinishAt)
	require.NoError(t, err)
	campWait(t, o, c.ID, 2*time.Minute, func(x campJSON) bool { return x.Status == "sent" })
	close(stop)
	wg.Wait()
	require.Nil(t, campGet(t, o, c.ID).EstimatedFinishAt, "a sent campaign has no estimate")

	var campaign []time.Time
	for _, m := range campMails(env) {
		if strings.HasSuffix(m.Subject, "news") { // "(광고) news" when advertising
			campaign = append(campaign, m.ReceivedAt)
		}
	}
	require.Len(t, campaign, n)
	slices.SortFunc(campaign, time.Time.Compare)
	span := campaign[n-1].Sub(campaign[0])
	got := float64(n-1) / span.Seconds()
	t.Logf("campaign: %d mails in %s (%.1f/s of %d/s); estimate %s, end %s (run %s)", n, span, got, rate,
		estimate.Sub(sentAt), campaign[n-1].Sub(sentAt), campaign[n-1].Sub(sentAt))
	require.GreaterOrEqual(t, got, 0.9*rate, "the campaign keeps at least 0.9 of its limit")
	run := campaign[n-1].Sub(sentAt)
	require.LessOrEqual(t, absDuration(estimate.Sub(campaign[n-1])), run/10, "the estimate is within 10%% of the run")

	mu.Lock()
	defer mu.Unlock()
	lateness := func(kind, prefix string) []time.Duration {
		var out []time.Duration
		for _, m := range env.Sim.Messages(kind, "", 0) {
			if at, ok := accepted[m.Text]; ok && strings.HasPrefix(m.Text, prefix) {
				out = append(out, m.ReceivedAt.Sub(at))
			}
		}
		slices.Sort(out)
		return out
	}
	for _, x := range []struct{ kind, prefix string }{{campMailKind, "reset-"}, {"vendora_sms", "other-"}} {
		ds := lateness(x.kind, x.prefix)
		require.GreaterOrEqual(t, len(ds), 20, x.prefix)
		p99 := ds[len(ds)-1-len(ds)/100] // the slowest but one per hundred
		t.Logf("%s: %d sends, p50 %s, p99 %s, max %s", x.prefix, len(ds), ds[len(ds)/2], p99, ds[len(ds)-1])
		// Under -race beside other packages' tests on 2 cores the bound
		// gets slack; behind the campaign's backlog a send would wait
		// most of its 15 s run either way.
		bound := time.Second
		if raceBuild {
			bound = 3 * time.Second
		}
		require.LessOrEqual(t, p99, bound, "%s from 201 to the vendor", x.prefix)
	}
}

func absDuration(d time.Duration) time.Duration {
	if d < 0 {
		return -d
	}
	return d
}
