package simulator

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func slackHook(e *env, path, text string) {
	e.t.Helper()
	r := e.postJSON(path, nil, map[string]string{"text": text})
	require.Equal(e.t, http.StatusOK, r.status, "%s", r.body)
}

func TestControlMessages(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	slackHook(e, "/services/T1/B1/X1", "one")
	slackHook(e, "/services/T1/B1/X2", "two")
	slackHook(e, "/services/T1/B1/X1", "three")
	r := e.postJSON("/api/v10/channels/123456789012345678/messages", map[string]string{"Authorization": "Bot abc"}, map[string]string{"content": "bot"})
	require.Equal(t, http.StatusOK, r.status, "%s", r.body)

	tests := []struct {
		name  string
		query string
		texts []string
	}{
		{"all, oldest first", "", []string{"one", "two", "three", "bot"}},
		{"by kind", "?kind=chata_webhook", []string{"one", "two", "three"}},
		{"by kind and to", "?kind=chata_webhook&to=/services/T1/B1/X1", []string{"one", "three"}},
		{"limit keeps the newest", "?kind=chata_webhook&limit=2", []string{"two", "three"}},
		{"no match", "?kind=mailx_email", []string{}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			r := e.do(http.MethodGet, "/_sim/messages"+tc.query, nil, nil)
			require.Equal(t, http.StatusOK, r.status)
			var out struct {
				Messages []map[string]any `json:"messages"`
			}
			require.NoError(t, json.Unmarshal(r.body, &out))
			texts := []string{}
			for _, m := range out.Messages {
				texts = append(texts, m["text"].(string))
				for _, k := range []string{"id", "kind", "to", "subject", "text", "html", "headers", "receivedAt"} {
					require.Contains(t, m, k)
				}
				require.NotNil(t, m["headers"])
			}
			require.Equal(t, tc.texts, texts)
			// The Go API answers the same data.
			q := e.sim.Messages("", "", 0)
			require.Len(t, q, 4)
		})
	}

	t.Run("bad queries", func(t *testing.T) {
		t.Parallel()
		for _, q := range []string{"?limit=x", "?limit=-1", "?kind=nope"} {
			r := e.do(http.MethodGet, "/_sim/messages"+q, nil, nil)
			require.Equal(t, http.StatusBadRequest, r.status, q)
		}
	})
}

func TestControlDeleteMessagesAndReset(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	slackHook(e, "/services/T/B/X", "x")
	require.Len(t, e.messages("", ""), 1)
	r := e.do(http.MethodDelete, "/_sim/messages", nil, nil)
	require.Equal(t, http.StatusNoContent, r.status)
	require.Empty(t, e.messages("", ""))

	slackHook(e, "/services/T/B/X", "x")
	e.fault(map[string]any{"kind": "chata_webhook", "status": 500})
	require.Equal(t, http.StatusOK, e.do(http.MethodPut, "/_sim/balance", nil, []byte(`{"kind":"vendorb_sms","value":5}`)).status)
	r = e.do(http.MethodPost, "/_sim/reset", nil, nil)
	require.Equal(t, http.StatusNoContent, r.status)
	require.Empty(t, e.messages("", ""))
	require.Empty(t, e.sim.faults.list())
	bal, _ := e.sim.balances.vendorB()
	require.EqualValues(t, defaultBBalance, bal)
}

func TestStoreRingBuffer(t *testing.T) {
	t.Parallel()
	var st store
	for i := 0; i < maxMessages+10; i++ {
		st.add([]Message{{ID: strconv.Itoa(i), Kind: "k"}})
	}
	require.Equal(t, maxMessages, st.len())
	all := st.find("", "", 0)
	require.Len(t, all, maxMessages)
	require.Equal(t, "10", all[0].ID, "the oldest were dropped")
	require.Equal(t, strconv.Itoa(maxMessages+9), all[len(all)-1].ID, "newest last")
	last := st.find("k", "", 3)
	require.Equal(t, []string{strconv.Itoa(maxMessages + 7), strconv.Itoa(maxMessages + 8), strconv.Itoa(maxMessages + 9)},
		[]string{last[0].ID, last[1].ID, last[2].ID})
}

