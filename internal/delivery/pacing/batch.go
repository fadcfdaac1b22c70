package pacing

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/notifyd/notifyd/internal/dispatch"
	"github.com/notifyd/notifyd/internal/notify"
	"github.com/notifyd/notifyd/internal/provider"
)

// Flush reasons of a batch (metric label values).
const (
	FlushWindow = "window" // the batch wait of its first message elapsed
	FlushFull   = "full"   // the batch reached its max size
	FlushSync   = "sync"   // a synchronous send (OTP, test-send), alone and at once
)

// BatchObserver is told about every flush (metrics).
type BatchObserver interface {
	// Flushed reports one batch of size messages, sent in calls vendor
	// HTTP calls (usually 1; 0 when every message was refused before any
	// call; more for adapters that split a batch, such as push_gateway's
	// one request per message).
	Flushed(kind string, size int, reason string, calls int)
}

// SendFunc is a provider's Send: one result per message, in order.
type SendFunc func(ctx context.Context, msgs []provider.Message) []provider.Result

// BatchAccount is what a message joins: a provider account with its
// batching and its sender. Key identifies the account (one queue and one
// call budget per key); Kind labels the metrics.
type BatchAccount struct {
	Key    string
	Kind   string
	Config dispatch.BatchConfig
	Send   SendFunc
}

// Batched is a message's own result with its place in the call that
// carried it.
type Batched struct {
	provider.Result
	// Size is the number of messages of the call, Index this message's
	// position in it (0-based).
	Size, Index int
}

// ErrLeftBatch wraps the context error of a message that left its batch
// before the batch was sent: the message was not sent and may be sent again.
type ErrLeftBatch struct{ Err error }

func (e *ErrLeftBatch) Error() string {
	return fmt.Sprintf("message left its batch unsent: %v", e.Err)
}

func (e *ErrLeftBatch) Unwrap() error { return e.Err }

// FlushTimeout bounds one batch call. A batch does not run under the
// context of any of its jobs (one job ending must not cancel the others'
// messages); the adapters' HTTP client has its own, shorter timeouts.
var FlushTimeout = 2 * time.Minute

// Batcher groups the messages of concurrent sends per provider account
// into batch calls. It lives in one worker process; each account gets a
// queue and a flusher goroutine that exits when the queue is empty.
type Batcher struct {
	obs   BatchObserver
	share Sharer // cluster share of each account's call budget (callshare.go)
	mu    sync.Mutex
	qs    map[string]*batchQueue
}

// NewBatcher returns a Batcher reporting to obs (nil: nobody).
func NewBatcher(obs BatchObserver) *Batcher {
	return &Batcher{obs: obs, qs: map[string]*batchQueue{}}
}

type batchQueue struct {
	acct    BatchAccount
	items   []*batchItem
	last    time.Time // start of the latest reserved call (call budget)
	hold    time.Time // no call before (Retry-After)
	running bool      // a flusher goroutine owns the queue
	wake    chan struct{}
	// soonest is the earliest due time of a message that waits less than
	// the window (SendWithin); zero when none waits.
	soonest time.Time
}

type batchItem struct {
	msg    provider.Message
	joined time.Time
	due    time.Time // joined plus its wait for company, when shorter than the window
	taken  bool
	done   chan struct{}
	res    Batched
}

// queue returns the account's queue with a's latest config and sender;
// b.mu must be held.
func (b *Batcher) queue(a BatchAccount) *batchQueue {
	q := b.qs[a.Key]
	if q == nil {
		q = &batchQueue{wake: make(chan struct{}, 1)}
		b.qs[a.Key] = q
	}
	q.acct = a
	return q
}

// callSpacingMargin widens the spacing of calls by 5%. Calls spaced
// exactly 1/cps apart land cps+1 in one second of the vendor's clock as
// soon as one is delayed more than the next (building a large body, the
// network, a loaded CPU); with 5% the calls of any second span 1.05 s, so
// the first must be 50 ms later than the last before the vendor counts
// one too many. The cost is 5% of the rate when the cap binds.
const callSpacingMargin = 1.05

