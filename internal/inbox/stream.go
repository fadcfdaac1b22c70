package inbox

import (
	"context"
	"sync"
	"time"

	"github.com/notifyd/notifyd/internal/notify"
)

// Streams (issue 33, item 3). A stream follows one profile's event log:
// it sends what the log holds after the reader's last event, then waits
// to be woken (Wake: the store's feed, on every process, after a commit
// that appended to the log) and reads again. A wake-up carries nothing,
// so one repeated changes nothing but when an event leaves, and the feed
// wakes every stream after it lost its connection; the log's numbers are
// the stream's event ids, so a reconnect that names the last one it saw
// (Last-Event-ID) gets every later event once, in order, whatever
// process committed it or serves the reconnect. Heartbeats read nothing.

// DefaultHeartbeat is how often an idle stream sends a heartbeat.
const DefaultHeartbeat = 15 * time.Second

// streamPage bounds the events of one read of the log.
const streamPage = 200

// Batch is what a stream hands its writer at once. The first batch
// opens the stream: Counts, and Reset when the reader's last event is no
// longer in the log (or was never in it: the profile was erased and made
// again), so it must read its inbox afresh. Then each batch carries the
// events read and the counts after them, or is a heartbeat.
type Batch struct {
	Open      bool
	Reset     bool
	Events    []*notify.InboxEvent
	Counts    *notify.InboxCounts
	Heartbeat bool
}

// hub holds the waiting streams of this process by profile row id.
type hub struct {
	mu     sync.Mutex
	subs   map[string]map[chan struct{}]struct{}
	closed chan struct{}
	once   sync.Once
}

func newHub() *hub {
	return &hub{subs: map[string]map[chan struct{}]struct{}{}, closed: make(chan struct{})}
}

func (h *hub) subscribe(id string) (chan struct{}, func()) {
	w := make(chan struct{}, 1)
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.subs[id] == nil {
		h.subs[id] = map[chan struct{}]struct{}{}
	}
	h.subs[id][w] = struct{}{}
	return w, func() {
		h.mu.Lock()
		defer h.mu.Unlock()
		delete(h.subs[id], w)
		if len(h.subs[id]) == 0 {
			delete(h.subs, id)
		}
	}
}

// Wake wakes the streams of profile row id on this process, every stream
// for "" (the feed reconnected: what it missed is not known). It never
// blocks: a stream already woken stays woken once.
func (s *Service) Wake(id string) {
	h := s.hub
	h.mu.Lock()
	defer h.mu.Unlock()
	wake := func(ws map[chan struct{}]struct{}) {
		for w := range ws {
			select {
			case w <- struct{}{}:
			default:
			}
		}
	}
	if id != "" {
		wake(h.subs[id])
		return
	}
	for _, ws := range h.subs {
		wake(ws)
	}
}

// Close ends every stream of this process (the server is stopping).
func (s *Service) Close() { s.hub.once.Do(func() { close(s.hub.closed) }) }

// Streams counts the streams open on this process.
func (s *Service) Streams() int {
	s.hub.mu.Lock()
	defer s.hub.mu.Unlock()
	n := 0
	for _, ws := range s.hub.subs {
		n += len(ws)
	}
	return n
}

// Stream follows the reader's inbox until ctx ends, the room closes or
// out fails, handing out its batches. after is the last event the reader
// has (its Last-Event-ID); a negative after starts from now. An error
// before the first batch (no such profile) is the caller's to answer;
// Stream answers nil when the stream ends.
func (s *Service) Stream(ctx context.Context, r Reader, after int64, out func(Batch) error) error {
	f, first, err := s.Open(ctx, r, after)
	if err != nil {
		return err
	}
	defer f.Close()
	if err := out(first); err != nil {
		return nil
	}
	f.Run(ctx, out)
	return nil
}

