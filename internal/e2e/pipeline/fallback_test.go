package pipeline_test

import (
	"net/http"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/notifyd/notifyd/internal/dispatch"
	"github.com/notifyd/notifyd/internal/notify"
	"github.com/notifyd/notifyd/internal/notifytest"
)

// SPEC "Fallback classification": every failure class with two routes.
func TestFallbackClasses(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name     string
		first    string // kind of the priority-1 route (the other is priority 2)
		fault    map[string]any
		code     string
		fallback bool
	}{
		{"credit_exhausted vendorB 1030", "vendorb_sms", map[string]any{"vendorCode": "1030"}, "credit_exhausted", true},
		{"credit_exhausted vendorA -201", "vendora_sms", map[string]any{"vendorCode": -201}, "credit_exhausted", false},
		{"rate_limited 429", "vendora_sms", map[string]any{"status": 429}, "rate_limited", true},
		{"temporary_unavailable 500", "vendora_sms", map[string]any{"status": 500}, "temporary_unavailable", true},
		{"temporary_unavailable vendorB 503", "vendorb_sms", map[string]any{"status": 503}, "temporary_unavailable", true},
		{"unknown vendorA code", "vendora_sms", map[string]any{"vendorCode": -999}, "unknown", true},
		{"invalid_request vendorA -301", "vendora_sms", map[string]any{"vendorCode": -301}, "invalid_request", false},
		{"invalid_request vendorB 1062", "vendorb_sms", map[string]any{"vendorCode": "1062"}, "invalid_request", false},
		{"unauthorized 401", "vendora_sms", map[string]any{"status": 401}, "unauthorized", false},
		{"unauthorized vendorB 403", "vendorb_sms", map[string]any{"status": 403}, "unauthorized", false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			b := setup(t)
			second := "vendorb_sms"
			if tc.first == "vendorb_sms" {
				second = "vendora_sms"
			}
			p1, p2 := b.twoRoutes(t, tc.first, second)
			f := map[string]any{"kind": tc.first, "count": 1}
			for k, v := range tc.fault {
				f[k] = v
			}
			fault(t, b, f)
			res := notifytest.Send(t, b.key, notifytest.SMS("01012345678", "class "+tc.code))
			out := notifytest.Wait(t, b.key, res.RequestID)
			require.Equal(t, p1, out.Attempts[0].ProviderAccountID)
			require.Equal(t, "failure", out.Attempts[0].Status)
			require.Equal(t, tc.code, *out.Attempts[0].FailureCode)
			if tc.fallback {
				require.Equal(t, "sent", out.Status)
				require.Len(t, out.Attempts, 2)
				require.Equal(t, p2, out.Attempts[1].ProviderAccountID)
				require.Equal(t, "success", out.Attempts[1].Status)
				require.Equal(t, p2, *out.SelectedProviderAccountID)
				require.Len(t, b.env.Sim.Messages(second, "", 0), 1)
				require.Equal(t, "completed", out.Job.Status)
				return
			}
			require.Equal(t, "failed", out.Status)
			require.Equal(t, tc.code, *out.FinalErrorCode)
			require.NotEmpty(t, *out.FinalErrorMessage)
			require.Len(t, out.Attempts, 1, "no fallback")
			require.Empty(t, b.env.Sim.Messages(second, "", 0))
			require.Equal(t, "failed", out.Job.Status, "a non-retryable failure is not a dead letter")
			require.Equal(t, 1, out.Job.AttemptsMade)
		})
	}
}

