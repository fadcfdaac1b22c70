package pacing_test

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/notifyd/notifyd/internal/delivery/pacing"
	"github.com/notifyd/notifyd/internal/dispatch"
	"github.com/notifyd/notifyd/internal/notify"
	"github.com/notifyd/notifyd/internal/provider"
)

// fakeVendor records each batch call; fail decides per message.
type fakeVendor struct {
	mu    sync.Mutex
	calls [][]string // message ids per call
	at    []time.Time
	delay time.Duration
	fail  func(m provider.Message) *provider.Error
	block chan struct{} // when set, a call waits for it
}

func (v *fakeVendor) send(ctx context.Context, msgs []provider.Message) []provider.Result {
	v.mu.Lock()
	ids := make([]string, len(msgs))
	for i, m := range msgs {
		ids[i] = m.ID
	}
	v.calls = append(v.calls, ids)
	v.at = append(v.at, time.Now())
	n := len(v.calls)
	v.mu.Unlock()
	if v.block != nil {
		<-v.block
	}
	time.Sleep(v.delay)
	resp := &provider.Response{HTTPStatus: 200}
	out := make([]provider.Result, len(msgs))
	for i, m := range msgs {
		out[i] = provider.Result{MessageID: fmt.Sprintf("c%d-%s", n, m.ID), Exchange: provider.Exchange{Method: "POST", Response: resp}}
		if v.fail != nil {
			if e := v.fail(m); e != nil {
				out[i] = provider.Result{Err: e, Exchange: out[i].Exchange}
			}
		}
	}
	return out
}

func (v *fakeVendor) snapshot() [][]string {
	v.mu.Lock()
	defer v.mu.Unlock()
	return append([][]string(nil), v.calls...)
}

type flush struct {
	kind, reason string
	size, calls  int
}

type recorder struct {
	mu sync.Mutex
	fs []flush
}

func (r *recorder) Flushed(kind string, size int, reason string, calls int) {
	r.mu.Lock()
	r.fs = append(r.fs, flush{kind, reason, size, calls})
	r.mu.Unlock()
}

func (r *recorder) reasons() map[string]int {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := map[string]int{}
	for _, f := range r.fs {
		out[f.reason]++
	}
	return out
}

type outcome struct {
	res pacing.Batched
	err error
	at  time.Duration
}

// sendAll sends n messages concurrently and returns each one's outcome.
func sendAll(ctx context.Context, b *pacing.Batcher, a pacing.BatchAccount, n int) []outcome {
	out := make([]outcome, n)
	start := time.Now()
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r, err := b.Send(ctx, a, provider.Message{ID: fmt.Sprintf("m%d", i)})
			out[i] = outcome{r, err, time.Since(start)}
		}()
	}
	wg.Wait()
	return out
}

func account(v *fakeVendor, c dispatch.BatchConfig) pacing.BatchAccount {
	return pacing.BatchAccount{Key: "acct", Kind: "vendora_sms", Config: c, Send: v.send}
}

func TestBatchFlushesAtWindow(t *testing.T) {
	v := &fakeVendor{}
	rec := &recorder{}
	b := pacing.NewBatcher(rec)
	out := sendAll(context.Background(), b, account(v, dispatch.BatchConfig{Window: 200 * time.Millisecond, MaxSize: 100}), 10)
	calls := v.snapshot()
	require.Len(t, calls, 1, "10 messages within one window make one call")
	require.Len(t, calls[0], 10)
	seen := map[int]bool{}
	for i, o := range out {
		require.NoError(t, o.err)
		require.Nil(t, o.res.Err)
		require.Equal(t, fmt.Sprintf("c1-m%d", i), o.res.MessageID, "each message gets its own result")
		require.Equal(t, 10, o.res.Size)
		require.Equal(t, calls[0][o.res.Index], fmt.Sprintf("m%d", i), "index is the message's place in the call")
		seen[o.res.Index] = true
		require.GreaterOrEqual(t, o.at, 150*time.Millisecond, "nobody leaves before the window")
	}
	require.Len(t, seen, 10)
	require.Equal(t, map[string]int{pacing.FlushWindow: 1}, rec.reasons())
	require.Equal(t, flush{"vendora_sms", pacing.FlushWindow, 10, 1}, rec.fs[0])
}

func TestBatchFlushesWhenFull(t *testing.T) {
	v := &fakeVendor{}
	rec := &recorder{}
	b := pacing.NewBatcher(rec)
	out := sendAll(context.Background(), b, account(v, dispatch.BatchConfig{Window: 5 * time.Second, MaxSize: 4}), 8)
	calls := v.snapshot()
	require.Len(t, calls, 2)
	require.Len(t, calls[0], 4)
	require.Len(t, calls[1], 4)
	for _, o := range out {
		require.NoError(t, o.err)
		require.Less(t, o.at, 2*time.Second, "a full batch does not wait for its window")
	}
	require.Equal(t, map[string]int{pacing.FlushFull: 2}, rec.reasons())
}

