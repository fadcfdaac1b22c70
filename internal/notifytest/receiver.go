package notifytest

import (
	"encoding/base64"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/notifyd/notifyd/client"
)

// Received is one request that reached a Receiver.
type Received struct {
	Header http.Header
	Body   []byte
	At     time.Time
}

// Answer decides a Receiver's answer to its n-th request (from 1): a
// status and a delay before it.
type Answer func(n int) (int, time.Duration)

// Always answers status at once.
func Always(status int) Answer {
	return func(int) (int, time.Duration) { return status, 0 }
}

// Receiver is a webhook endpoint on an httptest server, closed after the
// test, that records every request.
type Receiver struct {
	URL    string
	mu     sync.Mutex
	got    []Received
	answer Answer
}

// NewReceiver starts a Receiver answering with answer (nil: 200 at once).
func NewReceiver(t testing.TB, answer Answer) *Receiver {
	t.Helper()
	rc := &Receiver{answer: answer}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		rc.mu.Lock()
		rc.got = append(rc.got, Received{Header: r.Header.Clone(), Body: body, At: time.Now()})
		n, answer := len(rc.got), rc.answer
		rc.mu.Unlock()
		status, delay := http.StatusOK, time.Duration(0)
		if answer != nil {
			status, delay = answer(n)
		}
		if delay > 0 {
			select {
			case <-time.After(delay):
			case <-r.Context().Done():
				return
			}
		}
		w.WriteHeader(status)
		_, _ = io.WriteString(w, "answer "+strconv.Itoa(n)+": "+http.StatusText(status))
	}))
	t.Cleanup(srv.Close)
	rc.URL = srv.URL
	return rc
}

// Requests answers a copy of what has arrived so far.
func (rc *Receiver) Requests() []Received {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return append([]Received(nil), rc.got...)
}

// SetAnswer changes how the following requests are answered.
func (rc *Receiver) SetAnswer(f Answer) {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	rc.answer = f
}

// Events decodes the webhook events received so far (bodies that are not
// an event are left out).
func (rc *Receiver) Events() []client.WebhookEvent {
	var out []client.WebhookEvent
	for _, r := range rc.Requests() {
		var ev client.WebhookEvent
		if json.Unmarshal(r.Body, &ev) == nil {
			out = append(out, ev)
		}
	}
	return out
}

// AwaitEvent waits until an event of type typ for request requestID has
// arrived (WaitTimeout at most) and answers all the events of that
// request so far.
func (rc *Receiver) AwaitEvent(t testing.TB, requestID, typ string) []client.WebhookEvent {
	t.Helper()
	deadline := time.Now().Add(WaitTimeout)
	for {
		var mine []client.WebhookEvent
		found := false
		for _, ev := range rc.Events() {
			if ev.Data.RequestID == requestID {
				mine = append(mine, ev)
				found = found || ev.Type == typ
			}
		}
		if found {
			return mine
		}
		require.True(t, time.Now().Before(deadline), "no %s event for %s", typ, requestID)
		time.Sleep(20 * time.Millisecond)
	}
}

// OtherSpelling answers another spelling of the standard, padded base64 of
// a 32-byte MAC: the unused low bit of its last character flipped. A
// lenient decoder reads the same bytes from it; a verifier that compares
// the canonical text refuses it (issue 29, finding 10).
func OtherSpelling(t testing.TB, b64 string) string {
	t.Helper()
	const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
	require.Len(t, b64, 44, "the base64 of 32 bytes")
	i := strings.IndexByte(alphabet, b64[42])
	require.GreaterOrEqual(t, i, 0, b64)
	other := b64[:42] + string(alphabet[i^1]) + b64[43:]
	want, err := base64.StdEncoding.DecodeString(b64)
	require.NoError(t, err)
	got, err := base64.StdEncoding.DecodeString(other)
	require.NoError(t, err)
	require.Equal(t, want, got, "a lenient decoder reads the same bytes")
	return other
}
