// Package store opens the backend named by a database URL: sqlite:PATH for
// the embedded single-node mode, postgres://… for many nodes.
package store

import (
	"context"
	"fmt"
	"strings"

	"github.com/riverqueue/river"

	"github.com/notifyd/notifyd/internal/store/postgres"
	"github.com/notifyd/notifyd/internal/store/sqlite"
	"github.com/notifyd/notifyd/internal/store/sqlstore"
)

// Queue is the part of a River client the daemon drives.
type Queue interface {
	Start(ctx context.Context) error
	Stop(ctx context.Context) error
	StopAndCancel(ctx context.Context) error
}

// DB is an opened store with its queue hook (Migrate is the store's).
type DB struct {
	*sqlstore.Store
	Dialect  string // "sqlite" or "postgres"
	newQueue func(cfg *river.Config) (Queue, error)
}

// Options tune the backends.
type Options struct {
	SQLiteSynchronous string
}

// Open connects to url without migrating.
func Open(ctx context.Context, url string, opts Options) (*DB, error) {
	switch {
	case strings.HasPrefix(url, "sqlite:"):
		path := strings.TrimPrefix(strings.TrimPrefix(url, "sqlite:"), "//")
		if path == "" {
			return nil, fmt.Errorf("database url %q names no file", url)
		}
		b, err := sqlite.Open(path, sqlite.Options{Synchronous: opts.SQLiteSynchronous})
		if err != nil {
			return nil, err
		}
		return &DB{Store: sqlstore.New(b), Dialect: "sqlite",
			newQueue: func(cfg *river.Config) (Queue, error) { return b.StartRiver(cfg) }}, nil
	case strings.HasPrefix(url, "postgres://"), strings.HasPrefix(url, "postgresql://"):
		b, err := postgres.Open(ctx, url)
		if err != nil {
			return nil, err
		}
		return &DB{Store: sqlstore.New(b), Dialect: "postgres",
			newQueue: func(cfg *river.Config) (Queue, error) { return b.StartRiver(cfg) }}, nil
	}
	return nil, fmt.Errorf("database url must start with sqlite: or postgres://, got %q", redact(url))
}

// NewQueue creates the River client on this database. Jobs inserted by
// store verbs go through it, so it must exist before any such verb runs;
// a client with no workers only inserts (the api role).
func (db *DB) NewQueue(cfg *river.Config) (Queue, error) { return db.newQueue(cfg) }

func redact(url string) string {
	if i := strings.Index(url, "@"); i >= 0 {
		if j := strings.Index(url, "://"); j >= 0 && j < i {
			return url[:j+3] + "…" + url[i:]
		}
	}
	return url
}
