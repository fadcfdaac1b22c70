// Package batching_test checks adapter batching (SPEC "Adapter batching")
// through the real daemon and the provider simulator.
package batching_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/notifyd/notifyd/client"
	"github.com/notifyd/notifyd/internal/notify"
	"github.com/notifyd/notifyd/internal/notifytest"
	"github.com/notifyd/notifyd/internal/simulator"
	"github.com/notifyd/notifyd/internal/store/sqlstore"
)

var ctx = context.Background()

type bundle struct {
	env *notifytest.Env
	key *client.Client
}

func setup(t *testing.T) *bundle {
	t.Helper()
	env := notifytest.StartDaemon(t)
	key, _ := env.APIKey(t, "test", "notifications:send", "notifications:read", "otp:send", "otp:verify")
	return &bundle{env: env, key: key}
}

// call is the providerCall of one dashboard attempt record.
type call struct {
	BatchSize  int             `json:"batchSize"`
	BatchIndex int             `json:"batchIndex"`
	URL        string          `json:"url"`
	Body       json.RawMessage `json:"body"`
}

// providerCall returns the providerCall of the request's only attempt.
func (b *bundle) providerCall(t *testing.T, requestID string) call {
	t.Helper()
	r := notifytest.Dash(t, b.env.Owner, "GET", "/v1/attempts?requestId="+requestID, nil)
	out := notifytest.Decode[struct {
		Attempts []struct {
			Request struct {
				ProviderCall call `json:"providerCall"`
			} `json:"request"`
		} `json:"attempts"`
	}](t, r, http.StatusOK)
	require.Len(t, out.Attempts, 1)
	return out.Attempts[0].Request.ProviderCall
}

// calls groups the simulator's messages of kind by vendor call.
func calls(sim *simulator.Simulator, kind string) map[uint64][]simulator.Message {
	out := map[uint64][]simulator.Message{}
	for _, m := range sim.Messages(kind, "", 0) {
		out[m.Call] = append(out[m.Call], m)
	}
	return out
}

// metric returns the value of the sample of /metrics that starts with prefix.
func (b *bundle) metric(t *testing.T, prefix string) string {
	t.Helper()
	resp, err := http.Get(b.env.Daemon.URL() + "/metrics")
	require.NoError(t, err)
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	for _, line := range strings.Split(string(body), "\n") {
		if strings.HasPrefix(line, prefix+" ") {
			return strings.TrimPrefix(line, prefix+" ")
		}
	}
	return ""
}

// N queued sends to one account arrive in fewer vendor calls, and every
// message's attempt carries its own result and its place in its call.
func TestQueuedSendsShareVendorCalls(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.env.SimRoute(t, "sms", "vendorb_sms", nil)
	const n = 30
	items := make([]any, n)
	for i := range items {
		items[i] = notifytest.SMS(fmt.Sprintf("0109999%04d", i), fmt.Sprintf("batched %d", i))
	}
	ids := notifytest.Bulk(t, b.key, items)
	byTo := map[string]string{}
	for _, m := range b.waitSim(t, "vendorb_sms", n) {
		byTo[m.To] = m.ID
	}
	groups := calls(b.env.Sim, "vendorb_sms")
	require.Less(t, len(groups), n/3, "30 queued sends within one window need only a few calls")
	sizes := 0
	for i, id := range ids {
		o := notifytest.Wait(t, b.key, id)
		require.Equal(t, "sent", o.Status)
		require.Len(t, o.Attempts, 1)
		require.Equal(t, "success", o.Attempts[0].Status)
		to := fmt.Sprintf("0109999%04d", i)
		require.Equal(t, byTo[to], *o.Attempts[0].ProviderMessageID, "each message gets its own vendor id")
		c := b.providerCall(t, id)
		require.GreaterOrEqual(t, c.BatchSize, 1)
		require.Less(t, c.BatchIndex, c.BatchSize)
		require.Contains(t, string(c.Body), to, "the call that carried the message")
		other := fmt.Sprintf("0109999%04d", (i+1)%n)
		require.NotContains(t, string(c.Body), other, "only this message's part of the shared call")
		sizes = max(sizes, c.BatchSize)
	}
	require.Greater(t, sizes, 1)
	flushes := b.metric(t, `notifyd_batch_flushes_total{kind="vendorb_sms",reason="window"}`)
	require.NotEmpty(t, flushes)
	require.Equal(t, fmt.Sprint(len(groups)), b.metric(t, `notifyd_provider_api_calls_total{kind="vendorb_sms"}`))
	require.Equal(t, fmt.Sprint(n), b.metric(t, `notifyd_batch_size_sum{kind="vendorb_sms"}`))
}

// waitSim waits until the simulator holds n messages of kind.
func (b *bundle) waitSim(t *testing.T, kind string, n int) []simulator.Message {
	t.Helper()
	var ms []simulator.Message
	require.Eventually(t, func() bool {
		ms = b.env.Sim.Messages(kind, "", 0)
		return len(ms) >= n
	}, 30*time.Second, 20*time.Millisecond)
	return ms
}