// Every route failing retryably: both tried in each job run.
func TestFallbackAllRoutesFailThenRetry(t *testing.T) {
	t.Parallel()
	b := setup(t)
	p1, p2 := b.twoRoutes(t, "vendora_sms", "vendorb_sms")
	fault(t, b, map[string]any{"kind": "vendora_sms", "status": 500, "count": 1})
	fault(t, b, map[string]any{"kind": "vendorb_sms", "status": 429, "count": 1})
	res := notifytest.Send(t, b.key, notifytest.SMS("01012345678", "both down"))
	out := notifytest.Wait(t, b.key, res.RequestID)
	require.Equal(t, "sent", out.Status)
	require.Equal(t, 2, out.Job.AttemptsMade)
	require.Len(t, out.Attempts, 3)
	require.Equal(t, p1, out.Attempts[0].ProviderAccountID)
	require.Equal(t, "temporary_unavailable", *out.Attempts[0].FailureCode)
	require.Equal(t, p2, out.Attempts[1].ProviderAccountID)
	require.Equal(t, "rate_limited", *out.Attempts[1].FailureCode)
	require.Equal(t, p1, out.Attempts[2].ProviderAccountID)
	require.Equal(t, "success", out.Attempts[2].Status)
}

// unsupported_channel: no route of the channel, or only routes whose
// provider or route is disabled.
func TestFallbackUnsupportedChannel(t *testing.T) {
	t.Parallel()
	b := setup(t)
	p1, p2 := b.twoRoutes(t, "vendora_sms", "vendorb_sms")

	// Email has no route at all.
	out := notifytest.Wait(t, b.key, notifytest.Send(t, b.key, notifytest.Email("a@example.com", "s", "x")).RequestID)
	require.Equal(t, "failed", out.Status)
	require.Equal(t, "unsupported_channel", *out.FinalErrorCode)
	require.Empty(t, out.Attempts)
	require.Equal(t, "failed", out.Job.Status)

	// Both sms providers disabled.
	for _, p := range []string{p1, p2} {
		r := notifytest.Dash(t, b.env.Owner, "PATCH", "/v1/providers/"+p, map[string]any{"enabled": false})
		require.Equal(t, http.StatusOK, r.Status, string(r.Body))
	}
	out = notifytest.Wait(t, b.key, notifytest.Send(t, b.key, notifytest.SMS("01012345678", "x")).RequestID)
	require.Equal(t, "failed", out.Status)
	require.Equal(t, "unsupported_channel", *out.FinalErrorCode)
	require.Empty(t, out.Attempts)

	// One enabled again but its route disabled; the other route enabled but
	// its provider disabled.
	r := notifytest.Dash(t, b.env.Owner, "PATCH", "/v1/providers/"+p1, map[string]any{"enabled": true})
	require.Equal(t, http.StatusOK, r.Status, string(r.Body))
	r = notifytest.Dash(t, b.env.Owner, "PUT", "/v1/routes", map[string]any{"routes": []map[string]any{
		{"channel": "sms", "providerAccountId": p1, "priority": 1, "enabled": false},
		{"channel": "sms", "providerAccountId": p2, "priority": 2},
	}})
	require.Equal(t, http.StatusOK, r.Status, string(r.Body))
	out = notifytest.Wait(t, b.key, notifytest.Send(t, b.key, notifytest.SMS("01012345678", "x")).RequestID)
	require.Equal(t, "failed", out.Status)
	require.Equal(t, "unsupported_channel", *out.FinalErrorCode)
	require.Empty(t, b.env.Sim.Messages("", "", 0))
}

// A disabled provider's route is skipped; the next route sends.
func TestFallbackSkipsDisabledProvider(t *testing.T) {
	t.Parallel()
	b := setup(t)
	p1, p2 := b.twoRoutes(t, "vendora_sms", "vendorb_sms")
	r := notifytest.Dash(t, b.env.Owner, "PATCH", "/v1/providers/"+p1, map[string]any{"enabled": false})
	require.Equal(t, http.StatusOK, r.Status, string(r.Body))
	out := notifytest.Wait(t, b.key, notifytest.Send(t, b.key, notifytest.SMS("01012345678", "x")).RequestID)
	require.Equal(t, "sent", out.Status)
	require.Equal(t, p2, *out.SelectedProviderAccountID)
	require.Len(t, out.Attempts, 1)
}

