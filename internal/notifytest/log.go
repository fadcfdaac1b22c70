package notifytest

import (
	"bytes"
	"log/slog"
	"sync"
	"testing"
)

// testLog collects the daemon's error log lines and prints them with the
// test's output when it fails: a 500 then shows its cause.
type testLog struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func newTestLogger(t testing.TB) *slog.Logger {
	l := &testLog{}
	t.Cleanup(func() {
		if t.Failed() {
			l.mu.Lock()
			defer l.mu.Unlock()
			if l.buf.Len() > 0 {
				t.Logf("daemon errors:\n%s", l.buf.String())
			}
		}
	})
	return slog.New(slog.NewTextHandler(l, &slog.HandlerOptions{Level: slog.LevelError}))
}

func (l *testLog) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.buf.Len() < 1<<20 {
		l.buf.Write(p)
	}
	return len(p), nil
}
