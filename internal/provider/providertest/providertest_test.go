package providertest

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/notifyd/notifyd/internal/notify"
	"github.com/notifyd/notifyd/internal/provider"
	"github.com/notifyd/notifyd/internal/provider/kinds"
)

// kindIDs are the kinds under test: every registered one.
func kindIDs() []string { return kinds.All().IDs() }

func TestEveryKindCovered(t *testing.T) {
	t.Parallel()
	ids := kindIDs()
	require.Len(t, ids, 12)
	for _, id := range ids {
		_, ok := cases[id]
		require.True(t, ok, "no test case for kind %s", id)
	}
	require.Len(t, cases, len(ids), "a test case for an unregistered kind")
}

func send(t *testing.T, p provider.Provider, msgs ...provider.Message) []provider.Result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	res := p.Send(ctx, msgs)
	require.Len(t, res, len(msgs), "one result per message")
	return res
}

// requireRecorded checks that the simulator recorded m exactly once, as
// the kind's case says, under the id the adapter reported.
func requireRecorded(t *testing.T, e *env, kind string, m provider.Message, r provider.Result) {
	t.Helper()
	c := cases[kind]
	want := c.want(m)
	got := e.sim.Messages(kind, want.To, 0)
	require.Len(t, got, 1, "%s: messages recorded for %q", kind, want.To)
	g := got[0]
	require.Equal(t, kind, g.Kind)
	require.Equal(t, want.Subject, g.Subject, "subject")
	require.Equal(t, want.Text, g.Text, "text")
	require.Equal(t, want.HTML, g.HTML, "html")
	for k, v := range want.Headers {
		if v == "" {
			require.NotContains(t, g.Headers, k, "header %s must be absent", k)
			continue
		}
		require.Equal(t, v, g.Headers[k], "header %s (all: %v)", k, g.Headers)
	}
	require.True(t, c.idOK(r.MessageID, g.ID), "%s: result id %q does not fit the recorded id %q", kind, r.MessageID, g.ID)
}

// requireExchange checks the recorded vendor call of a result.
func requireExchange(t *testing.T, ex provider.Exchange, status int) {
	t.Helper()
	require.NotEmpty(t, ex.Method)
	require.NotEmpty(t, ex.URL)
	require.NotNil(t, ex.Request, "the request is logged")
	require.NotNil(t, ex.Response, "the answer is kept")
	require.Equal(t, status, ex.Response.HTTPStatus, "body: %s", ex.Response.Body)
	require.NotEmpty(t, ex.Response.Body)
	b, err := json.Marshal(ex)
	require.NoError(t, err)
	for _, s := range secrets {
		require.NotContains(t, string(b), s, "a credential leaked into the attempt history")
	}
	for _, s := range []string{slackHookPath, discordHook, "PRIVATE KEY"} {
		require.NotContains(t, string(b), s, "a credential leaked into the attempt history")
	}
}

func TestSendSuccess(t *testing.T) {
	t.Parallel()
	for _, kind := range kindIDs() {
		t.Run(kind, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t)
			c := cases[kind]
			p := e.provider(kind, 0)

			one := c.msg(0)
			res := send(t, p, one)
			require.Nil(t, res[0].Err)
			requireExchange(t, res[0].Exchange, 200)
			requireRecorded(t, e, kind, one, res[0])

			if kinds.All()[kind].Batch.MaxSize <= 1 {
				return
			}
			batch := []provider.Message{c.msg(1), c.msg(2), c.msg(3)}
			res = send(t, p, batch...)
			for i, r := range res {
				require.Nil(t, r.Err, "message %d", i)
				requireExchange(t, r.Exchange, 200)
				requireRecorded(t, e, kind, batch[i], r)
			}
			ids := map[string]bool{}
			for _, r := range res {
				ids[r.MessageID] = true
			}
			require.Len(t, ids, 3, "each message of a batch has its own id")
			require.Len(t, e.sim.Messages(kind, "", 0), 4)
		})
	}
}

func TestFailureClasses(t *testing.T) {
	t.Parallel()
	for _, kind := range kindIDs() {
		for _, fc := range append(commonFailures(kind), cases[kind].vendor...) {
			t.Run(kind+"/"+fc.name, func(t *testing.T) {
				t.Parallel()
				e := newEnv(t)
				f := map[string]any{"kind": kind}
				for k, v := range fc.fault {
					f[k] = v
				}
				e.fault(f)
				m := cases[kind].msg(0)
				res := send(t, e.provider(kind, 0), m)
				r := res[0]
				if fc.cured {
					require.Nil(t, r.Err, "the adapter retries once")
					requireExchange(t, r.Exchange, 200)
					requireRecorded(t, e, kind, m, r)
					return
				}
				require.NotNil(t, r.Err, "fault %v was not reported", f)
				require.Equal(t, fc.want, r.Err.Code, "error: %s", r.Err.Message)
				require.Equal(t, fc.final, r.Err.Final, "final")
				require.Equal(t, fc.want.FallsBack() && !fc.final, r.Err.FallsBack())
				require.Empty(t, r.MessageID)
				if fc.status != 0 {
					require.NotNil(t, r.Exchange.Response)
					require.Equal(t, fc.status, r.Exchange.Response.HTTPStatus, "body: %s", r.Exchange.Response.Body)
				}
				require.Equal(t, fc.retryAfter, r.Err.RetryAfter, "retry after")
				require.Empty(t, e.sim.Messages(kind, "", 0), "a failed send is not recorded")
			})
		}
	}
}