// SPEC "Circuit breaker": 5 consecutive failures open the circuit; the
// next attempt on the provider is skipped as circuit_open and falls back.
func TestCircuitBreakerOpens(t *testing.T) {
	t.Parallel()
	b := setup(t, notifytest.WithQueueJobAttempts(1))
	p1, p2 := b.twoRoutes(t, "vendora_sms", "vendorb_sms")
	fault(t, b, map[string]any{"kind": "vendora_sms", "status": 500, "count": 5})
	for i := 0; i < 5; i++ {
		out := notifytest.Wait(t, b.key, notifytest.Send(t, b.key, notifytest.SMS("01012345678", "trip")).RequestID)
		require.Equal(t, "sent", out.Status)
		require.Len(t, out.Attempts, 2)
		require.Equal(t, "temporary_unavailable", *out.Attempts[0].FailureCode, "request %d", i)
		require.Equal(t, 1, out.Job.MaxAttempts)
	}
	br := b.breaker(t, p1)
	require.Equal(t, notify.BreakerOpen, br.State)
	require.Equal(t, 5, br.Failures)

	// The fault queue is empty: vendora would answer, but the circuit is open.
	out := notifytest.Wait(t, b.key, notifytest.Send(t, b.key, notifytest.SMS("01012345678", "skipped")).RequestID)
	require.Equal(t, "sent", out.Status)
	require.Len(t, out.Attempts, 2)
	require.Equal(t, p1, out.Attempts[0].ProviderAccountID)
	require.Equal(t, "failure", out.Attempts[0].Status)
	require.Equal(t, "circuit_open", *out.Attempts[0].FailureCode)
	require.Equal(t, p2, *out.SelectedProviderAccountID)
	require.Empty(t, b.env.Sim.Messages("vendora_sms", "", 0))

	// With a single route, an open circuit fails the run retryably: the
	// request becomes failed once the (single) attempt is spent.
	notifytest.PutRoutes(t, b.env.Owner, notifytest.Route{Channel: "sms", ProviderAccountID: p1, Priority: 1})
	out = notifytest.Wait(t, b.key, notifytest.Send(t, b.key, notifytest.SMS("01012345678", "alone")).RequestID)
	require.Equal(t, "failed", out.Status)
	require.Equal(t, "circuit_open", *out.FinalErrorCode)
	require.Equal(t, "dead_letter", out.Job.Status)
}

// A success resets the consecutive-failure counter (CLOSED).
func TestCircuitBreakerSuccessResets(t *testing.T) {
	t.Parallel()
	b := setup(t, notifytest.WithQueueJobAttempts(1))
	p1, _ := b.twoRoutes(t, "vendora_sms", "vendorb_sms")
	fault(t, b, map[string]any{"kind": "vendora_sms", "status": 500, "count": 4})
	for i := 0; i < 4; i++ {
		notifytest.Wait(t, b.key, notifytest.Send(t, b.key, notifytest.SMS("01012345678", "fail")).RequestID)
	}
	require.Equal(t, 4, b.breaker(t, p1).Failures)
	out := notifytest.Wait(t, b.key, notifytest.Send(t, b.key, notifytest.SMS("01012345678", "ok")).RequestID)
	require.Equal(t, p1, *out.SelectedProviderAccountID)
	br := b.breaker(t, p1)
	require.Equal(t, notify.BreakerClosed, br.State)
	require.Zero(t, br.Failures)
	// Four more failures do not open it.
	fault(t, b, map[string]any{"kind": "vendora_sms", "status": 500, "count": 4})
	for i := 0; i < 4; i++ {
		notifytest.Wait(t, b.key, notifytest.Send(t, b.key, notifytest.SMS("01012345678", "fail")).RequestID)
	}
	require.Equal(t, notify.BreakerClosed, b.breaker(t, p1).State)
}

// Failures caused by the request (invalid_request) do not count.
func TestCircuitBreakerIgnoresInvalidRequest(t *testing.T) {
	t.Parallel()
	b := setup(t, notifytest.WithQueueJobAttempts(1))
	p1, _ := b.twoRoutes(t, "vendora_sms", "vendorb_sms")
	fault(t, b, map[string]any{"kind": "vendora_sms", "vendorCode": -301, "count": 6})
	for i := 0; i < 6; i++ {
		out := notifytest.Wait(t, b.key, notifytest.Send(t, b.key, notifytest.SMS("01012345678", "bad")).RequestID)
		require.Equal(t, "invalid_request", *out.FinalErrorCode)
	}
	require.Equal(t, notify.BreakerClosed, b.breaker(t, p1).State)
}

