package limits_test

import (
	"fmt"
	"io"
	"net/http"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/notifyd/notifyd/client"
	"github.com/notifyd/notifyd/internal/notifytest"
)

// Dispatch limits are enforced in the worker (SPEC "Dispatch limits"):
// token buckets of burst = rate that start full, so n sends at rate r
// take at least (n - r) / r seconds. Lower bounds get a 25% margin, upper
// bounds several seconds (2 cores, -race).

// smsProvider registers a simulator sms provider and routes sms to it.
func (b *bundle) smsProvider(t *testing.T) string {
	t.Helper()
	// One call per message at once: arrival times at the vendor then show
	// the limiter's pacing, not batch windows.
	return b.env.SimRoute(t, "sms", "vendora_sms", map[string]string{
		"dispatch_batch_window_ms": "0", "dispatch_max_batch_size": "1", "dispatch_max_requests_per_second": "0"})
}

func (b *bundle) setLimit(t *testing.T, scope, target string, rate int, enabled bool) {
	t.Helper()
	body := map[string]any{"scope": scope, "ratePerSecond": rate, "enabled": enabled}
	if target != "" {
		body["targetId"] = target
	}
	b.putDispatch(t, body)
}

// sendN accepts n sms under key k in one bulk call, texts tag-0 .. tag-n-1.
func sendN(t *testing.T, k *client.Client, n int, tag string) {
	t.Helper()
	items := make([]any, n)
	for i := range items {
		items[i] = notifytest.SMS("01012345678", fmt.Sprintf("%s-%d", tag, i))
	}
	r := notifytest.Signed(t, k, "POST", "/v1/notifications/bulk", map[string]any{"items": items})
	require.Equal(t, http.StatusCreated, r.Status, string(r.Body))
}

// delivered waits until the simulator holds n messages of tag and returns
// their arrival times, sorted.
func (b *bundle) delivered(t *testing.T, tag string, n int, within time.Duration) []time.Time {
	t.Helper()
	deadline := time.Now().Add(within)
	for {
		var at []time.Time
		for _, m := range b.env.Sim.Messages("vendora_sms", "", 0) {
			if strings.HasPrefix(m.Text, tag+"-") {
				at = append(at, m.ReceivedAt)
			}
		}
		if len(at) >= n {
			sort.Slice(at, func(i, j int) bool { return at[i].Before(at[j]) })
			return at
		}
		require.True(t, time.Now().Before(deadline), "%s: %d of %d delivered", tag, len(at), n)
		time.Sleep(20 * time.Millisecond)
	}
}

func span(at []time.Time) time.Duration { return at[len(at)-1].Sub(at[0]) }

// paced asserts that n sends of tag at rate r took at least 75% of the
// theoretical (n - r) / r seconds.
func (b *bundle) paced(t *testing.T, tag string, n, r int) {
	t.Helper()
	at := b.delivered(t, tag, n, 30*time.Second)
	want := time.Duration(float64(n-r) / float64(r) * float64(time.Second))
	require.GreaterOrEqual(t, span(at), want*3/4, "%d sends at %d/s", n, r)
}

// unpaced asserts that n sends of tag were not held to a limit that would
// have spread them over `would`.
func (b *bundle) unpaced(t *testing.T, tag string, n int, would time.Duration) {
	t.Helper()
	at := b.delivered(t, tag, n, 30*time.Second)
	require.Less(t, span(at), would/2, "sends of %s were delayed", tag)
}