func TestTimeout(t *testing.T) {
	t.Parallel()
	for _, kind := range kindIDs() {
		t.Run(kind, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t)
			e.fault(map[string]any{"kind": kind, "latencyMs": 3000})
			start := time.Now()
			res := send(t, e.provider(kind, 300*time.Millisecond), cases[kind].msg(0))
			require.Less(t, time.Since(start), 2500*time.Millisecond, "the client timeout applies")
			r := res[0]
			require.NotNil(t, r.Err)
			require.Equal(t, notify.FailureTemporaryUnavailable, r.Err.Code, r.Err.Message)
			require.Nil(t, r.Exchange.Response, "no answer came")
			require.Empty(t, r.MessageID)
			for _, s := range []string{slackHookPath, discordHook} {
				require.NotContains(t, r.Err.Message, s, "the webhook credential stays out of the error")
			}
		})
	}
}

// TestBatchPartialFailure: vendors that report per-message results fail
// only the refused message of a batch.
func TestBatchPartialFailure(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		kind string
		bad  func(m provider.Message) provider.Message
	}{
		// Solapi refuses a malformed number with statusCode 1011.
		{"vendorb_sms", func(m provider.Message) provider.Message { m.To = "12-ab"; return m }},
		{"vendorb_msgr", func(m provider.Message) provider.Message { m.To = "12-ab"; return m }},
		// Resend permissive mode lists the bad item in errors by index.
		{"mailx_email", func(m provider.Message) provider.Message { m.To = "not-an-address"; return m }},
		// Postmark's batch answers ErrorCode 300 in the message's slot.
		{"mailz_email", func(m provider.Message) provider.Message { m.To = "not-an-address"; return m }},
	} {
		t.Run(tc.kind, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t)
			c := cases[tc.kind]
			msgs := []provider.Message{c.msg(1), tc.bad(c.msg(2)), c.msg(3)}
			res := send(t, e.provider(tc.kind, 0), msgs...)
			for _, i := range []int{0, 2} {
				require.Nil(t, res[i].Err, "message %d", i)
				requireExchange(t, res[i].Exchange, 200)
				requireRecorded(t, e, tc.kind, msgs[i], res[i])
			}
			require.NotNil(t, res[1].Err)
			require.Equal(t, notify.FailureInvalidRequest, res[1].Err.Code, res[1].Err.Message)
			require.Empty(t, res[1].MessageID)
			require.NotNil(t, res[1].Exchange.Response, "the batch answer is kept for the failed message too")
			require.Len(t, e.sim.Messages(tc.kind, "", 0), 2)
		})
	}
}

// TestBatchFaultFailsAll: a fault on a batch call fails every message.
func TestBatchFaultFailsAll(t *testing.T) {
	t.Parallel()
	for _, kind := range kindIDs() {
		if kinds.All()[kind].Batch.MaxSize <= 1 || kind == "push_gateway" {
			continue // push sends one call per message
		}
		fcs := []failCase{
			{name: "HTTP 429", fault: map[string]any{"status": 429}, want: notify.FailureRateLimited},
			{name: "HTTP 500", fault: map[string]any{"status": 500}, want: notify.FailureTemporaryUnavailable},
		}
		fcs = append(fcs, batchVendorFaults[kind]...)
		for _, fc := range fcs {
			t.Run(kind+"/"+fc.name, func(t *testing.T) {
				t.Parallel()
				e := newEnv(t)
				f := map[string]any{"kind": kind}
				for k, v := range fc.fault {
					f[k] = v
				}
				e.fault(f)
				c := cases[kind]
				res := send(t, e.provider(kind, 0), c.msg(1), c.msg(2), c.msg(3))
				for i, r := range res {
					require.NotNil(t, r.Err, "message %d", i)
					require.Equal(t, fc.want, r.Err.Code, r.Err.Message)
					require.Equal(t, fc.final, r.Err.Final)
					require.NotNil(t, r.Exchange.Response)
				}
				require.Empty(t, e.sim.Messages(kind, "", 0))
			})
		}
	}
}

// batchVendorFaults are vendor codes on a batch call: the call's code
// (Aligo) or every message's own result (Solapi, Postmark) fails them all.
var batchVendorFaults = map[string][]failCase{
	"vendora_sms":  {{name: "-201", fault: map[string]any{"vendorCode": -201}, want: notify.FailureCreditExhausted, final: true}},
	"vendora_msgr": {{name: "-201", fault: map[string]any{"vendorCode": -201}, want: notify.FailureCreditExhausted, final: true}},
	"vendorb_sms":  {{name: "1030", fault: map[string]any{"vendorCode": "1030"}, want: notify.FailureCreditExhausted}},
	"vendorb_msgr": {{name: "1030", fault: map[string]any{"vendorCode": "1030"}, want: notify.FailureCreditExhausted}},
	"mailx_email":  {{name: "daily_quota_exceeded", fault: map[string]any{"vendorCode": "daily_quota_exceeded"}, want: notify.FailureCreditExhausted}},
	"mailz_email": {
		{name: "405", fault: map[string]any{"vendorCode": 405}, want: notify.FailureCreditExhausted},
		{name: "406 in every slot", fault: map[string]any{"vendorCode": 406}, want: notify.FailureInvalidRequest},
	},
}