// reserve takes the next call slot of q at or after now and returns its
// start; b.mu must be held.
func (b *Batcher) reserve(q *batchQueue, now time.Time) time.Time {
	at := now
	if next := b.next(q); next.After(at) {
		at = next
	}
	if q.acct.Config.CallsPerSecond > 0 {
		b.spacing(q, true) // counts the call as demand
		q.last = at
	}
	return at
}

// Send joins m to the current batch of a and waits for its own result.
// When ctx ends before the batch is sent, m leaves the batch unsent and
// Send returns *ErrLeftBatch; once the batch call has started, Send waits
// for its result whatever ctx does, so that a sent message is never
// reported unsent (and sent twice by a retry).
func (b *Batcher) Send(ctx context.Context, a BatchAccount, m provider.Message) (Batched, error) {
	return b.SendWithin(ctx, a, m, 0)
}

// SendWithin is Send for a message that waits for company at most
// within when that is shorter than the account's window (a
// transactional message, issue 31): the batch it joins leaves by then,
// call budget permitting, with whatever joined it so far. Zero or less
// waits the window.
func (b *Batcher) SendWithin(ctx context.Context, a BatchAccount, m provider.Message, within time.Duration) (Batched, error) {
	if err := ctx.Err(); err != nil {
		return Batched{}, &ErrLeftBatch{Err: err}
	}
	cfg := a.Config
	if cfg.CallsPerSecond <= 0 && (cfg.Window <= 0 || cfg.MaxSize <= 1) {
		// Nothing to wait for: neither a call budget nor a window.
		reason := FlushWindow
		if cfg.MaxSize <= 1 {
			reason = FlushFull
		}
		return b.call(ctx, a, m, reason), nil
	}
	it := &batchItem{msg: m, joined: time.Now(), done: make(chan struct{})}
	if within > 0 && within < cfg.Window {
		it.due = it.joined.Add(within)
	}
	b.mu.Lock()
	q := b.queue(a)
	q.items = append(q.items, it)
	if !it.due.IsZero() && (q.soonest.IsZero() || it.due.Before(q.soonest)) {
		q.soonest = it.due
	}
	if !q.running {
		q.running = true
		go b.flusher(q)
	}
	b.mu.Unlock()
	select {
	case q.wake <- struct{}{}:
	default:
	}
	select {
	case <-it.done:
		return it.res, nil
	case <-ctx.Done():
	}
	b.mu.Lock()
	if !it.taken {
		for i, x := range q.items {
			if x == it {
				q.items = append(q.items[:i], q.items[i+1:]...)
				break
			}
		}
		b.mu.Unlock()
		return Batched{}, &ErrLeftBatch{Err: ctx.Err()}
	}
	b.mu.Unlock()
	<-it.done
	return it.res, nil
}

// SendNow sends m alone and at once, with no window and no wait for the
// call budget (OTP and test-sends are synchronous); the call still counts
// against the budget, so batched calls that follow keep the rate.
func (b *Batcher) SendNow(ctx context.Context, a BatchAccount, m provider.Message) Batched {
	if a.Config.CallsPerSecond > 0 {
		b.mu.Lock()
		b.reserve(b.queue(a), time.Now())
		b.mu.Unlock()
	}
	return b.call(ctx, a, m, FlushSync)
}

// call sends one message in a call of its own under ctx.
func (b *Batcher) call(ctx context.Context, a BatchAccount, m provider.Message, reason string) Batched {
	res := b.send(ctx, a, []provider.Message{m})
	b.observe(a.Kind, 1, reason, res)
	b.honorRetryAfter(a, res)
	return Batched{Result: res[0], Size: 1}
}

func (b *Batcher) observe(kind string, size int, reason string, res []provider.Result) {
	if b.obs != nil {
		b.obs.Flushed(kind, size, reason, CountCalls(res))
	}
}

// CountCalls counts the vendor HTTP calls behind results: messages of one
// call share its answer, so each distinct answer is a call, and answerless
// exchanges (transport failures) count as one more call when there are any.
func CountCalls(res []provider.Result) int {
	seen := map[*provider.Response]bool{}
	failed := 0
	for _, r := range res {
		switch {
		case r.Exchange.Response != nil:
			seen[r.Exchange.Response] = true
		case r.Exchange.Method != "":
			failed = 1
		}
	}
	return len(seen) + failed
}