func TestDispatchWorkspaceLimit(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.smsProvider(t)
	b.setLimit(t, "workspace", "", 4, true)
	sendN(t, b.key, 12, "ws")
	b.paced(t, "ws", 12, 4) // >= 2 s
	// Never a rejection: every request is sent.
	at := b.delivered(t, "ws", 12, 0)
	require.Len(t, at, 12)
	// Each send's wait is observed under its scope.
	require.Equal(t, 12.0, scrape(t, b.env.Daemon.URL(), `notifyd_dispatch_limit_wait_seconds_count{scope="workspace"}`))
	require.Zero(t, scrape(t, b.env.Daemon.URL(), `notifyd_dispatch_limit_wait_seconds_count{scope="provider"}`))
	// An attempt is the vendor call (issue 31): the later sends waited a
	// second or more for their token, and no attempt's duration shows it.
	var attempts struct {
		Attempts []struct {
			StartedAt  time.Time `json:"startedAt"`
			FinishedAt time.Time `json:"finishedAt"`
		} `json:"attempts"`
	}
	require.Eventually(t, func() bool {
		r, err := b.env.Owner.Dashboard(ctx, "GET", "/v1/attempts?limit=100", nil)
		return err == nil && r.Status == http.StatusOK && r.Decode(&attempts) == nil && len(attempts.Attempts) == 12
	}, 10*time.Second, 50*time.Millisecond)
	for _, a := range attempts.Attempts {
		require.Less(t, a.FinishedAt.Sub(a.StartedAt), 500*time.Millisecond, "an attempt includes its wait for a token")
	}
}

func TestDispatchProviderLimit(t *testing.T) {
	t.Parallel()
	b := setup(t)
	p := b.smsProvider(t)
	// A limit on another provider account does not apply.
	b.setLimit(t, "provider", "00000000-0000-4000-8000-000000000000", 1, true)
	sendN(t, b.key, 8, "other")
	b.unpaced(t, "other", 8, 7*time.Second)
	b.setLimit(t, "provider", p, 3, true)
	time.Sleep(2500 * time.Millisecond) // the cached limits expire
	sendN(t, b.key, 9, "prov")
	b.paced(t, "prov", 9, 3) // >= 2 s
}

func TestDispatchAPIKeyLimit(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.smsProvider(t)
	other, _ := b.newKey(t, "other")
	b.setLimit(t, "apiKey", b.keyID, 2, true)
	sendN(t, other, 8, "free") // another key's sends are not limited
	b.unpaced(t, "free", 8, 3*time.Second)
	sendN(t, b.key, 6, "key")
	b.paced(t, "key", 6, 2) // >= 2 s
}

// All applicable scopes apply together: the smallest rate wins, whatever
// its scope; a disabled limit is ignored.
func TestDispatchScopesTogether(t *testing.T) {
	t.Parallel()
	b := setup(t)
	p := b.smsProvider(t)
	b.setLimit(t, "workspace", "", 100, true)
	b.setLimit(t, "provider", p, 50, true)
	b.setLimit(t, "apiKey", b.keyID, 1, false) // disabled: ignored
	sendN(t, b.key, 10, "loose")
	b.unpaced(t, "loose", 10, 9*time.Second)

	b.setLimit(t, "apiKey", b.keyID, 40, true)
	b.setLimit(t, "provider", p, 2, true)
	time.Sleep(2500 * time.Millisecond) // the cached limits expire
	sendN(t, b.key, 7, "tight")
	b.paced(t, "tight", 7, 2) // provider's 2/s binds: >= 2.5 s
}

// A changed limit applies once the per-workspace cache (2 s) expires;
// moving the service clock past it is enough.
func TestDispatchLimitChangeAfterCache(t *testing.T) {
	t.Parallel()
	clock := &notifytest.Clock{}
	env := notifytest.StartDaemonAt(t, clock.Now)
	b := &bundle{env: env}
	b.key, b.keyID = b.newKey(t, "test")
	b.key.Now = clock.Now
	b.smsProvider(t)
	b.setLimit(t, "workspace", "", 1000, true)
	sendN(t, b.key, 5, "fast")
	b.unpaced(t, "fast", 5, 4*time.Second)

	b.setLimit(t, "workspace", "", 1, true)
	clock.Advance(3 * time.Second)
	sendN(t, b.key, 4, "slow")
	// The bucket keeps its tokens (capped at the new burst of 1): waits
	// of 0, 1, 2 and 3 s.
	b.paced(t, "slow", 4, 1)
}

// A limit changed through the API applies at once to the sends of the
// process that served the change (the cache of other processes expires
// within 2 s): the sends just before the change loaded the cache.
func TestDispatchLimitChangeAppliesAtOnce(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.smsProvider(t)
	b.setLimit(t, "workspace", "", 1000, true)
	sendN(t, b.key, 5, "fast")
	b.unpaced(t, "fast", 5, 4*time.Second)

	b.setLimit(t, "workspace", "", 1, true)
	sendN(t, b.key, 4, "slow")
	b.paced(t, "slow", 4, 1)
}