// TestPushBatchPerMessage: FCM has no batch call; a batch is one call
// per message, so a fault hits exactly one of them.
func TestPushBatchPerMessage(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.fault(map[string]any{"kind": "push_gateway", "vendorCode": "UNREGISTERED"})
	c := cases["push_gateway"]
	msgs := []provider.Message{c.msg(1), c.msg(2), c.msg(3)}
	res := send(t, e.provider("push_gateway", 0), msgs...)
	failed := 0
	for i, r := range res {
		if r.Err != nil {
			failed++
			require.Equal(t, notify.FailureInvalidRequest, r.Err.Code)
			require.Equal(t, 404, r.Exchange.Response.HTTPStatus)
			require.Empty(t, e.sim.Messages("push_gateway", msgs[i].To, 0))
			continue
		}
		requireExchange(t, r.Exchange, 200)
		requireRecorded(t, e, "push_gateway", msgs[i], r)
	}
	require.Equal(t, 1, failed)
}

func TestQuota(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		kind     string
		balance  map[string]any
		credit   float64
		currency string
	}{
		{"vendora_sms", map[string]any{"value": 120, "lms": 30, "mms": 7}, 157, "count"},
		{"vendora_msgr", map[string]any{"value": 11, "lms": 0, "mms": 2}, 13, "count"},
		{"vendorb_sms", map[string]any{"value": 4321.5, "point": 100}, 4321.5, "KRW"},
		{"vendorb_msgr", map[string]any{"value": 0}, 0, "KRW"},
	} {
		t.Run(tc.kind, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t)
			b := map[string]any{"kind": tc.kind}
			for k, v := range tc.balance {
				b[k] = v
			}
			e.control("PUT", "/_sim/balance", b)
			qc, ok := e.provider(tc.kind, 0).(provider.QuotaChecker)
			require.True(t, ok, "%s has a balance lookup", tc.kind)
			q, err := qc.Quota(context.Background())
			require.NoError(t, err)
			require.Equal(t, tc.credit, q.RemainingCredit)
			require.Equal(t, tc.currency, q.Currency)
			require.Nil(t, q.Limit)

			// A failing lookup is an error, not a zero balance.
			e.fault(map[string]any{"kind": tc.kind, "op": "balance", "status": 500})
			_, err = qc.Quota(context.Background())
			require.Error(t, err)
		})
	}
}

// TestNoQuota: SPEC fills quota only for vendorA and vendorB.
func TestNoQuota(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	for _, kind := range kindIDs() {
		_, ok := e.provider(kind, 0).(provider.QuotaChecker)
		want := strings.HasPrefix(kind, "vendora_") || strings.HasPrefix(kind, "vendorb_")
		require.Equal(t, want, ok, kind)
	}
}

// TestEmailHeaders: List-Unsubscribe and List-Unsubscribe-Post
// (API-DECISIONS section 6) reach every mail vendor, alone and in batches.
func TestEmailHeaders(t *testing.T) {
	t.Parallel()
	for _, kind := range []string{"mailx_email", "mailz_email", "maily_email"} {
		t.Run(kind, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t)
			p := e.provider(kind, 0)
			msgs := []provider.Message{emailMsg(1), emailMsg(2)}
			for _, batch := range [][]provider.Message{msgs[:1], msgs[1:], msgs} {
				e.control("DELETE", "/_sim/messages", nil)
				res := send(t, p, batch...)
				for i, m := range batch {
					require.Nil(t, res[i].Err)
					got := e.sim.Messages(kind, m.To, 0)
					require.Len(t, got, 1)
					require.Equal(t, m.Headers["List-Unsubscribe"], got[0].Headers["List-Unsubscribe"])
					require.Equal(t, "List-Unsubscribe=One-Click", got[0].Headers["List-Unsubscribe-Post"])
				}
			}
		})
	}
}

// TestTokensReused: the vendorA messenger and push adapters get one token
// and reuse it; a second Send needs no new token call, so a token fault
// queued after the first Send does not touch it.
func TestTokensReused(t *testing.T) {
	t.Parallel()
	for _, kind := range []string{"vendora_msgr", "push_gateway"} {
		t.Run(kind, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t)
			p := e.provider(kind, 0)
			c := cases[kind]
			require.Nil(t, send(t, p, c.msg(1))[0].Err)
			e.fault(map[string]any{"kind": kind, "op": "token", "status": 500})
			require.Nil(t, send(t, p, c.msg(2))[0].Err, "the cached token is reused")
			require.Len(t, e.sim.Messages(kind, "", 0), 2)
		})
	}
}
