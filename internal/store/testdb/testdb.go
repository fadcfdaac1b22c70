// Package testdb opens the databases tests run on: a fresh SQLite file
// always, and a fresh PostgreSQL schema when NOTIFYD_TEST_DATABASE_URL is
// set. It imports only the store, so the store's conformance suite does
// not compile the application above it. Test-only.
package testdb

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"net/url"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river"
	"github.com/stretchr/testify/require"

	"github.com/notifyd/notifyd/internal/store"
)

// EnvPostgres names the PostgreSQL server the suite runs against again.
const EnvPostgres = "NOTIFYD_TEST_DATABASE_URL"

// Backends lists the database URLs a conformance test runs on: a fresh
// SQLite file always, and a fresh PostgreSQL schema when EnvPostgres is set.
func Backends(t testing.TB) map[string]func(t testing.TB) string {
	out := map[string]func(t testing.TB) string{"sqlite": SQLiteURL}
	if os.Getenv(EnvPostgres) != "" {
		out["postgres"] = PostgresURL
	}
	return out
}

// SQLiteURL returns the URL of a new database file in a temp dir of its
// own, removed after the test (and after the database is closed: this
// cleanup is registered first, so it runs last).
func SQLiteURL(t testing.TB) string {
	return "sqlite:" + filepath.Join(TempDir(t), "notifyd.db")
}

// TempDir is t.TempDir for a directory that holds SQLite files: it is
// removed with retries (removeDir).
func TempDir(t testing.TB) string {
	dir, err := os.MkdirTemp("", "notifyd-test-*")
	require.NoError(t, err)
	t.Cleanup(func() { removeDir(t, dir) })
	return dir
}

// removeDir removes dir, trying again for a second when a file appeared
// in it meanwhile. Under a loaded machine t.TempDir's single try failed
// now and then with "directory not empty" after the database had been
// closed (a -wal or -shm file showing up late; the cause is not found
// yet, so the names left are logged).
func removeDir(t testing.TB, dir string) {
	var err error
	for try := 0; try < 10; try++ {
		if err = os.RemoveAll(dir); err == nil {
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
	names, _ := os.ReadDir(dir)
	var left []string
	for _, n := range names {
		left = append(left, n.Name())
	}
	t.Logf("temp dir %s not removed: %v; left: %v", dir, err, left)
}

// PostgresURL creates a schema of its own on the EnvPostgres server and
// returns a URL whose search_path selects it, dropped after the test.
func PostgresURL(t testing.TB) string {
	t.Helper()
	base := os.Getenv(EnvPostgres)
	require.NotEmpty(t, base, EnvPostgres+" is not set")
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	schema := "t_" + hex.EncodeToString(b)
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, base)
	require.NoError(t, err)
	_, err = conn.Exec(ctx, `CREATE SCHEMA `+schema)
	require.NoError(t, err)
	require.NoError(t, conn.Close(ctx))
	t.Cleanup(func() {
		c, err := pgx.Connect(context.Background(), base)
		if err != nil {
			return
		}
		defer c.Close(context.Background())
		_, _ = c.Exec(context.Background(), `DROP SCHEMA `+schema+` CASCADE`)
	})
	u, err := url.Parse(base)
	require.NoError(t, err)
	q := u.Query()
	q.Set("search_path", schema)
	// Tests run several daemons at once against one server whose
	// max_connections is 100; a smaller pool per daemon keeps the suite
	// below it (a refused connection is a 500 in the test).
	if !q.Has("pool_max_conns") {
		q.Set("pool_max_conns", "8")
	}
	u.RawQuery = q.Encode()
	return u.String()
}

// DatabaseURL is the backend the whole suite runs on: PostgreSQL when
// EnvPostgres is set, else SQLite.
func DatabaseURL(t testing.TB) string {
	if os.Getenv(EnvPostgres) != "" {
		return PostgresURL(t)
	}
	return SQLiteURL(t)
}

// OpenDB opens and migrates a fresh database at url with an insert-only
// queue client, closed after the test.
func OpenDB(t testing.TB, url string) *store.DB {
	t.Helper()
	ctx := context.Background()
	db, err := store.Open(ctx, url, store.Options{SQLiteSynchronous: "NORMAL"})
	require.NoError(t, err)
	t.Cleanup(func() { _ = db.Close() })
	require.NoError(t, db.Migrate(ctx))
	_, err = db.NewQueue(&river.Config{})
	require.NoError(t, err)
	return db
}
