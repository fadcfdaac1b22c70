package engagement

import (
	"context"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/notifyd/notifyd/internal/notify"
	"github.com/notifyd/notifyd/internal/usecase"
)

// hit is one open or click as the public endpoint saw it.
type hit struct {
	l       link
	at      time.Time
	scanner bool
}

// Click verifies a click token and answers the URL to redirect to; ok is
// false for a token this service did not sign, or one altered (a URL that
// was not in the message among them). The click is queued for the
// recorder; the caller answers at once. head says the request was a HEAD
// (scanners check links that way; people's browsers do not).
func (s *Service) Click(token, userAgent string, head bool) (target string, ok bool) {
	l, ok := s.verify(token, 'c')
	if !ok {
		return "", false
	}
	now := s.Now()
	s.rec.add(hit{l: l, at: now, scanner: head || s.likelyScanner(l, userAgent, now)})
	return l.url, true
}

// Open verifies an open token and queues the open; false for a bad token.
func (s *Service) Open(token, userAgent string) bool {
	l, ok := s.verify(token, 'o')
	if !ok {
		return false
	}
	now := s.Now()
	s.rec.add(hit{l: l, at: now, scanner: s.likelyScanner(l, userAgent, now)})
	return true
}

// likelyScanner: a hit within the scanner window of the send (security
// gateways fetch as the mail arrives), with no user agent, or from a
// known scanner or tool's agent.
func (s *Service) likelyScanner(l link, ua string, now time.Time) bool {
	if now.Sub(l.sentAt) < s.window {
		return true
	}
	if strings.TrimSpace(ua) == "" {
		return true
	}
	ua = strings.ToLower(ua)
	for _, p := range scannerAgents {
		if strings.Contains(ua, p) {
			return true
		}
	}
	return false
}

// scannerAgents are parts of the user agents of link scanners, security
// gateways, crawlers and HTTP tools (lowercase). Mail clients' image
// proxies (Gmail's GoogleImageProxy, Apple's) are not among them: they
// fetch when a person opens the mail.
var scannerAgents = []string{
	"barracuda", "mimecast", "proofpoint", "urldefense", "safelinks", "symantec", "messagelabs", "forcepoint",
	"fortiguard", "sophos", "trendmicro", "cisco", "ironport", "zscaler", "paloalto", "checkpoint", "microsoft office",
	"ms-office", "bingpreview", "headlesschrome", "phantomjs", "python-", "curl/", "wget/", "go-http-client", "java/",
	"okhttp", "libwww", "httpclient", "scanner", "crawler", "spider", "bot/", "bot;", "slurp",
}

// recorder writes queued hits in batches: one transaction for what
// gathered while the previous one committed, so the redirect never waits
// for the database and thousands of clicks a second cost a few writes.
type recorder struct {
	s       *Service
	in      chan hit
	quit    chan struct{}
	done    chan struct{}
	start   sync.Once
	closed  atomic.Bool
	started atomic.Bool
	pending atomic.Int64
}

// recorderQueue bounds the hits waiting; a full queue makes the
// endpoints wait (backpressure) rather than drop hits.
const (
	recorderQueue = 1 << 16
	recorderBatch = 2000
	// recorderLinger is how long a batch gathers after its first hit:
	// invisible to readers (they were answered already), and it bounds
	// the commits to about 100 a second however many clicks come.
	recorderLinger = 10 * time.Millisecond
)

func newRecorder(s *Service) *recorder {
	return &recorder{s: s, in: make(chan hit, recorderQueue), quit: make(chan struct{}), done: make(chan struct{})}
}

func (r *recorder) add(h hit) {
	if r.closed.Load() {
		return
	}
	r.start.Do(func() {
		r.started.Store(true)
		go r.loop()
	})
	r.pending.Add(1)
	select {
	case r.in <- h:
	case <-r.quit:
		r.pending.Add(-1)
	}
}

func (r *recorder) loop() {
	defer close(r.done)
	batch := make([]hit, 0, recorderBatch)
	for {
		select {
		case h := <-r.in:
			batch = append(batch[:0], h)
			batch = r.drain(batch)
			if len(batch) < recorderBatch {
				// Under load, a moment's wait makes one commit of what
				// would be many (each commit is a sync to disk).
				time.Sleep(recorderLinger)
				batch = r.drain(batch)
			}
			r.write(batch)
		case <-r.quit:
			r.write(r.drain(batch[:0]))
			return
		}
	}
}

// drain adds what waits, up to a batch.
func (r *recorder) drain(batch []hit) []hit {
	for len(batch) < recorderBatch {
		select {
		case h := <-r.in:
			batch = append(batch, h)
		default:
			return batch
		}
	}
	return batch
}

