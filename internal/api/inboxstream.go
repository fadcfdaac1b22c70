package api

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"time"

	"github.com/notifyd/notifyd/internal/inbox"
	"github.com/notifyd/notifyd/internal/notify"
)

// The inbox stream (issue 33, item 3): Server-Sent Events of one
// recipient's inbox. Each event of the profile's log is sent with its
// number as the SSE id and its type as the event name; the counts follow
// each batch as a "counts" event without id (an EventSource keeps the
// last id it saw); an idle stream sends a comment as heartbeat. The
// stream opens with "ready" (the counts), or "reset" when the
// reader's last event id is no longer in the log: the client then reads
// its inbox afresh.

// lastEventID is the reader's last event: the Last-Event-ID header an
// EventSource sends when it reconnects, else the lastEventId query
// parameter (a page that kept it), else none (-1: from now on).
func lastEventID(r *http.Request) (int64, error) {
	v := r.Header.Get("Last-Event-ID")
	if v == "" {
		v = r.URL.Query().Get("lastEventId")
	}
	if v == "" {
		return -1, nil
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil || n < 0 {
		return 0, notify.Invalid("Last-Event-ID must be an event id of this stream")
	}
	return n, nil
}

// inboxEventJSON is one event of the stream.
type inboxEventJSON struct {
	ID        int64             `json:"id"`
	Type      string            `json:"type"`
	MessageID *string           `json:"messageId"`
	At        string            `json:"at"`
	Message   *inboxMessageJSON `json:"message"`
}

// streamWriteTimeout bounds one write to a stream's connection: a reader
// that stopped reading is dropped instead of holding its stream.
const streamWriteTimeout = 10 * time.Second

// handleStream opens the reader's stream. On HTTP/1.1 it hijacks the
// connection and hands it, with the stream's follower, to a goroutine of
// its own; the request then ends, so what net/http holds for a request
// (its goroutine and the one reading ahead, about 12 KB of buffers, the
// request itself) is freed: an open stream costs a goroutine parked in
// Follower.Run and its connection (docs/BENCHMARKS.md, 10,000 streams).
// Nothing reads the connection after that: a reader that went away is
// noticed when a write fails, by the second heartbeat at the latest.
// Over HTTP/2 the request's goroutine follows the stream itself.
func (a inboxAPI) handleStream(c *call) error {
	after, err := lastEventID(c.r)
	if err != nil {
		return err
	}
	f, first, err := a.room.Open(c.ctx, *c.reader, after)
	if err != nil {
		return err
	}
	h := c.w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-store")
	h.Set("X-Accel-Buffering", "no") // nginx: do not buffer the stream
	rc := http.NewResponseController(c.w)
	conn, _, err := rc.Hijack()
	if err != nil {
		defer f.Close()
		// A stream outlives the server's read and write timeouts.
		_ = rc.SetReadDeadline(time.Time{})
		_ = rc.SetWriteDeadline(time.Time{})
		c.w.WriteHeader(http.StatusOK)
		write := func(b inbox.Batch) error {
			if _, err := c.w.Write(streamFrames(b)); err != nil {
				return err
			}
			return rc.Flush()
		}
		if write(first) == nil {
			f.Run(c.ctx, write)
		}
		return nil
	}
	var head bytes.Buffer
	head.WriteString("HTTP/1.1 200 OK\r\n")
	h.Set("Date", time.Now().UTC().Format(http.TimeFormat))
	h.Set("Connection", "close") // the body ends with the connection
	_ = h.Write(&head)
	head.WriteString("\r\n")
	head.Write(streamFrames(first))
	_ = conn.SetReadDeadline(time.Time{})
	write := func(b []byte) error {
		_ = conn.SetWriteDeadline(time.Now().Add(streamWriteTimeout))
		_, err := conn.Write(b)
		return err
	}
	if err := write(head.Bytes()); err != nil {
		conn.Close()
		f.Close()
		return nil
	}
	ctx := context.WithoutCancel(c.ctx) // the request ends now; the stream does not
	go func() {
		defer conn.Close()
		defer f.Close()
		f.Run(ctx, func(b inbox.Batch) error { return write(streamFrames(b)) })
	}()
	return nil
}

// streamFrames is a batch as the stream's bytes: the opening (retry,
// reset, ready), each event with its id, the counts, the heartbeat.
func streamFrames(b inbox.Batch) []byte {
	var buf bytes.Buffer
	frame := func(id, event string, data any) {
		if id != "" {
			fmt.Fprintf(&buf, "id: %s\n", id)
		}
		d, _ := json.Marshal(data)
		fmt.Fprintf(&buf, "event: %s\ndata: %s\n\n", event, d)
	}
	if b.Open {
		buf.WriteString("retry: 3000\n\n")
		if b.Reset {
			frame("", "reset", map[string]any{})
		}
		frame("", "ready", inboxCountsBody(*b.Counts))
	}
	for _, e := range b.Events {
		ev := inboxEventJSON{ID: e.Seq, Type: e.Type, MessageID: strOrNil(e.MessageID), At: Timestamp(e.At)}
		if e.Message != nil {
			m := inboxMessageBody(e.Message)
			ev.Message = &m
		}
		frame(strconv.FormatInt(e.Seq, 10), e.Type, ev)
	}
	if !b.Open && b.Counts != nil {
		frame("", "counts", inboxCountsBody(*b.Counts))
	}
	if b.Heartbeat {
		buf.WriteString(": heartbeat\n\n")
	}
	return buf.Bytes()
}