// HALF_OPEN: the 60-second open period cannot be waited for and the
// daemon's clock is not injectable, so the test ages the stored breaker
// (OpenedUntil in the past) as 60 s would. One trial is let through;
// success closes the circuit, failure opens it again.
func TestCircuitBreakerHalfOpen(t *testing.T) {
	t.Parallel()
	b := setup(t, notifytest.WithQueueJobAttempts(1))
	p1, p2 := b.twoRoutes(t, "vendora_sms", "vendorb_sms")
	open := func() {
		b.putBreaker(t, &notify.BreakerRecord{ProviderAccountID: p1, State: "OPEN", Failures: 5,
			OpenedUntil: time.Now().Add(-time.Second), UpdatedAt: time.Now()})
	}

	// Trial fails: open again for a full period.
	open()
	fault(t, b, map[string]any{"kind": "vendora_sms", "status": 500, "count": 1})
	out := notifytest.Wait(t, b.key, notifytest.Send(t, b.key, notifytest.SMS("01012345678", "trial fails")).RequestID)
	require.Equal(t, "temporary_unavailable", *out.Attempts[0].FailureCode)
	require.Equal(t, p2, *out.SelectedProviderAccountID)
	br := b.breaker(t, p1)
	require.Equal(t, notify.BreakerOpen, br.State)
	require.WithinDuration(t, time.Now().Add(dispatch.DefaultBreakerOpenFor), br.OpenedUntil, 10*time.Second)
	out = notifytest.Wait(t, b.key, notifytest.Send(t, b.key, notifytest.SMS("01012345678", "still open")).RequestID)
	require.Equal(t, "circuit_open", *out.Attempts[0].FailureCode)

	// Trial succeeds: closed.
	open()
	out = notifytest.Wait(t, b.key, notifytest.Send(t, b.key, notifytest.SMS("01012345678", "trial ok")).RequestID)
	require.Len(t, out.Attempts, 1)
	require.Equal(t, p1, *out.SelectedProviderAccountID)
	br = b.breaker(t, p1)
	require.Equal(t, notify.BreakerClosed, br.State)
	require.Zero(t, br.Failures)
	out = notifytest.Wait(t, b.key, notifytest.Send(t, b.key, notifytest.SMS("01012345678", "closed")).RequestID)
	require.Equal(t, p1, *out.SelectedProviderAccountID)

	// Half-open with a trial in flight: others skip the provider.
	b.putBreaker(t, &notify.BreakerRecord{ProviderAccountID: p1, State: "HALF_OPEN", Failures: 5, TrialInFlight: true,
		OpenedUntil: time.Now().Add(time.Minute), UpdatedAt: time.Now()})
	out = notifytest.Wait(t, b.key, notifytest.Send(t, b.key, notifytest.SMS("01012345678", "trial busy")).RequestID)
	require.Equal(t, "circuit_open", *out.Attempts[0].FailureCode)
	require.Equal(t, p2, *out.SelectedProviderAccountID)
}

