package notify

import (
	"context"
	"sort"
	"time"
)

// Delivery rates (issue 35, item 5): a workspace's receipts counted by
// the time of the send that created them, per channel and per provider
// account, in buckets of an hour or a day. The delivery rate is delivered
// over final (delivered + undelivered); pending and unknown are counted
// beside it and stay out of the rate (docs/DECISIONS.md "Delivery rates").

// ReceiptStatsTx counts receipts.
type ReceiptStatsTx interface {
	// CountReceipts groups the receipts of workspaceID whose send was in
	// [from, to] by interval bucket (UTC-aligned; interval is a whole
	// number of hours), channel, provider account and status, a receipt
	// still pending past its deadline at now counting as unknown; purged
	// receipts count through their hourly rollup (the hours wholly inside
	// the range).
	CountReceipts(ctx context.Context, workspaceID string, from, to, now time.Time, interval time.Duration) ([]ReceiptCount, error)
}

// ReceiptCount is one group of CountReceipts.
type ReceiptCount struct {
	Bucket            time.Time
	Channel           Channel
	ProviderAccountID string
	ProviderKind      string
	Status            string
	N                 int
}

// ReceiptTally counts receipts by status.
type ReceiptTally struct {
	Pending, Delivered, Undelivered, Unknown int
}

// Add counts n receipts of status.
func (t *ReceiptTally) Add(status string, n int) {
	switch status {
	case ReceiptPending:
		t.Pending += n
	case ReceiptDelivered:
		t.Delivered += n
	case ReceiptUndelivered:
		t.Undelivered += n
	case ReceiptUnknown:
		t.Unknown += n
	}
}

// Total counts every receipt of t.
func (t ReceiptTally) Total() int { return t.Pending + t.Delivered + t.Undelivered + t.Unknown }

// Rate is delivered over final (delivered + undelivered), ok false when
// none is final.
func (t ReceiptTally) Rate() (rate float64, ok bool) {
	final := t.Delivered + t.Undelivered
	if final == 0 {
		return 0, false
	}
	return float64(t.Delivered) / float64(final), true
}

// ProviderReceipts is the tally of one provider account.
type ProviderReceipts struct {
	ProviderAccountID string
	ProviderKind      string
	Channel           Channel
	ReceiptTally
}

// ReceiptBucket is the tally of one time bucket.
type ReceiptBucket struct {
	Start      time.Time
	Total      ReceiptTally
	ByChannel  map[Channel]*ReceiptTally
	ByProvider map[string]*ReceiptTally // by provider account id
}

// ReceiptStats are the delivery rates of a range.
type ReceiptStats struct {
	Interval   time.Duration
	Total      ReceiptTally
	ByChannel  map[Channel]*ReceiptTally
	ByProvider []*ProviderReceipts // by kind, then account id
	// Series has every bucket from the one holding from to the one
	// holding to, empty ones included, oldest first.
	Series []*ReceiptBucket
}

// MaxReceiptBuckets bounds a series (a range over interval).
const MaxReceiptBuckets = 1000

// ReceiptBuckets is how many buckets of interval [from, to] spans.
func ReceiptBuckets(from, to time.Time, interval time.Duration) int {
	first := from.Truncate(interval)
	return int(to.Truncate(interval).Sub(first)/interval) + 1
}

// NewReceiptStats builds the rates of [from, to] from CountReceipts' rows.
func NewReceiptStats(rows []ReceiptCount, from, to time.Time, interval time.Duration) *ReceiptStats {
	s := &ReceiptStats{Interval: interval, ByChannel: map[Channel]*ReceiptTally{}}
	first := from.UTC().Truncate(interval)
	n := max(ReceiptBuckets(from, to, interval), 0)
	for i := 0; i < n; i++ {
		s.Series = append(s.Series, &ReceiptBucket{Start: first.Add(time.Duration(i) * interval),
			ByChannel: map[Channel]*ReceiptTally{}, ByProvider: map[string]*ReceiptTally{}})
	}
	byProvider := map[string]*ProviderReceipts{}
	for _, r := range rows {
		s.Total.Add(r.Status, r.N)
		tally(s.ByChannel, r.Channel).Add(r.Status, r.N)
		p := byProvider[r.ProviderAccountID]
		if p == nil {
			p = &ProviderReceipts{ProviderAccountID: r.ProviderAccountID, ProviderKind: r.ProviderKind, Channel: r.Channel}
			byProvider[r.ProviderAccountID] = p
			s.ByProvider = append(s.ByProvider, p)
		}
		p.Add(r.Status, r.N)
		if i := int(r.Bucket.Sub(first) / interval); r.Bucket.Compare(first) >= 0 && i < len(s.Series) {
			b := s.Series[i]
			b.Total.Add(r.Status, r.N)
			tally(b.ByChannel, r.Channel).Add(r.Status, r.N)
			tally(b.ByProvider, r.ProviderAccountID).Add(r.Status, r.N)
		}
	}
	sort.Slice(s.ByProvider, func(i, j int) bool {
		a, b := s.ByProvider[i], s.ByProvider[j]
		if a.ProviderKind != b.ProviderKind {
			return a.ProviderKind < b.ProviderKind
		}
		return a.ProviderAccountID < b.ProviderAccountID
	})
	return s
}

func tally[K comparable](m map[K]*ReceiptTally, k K) *ReceiptTally {
	t := m[k]
	if t == nil {
		t = &ReceiptTally{}
		m[k] = t
	}
	return t
}