func TestBatchPartialFailureClassifiesEachMessage(t *testing.T) {
	v := &fakeVendor{fail: func(m provider.Message) *provider.Error {
		switch m.ID {
		case "m1":
			return provider.Errorf(notify.FailureInvalidRequest, "bad number")
		case "m2":
			return provider.Errorf(notify.FailureRateLimited, "slow down")
		}
		return nil
	}}
	b := pacing.NewBatcher(nil)
	out := sendAll(context.Background(), b, account(v, dispatch.BatchConfig{Window: 100 * time.Millisecond, MaxSize: 10}), 4)
	require.Len(t, v.snapshot(), 1)
	require.Nil(t, out[0].res.Err)
	require.Equal(t, notify.FailureInvalidRequest, out[1].res.Err.Code)
	require.False(t, out[1].res.Err.FallsBack(), "invalid_request ends the run of that message only")
	require.Equal(t, notify.FailureRateLimited, out[2].res.Err.Code)
	require.True(t, out[2].res.Err.FallsBack(), "rate_limited falls back")
	require.Nil(t, out[3].res.Err)
}

func TestBatchCallsPerSecondCap(t *testing.T) {
	v := &fakeVendor{}
	rec := &recorder{}
	b := pacing.NewBatcher(rec)
	// 5 calls per second, batches of 2: 12 messages need 6 calls, which
	// must be spread over at least a second.
	out := sendAll(context.Background(), b, account(v, dispatch.BatchConfig{CallsPerSecond: 5, Window: 0, MaxSize: 2}), 12)
	for _, o := range out {
		require.NoError(t, o.err)
	}
	v.mu.Lock()
	at := append([]time.Time(nil), v.at...)
	v.mu.Unlock()
	// At least 6 calls (a batch may leave before its partner joins).
	require.GreaterOrEqual(t, len(at), 6)
	for i := 1; i < len(at); i++ {
		require.GreaterOrEqual(t, at[i].Sub(at[i-1]), 190*time.Millisecond, "calls %d and %d too close", i-1, i)
	}
	require.GreaterOrEqual(t, at[len(at)-1].Sub(at[0]), time.Second-10*time.Millisecond)
}

func TestBatchUnlimitedWhenZero(t *testing.T) {
	v := &fakeVendor{}
	b := pacing.NewBatcher(nil)
	start := time.Now()
	out := sendAll(context.Background(), b, account(v, dispatch.BatchConfig{CallsPerSecond: 0, Window: 0, MaxSize: 1}), 50)
	require.Less(t, time.Since(start), time.Second)
	require.Len(t, v.snapshot(), 50, "per-message sending: one call each")
	for _, o := range out {
		require.NoError(t, o.err)
		require.Equal(t, 1, o.res.Size)
	}
}

func TestBatchContextCancelWhileWaiting(t *testing.T) {
	v := &fakeVendor{}
	b := pacing.NewBatcher(nil)
	a := account(v, dispatch.BatchConfig{Window: 300 * time.Millisecond, MaxSize: 10})
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	var leftErr error
	wg.Add(1)
	go func() {
		defer wg.Done()
		_, leftErr = b.Send(ctx, a, provider.Message{ID: "gone"})
	}()
	out := make([]outcome, 3)
	for i := range out {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r, err := b.Send(context.Background(), a, provider.Message{ID: fmt.Sprintf("m%d", i)})
			out[i] = outcome{res: r, err: err}
		}()
	}
	time.Sleep(50 * time.Millisecond)
	cancel()
	wg.Wait()
	var left *pacing.ErrLeftBatch
	require.ErrorAs(t, leftErr, &left)
	require.ErrorIs(t, leftErr, context.Canceled)
	calls := v.snapshot()
	require.Len(t, calls, 1)
	require.ElementsMatch(t, []string{"m0", "m1", "m2"}, calls[0], "the canceled message left the batch unsent")
	for _, o := range out {
		require.NoError(t, o.err)
		require.Equal(t, 3, o.res.Size)
	}

	// Already ended: not even joined.
	_, err := b.Send(ctx, a, provider.Message{ID: "late"})
	require.ErrorIs(t, err, context.Canceled)
	time.Sleep(400 * time.Millisecond)
	require.Len(t, v.snapshot(), 1)
}

