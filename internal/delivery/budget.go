package delivery

import (
	"sync"

	"github.com/notifyd/notifyd/internal/notify"
)

// The bytes bulk runs hold. A bulk run (a campaign's queue job of up to
// 100 requests) holds its requests' content from the claim, and each
// attempt's provider call (a mail's whole HTML) and outcome note until
// the run is recorded. With DefaultMaxRuns run slots that is up to 25,600
// messages: when PostgreSQL's records fell behind a 100,000-mail campaign
// with HTML, the heap held 170-250 MB of them, above serve's soft memory
// limit, and the collector ran back to back (docs/BENCHMARKS.md, session
// 20). So bulk runs also share a budget of bytes: a run reserves what
// recent runs held before it claims, and waits (like a run slot) while
// the runs in progress hold the budget. It binds only while the records
// fall behind the sends: the runs then claim as fast as the records free
// bytes, not faster (docs/DECISIONS.md "Bulk runs share a budget of
// bytes held").

// bulkBudget is the bytes of message content, provider calls and notes
// the bulk runs of a process may reserve at once; firstRunBytes is a
// run's reservation before any run was measured (100 mails of 8 kB).
const (
	bulkBudget    = 48 << 20
	firstRunBytes = 100 * 8 << 10
)

// byteBudget is the bulk runs' shared budget.
type byteBudget struct {
	mu   sync.Mutex
	max  int64
	held int64
	// est is the reservation of the next run: a moving average of the
	// bytes runs held.
	est int64
	// freed is closed (and replaced) when bytes are given back.
	freed chan struct{}
}

func newByteBudget(max int64) *byteBudget {
	return &byteBudget{max: max, est: firstRunBytes, freed: make(chan struct{})}
}

// tryReserve reserves a run's estimate when it fits (or nothing is held:
// a run larger than the budget still goes, alone); otherwise it answers
// a channel closed when bytes are given back.
func (b *byteBudget) tryReserve() (int64, <-chan struct{}) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.held > 0 && b.held+b.est > b.max {
		return 0, b.freed
	}
	b.held += b.est
	return b.est, nil
}

// release gives a reservation back, and learns from the bytes the run
// actually held.
func (b *byteBudget) release(reserved, used int64) {
	b.mu.Lock()
	b.held -= reserved
	if used > 0 {
		b.est += (used - b.est) / 8
		b.est = max(b.est, 1<<10)
	}
	close(b.freed)
	b.freed = make(chan struct{})
	b.mu.Unlock()
}

// runBytes is about what the runs held: each request's content, and its
// attempts' provider calls and answers twice (the attempt and its
// outcome note).
func runBytes(runs []*run) int64 {
	var n int64
	for _, rn := range runs {
		n += requestBytes(rn.req)
		if rn.msg != rn.req {
			n += requestBytes(rn.msg)
		}
		for _, a := range rn.attempts {
			n += 2 * int64(len(a.RequestJSON)+len(a.ResponseJSON))
		}
	}
	return n
}

// requestBytes is a request's content: its text fields and variables.
func requestBytes(r *notify.Request) int64 {
	n := len(r.Title) + len(r.Text) + len(r.HTML) + len(r.RecipientAddress) + len(r.RecipientName) + 512
	for k, v := range r.TemplateVariables {
		n += len(k) + len(v)
	}
	for k, v := range r.Metadata {
		n += len(k) + len(v)
	}
	for k, v := range r.Headers {
		n += len(k) + len(v)
	}
	return int64(n)
}
