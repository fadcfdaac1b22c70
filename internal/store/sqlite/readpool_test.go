package sqlite

import (
	"context"
	"path/filepath"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestReadPoolKeepsConnections: concurrent read transactions, released
// together, leave every read connection open for the next ones. A closed
// one would cost its replacement a read of the whole schema and a new
// prepare of each cached statement.
func TestReadPoolKeepsConnections(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	b, err := Open(filepath.Join(t.TempDir(), "r.db"), Options{})
	require.NoError(t, err)
	t.Cleanup(func() { b.Close() })
	for round := 0; round < 5; round++ {
		var start, done sync.WaitGroup
		start.Add(readConns)
		for i := 0; i < readConns; i++ {
			done.Go(func() {
				c, err := b.Begin(ctx, false)
				if err != nil {
					start.Done()
					t.Error(err)
					return
				}
				start.Done()
				start.Wait() // all readConns are out of the pool at once
				var n int
				if err := c.QueryRow(ctx, `SELECT 1`).Scan(&n); err != nil {
					t.Error(err)
				}
				if err := c.Rollback(ctx); err != nil {
					t.Error(err)
				}
			})
		}
		done.Wait()
	}
	st := b.read.Stats()
	require.Equal(t, readConns, st.OpenConnections)
	require.Zero(t, st.MaxIdleClosed, "read connections closed on release")
}