func TestBatchContextCancelAfterCallStartedWaitsForResult(t *testing.T) {
	v := &fakeVendor{block: make(chan struct{})}
	b := pacing.NewBatcher(nil)
	a := account(v, dispatch.BatchConfig{Window: 20 * time.Millisecond, MaxSize: 10})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan outcome)
	go func() {
		r, err := b.Send(ctx, a, provider.Message{ID: "m0"})
		done <- outcome{res: r, err: err}
	}()
	require.Eventually(t, func() bool { return len(v.snapshot()) == 1 }, time.Second, 5*time.Millisecond)
	cancel()
	select {
	case <-done:
		t.Fatal("returned before its call answered")
	case <-time.After(50 * time.Millisecond):
	}
	close(v.block)
	o := <-done
	require.NoError(t, o.err, "a message already sent is never reported unsent")
	require.Nil(t, o.res.Err)
	require.Equal(t, "c1-m0", o.res.MessageID)
}

func TestBatchSendNowSkipsWindow(t *testing.T) {
	v := &fakeVendor{}
	rec := &recorder{}
	b := pacing.NewBatcher(rec)
	a := account(v, dispatch.BatchConfig{CallsPerSecond: 1, Window: 2 * time.Second, MaxSize: 100})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		_, _ = b.Send(context.Background(), a, provider.Message{ID: "queued"})
	}()
	time.Sleep(20 * time.Millisecond)
	start := time.Now()
	r := b.SendNow(context.Background(), a, provider.Message{ID: "otp"})
	require.Less(t, time.Since(start), 100*time.Millisecond, "a synchronous send waits for no window")
	require.Nil(t, r.Err)
	require.Equal(t, 1, r.Size)
	require.Equal(t, [][]string{{"otp"}}, v.snapshot())
	wg.Wait()
	require.Equal(t, map[string]int{pacing.FlushSync: 1, pacing.FlushWindow: 1}, rec.reasons())
}

func TestBatchAdapterMiscountFailsEachMessage(t *testing.T) {
	b := pacing.NewBatcher(nil)
	a := pacing.BatchAccount{Key: "x", Kind: "k", Config: dispatch.BatchConfig{Window: 10 * time.Millisecond, MaxSize: 5},
		Send: func(context.Context, []provider.Message) []provider.Result { return nil }}
	r, err := b.Send(context.Background(), a, provider.Message{ID: "m"})
	require.NoError(t, err)
	require.Equal(t, notify.FailureUnknown, r.Err.Code)
	a.Send = func(context.Context, []provider.Message) []provider.Result { panic("boom") }
	r, err = b.Send(context.Background(), a, provider.Message{ID: "m"})
	require.NoError(t, err)
	require.Equal(t, notify.FailureUnknown, r.Err.Code)
}

func TestCountCalls(t *testing.T) {
	r1, r2 := &provider.Response{}, &provider.Response{}
	require.Equal(t, 0, pacing.CountCalls([]provider.Result{{Err: provider.Errorf(notify.FailureInvalidRequest, "x")}}))
	require.Equal(t, 2, pacing.CountCalls([]provider.Result{{Exchange: provider.Exchange{Response: r1}},
		{Exchange: provider.Exchange{Response: r1}}, {Exchange: provider.Exchange{Response: r2}}}))
	require.Equal(t, 1, pacing.CountCalls([]provider.Result{{Exchange: provider.Exchange{Method: "POST"}}}))
}

