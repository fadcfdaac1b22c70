package pacing

import (
	"context"
	"math"
	"strings"
	"sync"
	"time"
)

// Class is a send's lane in a bucket's line (issue 31, item 2):
// transactional sends (API sends, OTP, test-sends) are paid before bulk
// ones (campaign deliveries, bulk calls marked so), and a share of the
// rate is kept ready for them while bulk sends wait.
type Class int

const (
	Transactional Class = iota
	Bulk
	classes
)

// Bucket is one token bucket of a dispatch limit (SPEC "Dispatch limits"):
// it refills at rate tokens per second, holds at most one second of tokens
// (burst = rate, API-DECISIONS section 8) and starts full. Reservations may
// take more than it holds, which is how a caller learns how long to wait:
// the limit delays sends and never rejects them. The tokens owed are paid
// as the bucket refills, transactional reservations first, then the part
// kept for transactional sends, then bulk reservations. A Bucket is not
// safe for concurrent use; Limiter guards its buckets.
type Bucket struct {
	rate  float64 // tokens per second; <= 0 means unlimited
	burst float64
	avail float64 // free tokens, at most burst
	last  time.Time
	// issued and paid count, per class, the tokens ever reserved and the
	// tokens of those already covered: a reservation's place in its line.
	issued, paid [classes]float64
	// keep is the share of the bucket (0 to 1) held for transactional
	// sends while bulk sends wait.
	keep float64
	conf float64 // the configured rate the cluster share was taken of
	// horizon is the turn after the last snoozed send's (SnoozeSlot).
	horizon time.Time
	// holds are the places of bulk sends admitted (AdmitBulk) that have
	// not reserved their tokens yet, oldest first.
	holds []bulkHold
}

// bulkHold is n admitted bulk sends' place in the line until they
// reserve, or until until at the latest (an admission whose claim rolled
// back must not hold the line for ever).
type bulkHold struct {
	n     float64
	until time.Time
}

// BulkHoldFor is how long an admission holds its sends' place before they
// reserve: the claim's commit and the start of its sends come well within.
const BulkHoldFor = 5 * time.Second

// held is the bulk sends admitted at now and not yet reserved.
func (b *Bucket) held(now time.Time) float64 {
	i := 0
	for i < len(b.holds) && !b.holds[i].until.After(now) {
		i++
	}
	b.holds = b.holds[i:]
	var n float64
	for _, h := range b.holds {
		n += h.n
	}
	return n
}

// unhold takes n reservations made off the oldest holds.
func (b *Bucket) unhold(n float64) {
	for n > 0 && len(b.holds) > 0 {
		x := min(n, b.holds[0].n)
		b.holds[0].n -= x
		n -= x
		if b.holds[0].n <= 0 {
			b.holds = b.holds[1:]
		}
	}
}

// NewBucket returns a full bucket for rate tokens per second at now. A rate
// below 1 gets a burst of 1 token so that the first send is not delayed; a
// rate of zero or less makes an unlimited bucket.
func NewBucket(rate float64, now time.Time) *Bucket {
	burst := max(rate, 1)
	return &Bucket{rate: rate, burst: burst, avail: burst, last: now}
}

// Rate reports the bucket's refill rate in tokens per second.
func (b *Bucket) Rate() float64 { return b.rate }

// Keep sets the share of the bucket (0 to 1) kept for transactional sends.
func (b *Bucket) Keep(share float64) { b.keep = min(max(share, 0), 1) }

// Reserve takes n tokens for a transactional send at now (ReserveAs).
func (b *Bucket) Reserve(now time.Time, n float64) time.Duration {
	return b.ReserveAs(now, n, Transactional)
}