func (r *recorder) write(batch []hit) {
	if len(batch) == 0 {
		return
	}
	defer r.pending.Add(-int64(len(batch)))
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var err error
	for try := 0; try < 3; try++ {
		if err = r.s.record(ctx, batch); err == nil {
			return
		}
		time.Sleep(time.Duration(try+1) * 100 * time.Millisecond)
	}
	r.s.Log.ErrorContext(ctx, "engagement hits not recorded", "hits", len(batch), "err", err)
}

// Flush waits until the hits queued so far are written (tests,
// benchmarks) or ctx ends.
func (s *Service) Flush(ctx context.Context) error {
	for s.rec.pending.Load() > 0 {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(5 * time.Millisecond):
		}
	}
	return nil
}

// Close writes the hits still queued and stops the recorder.
func (s *Service) Close() {
	r := s.rec
	if r.closed.Swap(true) {
		return
	}
	r.start.Do(func() {}) // no recorder starts after this
	close(r.quit)
	if r.started.Load() {
		<-r.done
	}
}

// record writes one batch: the hits added up by request and by campaign
// link, and the first open and click events of the requests whose first
// human hit this is.
func (s *Service) record(ctx context.Context, batch []hit) error {
	reqs := map[string]*notify.RequestEngagement{}
	links := map[string]*notify.LinkClicks{}
	var order []string
	var linkOrder []string
	firstURL := map[string]string{} // request → its first human click's URL in this batch
	for _, h := range batch {
		e := reqs[h.l.requestID]
		if e == nil {
			e = &notify.RequestEngagement{WorkspaceID: h.l.workspaceID, RequestID: h.l.requestID, CampaignID: h.l.campaignID}
			reqs[h.l.requestID] = e
			order = append(order, h.l.requestID)
		}
		if h.at.After(e.LastAt) {
			e.LastAt = h.at
		}
		at := h.at
		switch {
		case h.l.kind == 'o' && h.scanner:
			e.ScannerOpens++
		case h.l.kind == 'o':
			e.Opens++
			if e.FirstOpenedAt == nil || at.Before(*e.FirstOpenedAt) {
				e.FirstOpenedAt = &at
			}
		case h.scanner:
			e.ScannerClicks++
		default:
			e.Clicks++
			if e.FirstClickedAt == nil || at.Before(*e.FirstClickedAt) {
				e.FirstClickedAt = &at
				firstURL[h.l.requestID] = h.l.url
			}
			// A click is also an open: a person clicked in the mail even
			// if their client blocked its images.
			if e.FirstOpenedAt == nil {
				e.FirstOpenedAt = &at
			}
		}
		if h.l.kind == 'c' && h.l.campaignID != "" {
			k := h.l.campaignID + "\x00" + h.l.url
			lc := links[k]
			if lc == nil {
				lc = &notify.LinkClicks{WorkspaceID: h.l.workspaceID, CampaignID: h.l.campaignID, URL: h.l.url, URLHash: urlHash(h.l.url),
					Index: h.l.index}
				links[k] = lc
				linkOrder = append(linkOrder, k)
			}
			if h.scanner {
				lc.ScannerClicks++
			} else {
				lc.Clicks++
			}
		}
	}
	rs := make([]*notify.RequestEngagement, len(order))
	for i, id := range order {
		rs[i] = reqs[id]
	}
	ls := make([]*notify.LinkClicks, len(linkOrder))
	for i, k := range linkOrder {
		ls[i] = links[k]
	}
	var opened, clicked []string
	for _, e := range rs {
		if e.FirstOpenedAt != nil {
			opened = append(opened, e.RequestID)
		}
		if e.FirstClickedAt != nil {
			clicked = append(clicked, e.RequestID)
		}
	}
	now := s.Now()
	return s.Store.Update(ctx, func(tx notify.Tx) error {
		if err := tx.AddEngagement(ctx, rs, ls); err != nil {
			return err
		}
		var es []*notify.Event
		for _, k := range []struct {
			kind, typ string
			ids       []string
		}{{notify.HitOpen, notify.EventOpened, opened}, {notify.HitClick, notify.EventClicked, clicked}} {
			for start := 0; start < len(k.ids); start += 500 {
				claimed, err := tx.ClaimEngagementEvents(ctx, k.kind, k.ids[start:min(start+500, len(k.ids))])
				if err != nil {
					return err
				}
				for _, id := range claimed {
					e := reqs[id]
					r, err := tx.FindRequest(ctx, e.WorkspaceID, id)
					if notify.IsNotFound(err) {
						continue
					}
					if err != nil {
						return err
					}
					at := *e.FirstOpenedAt
					if k.kind == notify.HitClick {
						at = *e.FirstClickedAt
					}
					es = append(es, notify.EngagementEvent(usecase.NewID(), k.typ, r, at, firstURL[id], now))
				}
			}
		}
		if len(es) == 0 {
			return nil
		}
		es, err := notify.Subscribed(ctx, tx, es)
		if err != nil || len(es) == 0 {
			return err
		}
		return tx.CreateEvents(ctx, es)
	})
}
