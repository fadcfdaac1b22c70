package inbox_test

import (
	"bufio"
	"context"
	"encoding/json"
	"net/http"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/notifyd/notifyd/internal/notify"
	"github.com/notifyd/notifyd/internal/notifytest"
)

// sse is one event of a stream.
type sse struct {
	ID    string
	Event string
	Data  map[string]any
}

// stream is an open inbox stream; its events arrive on Events.
type stream struct {
	Events chan sse
	cancel func()
}

// openStream opens GET /v1/inbox/stream on base with the token in the
// query string, as an EventSource sends it, resuming after last ("" for
// none).
func openStream(t *testing.T, base, token, last string) *stream {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	req, err := http.NewRequestWithContext(ctx, "GET", base+"/v1/inbox/stream?token="+token, nil)
	require.NoError(t, err)
	req.Header.Set("Accept", "text/event-stream")
	if last != "" {
		req.Header.Set("Last-Event-ID", last)
	}
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, resp.StatusCode)
	require.Equal(t, "text/event-stream", resp.Header.Get("Content-Type"))
	s := &stream{Events: make(chan sse, 100), cancel: cancel}
	go func() {
		defer resp.Body.Close()
		defer close(s.Events)
		sc := bufio.NewScanner(resp.Body)
		var e sse
		for sc.Scan() {
			line := sc.Text()
			switch {
			case line == "":
				if e.Event != "" {
					s.Events <- e
				}
				e = sse{}
			case strings.HasPrefix(line, "id: "):
				e.ID = strings.TrimPrefix(line, "id: ")
			case strings.HasPrefix(line, "event: "):
				e.Event = strings.TrimPrefix(line, "event: ")
			case strings.HasPrefix(line, "data: "):
				_ = json.Unmarshal([]byte(strings.TrimPrefix(line, "data: ")), &e.Data)
			}
		}
	}()
	t.Cleanup(cancel)
	return s
}

// next is the stream's next event, within d.
func (s *stream) next(t *testing.T, d time.Duration) sse {
	t.Helper()
	select {
	case e, ok := <-s.Events:
		require.True(t, ok, "the stream ended")
		return e
	case <-time.After(d):
		t.Fatalf("no event within %s", d)
	}
	return sse{}
}

// quiet requires no event for d.
func (s *stream) quiet(t *testing.T, d time.Duration) {
	t.Helper()
	select {
	case e := <-s.Events:
		t.Fatalf("unexpected event %+v", e)
	case <-time.After(d):
	}
}

func countsOf(e sse) counts {
	return counts{Unread: int(e.Data["unread"].(float64)), Unseen: int(e.Data["unseen"].(float64))}
}

// TestInboxStream: a stream opens with the counts; an inapp send shows as
// message.created with the message, then the counts; a change shows as
// its event and the counts; the events are numbered one after the other.
func TestInboxStream(t *testing.T) {
	t.Parallel()
	env, key := setup(t)
	deliver(t, key, "u-1", 1)
	tok := mint(t, key, "u-1")
	s := openStream(t, env.Owner.BaseURL, tok, "")
	ready := s.next(t, 5*time.Second)
	require.Equal(t, "ready", ready.Event)
	require.Equal(t, counts{1, 1}, countsOf(ready))
	other := openStream(t, env.Owner.BaseURL, mint(t, key, "u-2"), "")
	require.Equal(t, "ready", other.next(t, 5*time.Second).Event)

	sent := time.Now()
	res := notifytest.Send(t, key, inapp("u-1", "Live", "While the page is open"))
	e := s.next(t, 5*time.Second)
	require.Less(t, time.Since(sent), time.Second, "within 1 s of acceptance")
	require.Equal(t, "message.created", e.Event)
	require.Equal(t, "2", e.ID, "the log's second event")
	m := e.Data["message"].(map[string]any)
	require.Equal(t, "While the page is open", m["body"])
	require.Equal(t, res.RequestID, m["requestId"])
	require.Equal(t, counts{2, 2}, countsOf(s.next(t, time.Second)))

	post(t, env, "/v1/inbox/messages/"+m["id"].(string)+"/read", tok, 200)
	e = s.next(t, 5*time.Second)
	require.Equal(t, "message.read", e.Event)
	require.Equal(t, "3", e.ID)
	require.NotNil(t, e.Data["message"].(map[string]any)["readAt"])
	require.Equal(t, counts{1, 1}, countsOf(s.next(t, time.Second)))
	post(t, env, "/v1/inbox/read-all", tok, 200)
	require.Equal(t, "messages.read", s.next(t, 5*time.Second).Event)
	require.Equal(t, counts{0, 0}, countsOf(s.next(t, time.Second)), "counts are right after read-all")
	post(t, env, "/v1/inbox/read-all", tok, 200)
	s.quiet(t, 300*time.Millisecond)
	other.quiet(t, 0)

	status, _, _ := call(t, env, "GET", "/v1/inbox/stream?lastEventId=x", tok, "")
	require.Equal(t, http.StatusBadRequest, status)
}