// ReserveAs takes n tokens for a send of class c at now and returns how
// long the caller must wait before acting on them: 0 when they were
// available, otherwise the time until the refill covers them and every
// reservation ahead of them. The tokens are taken either way, so callers
// that reserve in turn are spaced 1/rate apart. A transactional send
// goes ahead of every bulk one; a bulk send leaves the kept share alone.
// A now earlier than a previous call (clock step back) refills nothing.
func (b *Bucket) ReserveAs(now time.Time, n float64, c Class) time.Duration {
	if b.rate <= 0 {
		return 0
	}
	b.refill(now)
	if c == Bulk {
		b.unhold(n) // an admitted send takes its place
	}
	owedBefore := b.owed(c)
	b.issued[c] += n
	free := b.avail
	if c == Bulk {
		free = max(b.avail-b.kept(), 0)
		if b.owed(Transactional) > 0 {
			free = 0
		}
	}
	if owedBefore > 0 {
		free = 0 // the earlier reservations of the class are paid first
	}
	x := min(free, n)
	b.avail -= x
	b.paid[c] += x
	return b.waitTicket(c, b.issued[c])
}

func (b *Bucket) owed(c Class) float64 { return b.issued[c] - b.paid[c] }

// owedAll is every token reserved and not yet covered.
func (b *Bucket) owedAll() float64 { return b.owed(Transactional) + b.owed(Bulk) }

// kept is how many free tokens are held for transactional sends: the
// share of a second's tokens, at least one, so that a transactional send
// never waits behind a bulk backlog even at low rates.
func (b *Bucket) kept() float64 {
	if b.keep <= 0 {
		return 0
	}
	return min(b.burst, max(b.keep*b.burst, 1))
}

// waitTicket is the wait, at the current rate, until the reservation of
// class c whose last token is number ticket of its line is covered.
func (b *Bucket) waitTicket(c Class, ticket float64) time.Duration {
	own := ticket - b.paid[c]
	if own <= 0 || b.rate <= 0 {
		return 0
	}
	need := own
	if c == Bulk {
		need += b.owed(Transactional) + max(b.kept()-b.avail, 0)
	}
	return time.Duration(math.Ceil(need / b.rate * float64(time.Second)))
}

// SetRate changes the refill rate in place at now: tokens accrued so far
// at the old rate stay (capped at the new burst) and any debt is kept, so
// a worker whose cluster share moves a little gets no fresh burst.
func (b *Bucket) SetRate(now time.Time, rate float64) {
	if rate == b.rate {
		return
	}
	if b.rate > 0 {
		b.refill(now)
	} else if now.After(b.last) {
		b.last = now
	}
	b.rate, b.burst = rate, max(rate, 1)
	b.avail = min(b.avail, b.burst)
}

// unreserve gives back n tokens of class c reserved as number ticket of
// their line, for a canceled wait.
func (b *Bucket) unreserve(c Class, ticket, n float64) {
	switch {
	case ticket <= b.paid[c]:
		b.credit(n) // already covered: the tokens go back to the line
	case ticket == b.issued[c]:
		// The newest reservation: undone exactly, so the sends waiting
		// before it keep their place.
		b.issued[c] -= n
	default:
		// Given back from the middle of the line: the later ones move
		// up, and the earlier ones too (rare: snoozes give back at once).
		b.paid[c] = min(b.paid[c]+n, b.issued[c])
	}
}

func (b *Bucket) refill(now time.Time) {
	if !now.After(b.last) {
		return
	}
	a := now.Sub(b.last).Seconds() * b.rate
	b.last = now
	b.credit(a)
}

// credit hands out a tokens: transactional reservations first, then the
// share kept for transactional sends, then bulk reservations, then free
// tokens up to the burst.
func (b *Bucket) credit(a float64) {
	p := min(a, b.owed(Transactional))
	b.paid[Transactional] += p
	a -= p
	if k := b.kept() - b.avail; k > 0 {
		x := min(a, k)
		b.avail += x
		a -= x
	}
	p = min(a, b.owed(Bulk))
	b.paid[Bulk] += p
	a -= p
	b.avail = min(b.burst, b.avail+a)
}