// Deleting a limit lifts it at once in the same way: the send just before
// the delete loaded the 1/s limit into the cache, and with it the next
// five sends would reserve tokens 1 to 5 s ahead.
func TestDispatchLimitDeleteAppliesAtOnce(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.smsProvider(t)
	b.setLimit(t, "workspace", "", 1, true)
	sendN(t, b.key, 1, "warm")
	b.delivered(t, "warm", 1, 10*time.Second)
	ls := b.listDispatch(t)
	require.Len(t, ls, 1)
	r := notifytest.Dash(t, b.env.Owner, "DELETE", "/v1/limits/dispatch/"+ls[0].ID, nil)
	require.Equal(t, http.StatusNoContent, r.Status, string(r.Body))
	sendN(t, b.key, 5, "free")
	b.unpaced(t, "free", 5, 4*time.Second)
}

// Synchronous sends (provider test-send here, OTP alike) take tokens but
// never wait; the queued sends after them pay for it.
func TestDispatchSynchronousSendsNeverWait(t *testing.T) {
	t.Parallel()
	b := setup(t)
	p := b.smsProvider(t)
	b.setLimit(t, "provider", p, 1, true)
	start := time.Now()
	for i := range 4 {
		r := notifytest.Dash(t, b.env.Owner, "POST", "/v1/providers/"+p+"/test-send", map[string]any{"mode": "test",
			"recipient": map[string]any{"address": "01012345678"}, "content": map[string]any{"text": fmt.Sprintf("sync-%d", i)}})
		require.Equal(t, http.StatusOK, r.Status, string(r.Body))
	}
	require.Less(t, time.Since(start), 2500*time.Millisecond, "test-sends under a 1/s limit did not wait 3 s")
	// The bucket is 3 tokens in debt: the next queued send waits ~4 s.
	queued := time.Now()
	sendN(t, b.key, 1, "after")
	at := b.delivered(t, "after", 1, 30*time.Second)
	require.GreaterOrEqual(t, at[0].Sub(queued), 3*time.Second)
}

// A wait over 10 s snoozes the job instead of holding a worker slot; the
// snooze does not spend an attempt and every request is still sent.
func TestDispatchLongWaitSnoozes(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("waits ~25 s")
	}
	b := setup(t)
	b.smsProvider(t)
	b.setLimit(t, "workspace", "", 1, true)
	sendN(t, b.key, 13, "snooze") // the 12th and 13th would wait 11 and 12 s
	b.delivered(t, "snooze", 13, 60*time.Second)
	require.GreaterOrEqual(t, scrape(t, b.env.Daemon.URL(), `notifyd_dispatch_limit_snoozes_total{scope="workspace"}`), 2.0)
	// Every request was sent on its first attempt (the last attempt
	// records commit just after the simulator answers).
	var body string
	require.Eventually(t, func() bool {
		r, err := b.env.Owner.Dashboard(ctx, "GET", "/v1/attempts?limit=100", nil)
		if err != nil {
			return false
		}
		body = string(r.Body)
		return r.Status == http.StatusOK && strings.Count(body, `"status":"success"`) == 13
	}, 10*time.Second, 50*time.Millisecond, "attempts: %s", body)
	require.NotContains(t, body, `"status":"failed"`)
}

// scrape reads one sample of a daemon's /metrics at base (0 when absent).
func scrape(t *testing.T, base, series string) float64 {
	t.Helper()
	res, err := http.Get(base + "/metrics")
	require.NoError(t, err)
	defer res.Body.Close()
	body, err := io.ReadAll(res.Body)
	require.NoError(t, err)
	for _, line := range strings.Split(string(body), "\n") {
		if v, ok := strings.CutPrefix(line, series+" "); ok {
			var f float64
			_, err := fmt.Sscan(v, &f)
			require.NoError(t, err)
			return f
		}
	}
	return 0
}
