package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// cacheDB opens a one-connection database through the caching connector.
func cacheDB(t *testing.T) *sql.DB {
	t.Helper()
	c, err := newConnector("file:" + filepath.Join(t.TempDir(), "c.db"))
	require.NoError(t, err)
	db := sql.OpenDB(c)
	db.SetMaxOpenConns(1)
	t.Cleanup(func() { db.Close() })
	return db
}

// cachedCount is how many statements the pool's one connection keeps.
func cachedCount(t *testing.T, db *sql.DB) int {
	t.Helper()
	conn, err := db.Conn(context.Background())
	require.NoError(t, err)
	defer conn.Close()
	n := -1
	require.NoError(t, conn.Raw(func(dc any) error {
		n = len(dc.(*cachingConn).stmts)
		return nil
	}))
	return n
}

// TestStatementCache: a statement run without Prepare is kept prepared
// and run again with other values; the same text run while its rows are
// still open runs unprepared beside it; a failing statement is not kept.
func TestStatementCache(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := cacheDB(t)
	_, err := db.ExecContext(ctx, `CREATE TABLE t (id INTEGER PRIMARY KEY, v TEXT)`)
	require.NoError(t, err)
	const ins = `INSERT INTO t (id, v) VALUES (?, ?)`
	for i := 1; i <= 5; i++ {
		_, err := db.ExecContext(ctx, ins, i, fmt.Sprint("v", i))
		require.NoError(t, err)
	}
	before := cachedCount(t, db)

	const sel = `SELECT v FROM t WHERE id >= ? ORDER BY id`
	tx, err := db.BeginTx(ctx, nil)
	require.NoError(t, err)
	outer, err := tx.QueryContext(ctx, sel, 2)
	require.NoError(t, err)
	var got []string
	for outer.Next() {
		var v string
		require.NoError(t, outer.Scan(&v))
		// The same text while outer's rows are open: a second statement.
		var n int
		require.NoError(t, tx.QueryRowContext(ctx, `SELECT count(*) FROM t WHERE id >= ?`, 4).Scan(&n))
		require.Equal(t, 2, n)
		inner, err := tx.QueryContext(ctx, sel, 5)
		require.NoError(t, err)
		require.True(t, inner.Next())
		var w string
		require.NoError(t, inner.Scan(&w))
		require.Equal(t, "v5", w)
		require.NoError(t, inner.Close())
		got = append(got, v)
	}
	require.NoError(t, outer.Err())
	require.NoError(t, outer.Close())
	require.NoError(t, tx.Commit())
	require.Equal(t, []string{"v2", "v3", "v4", "v5"}, got)
	// The cached statement is free again and sees new values and rows.
	_, err = db.ExecContext(ctx, ins, 6, "v6")
	require.NoError(t, err)
	var last string
	require.NoError(t, db.QueryRowContext(ctx, sel, 6).Scan(&last))
	require.Equal(t, "v6", last)
	require.Equal(t, before+2, cachedCount(t, db), "the select and the count are kept, once each")

	_, err = db.ExecContext(ctx, `INSERT INTO nowhere VALUES (1)`)
	require.ErrorContains(t, err, "no such table")
	_, err = db.ExecContext(ctx, ins, 1, "dup")
	require.Error(t, err, "a constraint error comes through the cached statement")
	require.Equal(t, before+2, cachedCount(t, db))
}

// TestStatementCacheBound: past maxDriverStmts texts run unprepared.
func TestStatementCacheBound(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := cacheDB(t)
	for i := 0; i < maxDriverStmts+20; i++ {
		var n int
		require.NoError(t, db.QueryRowContext(ctx, fmt.Sprintf("SELECT %d", i)).Scan(&n))
		require.Equal(t, i, n)
	}
	require.Equal(t, maxDriverStmts, cachedCount(t, db))
}
