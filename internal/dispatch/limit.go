package dispatch

import (
	"context"
	"math"
	"sync"
	"time"
)

// Bucket is one token bucket of a dispatch limit (SPEC "Dispatch limits"):
// it refills at rate tokens per second, holds at most one second of tokens
// (burst = rate, API-DECISIONS section 8) and starts full. Reservations may
// drive it negative, which is how a caller learns how long to wait: the
// limit delays sends and never rejects them. A Bucket is not safe for
// concurrent use; Limiter guards its buckets.
type Bucket struct {
	rate   float64 // tokens per second; <= 0 means unlimited
	burst  float64
	tokens float64
	last   time.Time
}

// NewBucket returns a full bucket for rate tokens per second at now. A rate
// below 1 gets a burst of 1 token so that the first send is not delayed; a
// rate of zero or less makes an unlimited bucket.
func NewBucket(rate float64, now time.Time) *Bucket {
	burst := max(rate, 1)
	return &Bucket{rate: rate, burst: burst, tokens: burst, last: now}
}

// Rate reports the bucket's refill rate in tokens per second.
func (b *Bucket) Rate() float64 { return b.rate }

// Reserve takes n tokens at now and returns how long the caller must wait
// before acting on them: 0 when they were available, otherwise the time
// until the refill covers the debt. The tokens are taken either way, so
// callers that reserve in turn are spaced 1/rate apart. A now earlier than
// a previous call (clock step back) refills nothing.
func (b *Bucket) Reserve(now time.Time, n float64) time.Duration {
	if b.rate <= 0 {
		return 0
	}
	b.refill(now)
	b.tokens -= n
	if b.tokens >= 0 {
		return 0
	}
	return time.Duration(math.Ceil(-b.tokens / b.rate * float64(time.Second)))
}

// unreserve gives back n tokens, up to the burst, for a canceled wait.
func (b *Bucket) unreserve(n float64) {
	b.tokens = min(b.tokens+n, b.burst)
}

func (b *Bucket) refill(now time.Time) {
	if !now.After(b.last) {
		return
	}
	b.tokens = min(b.burst, b.tokens+now.Sub(b.last).Seconds()*b.rate)
	b.last = now
}

// Limit names one bucket that applies to a send: Key identifies the scope
// and target (for example "workspace:<id>", "provider:<id>",
// "apiKey:<id>"), Rate is its ratePerSecond. A Rate of zero or less means
// no limit and is ignored.
type Limit struct {
	Key  string
	Rate float64
}

// Limiter is a goroutine-safe set of token buckets keyed by string, living
// in the memory of one worker process as SPEC describes (each worker
// applies the limit on its own).
type Limiter struct {
	now   func() time.Time
	sleep func(ctx context.Context, d time.Duration) error // replaced in tests

	mu      sync.Mutex
	buckets map[string]*Bucket
}

// NewLimiter returns an empty Limiter reading the time from now (time.Now
// when nil); injecting the clock keeps the pacing testable.
func NewLimiter(now func() time.Time) *Limiter {
	if now == nil {
		now = time.Now
	}
	return &Limiter{now: now, sleep: sleepCtx, buckets: make(map[string]*Bucket)}
}

// Wait blocks until one send may go out under every limit given (all
// applicable scopes apply together, AND). It reserves one token from each
// bucket at once and sleeps for the longest of the waits, so a send never
// holds a lock while sleeping. A bucket is created full the first time its
// key is seen and rebuilt (full) when the Rate for its key changes. A key
// given twice in one call counts once (its first Rate is used).
//
// When ctx ends first, Wait returns ctx.Err() and gives the reserved tokens
// back; it also returns ctx.Err() at once, reserving nothing, for an
// already ended ctx.
func (l *Limiter) Wait(ctx context.Context, limits ...Limit) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	type held struct {
		key string
		b   *Bucket
	}
	var taken []held
	var wait time.Duration

	l.mu.Lock()
	now := l.now()
	for i, lim := range limits {
		if lim.Rate <= 0 || seenBefore(limits[:i], lim.Key) {
			continue
		}
		b := l.buckets[lim.Key]
		if b == nil || b.rate != lim.Rate {
			b = NewBucket(lim.Rate, now)
			l.buckets[lim.Key] = b
		}
		wait = max(wait, b.Reserve(now, 1))
		taken = append(taken, held{lim.Key, b})
	}
	l.mu.Unlock()

	if wait <= 0 {
		return nil
	}
	if err := l.sleep(ctx, wait); err != nil {
		l.mu.Lock()
		for _, h := range taken {
			if l.buckets[h.key] == h.b { // not rebuilt meanwhile
				h.b.unreserve(1)
			}
		}
		l.mu.Unlock()
		return err
	}
	return nil
}

func seenBefore(limits []Limit, key string) bool {
	for _, l := range limits {
		if l.Rate > 0 && l.Key == key {
			return true
		}
	}
	return false
}

// sleepCtx sleeps for d or until ctx ends, whichever is first.
func sleepCtx(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