func TestControlFaultValidation(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	tests := []struct {
		name   string
		body   string
		status int
	}{
		{"status only", `{"kind":"mailx_email","status":429}`, http.StatusCreated},
		{"vendor code as number", `{"kind":"vendora_sms","vendorCode":-201}`, http.StatusCreated},
		{"vendor code as string", `{"kind":"vendora_sms","vendorCode":"-201"}`, http.StatusCreated},
		{"latency only", `{"kind":"chatb_bot","latencyMs":5}`, http.StatusCreated},
		{"balance op", `{"kind":"vendorb_msgr","op":"balance","status":500}`, http.StatusCreated},
		{"token op", `{"kind":"push_gateway","op":"token","status":400}`, http.StatusCreated},
		{"unknown kind", `{"kind":"nope","status":500}`, http.StatusBadRequest},
		{"nothing to do", `{"kind":"mailx_email"}`, http.StatusBadRequest},
		{"bad status", `{"kind":"mailx_email","status":99}`, http.StatusBadRequest},
		{"zero count", `{"kind":"mailx_email","status":500,"count":0}`, http.StatusBadRequest},
		{"negative latency", `{"kind":"mailx_email","latencyMs":-1}`, http.StatusBadRequest},
		{"non-numeric code for a numeric vendor", `{"kind":"chatb_bot","vendorCode":"abc"}`, http.StatusBadRequest},
		{"balance op on a kind without balance", `{"kind":"mailx_email","op":"balance","status":500}`, http.StatusBadRequest},
		{"token op on a kind without token", `{"kind":"vendora_sms","op":"token","status":500}`, http.StatusBadRequest},
		{"unknown op", `{"kind":"vendora_sms","op":"x","status":500}`, http.StatusBadRequest},
		{"unknown field", `{"kind":"mailx_email","statuz":500}`, http.StatusBadRequest},
		{"not JSON", `kind=mailx_email`, http.StatusBadRequest},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			r := e.do(http.MethodPost, "/_sim/faults", map[string]string{"Content-Type": "application/json"}, []byte(tc.body))
			require.Equal(t, tc.status, r.status, "%s", r.body)
		})
	}
}

func TestControlFaultListAndDelete(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.fault(map[string]any{"kind": "mailx_email", "status": 429, "count": 3})
	e.fault(map[string]any{"kind": "chatb_bot", "vendorCode": 10003})
	r := e.do(http.MethodGet, "/_sim/faults", nil, nil)
	require.Equal(t, http.StatusOK, r.status)
	faults := r.obj(t)["faults"].([]any)
	require.Len(t, faults, 2)
	require.Equal(t, "10003", faults[0].(map[string]any)["vendorCode"])
	require.EqualValues(t, 3, faults[1].(map[string]any)["count"])

	require.Equal(t, http.StatusNoContent, e.do(http.MethodDelete, "/_sim/faults?kind=chatb_bot", nil, nil).status)
	require.Len(t, e.sim.faults.list(), 1)
	require.Equal(t, http.StatusNoContent, e.do(http.MethodDelete, "/_sim/faults", nil, nil).status)
	require.Empty(t, e.sim.faults.list())
	require.Zero(t, e.sim.faults.pending.Load())
}

func TestFaultQueueOrderAndCount(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.fault(map[string]any{"kind": "chata_webhook", "status": 429, "count": 2})
	e.fault(map[string]any{"kind": "chata_webhook", "vendorCode": "channel_is_archived"})
	e.fault(map[string]any{"kind": "chata_bot", "status": 500}) // another kind is untouched
	var got []int
	for i := 0; i < 4; i++ {
		r := e.postJSON("/services/T/B/X", nil, map[string]string{"text": "hi"})
		got = append(got, r.status)
	}
	require.Equal(t, []int{429, 429, 410, 200}, got)
	require.Len(t, e.messages("chata_webhook", ""), 1)
	require.Len(t, e.sim.faults.list(), 1)
}