// TestInboxStreamResume: a stream reopened with the last event id it saw
// gets exactly what it missed, in order, then live events; an id the log
// does not hold answers reset, and so does one the retention sweep
// emptied.
func TestInboxStreamResume(t *testing.T) {
	t.Parallel()
	env, key := setup(t)
	tok := mint(t, key, "u-1")
	s := openStream(t, env.Owner.BaseURL, tok, "")
	require.Equal(t, "ready", s.next(t, 5*time.Second).Event)
	deliver(t, key, "u-1", 2)
	var last string
	for range 2 {
		e := s.next(t, 5*time.Second)
		require.Equal(t, "message.created", e.Event)
		last = e.ID
		require.Equal(t, "counts", s.next(t, 5*time.Second).Event)
	}
	s.cancel()

	// Missed while away: two messages and a read.
	deliver(t, key, "u-1", 2)
	p := get[page](t, env, "/v1/inbox/messages", tok)
	post(t, env, "/v1/inbox/messages/"+p.Messages[3].ID+"/read", tok, 200)

	r := openStream(t, env.Owner.BaseURL, tok, last)
	require.Equal(t, "ready", r.next(t, 5*time.Second).Event)
	var got []string
	for len(got) < 3 {
		e := r.next(t, 5*time.Second)
		if e.Event != "counts" {
			got = append(got, e.ID+" "+e.Event)
		}
	}
	n, _ := strconv.Atoi(last)
	require.Equal(t, []string{
		strconv.Itoa(n+1) + " message.created", strconv.Itoa(n+2) + " message.created", strconv.Itoa(n+3) + " message.read",
	}, got, "no gap, no duplicate")
	require.Equal(t, "counts", r.next(t, time.Second).Event)
	deliver(t, key, "u-1", 1)
	require.Equal(t, strconv.Itoa(n+4), r.next(t, 5*time.Second).ID)

	x := openStream(t, env.Owner.BaseURL, tok, "999")
	require.Equal(t, "reset", x.next(t, 5*time.Second).Event)
	require.Equal(t, "ready", x.next(t, time.Second).Event)

	// The retention sweep emptied the log (a week-old one): a stream
	// resuming from before it resets instead of missing what went.
	require.NoError(t, env.Daemon.DB.Update(context.Background(), func(tx notify.Tx) error {
		_, err := tx.PurgeInboxEvents(context.Background(), time.Now().Add(time.Hour), 1000)
		return err
	}))
	y := openStream(t, env.Owner.BaseURL, tok, last)
	require.Equal(t, "reset", y.next(t, 5*time.Second).Event)
	require.Equal(t, "ready", y.next(t, time.Second).Event)
}

// TestInboxStreamAcrossProcesses (PostgreSQL): a send accepted by one api
// process shows within 1 s on a stream held by another api process (the
// worker is a third), through LISTEN/NOTIFY.
func TestInboxStreamAcrossProcesses(t *testing.T) {
	t.Parallel()
	if os.Getenv(notifytest.EnvPostgres) == "" {
		t.Skip("several processes share one database only on PostgreSQL (set " + notifytest.EnvPostgres + ")")
	}
	env, key := setup(t)
	accept, hold := env.StartPeer(t, nil, notifytest.WithRole("api")), env.StartPeer(t, nil, notifytest.WithRole("api"))
	k := *key
	k.BaseURL = accept.URL()
	tok := mint(t, key, "u-1")
	s := openStream(t, hold.URL(), tok, "")
	require.Equal(t, "ready", s.next(t, 5*time.Second).Event)
	for i := range 5 {
		sent := time.Now()
		res := notifytest.Send(t, &k, inapp("u-1", "Hello", "across "+strconv.Itoa(i)))
		e := s.next(t, 5*time.Second)
		require.Less(t, time.Since(sent), time.Second, "within 1 s of acceptance on another process")
		require.Equal(t, res.RequestID, e.Data["message"].(map[string]any)["requestId"])
		require.Equal(t, "counts", s.next(t, time.Second).Event)
	}
	// A change made through the accepting process shows on the holding one.
	status, _, _ := callAt(t, accept.URL(), "POST", "/v1/inbox/read-all", tok, "")
	require.Equal(t, http.StatusOK, status)
	require.Equal(t, "messages.read", s.next(t, 5*time.Second).Event)
	require.Equal(t, counts{0, 0}, countsOf(s.next(t, time.Second)))
}

// TestInboxStreamHandsOffItsRequest: on HTTP/1.1 an open stream no longer
// holds its request (the connection is hijacked and followed by a
// goroutine of its own, what keeps 10,000 streams in under 150 MB): the
// request is already counted as answered, and the stream still delivers.
func TestInboxStreamHandsOffItsRequest(t *testing.T) {
	t.Parallel()
	env, key := setup(t)
	s := openStream(t, env.Owner.BaseURL, mint(t, key, "u-1"), "")
	require.Equal(t, "ready", s.next(t, 5*time.Second).Event)
	answered := func() float64 {
		resp, err := http.Get(env.Daemon.URL() + "/metrics")
		require.NoError(t, err)
		defer resp.Body.Close()
		sc := bufio.NewScanner(resp.Body)
		for sc.Scan() {
			line := sc.Text()
			if strings.HasPrefix(line, `notifyd_http_requests_total{method="GET",route="GET /v1/inbox/stream",status="200"}`) {
				f := strings.Fields(line)
				n, err := strconv.ParseFloat(f[len(f)-1], 64)
				require.NoError(t, err)
				return n
			}
		}
		return 0
	}
	// Counted when the handler returns, just after the stream's head left.
	require.Eventually(t, func() bool { return answered() == 1 }, 5*time.Second, 10*time.Millisecond, "the stream's request has ended")
	require.Equal(t, 1, env.Daemon.Rooms.Inbox.Streams(), "while its stream is open")
	require.Equal(t, 1.0, notifytest.Gauge(t, env.Daemon.Metrics.Registry, "notifyd_inbox_streams"))
	res := notifytest.Send(t, key, inapp("u-1", "Still", "after the request ended"))
	e := s.next(t, 5*time.Second)
	require.Equal(t, "message.created", e.Event)
	require.Equal(t, res.RequestID, e.Data["message"].(map[string]any)["requestId"])
}