// Limit names one bucket that applies to a send: Key identifies the scope
// and target (for example "workspace:<id>", "provider:<id>",
// "apiKey:<id>"; the part before the first colon is the scope label of
// the metrics), Rate is its configured ratePerSecond. A Rate of zero or
// less means no limit and is ignored.
type Limit struct {
	Key  string
	Rate float64
}

// Sharer turns a configured rate into this process's part of it (the
// cluster share, cluster.go); count says the call is a reservation and
// counts as demand for key. nil means the process applies the whole rate,
// as SPEC describes.
type Sharer interface {
	Share(key string, rate float64, count bool) float64
}

// Limiter is a goroutine-safe set of token buckets keyed by string, living
// in the memory of one worker process. With a Sharer each bucket refills
// at the process's share of the configured rate, so the rate holds for a
// cluster of workers.
type Limiter struct {
	now   func() time.Time
	sleep func(ctx context.Context, d time.Duration) error // replaced in tests
	share Sharer
	keep  float64 // share of every bucket kept for transactional sends

	mu      sync.Mutex
	buckets map[string]*Bucket
	used    map[string]time.Time // last reservation per key, for Prune
}

// SetSharer installs the cluster share; call it before first use.
func (l *Limiter) SetSharer(s Sharer) { l.share = s }

// SetKeep sets the share (0 to 1) of every bucket kept for transactional
// sends while bulk sends wait; call it before first use.
func (l *Limiter) SetKeep(share float64) { l.keep = min(max(share, 0), 1) }

// NewLimiter returns an empty Limiter reading the time from now (time.Now
// when nil); injecting the clock keeps the pacing testable.
func NewLimiter(now func() time.Time) *Limiter {
	if now == nil {
		now = time.Now
	}
	return &Limiter{now: now, sleep: Sleep, buckets: make(map[string]*Bucket), used: make(map[string]time.Time)}
}

// Wait blocks until one send may go out under every limit given (all
// applicable scopes apply together, AND). It reserves one token from each
// bucket at once and sleeps for the longest of the waits, so a send never
// holds a lock while sleeping. A bucket is created full the first time its
// key is seen; when the Rate for its key changes the bucket keeps its
// tokens and debt and refills at the new rate. A key given twice in one
// call counts once (its first Rate is used).
//
// When ctx ends first, Wait returns ctx.Err() and gives the reserved tokens
// back; it also returns ctx.Err() at once, reserving nothing, for an
// already ended ctx.
func (l *Limiter) Wait(ctx context.Context, limits ...Limit) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	r := l.Reserve(limits...)
	if r.Wait <= 0 {
		return nil
	}
	if err := l.sleep(ctx, r.Wait); err != nil {
		r.Cancel()
		return err
	}
	return nil
}

// Reservation is one token taken from each bucket of a send.
type Reservation struct {
	// Wait is how long the send must wait: the longest wait of its buckets.
	Wait time.Duration
	// Waits holds each applied limit's own wait, by Key.
	Waits map[string]time.Duration
	// Binding is the Key whose bucket needs the longest wait ("" when none).
	Binding string

	l     *Limiter
	taken []held
}

type held struct {
	key    string
	b      *Bucket
	class  Class
	ticket float64 // b.issued[class] right after this reservation
}

// Reserve takes one token from each bucket of limits for a transactional
// send (ReserveAs).
func (l *Limiter) Reserve(limits ...Limit) *Reservation {
	return l.ReserveAs(Transactional, limits...)
}

// ReserveAs takes one token from each bucket of limits for a send of
// class c without waiting and says how long the caller must wait before
// sending. A caller that will not send (it snoozes, or its context ended)
// calls Cancel.
func (l *Limiter) ReserveAs(c Class, limits ...Limit) *Reservation {
	r := &Reservation{l: l}
	l.mu.Lock()
	defer l.mu.Unlock()
	now := l.now()
	for i, lim := range limits {
		if lim.Rate <= 0 || seenBefore(limits[:i], lim.Key) {
			continue
		}
		b := l.bucket(lim, now, true)
		w := b.ReserveAs(now, 1, c)
		if r.Waits == nil {
			r.Waits = make(map[string]time.Duration, len(limits))
		}
		r.Waits[lim.Key] = w
		if w > r.Wait || r.Binding == "" {
			r.Wait, r.Binding = max(w, r.Wait), lim.Key
		}
		r.taken = append(r.taken, held{lim.Key, b, c, b.issued[c]})
	}
	return r
}