// send calls the provider and guarantees one result per message, even
// when the adapter miscounts or panics.
func (b *Batcher) send(ctx context.Context, a BatchAccount, msgs []provider.Message) (out []provider.Result) {
	defer func() {
		if p := recover(); p != nil {
			out = provider.FailAll(msgs, provider.Errorf(notify.FailureUnknown, "provider failed: %v", p), provider.Exchange{})
		}
	}()
	out = a.Send(ctx, msgs)
	if len(out) != len(msgs) {
		out = provider.FailAll(msgs, provider.Errorf(notify.FailureUnknown, "provider returned %d results for %d messages", len(out), len(msgs)), provider.Exchange{})
	}
	return out
}

// flusher runs while q has messages: it waits for the batch of the oldest
// message to fill or for its window to elapse, then for the call budget,
// then sends the batch (at most MaxSize of the oldest messages) in a
// goroutine of its own and starts over.
func (b *Batcher) flusher(q *batchQueue) {
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	wait := func(d time.Duration) {
		timer.Reset(d)
		select {
		case <-timer.C:
		case <-q.wake:
			timer.Stop() // Go >= 1.23 timers: no stale value to drain
		}
	}
	for {
		b.mu.Lock()
		if len(q.items) == 0 {
			q.running = false
			b.mu.Unlock()
			return
		}
		cfg := q.acct.Config
		maxSize := max(cfg.MaxSize, 1)
		now := time.Now()
		due := q.items[0].joined.Add(cfg.Window)
		if !q.soonest.IsZero() && q.soonest.Before(due) {
			due = q.soonest
		}
		if len(q.items) < maxSize && now.Before(due) {
			b.mu.Unlock()
			wait(due.Sub(now))
			continue
		}
		if next := b.next(q); next.After(now) {
			// Due but over budget: messages arriving meanwhile join. The
			// wait is measured again after each slice, so a changed
			// cluster share applies to it.
			d := next.Sub(now)
			b.mu.Unlock()
			wait(min(d, budgetSlice))
			continue
		}
		reason := FlushWindow
		if len(q.items) >= maxSize {
			reason = FlushFull
		}
		n := min(len(q.items), maxSize)
		batch := make([]*batchItem, n)
		copy(batch, q.items)
		q.items = append(q.items[:0:0], q.items[n:]...)
		for _, it := range batch {
			it.taken = true
		}
		// The soonest due among the messages left (once per call).
		q.soonest = time.Time{}
		for _, it := range q.items {
			if !it.due.IsZero() && (q.soonest.IsZero() || it.due.Before(q.soonest)) {
				q.soonest = it.due
			}
		}
		b.reserve(q, now)
		acct := q.acct
		b.mu.Unlock()
		go b.flush(acct, batch, reason)
	}
}

// flush sends one batch and hands each message its own result.
func (b *Batcher) flush(a BatchAccount, batch []*batchItem, reason string) {
	msgs := make([]provider.Message, len(batch))
	for i, it := range batch {
		msgs[i] = it.msg
	}
	ctx, cancel := context.WithTimeout(context.Background(), FlushTimeout)
	defer cancel()
	res := b.send(ctx, a, msgs)
	b.observe(a.Kind, len(batch), reason, res)
	b.honorRetryAfter(a, res)
	sliceExchanges(res)
	for i, it := range batch {
		it.res = Batched{Result: res[i], Size: len(batch), Index: i}
		close(it.done)
	}
}

// honorRetryAfter holds the account's next batch call back for as long as
// a rate-limited answer asked (Retry-After); the messages of that answer
// fail over or retry on their own.
func (b *Batcher) honorRetryAfter(a BatchAccount, res []provider.Result) {
	var wait time.Duration
	for _, r := range res {
		if r.Err != nil && r.Err.Code == notify.FailureRateLimited {
			wait = max(wait, r.Err.RetryAfter)
		}
	}
	if wait <= 0 {
		return
	}
	b.mu.Lock()
	q := b.queue(a)
	if until := time.Now().Add(wait); until.After(q.hold) {
		q.hold = until
	}
	b.mu.Unlock()
}