func TestFaultLatency(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.fault(map[string]any{"kind": "chatb_bot", "latencyMs": 150})
	start := time.Now()
	r := e.postJSON("/api/v10/channels/1/messages", map[string]string{"Authorization": "Bot t"}, map[string]string{"content": "slow"})
	require.Equal(t, http.StatusOK, r.status)
	require.GreaterOrEqual(t, time.Since(start), 150*time.Millisecond)

	// Latency plus an error: sleep, then fail.
	e.fault(map[string]any{"kind": "chatb_bot", "latencyMs": 50, "status": 503})
	start = time.Now()
	r = e.postJSON("/api/v10/channels/1/messages", map[string]string{"Authorization": "Bot t"}, map[string]string{"content": "slow"})
	require.Equal(t, http.StatusServiceUnavailable, r.status)
	require.GreaterOrEqual(t, time.Since(start), 50*time.Millisecond)
}

func TestFaultLatencyClientGone(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.fault(map[string]any{"kind": "chatb_bot", "latencyMs": 10_000})
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, e.srv.URL+"/api/v10/channels/1/messages", bytesReader([]byte(`{"content":"x"}`)))
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bot t")
	req.Header.Set("Content-Type", "application/json")
	start := time.Now()
	_, err = e.srv.Client().Do(req)
	require.Error(t, err)
	require.Less(t, time.Since(start), 5*time.Second)
	require.Eventually(t, func() bool { return len(e.sim.faults.list()) == 0 }, time.Second, 10*time.Millisecond)
	require.Empty(t, e.messages("", ""))
}

func TestControlBalance(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		body   string
		status int
		a      [3]int64
		b      float64
	}{
		{"defaults untouched by a bad kind", `{"kind":"mailx_email","value":1}`, 400, [3]int64{1000, 500, 200}, 100000},
		{"vendorA value zeroes LMS and MMS", `{"kind":"vendora_sms","value":7}`, 200, [3]int64{7, 0, 0}, 100000},
		{"vendorA msgr with lms and mms", `{"kind":"vendora_msgr","value":1,"lms":2,"mms":3}`, 200, [3]int64{1, 2, 3}, 100000},
		{"vendorA fraction refused", `{"kind":"vendora_sms","value":1.5}`, 400, [3]int64{1000, 500, 200}, 100000},
		{"vendorA negative refused", `{"kind":"vendora_sms","value":-1}`, 400, [3]int64{1000, 500, 200}, 100000},
		{"vendorB", `{"kind":"vendorb_sms","value":1234.5}`, 200, [3]int64{1000, 500, 200}, 1234.5},
		{"vendorB msgr zero", `{"kind":"vendorb_msgr","value":0}`, 200, [3]int64{1000, 500, 200}, 0},
		{"value required", `{"kind":"vendorb_msgr"}`, 400, [3]int64{1000, 500, 200}, 100000},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t)
			r := e.do(http.MethodPut, "/_sim/balance", map[string]string{"Content-Type": "application/json"}, []byte(tc.body))
			require.Equal(t, tc.status, r.status, "%s", r.body)
			r = e.do(http.MethodGet, "/_sim/balance", nil, nil)
			require.Equal(t, http.StatusOK, r.status)
			m := r.obj(t)
			a := m["vendora"].(map[string]any)
			require.EqualValues(t, tc.a[0], a["SMS_CNT"])
			require.EqualValues(t, tc.a[1], a["LMS_CNT"])
			require.EqualValues(t, tc.a[2], a["MMS_CNT"])
			require.EqualValues(t, tc.b, m["vendorb"].(map[string]any)["balance"])
		})
	}
}

