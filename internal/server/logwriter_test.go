package server_test

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/notifyd/notifyd/internal/server"
)

// slowWriter records what it is given and can be held, as a writer the
// kernel keeps waiting.
type slowWriter struct {
	mu    sync.Mutex
	buf   bytes.Buffer
	calls int
	hold  chan struct{}
}

func (w *slowWriter) Write(p []byte) (int, error) {
	if w.hold != nil {
		<-w.hold
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	w.calls++
	return w.buf.Write(p)
}

func (w *slowWriter) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.buf.String()
}

// Lines are written in order, each whole, by Close at the latest; a
// writer that is held does not hold the lines' writers up.
func TestLogWriterKeepsOrderAndDoesNotWaitForTheWriter(t *testing.T) {
	w := &slowWriter{hold: make(chan struct{})}
	l := server.NewLogWriter(w)
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 500 {
				_, err := fmt.Fprintf(l, "g%d line %d\n", g, i)
				require.NoError(t, err)
			}
		}()
	}
	wg.Wait() // the 2,000 lines were queued while the writer was held
	close(w.hold)
	require.NoError(t, l.Close())
	lines := strings.Split(strings.TrimSuffix(w.String(), "\n"), "\n")
	require.Len(t, lines, 2000)
	next := map[string]int{}
	for _, line := range lines {
		var g string
		var i int
		_, err := fmt.Sscanf(line, "%s line %d", &g, &i)
		require.NoError(t, err, line)
		require.Equal(t, next[g], i, "goroutine %s's lines in order", g)
		next[g]++
	}
	require.Less(t, w.calls, 2000, "lines are written in batches")
	// After Close, straight through.
	_, err := l.Write([]byte("late\n"))
	require.NoError(t, err)
	require.True(t, strings.HasSuffix(w.String(), "late\n"))
}

// Flush waits for what was written before it; a warning or an error is
// written before the logger's call returns, an info line may wait.
func TestLogWriterFlushAndWarnings(t *testing.T) {
	w := &slowWriter{}
	l := server.NewLogWriter(w)
	defer l.Close()
	_, _ = l.Write([]byte("one\n"))
	require.NoError(t, l.Flush())
	require.Equal(t, "one\n", w.String())

	log := slog.New(l.Handler(slog.NewTextHandler(l, nil))).With("svc", "x")
	log.WarnContext(context.Background(), "disk full")
	require.Contains(t, w.String(), "level=WARN msg=\"disk full\" svc=x")
	log.WithGroup("g").Error("broken", "k", 1)
	require.Contains(t, w.String(), "level=ERROR msg=broken svc=x g.k=1")
}