func TestBatchSlicesSharedExchange(t *testing.T) {
	shapes := map[string]func(msgs []provider.Message) (any, string){
		"array": func(msgs []provider.Message) (any, string) {
			var req []map[string]string
			for _, m := range msgs {
				req = append(req, map[string]string{"to": m.ID})
			}
			return req, `[{"MessageID":"a"},{"MessageID":"b"},{"MessageID":"c"}]`
		},
		"object": func(msgs []provider.Message) (any, string) {
			var items []map[string]string
			for _, m := range msgs {
				items = append(items, map[string]string{"to": m.ID})
			}
			return map[string]any{"messages": items, "allowDuplicates": true}, `{"messageList":[1,2,3],"data":[{"id":"a"},{"id":"b"},{"id":"c"}]}`
		},
		"form": func(msgs []provider.Message) (any, string) {
			f := map[string]string{"cnt": "3", "tpl_code": "T1"}
			for i, m := range msgs {
				f[fmt.Sprintf("rec_%d", i+1)] = m.ID
			}
			return f, `not json`
		},
	}
	for name, shape := range shapes {
		t.Run(name, func(t *testing.T) {
			send := func(_ context.Context, msgs []provider.Message) []provider.Result {
				req, body := shape(msgs)
				ex := provider.Exchange{Method: "POST", URL: "u", Request: req, Response: &provider.Response{HTTPStatus: 200, Body: body}}
				out := make([]provider.Result, len(msgs))
				for i := range out {
					out[i] = provider.Result{MessageID: msgs[i].ID, Exchange: ex}
				}
				return out
			}
			b := pacing.NewBatcher(nil)
			a := pacing.BatchAccount{Key: name, Config: dispatch.BatchConfig{Window: 200 * time.Millisecond, MaxSize: 3}, Send: send}
			out := sendAll(context.Background(), b, a, 3)
			for i, o := range out {
				require.Equal(t, 3, o.res.Size)
				req, err := json.Marshal(o.res.Exchange.Request)
				require.NoError(t, err)
				id := fmt.Sprintf("m%d", i)
				require.Contains(t, string(req), `"`+id+`"`)
				for j := range 3 {
					if j != i {
						require.NotContains(t, string(req), fmt.Sprintf(`"m%d"`, j), "another message's part")
					}
				}
				switch name {
				case "array":
					require.JSONEq(t, fmt.Sprintf(`[{"to":%q}]`, id), string(req))
					require.Equal(t, []string{`[{"MessageID":"a"}]`, `[{"MessageID":"b"}]`, `[{"MessageID":"c"}]`}[o.res.Index], o.res.Exchange.Response.Body)
				case "object":
					require.JSONEq(t, fmt.Sprintf(`{"messages":[{"to":%q}],"allowDuplicates":true}`, id), string(req))
					want := []string{`{"id":"a"}`, `{"id":"b"}`, `{"id":"c"}`}[o.res.Index]
					require.JSONEq(t, `{"messageList":[1,2,3],"data":[`+want+`]}`, o.res.Exchange.Response.Body, "only input-order answers are cut")
				case "form":
					require.JSONEq(t, fmt.Sprintf(`{"cnt":"3","tpl_code":"T1","rec_%d":%q}`, o.res.Index+1, id), string(req))
					require.Equal(t, "not json", o.res.Exchange.Response.Body)
				}
			}
		})
	}
}

// A rate-limited answer with Retry-After holds the next call back.
func TestBatchHonorsRetryAfter(t *testing.T) {
	v := &fakeVendor{}
	first := true
	v.fail = func(provider.Message) *provider.Error {
		if first {
			first = false
			e := provider.Errorf(notify.FailureRateLimited, "HTTP 429")
			e.RetryAfter = 300 * time.Millisecond
			return e
		}
		return nil
	}
	b := pacing.NewBatcher(nil)
	a := account(v, dispatch.BatchConfig{CallsPerSecond: 100, Window: 10 * time.Millisecond, MaxSize: 10})
	r, err := b.Send(context.Background(), a, provider.Message{ID: "m0"})
	require.NoError(t, err)
	require.Equal(t, notify.FailureRateLimited, r.Err.Code)
	r, err = b.Send(context.Background(), a, provider.Message{ID: "m1"})
	require.NoError(t, err)
	require.Nil(t, r.Err)
	v.mu.Lock()
	defer v.mu.Unlock()
	require.GreaterOrEqual(t, v.at[1].Sub(v.at[0]), 290*time.Millisecond)
}

// A message sent with a shorter wait than the window (a transactional
// one) takes its batch out by then, with the bulk messages that joined
// before it; messages joining afterwards wait the window again.
func TestBatchShorterWaitTakesBatchOut(t *testing.T) {
	v := &fakeVendor{}
	b := pacing.NewBatcher(nil)
	a := account(v, dispatch.BatchConfig{Window: 2 * time.Second, MaxSize: 100})
	start := time.Now()
	var wg sync.WaitGroup
	bulk := make([]time.Duration, 3)
	for i := range bulk {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if _, err := b.Send(context.Background(), a, provider.Message{ID: fmt.Sprintf("bulk%d", i)}); err == nil {
				bulk[i] = time.Since(start)
			}
		}()
	}
	time.Sleep(50 * time.Millisecond) // the bulk messages wait first
	r, err := b.SendWithin(context.Background(), a, provider.Message{ID: "reset"}, 100*time.Millisecond)
	require.NoError(t, err)
	took := time.Since(start)
	wg.Wait()
	require.Less(t, took, time.Second, "the transactional message did not wait the 2 s window")
	require.Equal(t, 4, r.Size, "it took the bulk messages that waited with it")
	for _, d := range bulk {
		require.Positive(t, d, "sent")
		require.Less(t, d, time.Second)
	}
	// Alone again, a bulk message waits the window.
	_, err = b.Send(context.Background(), a, provider.Message{ID: "later"})
	require.NoError(t, err)
	require.GreaterOrEqual(t, time.Since(start)-took, 1900*time.Millisecond)
	require.Len(t, v.snapshot(), 2)
}