// A Follower is one open stream: subscribed to its profile's wake-ups,
// and past the events its first batch accounted for. It holds no
// goroutine of its own until Run, so a server may hand it to whichever
// goroutine writes the stream (internal/api hands it over with the
// connection, so the request's goroutine and buffers are freed).
type Follower struct {
	s     *Service
	r     Reader
	pid   string
	after int64
	wake  chan struct{}
	leave func()
}

// Open subscribes r's stream and reads its first batch (Open set: the
// counts, and Reset when the reader must reload). The caller must Close
// the follower.
func (s *Service) Open(ctx context.Context, r Reader, after int64) (*Follower, Batch, error) {
	f := &Follower{s: s, r: r}
	// The profile's row id is known only once read; the log is read
	// after subscribing, so no wake-up falls between.
	if err := s.Store.View(ctx, func(tx notify.Tx) (err error) {
		f.pid, err = profile(ctx, tx, r)
		return err
	}); err != nil {
		return nil, Batch{}, err
	}
	f.wake, f.leave = s.hub.subscribe(f.pid)
	var lg notify.InboxLog
	var counts notify.InboxCounts
	err := s.Store.View(ctx, func(tx notify.Tx) (err error) {
		if _, lg, err = tx.FindInboxEvents(ctx, r.WorkspaceID, f.pid, 0, 0); err != nil {
			return err
		}
		counts, err = tx.CountInbox(ctx, r.WorkspaceID, f.pid)
		return err
	})
	if err != nil {
		f.leave()
		return nil, Batch{}, err
	}
	first := Batch{Open: true, Counts: &counts}
	switch {
	case after < 0:
		after = lg.Newest
	case after > lg.Newest || (after < lg.Oldest-1 && lg.Oldest > 0) || (lg.Oldest == 0 && after < lg.Newest):
		// Past the log, or before what it still holds (the retention
		// sweep trims it, PurgeInboxEvents, to nothing for a quiet
		// recipient): the client reloads instead of missing events.
		first.Reset, after = true, lg.Newest
	}
	f.after = after
	return f, first, nil
}

// Close unsubscribes the follower.
func (f *Follower) Close() { f.leave() }

// Run hands out the follower's batches until ctx ends, the room closes
// or out fails.
func (f *Follower) Run(ctx context.Context, out func(Batch) error) {
	s, r := f.s, f.r
	beat := time.NewTicker(s.heartbeat)
	defer beat.Stop()
	for {
		var es []*notify.InboxEvent
		var counts notify.InboxCounts
		// One round trip without a transaction (Lookup): each wake-up of
		// each stream reads, a thousand a second under load.
		err := s.Store.Lookup(ctx, func(tx notify.Tx) (err error) {
			es, counts, err = tx.FollowInbox(ctx, r.WorkspaceID, f.pid, f.after, streamPage)
			return err
		})
		if err != nil {
			if ctx.Err() == nil && !s.closing() {
				s.Log.WarnContext(ctx, "inbox stream: reading the log failed", "err", err)
			}
			return
		}
		if len(es) > 0 {
			if err := out(Batch{Events: es, Counts: &counts}); err != nil {
				return
			}
			f.after = es[len(es)-1].Seq
			if len(es) == streamPage {
				continue
			}
		}
		if !f.wait(ctx, beat.C, out) {
			return
		}
	}
}

// wait sends heartbeats until the follower is woken (true: read the log
// again) or must end (false). A heartbeat reads nothing: every append
// wakes the profile's streams after its commit, and a feed that lost its
// connection wakes every stream when it is back, so an idle stream costs
// no query.
func (f *Follower) wait(ctx context.Context, beat <-chan time.Time, out func(Batch) error) bool {
	for {
		select {
		case <-f.wake:
			return true
		case <-beat:
			if err := out(Batch{Heartbeat: true}); err != nil {
				return false
			}
		case <-ctx.Done():
			return false
		case <-f.s.hub.closed:
			return false
		}
	}
}

// closing tells whether the room is closing.
func (s *Service) closing() bool {
	select {
	case <-s.hub.closed:
		return true
	default:
		return false
	}
}