// bucket is lim's bucket at this process's share of its rate, made full
// the first time its key is seen; count says a reservation follows (it
// counts as demand). l.mu is held.
func (l *Limiter) bucket(lim Limit, now time.Time, count bool) *Bucket {
	rate := lim.Rate
	if l.share != nil {
		rate = l.share.Share(lim.Key, rate, count)
	}
	b := l.buckets[lim.Key]
	if b == nil {
		b = NewBucket(rate, now)
		l.buckets[lim.Key] = b
	} else {
		b.SetRate(now, rate)
	}
	b.conf = lim.Rate
	b.Keep(l.keep)
	l.used[lim.Key] = now
	return b
}

// BulkWait is how long n more bulk sends under lim would wait for the
// last of them, reserving nothing: a bulk batch asks before it takes its
// messages, and waits in the queue instead when the answer is long. The
// sends admitted before and not yet reserved count as reserved.
func (l *Limiter) BulkWait(lim Limit, n float64) time.Duration {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.bulkWait(lim, n, l.now())
}

// bulkWait is BulkWait with l.mu held.
func (l *Limiter) bulkWait(lim Limit, n float64, now time.Time) time.Duration {
	if lim.Rate <= 0 {
		return 0
	}
	b := l.bucket(lim, now, false)
	if b.rate <= 0 {
		return 0
	}
	b.refill(now)
	free := max(b.avail-b.kept(), 0)
	if b.owed(Transactional) > 0 || b.owed(Bulk) > 0 {
		free = 0
	}
	return b.waitTicket(Bulk, b.issued[Bulk]+max(b.held(now)+n-free, 0))
}

// AdmitBulk decides, in one step, whether a bulk batch of count[key]
// sends under each limit of lims may take its messages: it answers the
// longest BulkWait and its key, and when that wait is at most within it
// holds the batch's place in every bucket until its sends reserve (at
// most BulkHoldFor). Without the hold, batches admitted together (claims
// sharing one transaction, or claims on several goroutines) all saw the
// line before any of them reserved, and all were let through.
func (l *Limiter) AdmitBulk(lims map[string]Limit, count map[string]float64, within time.Duration) (time.Duration, string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	now := l.now()
	var wait time.Duration
	var binding string
	for k, lim := range lims {
		if w := l.bulkWait(lim, count[k], now); w > wait || binding == "" {
			wait, binding = max(w, wait), k
		}
	}
	if wait > within {
		return wait, binding
	}
	for k, lim := range lims {
		if lim.Rate <= 0 {
			continue
		}
		if b := l.buckets[k]; b != nil && b.rate > 0 {
			b.holds = append(b.holds, bulkHold{n: count[k], until: now.Add(BulkHoldFor)})
		}
	}
	return wait, binding
}