// SPEC "Dispatch flow" step 3: preferred routes first, the rest remain
// fallback candidates.
func TestPreferredProviderReorder(t *testing.T) {
	t.Parallel()
	b := setup(t)
	p1 := b.env.SimProvider(t, "vendora_sms", "a", nil)
	p2 := b.env.SimProvider(t, "vendorb_sms", "b", nil)
	p3 := b.env.SimProvider(t, "vendora_sms", "c", nil)
	notifytest.PutRoutes(t, b.env.Owner, notifytest.Route{Channel: "sms", ProviderAccountID: p1, Priority: 1}, notifytest.Route{Channel: "sms", ProviderAccountID: p2, Priority: 2},
		notifytest.Route{Channel: "sms", ProviderAccountID: p3, Priority: 3})

	body := notifytest.SMS("01012345678", "prefer b")
	body["preferredProviderAccountIds"] = []string{p2}
	out := notifytest.Wait(t, b.key, notifytest.Send(t, b.key, body).RequestID)
	require.Equal(t, "sent", out.Status)
	require.Equal(t, p2, *out.SelectedProviderAccountID)
	require.Len(t, out.Attempts, 1)

	// Preferred fails: the remaining routes follow by priority.
	fault(t, b, map[string]any{"kind": "vendorb_sms", "status": 500})
	fault(t, b, map[string]any{"kind": "vendora_sms", "status": 500})
	out = notifytest.Wait(t, b.key, notifytest.Send(t, b.key, body).RequestID)
	require.Equal(t, "sent", out.Status)
	require.Len(t, out.Attempts, 3)
	require.Equal(t, []string{p2, p1, p3}, []string{out.Attempts[0].ProviderAccountID, out.Attempts[1].ProviderAccountID,
		out.Attempts[2].ProviderAccountID})
	require.Equal(t, p3, *out.SelectedProviderAccountID)

	// Two preferred: ordered among themselves by priority.
	body["preferredProviderAccountIds"] = []string{p3, p2}
	fault(t, b, map[string]any{"kind": "vendorb_sms", "status": 500})
	fault(t, b, map[string]any{"kind": "vendora_sms", "status": 500})
	out = notifytest.Wait(t, b.key, notifytest.Send(t, b.key, body).RequestID)
	require.Len(t, out.Attempts, 3)
	require.Equal(t, []string{p2, p3, p1}, []string{out.Attempts[0].ProviderAccountID, out.Attempts[1].ProviderAccountID,
		out.Attempts[2].ProviderAccountID})

	// A preferred provider of the workspace without an sms route changes nothing.
	pe := b.env.SimProvider(t, "mailx_email", "mail", nil)
	body["preferredProviderAccountIds"] = []string{pe}
	out = notifytest.Wait(t, b.key, notifytest.Send(t, b.key, body).RequestID)
	require.Equal(t, p1, *out.SelectedProviderAccountID)
}

func TestPreferredProviderValidation(t *testing.T) {
	t.Parallel()
	b := setup(t)
	p := b.env.SimProvider(t, "vendora_sms", "a", nil)
	notifytest.PutRoutes(t, b.env.Owner, notifytest.Route{Channel: "sms", ProviderAccountID: p, Priority: 1})
	other := setup(t)
	foreign := other.env.SimProvider(t, "vendora_sms", "theirs", nil)

	many := make([]string, 11)
	for i := range many {
		many[i] = uuid.NewString()
	}
	for name, ids := range map[string][]string{
		"other workspace": {p, foreign},
		"unknown id":      {uuid.NewString()},
		"more than 10":    many,
		"not a uuid":      {"provider-1"},
		"uuid no hyphens": {"0190c0de0000700080000000000000aa"},
		"empty string":    {""},
	} {
		t.Run(name, func(t *testing.T) {
			body := notifytest.SMS("01012345678", "x")
			body["preferredProviderAccountIds"] = ids
			notifytest.RequireProblem(t, notifytest.Signed(t, b.key, "POST", "/v1/notifications", body), http.StatusBadRequest, "SVC-40000")
		})
	}
	body := notifytest.SMS("01012345678", "x")
	body["preferredProviderAccountIds"] = []string{"x"}
	r := notifytest.Signed(t, b.key, "POST", "/v1/notifications/bulk", map[string]any{"items": []any{body}})
	notifytest.RequireProblem(t, r, http.StatusBadRequest, "SVC-40000")
	// Exactly 10 is allowed (duplicates of one id).
	ten := make([]string, 10)
	for i := range ten {
		ten[i] = p
	}
	body["preferredProviderAccountIds"] = ten
	out := notifytest.Wait(t, b.key, notifytest.Send(t, b.key, body).RequestID)
	require.Equal(t, "sent", out.Status)
	require.Zero(t, b.metrics(t, "").TotalRequests-1, "only the valid send was stored")
}
