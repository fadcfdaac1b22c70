package receipts

import (
	"testing"
	"time"
)

// The pause after a batch of pushed reports follows ReportShare:
// PostgreSQL's yields three quarters of the time, 0 or 1 or more does not
// pause,
// and no pause is longer than maxReportPause.
func TestReportShare(t *testing.T) {
	for _, c := range []struct {
		share float64
		pause float64
	}{{0, 0}, {PostgresReportShare, 3}, {0.5, 1}, {1, 0}, {2, 0}} {
		if got := New(Options{ReportShare: c.share}).pause; got != c.pause {
			t.Errorf("ReportShare %v: pause %v, want %v", c.share, got, c.pause)
		}
	}
	s := New(Options{ReportShare: 0.001})
	start := time.Now()
	s.yield(time.Second)
	if d := time.Since(start); d < maxReportPause || d > maxReportPause+time.Second {
		t.Errorf("pause after a 1 s batch at share 0.001: %v, want %v", d, maxReportPause)
	}
	s = New(Options{ReportShare: 1})
	start = time.Now()
	s.yield(time.Second)
	if d := time.Since(start); d > 50*time.Millisecond {
		t.Errorf("share 1 paused %v", d)
	}
}