func TestRouting(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	tests := []struct {
		method, path string
		status       int
	}{
		{http.MethodPost, "/nowhere", 404},
		{http.MethodPost, "/send", 404}, // Aligo needs its trailing slash
		{http.MethodGet, "/send/", 405},
		{http.MethodPost, "/cash/v1/balance", 405},
		{http.MethodGet, "/emails", 405},
		{http.MethodPost, "/v1/projects/a/b/messages:send", 404},
		{http.MethodPost, "/api/webhooks/123", 404},
		{http.MethodGet, "/_sim/nothing", 404},
		{http.MethodPatch, "/_sim/messages", 404},
	}
	for _, tc := range tests {
		t.Run(tc.method+tc.path, func(t *testing.T) {
			t.Parallel()
			r := e.do(tc.method, tc.path, nil, nil)
			require.Equal(t, tc.status, r.status, "%s", r.body)
		})
	}
}

func TestConcurrentSends(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.fault(map[string]any{"kind": "mailx_email", "status": 500, "count": 10})
	const workers, each = 16, 25
	var wg sync.WaitGroup
	var mu sync.Mutex
	failed := 0
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for i := 0; i < each; i++ {
				r := e.postJSON("/emails", map[string]string{"Authorization": "Bearer re_x"}, map[string]any{
					"from": "a@x.com", "to": fmt.Sprintf("u%d-%d@y.com", w, i), "subject": "s", "text": "t",
				})
				if r.status != http.StatusOK {
					mu.Lock()
					failed++
					mu.Unlock()
				}
				_ = e.sim.Messages("mailx_email", "", 1)
			}
		}(w)
	}
	wg.Wait()
	require.Equal(t, 10, failed, "exactly count faults are served")
	ms := e.messages("mailx_email", "")
	require.Len(t, ms, workers*each-10)
	ids := map[string]bool{}
	for _, m := range ms {
		ids[m.ID] = true
	}
	require.Len(t, ids, len(ms), "ids are unique")
}

func BenchmarkSlackWebhook(b *testing.B) {
	sim := New()
	body := []byte(`{"text":"hello"}`)
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			w := discardWriter{h: http.Header{}}
			r, _ := http.NewRequest(http.MethodPost, "/services/T/B/X", bytesReader(body))
			r.Header.Set("Content-Type", "application/json")
			sim.ServeHTTP(&w, r)
			if w.status != http.StatusOK {
				b.Fatal(w.status)
			}
		}
	})
}

// SetMaxMessages bounds what a long-running simulator keeps (the
// daemon's test mode).
func TestSetMaxMessages(t *testing.T) {
	t.Parallel()
	s := New()
	s.SetMaxMessages(3)
	for i := 0; i < 5; i++ {
		s.store.add([]Message{{ID: strconv.Itoa(i)}})
	}
	all := s.Messages("", "", 0)
	require.Len(t, all, 3)
	require.Equal(t, []string{"2", "3", "4"}, []string{all[0].ID, all[1].ID, all[2].ID})
}

// The Resend idempotency keys are bounded: expired ones go first, then all.
func TestIdempotencyKeysBounded(t *testing.T) {
	t.Parallel()
	var m idempotency
	old := time.Unix(0, 0)
	now := old.Add(48 * time.Hour)
	for i := 0; i < maxIdemKeys; i++ {
		at := now
		if i%2 == 0 {
			at = old
		}
		m.store("s", strconv.Itoa(i), nil, "id", at)
	}
	m.store("s", "new", nil, "id", now)
	require.Len(t, m.seen, maxIdemKeys/2+1, "the expired half went")
	for i := 0; len(m.seen) < maxIdemKeys; i++ {
		m.store("t", strconv.Itoa(i), nil, "id", now)
	}
	m.store("s", "newer", nil, "id", now)
	require.Len(t, m.seen, 1, "none expired: all went")
}
