// Package testmode_test runs test mode (issue 36, item 1) end to end on
// the suite's backend (SQLite, or PostgreSQL when
// NOTIFYD_TEST_DATABASE_URL is set): a test-mode key's sends run the
// pipeline but reach only the daemon's built-in simulator, never the
// address their route names; the magic recipients' outcomes; test
// traffic marked in lookups, events, the console and the metrics, and
// kept out of live traffic's request and dispatch limits.
package testmode_test

import (
	"net"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/notifyd/notifyd/internal/notify"
	"github.com/notifyd/notifyd/internal/notifytest"
	"github.com/notifyd/notifyd/internal/simulator"
	"github.com/notifyd/notifyd/internal/testmode"
)

// tripwire listens where a route points and counts the connections made
// to it: a test request must make none.
type tripwire struct {
	addr  string
	conns atomic.Int32
}

func newTripwire(t *testing.T) *tripwire {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	t.Cleanup(func() { _ = ln.Close() })
	tw := &tripwire{addr: "http://" + ln.Addr().String()}
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			tw.conns.Add(1)
			_ = c.Close()
		}
	}()
	return tw
}

// The first "done" line: a test-mode key's sends reach only the
// simulator even when the route points elsewhere; no connection is made
// to the route's address, which a live key's send does reach.
func TestTestKeyNeverReachesTheRoutesAddress(t *testing.T) {
	t.Parallel()
	e := notifytest.StartDaemon(t)
	tw := newTripwire(t)
	sms := e.SimProvider(t, "vendora_sms", "sms", map[string]string{"base_url": tw.addr})
	mail := e.SimProvider(t, "mailx_email", "mail", map[string]string{"base_url": tw.addr})
	chat := notifytest.RegisterProvider(t, e.Owner, "chata_webhook", "slack",
		map[string]string{"chata_webhook_url": tw.addr + "/services/T0/B0/XXXX"})
	notifytest.PutRoutes(t, e.Owner, notifytest.Route{Channel: "sms", ProviderAccountID: sms, Priority: 1},
		notifytest.Route{Channel: "email", ProviderAccountID: mail, Priority: 1},
		notifytest.Route{Channel: "chata_webhook", ProviderAccountID: chat, Priority: 1})
	hooks := notifytest.NewReceiver(t, nil)
	notifytest.DashboardCall(t, e.Owner, "POST", "/v1/webhooks",
		map[string]any{"url": hooks.URL, "events": []string{"notification.delivered"}}, http.StatusCreated)

	tk, keyID := e.TestKey(t, "staging", "notifications:send", "notifications:read")
	require.True(t, strings.HasPrefix(keyID, notify.TestKeyPrefix), keyID)
	sends := []struct {
		body map[string]any
		kind string
		to   string
		text string
	}{
		{notifytest.SMS("010-1234-5678", "your code is 1234"), "vendora_sms", "010-1234-5678", "your code is 1234"},
		{notifytest.Email("Someone@Example.com", "Hi", "hello by mail"), "mailx_email", "someone@example.com", "hello by mail"},
		{map[string]any{"channel": "chata_webhook", "recipient": map[string]any{"address": "ops"}, "content": map[string]any{"text": "deploy done"}},
			"chata_webhook", "/services/T0/B0/XXXX", "deploy done"},
	}
	for _, s := range sends {
		id := notifytest.Send(t, tk, s.body).RequestID
		out := notifytest.Wait(t, tk, id)
		require.Equal(t, "sent", out.Status, "%s: %v", s.kind, out.FinalErrorMessage)
		require.True(t, out.Test, "the lookup marks test traffic")
		require.Len(t, out.Attempts, 1)
		require.Equal(t, s.kind, out.Attempts[0].ProviderKind)
		if s.kind != "chata_webhook" { // Slack's webhooks answer no message id
			require.NotNil(t, out.SelectedProviderMessageID, s.kind)
		}
		got := e.Daemon.TestSimulator.Messages(s.kind, s.to, 0)
		require.Len(t, got, 1, "%s reached the built-in simulator in the vendor's format", s.kind)
		require.Equal(t, s.text, got[0].Text)

		evs := hooks.AwaitEvent(t, id, "notification.delivered")
		require.NotEmpty(t, evs)
		// The dashboard's message list and detail mark it too.
		detail := notifytest.Decode[map[string]any](t, notifytest.Dash(t, e.Owner, "GET", "/v1/requests/"+id, nil), http.StatusOK)
		require.Equal(t, true, detail["test"])
	}
	for _, rq := range hooks.Requests() {
		require.Contains(t, string(rq.Body), `"test":true`, "webhook events of test requests say so")
	}
	require.Empty(t, e.Sim.Messages("", "", 0), "the suite's own simulator got nothing")
	require.Zero(t, tw.conns.Load(), "no connection to the route's address")
	require.EqualValues(t, 3, notifytest.Counter(t, e.Daemon.Metrics.Registry, "notifyd_provider_attempts_total",
		map[string]string{"mode": "test", "result": "success"}))
	require.Zero(t, notifytest.Counter(t, e.Daemon.Metrics.Registry, "notifyd_provider_attempts_total", map[string]string{"mode": "live"}))

	// The same route with a live key does reach the address: the tripwire
	// would have seen a test request's call.
	live := e.SendKey(t)
	liveID := notifytest.Send(t, live, notifytest.SMS("010-1234-5678", "live")).RequestID
	deadline := time.Now().Add(notifytest.WaitTimeout)
	for tw.conns.Load() == 0 {
		require.True(t, time.Now().Before(deadline), "the live send never dialled the route's address")
		time.Sleep(20 * time.Millisecond)
	}
	require.False(t, notifytest.Lookup(t, live, liveID).Test)
	require.Len(t, e.Daemon.TestSimulator.Messages("vendora_sms", "", 0), 1, "the live send did not go to the test simulator")
}

