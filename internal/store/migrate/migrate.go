// Package migrate is the dialect-free part of migrating: it loads the
// numbered SQL files, decides which to apply (Up) or which are missing
// (Check), and applies River's migrations. The executor that runs them
// and records them in schema_migrations is sqlstore's, one for both
// backends.
package migrate

import (
	"context"
	"fmt"
	"io/fs"
	"sort"
	"strconv"
	"strings"

	"github.com/riverqueue/river/riverdriver"
	"github.com/riverqueue/river/rivermigrate"
)

// Migration is one numbered SQL file.
type Migration struct {
	Version int
	Name    string
	SQL     string
}

// Load reads NNN_name.sql files from fsys, ordered by version. A file
// named NNN_name.DIALECT.sql (postgres, sqlite) is read only for that
// dialect: the shared files hold the schema both accept, and a
// dialect's own file holds what only it has (PostgreSQL's fillfactor).
func Load(fsys fs.FS, dialect string) ([]Migration, error) {
	names, err := fs.Glob(fsys, "*.sql")
	if err != nil {
		return nil, err
	}
	var out []Migration
	for _, n := range names {
		if parts := strings.Split(n, "."); len(parts) == 3 && parts[1] != dialect {
			continue
		}
		num, _, ok := strings.Cut(n, "_")
		v, err := strconv.Atoi(num)
		if !ok || err != nil {
			return nil, fmt.Errorf("migration %s: name must be NNN_name.sql", n)
		}
		b, err := fs.ReadFile(fsys, n)
		if err != nil {
			return nil, err
		}
		out = append(out, Migration{Version: v, Name: n, SQL: string(b)})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Version < out[j].Version })
	return out, nil
}

// LoadDir is Load on the sub-folder dir of fsys (an embed.FS).
func LoadDir(fsys fs.FS, dir, dialect string) ([]Migration, error) {
	sub, err := fs.Sub(fsys, dir)
	if err != nil {
		return nil, err
	}
	return Load(sub, dialect)
}

// Latest is the highest version in ms.
func Latest(ms []Migration) int {
	if len(ms) == 0 {
		return 0
	}
	return ms[len(ms)-1].Version
}

// Execer runs one migration inside a transaction and records it.
type Execer interface {
	// Applied returns the recorded versions.
	Applied(ctx context.Context) (map[int]bool, error)
	// Apply runs m and records it atomically.
	Apply(ctx context.Context, m Migration) error
}

// Up applies every migration not yet recorded, in version order, so a
// migration merged after a higher-numbered one still runs.
func Up(ctx context.Context, e Execer, ms []Migration) error {
	done, err := e.Applied(ctx)
	if err != nil {
		return err
	}
	for _, m := range ms {
		if done[m.Version] {
			continue
		}
		if err := e.Apply(ctx, m); err != nil {
			return fmt.Errorf("migration %s: %w", m.Name, err)
		}
	}
	return nil
}

// Check reports an error when a migration of ms is not recorded.
func Check(ctx context.Context, e Execer, ms []Migration) error {
	done, err := e.Applied(ctx)
	if err != nil {
		return err
	}
	for _, m := range ms {
		if !done[m.Version] {
			return fmt.Errorf("database schema lacks migration %s: run `notifyd migrate`", m.Name)
		}
	}
	return nil
}

// Queue applies River's migrations (its river_job tables, which River
// records in its own river_migration table) with either backend's driver.
func Queue[TTx any](ctx context.Context, driver riverdriver.Driver[TTx]) error {
	m, err := rivermigrate.New(driver, nil)
	if err != nil {
		return err
	}
	if _, err := m.Migrate(ctx, rivermigrate.DirectionUp, nil); err != nil {
		return fmt.Errorf("river migrations: %w", err)
	}
	return nil
}