// Remaining is how long the reservation must still wait, measured now at
// each bucket's current rate: when the cluster share of a rate grows (a
// peer went idle) or a limit is raised, waiting sends go sooner. Callers
// sleep in slices and ask again.
func (l *Limiter) Remaining(r *Reservation) time.Duration {
	if r == nil || r.l == nil {
		return 0
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	now := l.now()
	var wait time.Duration
	for _, h := range r.taken {
		b := h.b
		if l.share != nil && b.conf > 0 {
			b.SetRate(now, l.share.Share(h.key, b.conf, false))
		}
		b.refill(now)
		wait = max(wait, b.waitTicket(h.class, h.ticket))
	}
	return wait
}

// SnoozeSlot gives a send that will not wait on key's bucket now a time
// to come back. Sends snoozed on one key get turns spaced at the key's
// configured rate after the sends already waiting, and come back lead before their
// turn: they neither return in a herd (and snooze again) nor leave the
// bucket idle. Without a bucket for key it returns 0.
//
// Turns are reckoned at the configured (cluster) rate, not at this
// process's share of it: the share grows when the other workers go idle,
// and the sends waiting here are then paid sooner than the share said. A
// turn reckoned at the share came too late, and the bucket stood idle
// until the snoozed sends returned. At the configured rate a turn is the
// earliest it can be; a send that comes back early waits in process.
func (l *Limiter) SnoozeSlot(key string, lead time.Duration) time.Duration {
	return l.SnoozeSlotN(key, 1, lead)
}

// SnoozeSlotN is SnoozeSlot for n sends that come back together (a bulk
// batch): the next turn is n sends later.
func (l *Limiter) SnoozeSlotN(key string, n float64, lead time.Duration) time.Duration {
	l.mu.Lock()
	defer l.mu.Unlock()
	b := l.buckets[key]
	if b == nil || b.rate <= 0 {
		return 0
	}
	now := l.now()
	b.refill(now)
	rate := max(b.conf, b.rate)
	turn := now
	if owed := b.owedAll(); owed > 0 {
		turn = now.Add(time.Duration(math.Ceil(owed / rate * float64(time.Second))))
	}
	if b.horizon.After(turn) {
		turn = b.horizon
	}
	// Snoozed jobs come back to any worker: their turns are spaced at the
	// cluster's rate, since one worker's share would starve the rest.
	b.horizon = turn.Add(time.Duration(n * float64(time.Second) / rate))
	return max(turn.Sub(now)-lead, 0)
}

// Drain empties the buckets of keys (tokens held, not debts): a worker
// idle on a key that its peers use keeps no burst of its own.
func (l *Limiter) Drain(keys []string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	now := l.now()
	for _, k := range keys {
		if b := l.buckets[k]; b != nil && b.rate > 0 {
			b.refill(now)
			b.avail = 0
		}
	}
}

// Debts reports, per key, the tokens owed by sends waiting now: the
// backlog a worker publishes as demand with its heartbeat.
func (l *Limiter) Debts() map[string]float64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	now := l.now()
	out := map[string]float64{}
	for k, b := range l.buckets {
		if b.rate <= 0 {
			continue
		}
		b.refill(now)
		if owed := b.owedAll(); owed > 0 {
			out[k] = owed
		}
	}
	return out
}

// Cancel gives the reserved tokens back (once).
func (r *Reservation) Cancel() {
	if r == nil || r.l == nil {
		return
	}
	l := r.l
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, h := range r.taken {
		if l.buckets[h.key] != h.b { // pruned meanwhile
			continue
		}
		h.b.unreserve(h.class, h.ticket, 1)
	}
	r.l, r.taken = nil, nil
}

// Prune forgets buckets unused since before idle ago whose debt is paid,
// so limits that were deleted or disabled do not accumulate.
func (l *Limiter) Prune(idle time.Duration) {
	l.mu.Lock()
	defer l.mu.Unlock()
	now := l.now()
	for k, at := range l.used {
		b := l.buckets[k]
		if b.rate > 0 {
			b.refill(now)
		}
		if now.Sub(at) >= idle && (b.rate <= 0 || b.owedAll() == 0) {
			delete(l.buckets, k)
			delete(l.used, k)
		}
	}
}

// Scope is the scope label of a limit key: the part before the first colon.
func Scope(key string) string {
	if i := strings.IndexByte(key, ':'); i >= 0 {
		return key[:i]
	}
	return key
}

func seenBefore(limits []Limit, key string) bool {
	for _, l := range limits {
		if l.Rate > 0 && l.Key == key {
			return true
		}
	}
	return false
}

// Sleep sleeps for d or until ctx ends, whichever is first, and returns
// ctx's error in the second case.
func Sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