// A refused message of a batch fails on its own (invalid_request ends its
// run); its batch partners are sent.
func TestPartialBatchFailure(t *testing.T) {
	t.Parallel()
	b := setup(t)
	cfg := b.env.SimConfig("vendorb_sms", nil)
	cfg["dispatch_batch_window_ms"] = "2000" // all three join, even on a loaded machine
	b.env.SimRoute(t, "sms", "vendorb_sms", cfg)
	ids := notifytest.Bulk(t, b.key, []any{notifytest.SMS("01055550001", "one"), notifytest.SMS("0105", "bad number"), notifytest.SMS("01055550003", "three")})
	bad := notifytest.Wait(t, b.key, ids[1])
	require.Equal(t, "failed", bad.Status)
	require.Len(t, bad.Attempts, 1)
	require.Equal(t, "invalid_request", *bad.Attempts[0].FailureCode)
	for _, id := range []string{ids[0], ids[2]} {
		require.Equal(t, "sent", notifytest.Wait(t, b.key, id).Status)
	}
	groups := calls(b.env.Sim, "vendorb_sms")
	require.Len(t, groups, 1, "one call carried all three")
	require.Equal(t, 3, b.providerCall(t, ids[1]).BatchSize)
}

// configJson overrides: a max batch size of 4 and a long window make full
// flushes of 4; the rest leaves at the window.
func TestConfigOverrides(t *testing.T) {
	t.Parallel()
	b := setup(t)
	cfg := b.env.SimConfig("vendora_sms", nil)
	cfg["dispatch_max_batch_size"] = "4"
	cfg["dispatch_batch_window_ms"] = "1500"
	cfg["dispatch_max_requests_per_second"] = "0"
	b.env.SimRoute(t, "sms", "vendora_sms", cfg)
	items := make([]any, 10)
	for i := range items {
		items[i] = notifytest.SMS(fmt.Sprintf("0108888%04d", i), fmt.Sprintf("override %d", i))
	}
	ids := notifytest.Bulk(t, b.key, items)
	for _, id := range ids {
		require.Equal(t, "sent", notifytest.Wait(t, b.key, id).Status)
	}
	sizes := map[int]int{}
	for _, g := range calls(b.env.Sim, "vendora_sms") {
		sizes[len(g)]++
	}
	require.Equal(t, map[int]int{4: 2, 2: 1}, sizes)
	require.Equal(t, "2", b.metric(t, `notifyd_batch_flushes_total{kind="vendora_sms",reason="full"}`))
	require.Equal(t, "1", b.metric(t, `notifyd_batch_flushes_total{kind="vendora_sms",reason="window"}`))
}

// SPEC: configJson keys are not validated at registration. Bad overrides
// are accepted at registration and update, and ignored at send time: the
// kind's defaults apply.
func TestConfigOverrideNotValidated(t *testing.T) {
	t.Parallel()
	b := setup(t)
	cfg := b.env.SimConfig("vendora_sms", nil)
	cfg["dispatch_max_requests_per_second"] = "-1"
	cfg["dispatch_batch_window_ms"] = "soon"
	cfg["dispatch_max_batch_size"] = "0"
	id := b.env.SimRoute(t, "sms", "vendora_sms", cfg)
	r := notifytest.Dash(t, b.env.Owner, "POST", "/v1/providers", map[string]any{"providerKind": "maily_email", "displayName": "ses",
		"configJson": map[string]string{"dispatch_max_batch_size": "50"}})
	require.Equal(t, http.StatusCreated, r.Status, string(r.Body))
	cfg["dispatch_batch_window_ms"] = "60001"
	r = notifytest.Dash(t, b.env.Owner, "PATCH", "/v1/providers/"+id, map[string]any{"configJson": cfg})
	require.Equal(t, http.StatusOK, r.Status, string(r.Body))

	// The sends still go, batched with the defaults (800 ms window, one call).
	cfg["dispatch_batch_window_ms"] = "soon"
	r = notifytest.Dash(t, b.env.Owner, "PATCH", "/v1/providers/"+id, map[string]any{"configJson": cfg})
	require.Equal(t, http.StatusOK, r.Status, string(r.Body))
	ids := notifytest.Bulk(t, b.key, []any{notifytest.SMS("01077770011", "a"), notifytest.SMS("01077770012", "b"), notifytest.SMS("01077770013", "c")})
	for _, id := range ids {
		require.Equal(t, "sent", notifytest.Wait(t, b.key, id).Status)
	}
	sizes := map[int]int{}
	for _, g := range calls(b.env.Sim, "vendora_sms") {
		sizes[len(g)]++
	}
	require.Equal(t, map[int]int{3: 1}, sizes, "one call of three: the default window and size")
}

