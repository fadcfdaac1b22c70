package api

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
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

func (a inboxAPI) handleStream(c *call) error {
	after, err := lastEventID(c.r)
	if err != nil {
		return err
	}
	rc := http.NewResponseController(c.w)
	var buf strings.Builder
	frame := func(id, event string, data any) {
		if id != "" {
			fmt.Fprintf(&buf, "id: %s\n", id)
		}
		b, _ := json.Marshal(data)
		fmt.Fprintf(&buf, "event: %s\ndata: %s\n\n", event, b)
	}
	return a.room.Stream(c.ctx, *c.reader, after, func(b inbox.Batch) error {
		buf.Reset()
		if b.Open {
			// A stream outlives the server's read and write timeouts.
			_ = rc.SetReadDeadline(time.Time{})
			_ = rc.SetWriteDeadline(time.Time{})
			h := c.w.Header()
			h.Set("Content-Type", "text/event-stream")
			h.Set("Cache-Control", "no-store")
			h.Set("X-Accel-Buffering", "no") // nginx: do not buffer the stream
			c.w.WriteHeader(http.StatusOK)
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
		if _, err := c.w.Write([]byte(buf.String())); err != nil {
			return err
		}
		return rc.Flush()
	})
}
