package crash_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/notifyd/notifyd/internal/notifytest"
	"github.com/notifyd/notifyd/internal/simulator"
)

// TestCrashIdempotentKind: mailx_email (Resend) honours Idempotency-Key.
// Single sends carry request/attempt/account as the key, and a run taken
// over after a crash keeps the attempt number, so the messages the vendor
// had already accepted when the process was killed are not sent again:
// no duplicate, where a kind without vendor idempotency sends each twice.
func TestCrashIdempotentKind(t *testing.T) {
	const n, mailKind = 40, "mailx_email"
	bin := notifytest.BuildBinary(t)
	sim := simulator.New()
	simSrv := httptest.NewServer(sim)
	t.Cleanup(simSrv.Close)
	env, baseURL, owner := bootstrap(t, bin)
	first := serve(t, bin, env, baseURL, "first notifyd")

	notifytest.RegisterRoute(t, owner, "email", mailKind, map[string]string{"base_url": simSrv.URL, "mailx_api_key": "re_test",
		"mailx_from_email": "news@example.com", "dispatch_max_batch_size": "1", "dispatch_max_requests_per_second": "100"})
	key, _, err := owner.CreateAPIKey(ctx, "crash", "notifications:send", "notifications:read")
	require.NoError(t, err)
	simControl(t, simSrv.URL, "POST", "/_sim/faults", map[string]any{"kind": mailKind, "latencyMs": 1000, "count": 1_000_000})

	items := make([]any, n)
	for i := range items {
		items[i] = map[string]any{"channel": "email", "recipient": map[string]any{"address": fmt.Sprintf("r%02d@example.com", i)},
			"content": map[string]any{"title": "Hello", "text": "once"}}
	}
	r, err := key.Signed(ctx, "POST", "/v1/notifications/bulk", map[string]any{"items": items})
	require.NoError(t, err)
	require.Equal(t, http.StatusCreated, r.Status, string(r.Body))

	// Kill as soon as the vendor has accepted a message: the run records
	// its outcomes only once all its calls are back.
	deadline := time.Now().Add(30 * time.Second)
	for len(sim.Messages(mailKind, "", 0)) == 0 {
		require.True(t, time.Now().Before(deadline), "nothing reached the vendor")
		time.Sleep(2 * time.Millisecond)
	}
	first.kill()
	time.Sleep(200 * time.Millisecond)
	atKill := len(sim.Messages(mailKind, "", 0))
	t.Logf("killed with %d of %d mails accepted by the vendor and none recorded", atKill, n)

	simControl(t, simSrv.URL, "DELETE", "/_sim/faults?kind="+mailKind, nil)
	restarted := time.Now()
	serve(t, bin, env, baseURL, "second notifyd")
	deadline = time.Now().Add(recoverWithin)
	for {
		m := byStatus(t, owner)
		if m["sent"] == n {
			t.Logf("all %d sent %s after the restart", n, time.Since(restarted).Round(time.Millisecond))
			break
		}
		require.True(t, time.Now().Before(deadline), "not all sent %s after the restart: %v", recoverWithin, m)
		time.Sleep(100 * time.Millisecond)
	}
	per := map[string]int{}
	for _, m := range sim.Messages(mailKind, "", 0) {
		per[m.To]++
	}
	require.Len(t, per, n, "every recipient got the mail")
	for to, c := range per {
		require.Equal(t, 1, c, "%s got the mail %d times", to, c)
	}
}