// OTP and test-sends are synchronous: they leave at once, not after the
// batch window (5 s here), even while a queued send waits in a batch of
// the account.
func TestSynchronousSendsSkipWindow(t *testing.T) {
	t.Parallel()
	b := setup(t)
	cfg := b.env.SimConfig("vendora_sms", nil)
	cfg["dispatch_batch_window_ms"] = "5000"
	id := b.env.SimRoute(t, "sms", "vendora_sms", cfg)
	queued := notifytest.Bulk(t, b.key, []any{notifytest.SMS("01077770001", "queued")})

	start := time.Now()
	r, err := b.key.Signed(ctx, "POST", "/v1/otp", map[string]any{"channel": "sms", "to": "01077770002"})
	require.NoError(t, err)
	require.Equal(t, http.StatusCreated, r.Status, string(r.Body))
	require.Less(t, time.Since(start), 1500*time.Millisecond, "OTP waits for no batch window")
	require.Len(t, b.env.Sim.Messages("vendora_sms", "01077770002", 0), 1)

	start = time.Now()
	r = notifytest.Dash(t, b.env.Owner, "POST", "/v1/providers/"+id+"/test-send", map[string]any{"mode": "test",
		"recipient": map[string]any{"address": "01077770003"}, "content": map[string]any{"text": "test"}})
	require.Equal(t, http.StatusOK, r.Status, string(r.Body))
	require.Less(t, time.Since(start), 1500*time.Millisecond, "a test-send waits for no batch window")
	require.Len(t, b.env.Sim.Messages("vendora_sms", "01077770003", 0), 1)

	require.Empty(t, b.env.Sim.Messages("vendora_sms", "01077770001", 0), "the queued send still waits for its window")
	require.Equal(t, "sent", notifytest.Wait(t, b.key, queued[0]).Status)
	require.Equal(t, "2", b.metric(t, `notifyd_batch_flushes_total{kind="vendora_sms",reason="sync"}`))
}

// The dispatch_max_requests_per_second override caps the account's calls:
// batches of 2 at 4 calls per second are at least 250 ms apart.
func TestRequestsPerSecondOverride(t *testing.T) {
	t.Parallel()
	b := setup(t)
	cfg := b.env.SimConfig("vendorb_sms", nil)
	cfg["dispatch_max_batch_size"] = "2"
	cfg["dispatch_batch_window_ms"] = "0"
	cfg["dispatch_max_requests_per_second"] = "4"
	b.env.SimRoute(t, "sms", "vendorb_sms", cfg)
	items := make([]any, 10)
	for i := range items {
		items[i] = notifytest.SMS(fmt.Sprintf("0106666%04d", i), fmt.Sprintf("capped %d", i))
	}
	for _, id := range notifytest.Bulk(t, b.key, items) {
		require.Equal(t, "sent", notifytest.Wait(t, b.key, id).Status)
	}
	var at []time.Time
	for _, g := range calls(b.env.Sim, "vendorb_sms") {
		require.LessOrEqual(t, len(g), 2)
		at = append(at, g[0].ReceivedAt)
	}
	require.GreaterOrEqual(t, len(at), 5)
	sort.Slice(at, func(i, j int) bool { return at[i].Before(at[j]) })
	for i := 1; i < len(at); i++ {
		require.GreaterOrEqual(t, at[i].Sub(at[i-1]), 150*time.Millisecond, "calls %d and %d", i-1, i)
	}
	require.GreaterOrEqual(t, at[len(at)-1].Sub(at[0]), 900*time.Millisecond, "5 calls or more at 4 a second")
}

// TestBacklogBeyondBudgetSnoozes: when the call budget cannot serve a
// backlog within the jobs' time, a waiting message leaves its batch with
// half its job's time left and the job snoozes: no run times out (a run
// timing out records nothing and costs one of River's 25 attempts, and a
// job out of them would strand its request). Twelve sends at 2 calls a
// second take 6 s against runs bounded to 2 s; all go out once, each with
// one attempt record, and no River job holds an error.
func TestBacklogBeyondBudgetSnoozes(t *testing.T) {
	t.Parallel()
	env := notifytest.StartDaemon(t, notifytest.WithQueueJobAttempts(1), notifytest.WithJobRescueAfter(3*time.Second))
	b := &bundle{env: env, key: env.SendKey(t)}
	cfg := b.env.SimConfig("vendorb_sms", nil)
	cfg["dispatch_max_batch_size"] = "1"
	cfg["dispatch_batch_window_ms"] = "0"
	cfg["dispatch_max_requests_per_second"] = "2"
	b.env.SimRoute(t, "sms", "vendorb_sms", cfg)
	items := make([]any, 12)
	for i := range items {
		items[i] = notifytest.SMS(fmt.Sprintf("0107777%04d", i), fmt.Sprintf("backlog %d", i))
	}
	for _, id := range notifytest.Bulk(t, b.key, items) {
		r := notifytest.Wait(t, b.key, id)
		require.Equal(t, "sent", r.Status)
		require.Len(t, r.Attempts, 1, "a snooze leaves no attempt record")
	}
	require.Len(t, b.env.Sim.Messages("vendorb_sms", "", 0), 12, "each message sent once")
	var failedRuns int
	require.NoError(t, env.Daemon.DB.View(ctx, func(tx notify.Tx) error {
		c := tx.(interface{ Conn() sqlstore.Conn }).Conn()
		return c.QueryRow(ctx, `SELECT COUNT(*) FROM river_job WHERE kind = 'dispatch' AND errors IS NOT NULL`).Scan(&failedRuns)
	}))
	require.Zero(t, failedRuns, "no dispatch run ended in an error")
}
