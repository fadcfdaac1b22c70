package sqlstore

import (
	"context"
	"embed"
	"fmt"
	"time"

	"github.com/notifyd/notifyd/internal/notify"
	"github.com/notifyd/notifyd/internal/store/migrate"
)

// The schema is written once, like the queries: both dialects apply the
// same numbered files, except NNN_name.postgres.sql and NNN_name.sqlite.sql,
// which only their dialect applies (under the same version).
//
//go:embed migrations/*.sql
var migrationFS embed.FS

// Migrations returns the service's migrations for dialect (postgres or
// sqlite) in version order.
func Migrations(dialect string) ([]migrate.Migration, error) {
	return migrate.LoadDir(migrationFS, "migrations", dialect)
}

// Migrate applies River's migrations, then each of the dialect's
// migrations not yet recorded in schema_migrations, in version order. It
// is the one migration executor of both backends, which supply only their
// dialect, River's migrations and, where several processes share the
// database (PostgreSQL), a lock so that those starting at once migrate once.
func (s *Store) Migrate(ctx context.Context) error {
	if s.msErr != nil {
		return s.msErr
	}
	if l, ok := s.b.(MigrationLock); ok {
		unlock, err := l.LockMigrations(ctx)
		if err != nil {
			return fmt.Errorf("lock migrations: %w", err)
		}
		defer unlock()
	}
	if err := s.b.MigrateQueue(ctx); err != nil {
		return err
	}
	return migrate.Up(ctx, migrator{s}, s.ms)
}

// Ping checks that the database answers and every migration is recorded.
func (s *Store) Ping(ctx context.Context) error {
	if s.msErr != nil {
		return s.msErr
	}
	return migrate.Check(ctx, migrator{s}, s.ms)
}

// migrator runs and records migrations through the backend's own
// transactions (migrate.Execer).
type migrator struct{ s *Store }

// recordsExist counts schema_migrations in the catalog (0 before the
// first migration): the one statement of the executor that differs
// between the dialects.
var recordsExist = map[string]string{
	"sqlite":   `SELECT COUNT(*) FROM sqlite_master WHERE type = 'table' AND name = 'schema_migrations'`,
	"postgres": `SELECT COUNT(*) FROM (SELECT to_regclass('schema_migrations') AS t) r WHERE t IS NOT NULL`,
}

func (m migrator) Applied(ctx context.Context) (map[int]bool, error) {
	probe, ok := recordsExist[m.s.b.Dialect()]
	if !ok {
		return nil, fmt.Errorf("no migrations for dialect %q", m.s.b.Dialect())
	}
	done := map[int]bool{}
	err := m.s.Lookup(ctx, func(tx notify.Tx) error {
		c := tx.(*Tx).c
		var n int
		if err := c.QueryRow(ctx, probe).Scan(&n); err != nil || n == 0 {
			return err
		}
		vs, err := queryAll(ctx, c, func(r Row) (int, error) {
			var v int
			return v, r.Scan(&v)
		}, `SELECT version FROM schema_migrations`)
		for _, v := range vs {
			done[v] = true
		}
		return err
	})
	return done, err
}

// Apply runs a migration and records it in one transaction, so a failed
// migration leaves neither its changes nor its record.
func (m migrator) Apply(ctx context.Context, mg migrate.Migration) error {
	return m.s.Update(ctx, func(tx notify.Tx) error {
		c := tx.(*Tx).c
		if _, err := c.Exec(ctx, `CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at BIGINT NOT NULL)`); err != nil {
			return err
		}
		if _, err := c.Exec(ctx, mg.SQL); err != nil {
			return err
		}
		_, err := c.Exec(ctx, `INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)`,
			mg.Version, mg.Name, ms(time.Now()))
		return err
	})
}