// outcome is what a magic recipient's test send must come to.
type outcome struct {
	status   string
	failures []string // the attempts' failure codes in order, "" for a success
	bounce   bool     // a permanent bounce recorded on the successful attempt
}

// Each magic recipient gives its documented outcome (README "Test mode").
func TestMagicRecipients(t *testing.T) {
	t.Parallel()
	e := notifytest.StartDaemon(t)
	sms := e.SimProvider(t, "vendora_sms", "sms", nil)
	mail := e.SimProvider(t, "mailx_email", "mail", nil)
	notifytest.PutRoutes(t, e.Owner, notifytest.Route{Channel: "sms", ProviderAccountID: sms, Priority: 1},
		notifytest.Route{Channel: "email", ProviderAccountID: mail, Priority: 1})
	tk, _ := e.TestKey(t, "staging", "notifications:send", "notifications:read")

	delivered := outcome{status: "sent", failures: []string{""}}
	cases := []struct {
		body map[string]any
		want outcome
	}{
		{notifytest.SMS("010-0000-0001", "t"), delivered},
		{notifytest.SMS("010-0000-0002", "t"), outcome{status: "sent", failures: []string{"temporary_unavailable", ""}}},
		{notifytest.SMS("01000000003", "t"), outcome{status: "failed", failures: []string{"invalid_request"}}},
		{notifytest.SMS("010-0000-0004", "t"), delivered}, // no bounce on SMS
		{notifytest.SMS("010-0000-0005", "t"), delivered}, // late report: accepted, its report below
		{notifytest.Email("delivered@notifyd.test", "s", "t"), delivered},
		{notifytest.Email("TempFail@notifyd.test", "s", "t"), outcome{status: "sent", failures: []string{"temporary_unavailable", ""}}},
		{notifytest.Email("permfail@notifyd.test", "s", "t"), outcome{status: "failed", failures: []string{"invalid_request"}}},
		{notifytest.Email("bounce@notifyd.test", "s", "t"), outcome{status: "sent", failures: []string{""}, bounce: true}},
		{notifytest.Email("late@notifyd.test", "s", "t"), delivered},
	}
	ids := make([]string, len(cases))
	for i, c := range cases {
		ids[i] = notifytest.Send(t, tk, c.body).RequestID
	}
	for i, c := range cases {
		out := notifytest.Wait(t, tk, ids[i])
		to := out.RecipientAddress
		require.Equal(t, c.want.status, out.Status, to)
		require.True(t, out.Test)
		var got []string
		for _, at := range out.Attempts {
			code := ""
			if at.FailureCode != nil {
				code = *at.FailureCode
			}
			got = append(got, code)
		}
		require.Equal(t, c.want.failures, got, to)
		if c.want.status == "failed" {
			require.Equal(t, "invalid_request", *out.FinalErrorCode, to)
		}
		last := out.Attempts[len(out.Attempts)-1]
		if c.want.bounce {
			require.Len(t, last.DeliveryFeedback, 1, to)
			require.Equal(t, "bounce", last.DeliveryFeedback[0].Type)
			require.Equal(t, "permanent", *last.DeliveryFeedback[0].BounceType)
			require.False(t, last.DeliveryFeedback[0].Suppressed)
		} else {
			require.Empty(t, last.DeliveryFeedback, to)
		}
	}
	// The late-report number's delivery report is final only
	// LateReportDelay after the send (any other number's after half a
	// second), so its receipt is still pending when the send is over.
	readyIn := map[string]time.Duration{}
	for _, r := range e.Daemon.TestSimulator.Reports("vendora_sms", "") {
		readyIn[strings.ReplaceAll(r.To, "-", "")] = r.ReadyAt.Sub(r.SentAt)
	}
	require.Equal(t, testmode.LateReportDelay, readyIn["01000000005"])
	require.Equal(t, simulator.DefaultReportDelay, readyIn["01000000001"])
	late := notifytest.Lookup(t, tk, ids[4])
	require.NotNil(t, late.DeliveryStatus)
	require.Equal(t, "pending", late.DeliveryStatus.Status)

	// The bounce address stays off the suppression list: the test can be
	// repeated, and gives the same outcome.
	supp := notifytest.Decode[map[string]any](t, notifytest.Dash(t, e.Owner, "GET", "/v1/suppressions?address=bounce@notifyd.test", nil), http.StatusOK)
	require.Empty(t, supp["suppressions"])
	again := notifytest.Wait(t, tk, notifytest.Send(t, tk, notifytest.Email("bounce@notifyd.test", "s", "t")).RequestID)
	require.Equal(t, "sent", again.Status)
	require.Len(t, again.Attempts[0].DeliveryFeedback, 1)

	// Magic addresses mean nothing to a live key: delivered as usual.
	live := e.SendKey(t)
	out := notifytest.Wait(t, live, notifytest.Send(t, live, notifytest.SMS("010-0000-0003", "t")).RequestID)
	require.Equal(t, "sent", out.Status)
	require.False(t, out.Test)
	require.Len(t, e.Sim.Messages("vendora_sms", "010-0000-0003", 0), 1)
	require.Len(t, e.Sim.Messages("vendora_sms", "", 0), 1, "test sends never reach the suite's simulator")
}

