package delivery

import (
	"strings"
	"testing"

	"github.com/notifyd/notifyd/internal/notify"
)

func TestByteBudgetBoundsRunsAndLearns(t *testing.T) {
	b := newByteBudget(3 * firstRunBytes)
	var got []int64
	for range 3 {
		n, wait := b.tryReserve()
		if wait != nil {
			t.Fatalf("reservation %d refused within the budget", len(got)+1)
		}
		got = append(got, n)
	}
	_, wait := b.tryReserve()
	if wait == nil {
		t.Fatal("a fourth run's reservation went past the budget")
	}
	// A run that held little gives its bytes back: the waiter is woken,
	// and the next reservations are smaller.
	b.release(got[0], firstRunBytes/4)
	select {
	case <-wait:
	default:
		t.Fatal("a release did not wake the waiting run")
	}
	n, wait := b.tryReserve()
	if wait != nil || n >= firstRunBytes {
		t.Fatalf("after a small run: reservation %d (refused %v), want less than %d", n, wait != nil, firstRunBytes)
	}
	// A run larger than the whole budget still goes when nothing is held.
	big := newByteBudget(1 << 10)
	if _, wait := big.tryReserve(); wait != nil {
		t.Fatal("the first run of an empty budget waited")
	}
}

func TestRunBytesCountsContentAndCalls(t *testing.T) {
	req := &notify.Request{HTML: strings.Repeat("x", 1000), Text: strings.Repeat("y", 500)}
	rn := &run{req: req, msg: req, attempts: []*notify.Attempt{{RequestJSON: strings.Repeat("z", 3000), ResponseJSON: "{}"}}}
	if got, want := runBytes([]*run{rn}), int64(1000+500+512+2*(3000+2)); got != want {
		t.Fatalf("runBytes = %d, want %d", got, want)
	}
}
