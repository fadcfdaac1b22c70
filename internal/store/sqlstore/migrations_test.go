package sqlstore_test

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/notifyd/notifyd/internal/notify"
	"github.com/notifyd/notifyd/internal/store"
	"github.com/notifyd/notifyd/internal/store/migrate"
	"github.com/notifyd/notifyd/internal/store/sqlstore"
	"github.com/notifyd/notifyd/internal/store/testdb"
)

// The migration executor is one for both backends: these run it on each.

type record struct {
	Version   int
	Name      string
	AppliedAt int64
}

// open opens the database at url without migrating it.
func open(t *testing.T, url string) *store.DB {
	t.Helper()
	db, err := store.Open(context.Background(), url, store.Options{SQLiteSynchronous: "NORMAL"})
	require.NoError(t, err)
	t.Cleanup(func() { _ = db.Close() })
	return db
}

func records(t *testing.T, db *store.DB) []record {
	t.Helper()
	ctx := context.Background()
	var out []record
	require.NoError(t, db.View(ctx, func(tx notify.Tx) error {
		rows, err := tx.(*sqlstore.Tx).Conn().Query(ctx, `SELECT version, name, applied_at FROM schema_migrations ORDER BY version`)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var r record
			if err := rows.Scan(&r.Version, &r.Name, &r.AppliedAt); err != nil {
				return err
			}
			out = append(out, r)
		}
		return rows.Err()
	}))
	return out
}

func exec(t *testing.T, db *store.DB, q string, args ...any) {
	t.Helper()
	ctx := context.Background()
	require.NoError(t, db.Update(ctx, func(tx notify.Tx) error {
		_, err := tx.(*sqlstore.Tx).Conn().Exec(ctx, q, args...)
		return err
	}))
}

// tableExists reports whether a query of table succeeds.
func tableExists(db *store.DB, table string) bool {
	ctx := context.Background()
	return db.View(ctx, func(tx notify.Tx) error {
		var n int
		return tx.(*sqlstore.Tx).Conn().QueryRow(ctx, `SELECT COUNT(*) FROM `+table).Scan(&n)
	}) == nil
}

// onEachBackend runs fn in parallel on a fresh database of each backend.
func onEachBackend(t *testing.T, fn func(t *testing.T, ctx context.Context, url string)) {
	t.Parallel()
	for name, url := range testdb.Backends(t) {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			fn(t, context.Background(), url(t))
		})
	}
}

// TestMigrate: a fresh database gets every migration of its dialect, each
// recorded once with its name and time; a second run changes nothing; Ping
// answers nil only while every migration is recorded, naming the first
// that is not.
func TestMigrate(t *testing.T) {
	onEachBackend(t, func(t *testing.T, ctx context.Context, url string) {
		db := open(t, url)
		err := db.Ping(ctx)
		require.ErrorContains(t, err, "database schema lacks migration 001_foundation.sql: run `notifyd migrate`")

		before := time.Now().UnixMilli()
		require.NoError(t, db.Migrate(ctx))
		after := time.Now().UnixMilli()
		ms, err := sqlstore.Migrations(db.Dialect)
		require.NoError(t, err)
		got := records(t, db)
		require.Len(t, got, len(ms))
		for i, m := range ms {
			require.Equal(t, m.Version, got[i].Version)
			require.Equal(t, m.Name, got[i].Name)
			require.GreaterOrEqual(t, got[i].AppliedAt, before, m.Name)
			require.LessOrEqual(t, got[i].AppliedAt, after, m.Name)
		}
		require.True(t, tableExists(db, "river_job"), "River's migrations ran too")
		require.NoError(t, db.Ping(ctx))

		require.NoError(t, db.Migrate(ctx), "a second run finds nothing to do")
		require.Equal(t, got, records(t, db))

		last := ms[len(ms)-1]
		exec(t, db, `DELETE FROM schema_migrations WHERE version = ?`, last.Version)
		require.ErrorContains(t, db.Ping(ctx), "database schema lacks migration "+last.Name)
		exec(t, db, `INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)`, last.Version, last.Name, after)
		require.NoError(t, db.Ping(ctx))
	})
}

// TestMigrateAtomic: a migration and its record commit together, so one
// that fails leaves neither its changes nor its record, the ones before it
// stay, and the next run applies only what is missing (a migration merged
// below the latest one included).
func TestMigrateAtomic(t *testing.T) {
	onEachBackend(t, func(t *testing.T, ctx context.Context, url string) {
		db := testdb.OpenDB(t, url)
		n := len(records(t, db))
		ok := migrate.Migration{Version: 900, Name: "900_ok.sql", SQL: `CREATE TABLE m900 (a INTEGER)`}
		bad := migrate.Migration{Version: 902, Name: "902_bad.sql", SQL: `CREATE TABLE m902 (a INTEGER); INSERT INTO nowhere VALUES (1)`}
		err := db.Store.MigrateWith(ctx, []migrate.Migration{ok, bad})
		require.ErrorContains(t, err, "migration 902_bad.sql")
		got := records(t, db)
		require.Len(t, got, n+1)
		require.Equal(t, "900_ok.sql", got[n].Name)
		require.True(t, tableExists(db, "m900"))
		require.False(t, tableExists(db, "m902"), "the failed migration's first statement is undone")

		gap := migrate.Migration{Version: 901, Name: "901_gap.sql", SQL: `CREATE TABLE m901 (a INTEGER)`}
		bad.SQL = `CREATE TABLE m902 (a INTEGER)`
		require.NoError(t, db.Store.MigrateWith(ctx, []migrate.Migration{ok, gap, bad}), "900 is not run again")
		got = records(t, db)
		require.Len(t, got, n+3)
		require.Equal(t, []string{"900_ok.sql", "901_gap.sql", "902_bad.sql"}, []string{got[n].Name, got[n+1].Name, got[n+2].Name})
		require.True(t, tableExists(db, "m901"))
		require.True(t, tableExists(db, "m902"))
	})
}

// TestMigrateConcurrent: processes sharing a PostgreSQL database that
// start at once migrate one after the other (the backend's migration
// lock); each succeeds and every migration is recorded once. SQLite has
// one migrating process by design (the worker lock, `notifyd migrate`
// before the others).
func TestMigrateConcurrent(t *testing.T) {
	t.Parallel()
	url, ok := testdb.Backends(t)["postgres"]
	if !ok {
		t.Skip(testdb.EnvPostgres + " is not set")
	}
	u := url(t)
	const n = 4
	dbs := make([]*store.DB, n)
	for i := range dbs {
		dbs[i] = open(t, u)
	}
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i, db := range dbs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = db.Migrate(context.Background())
		}()
	}
	wg.Wait()
	for _, err := range errs {
		require.NoError(t, err)
	}
	ms, err := sqlstore.Migrations("postgres")
	require.NoError(t, err)
	require.Len(t, records(t, dbs[0]), len(ms))
}

// The SQL of a migration goes through the placeholder rebinding of
// PostgreSQL like every statement: a '?' in it would become a parameter.
func TestMigrationsHaveNoPlaceholder(t *testing.T) {
	t.Parallel()
	for _, dialect := range []string{"sqlite", "postgres"} {
		ms, err := sqlstore.Migrations(dialect)
		require.NoError(t, err)
		require.NotEmpty(t, ms)
		for _, m := range ms {
			require.False(t, strings.Contains(m.SQL, "?"), "%s holds a '?'", m.Name)
		}
	}
}