// The magic outcome of a temporary failure with a second route: the
// first route's 500 falls back to the second, in the same run.
func TestMagicTemporaryFailureFallsBack(t *testing.T) {
	t.Parallel()
	e := notifytest.StartDaemon(t)
	p1 := e.SimProvider(t, "vendora_sms", "first", nil)
	p2 := e.SimProvider(t, "vendorb_sms", "second", nil)
	notifytest.PutRoutes(t, e.Owner, notifytest.Route{Channel: "sms", ProviderAccountID: p1, Priority: 1},
		notifytest.Route{Channel: "sms", ProviderAccountID: p2, Priority: 2})
	tk, _ := e.TestKey(t, "staging", "notifications:send", "notifications:read")
	out := notifytest.Wait(t, tk, notifytest.Send(t, tk, notifytest.SMS("010-0000-0002", "t")).RequestID)
	require.Equal(t, "sent", out.Status)
	require.Len(t, out.Attempts, 2)
	require.Equal(t, "temporary_unavailable", *out.Attempts[0].FailureCode)
	require.Equal(t, p2, *out.SelectedProviderAccountID)
	require.Len(t, e.Daemon.TestSimulator.Messages("vendorb_sms", "010-0000-0002", 0), 1, "Solapi's format")
	require.Equal(t, 1, out.Job.AttemptsMade, "no job retry was needed")
}

// Test traffic is kept out of live traffic's request limit (its own
// workspace window, under the same limit) and takes no dispatch-limit
// tokens.
func TestTestTrafficOutOfLiveLimits(t *testing.T) {
	t.Parallel()
	e := notifytest.StartDaemon(t)
	sms := e.SimProvider(t, "vendora_sms", "sms", nil)
	notifytest.PutRoutes(t, e.Owner, notifytest.Route{Channel: "sms", ProviderAccountID: sms, Priority: 1})
	notifytest.DashboardCall(t, e.Owner, "PUT", "/v1/limits/rate/workspace",
		map[string]any{"windowSeconds": 3600, "maxRequests": 3}, http.StatusOK)
	live := e.SendKey(t)
	tk, _ := e.TestKey(t, "staging", "notifications:send", "notifications:read")
	var liveIDs []string
	for range 3 {
		liveIDs = append(liveIDs, notifytest.Send(t, live, notifytest.SMS("010-1234-5678", "live")).RequestID)
	}
	r := notifytest.Signed(t, live, "POST", "/v1/notifications", notifytest.SMS("010-1234-5678", "live"))
	require.Equal(t, http.StatusTooManyRequests, r.Status)
	require.Equal(t, "SVC-4290", r.Problem().Code)
	// The live window is full; the test key's requests count in their own.
	var ids []string
	for range 3 {
		ids = append(ids, notifytest.Send(t, tk, notifytest.SMS("010-0000-0001", "test")).RequestID)
	}
	r = notifytest.Signed(t, tk, "POST", "/v1/notifications", notifytest.SMS("010-0000-0001", "test"))
	require.Equal(t, http.StatusTooManyRequests, r.Status, "the same limit applies to test traffic's own window")
	require.Equal(t, "SVC-4290", r.Problem().Code)

	// (Lookups count too: the limit is raised before the waits.)
	notifytest.DashboardCall(t, e.Owner, "PUT", "/v1/limits/rate/workspace",
		map[string]any{"windowSeconds": 3600, "maxRequests": 1000}, http.StatusOK)
	for _, id := range liveIDs {
		require.Equal(t, "sent", notifytest.Wait(t, live, id).Status)
	}
	// A workspace dispatch limit of one send a second: twenty test sends
	// take no token, so they are not paced (paced, they would take 20 s).
	notifytest.DashboardCall(t, e.Owner, "PUT", "/v1/limits/dispatch",
		map[string]any{"scope": "workspace", "ratePerSecond": 1, "enabled": true}, http.StatusOK)
	items := make([]any, 20)
	for i := range items {
		items[i] = notifytest.SMS("010-0000-0001", "paced?")
	}
	start := time.Now()
	ids = append(ids, notifytest.Bulk(t, tk, items)...)
	for _, id := range ids {
		require.Equal(t, "sent", notifytest.Wait(t, tk, id).Status)
	}
	require.Less(t, time.Since(start), 15*time.Second, "test sends waited for dispatch-limit tokens (paced, 20 s or more)")
	require.Zero(t, notifytest.HistogramCount(t, e.Daemon.Metrics.Registry, "notifyd_dispatch_limit_wait_seconds"), "no test send reserved a token")
	// The limit is in force for live sends: theirs take tokens.
	for _, id := range notifytest.Bulk(t, live, items[:2]) {
		require.Equal(t, "sent", notifytest.Wait(t, live, id).Status)
	}
	require.NotZero(t, notifytest.HistogramCount(t, e.Daemon.Metrics.Registry, "notifyd_dispatch_limit_wait_seconds"))
}

// An OTP signed with a test key goes to the simulator too (the caller
// waits: no retry), and its magic recipients answer as documented.
func TestTestKeyOTP(t *testing.T) {
	t.Parallel()
	e := notifytest.StartDaemon(t)
	tw := newTripwire(t)
	sms := e.SimProvider(t, "vendorb_sms", "sms", map[string]string{"base_url": tw.addr})
	notifytest.PutRoutes(t, e.Owner, notifytest.Route{Channel: "sms", ProviderAccountID: sms, Priority: 1})
	tk, _ := e.TestKey(t, "staging", "otp:send", "otp:verify")
	r := notifytest.Signed(t, tk, "POST", "/v1/otp", map[string]any{"channel": "sms", "to": "010-0000-0001"})
	require.Equal(t, http.StatusCreated, r.Status, string(r.Body))
	got := e.Daemon.TestSimulator.Messages("vendorb_sms", "", 0)
	require.Len(t, got, 1)
	require.Regexp(t, `\d{6}`, got[0].Text, "the code, in Solapi's format")
	r = notifytest.Signed(t, tk, "POST", "/v1/otp", map[string]any{"channel": "sms", "to": "010-0000-0003"})
	require.Equal(t, http.StatusBadGateway, r.Status, string(r.Body))
	require.Contains(t, r.Problem().Detail, "invalid_request")
	require.Zero(t, tw.conns.Load())
}
