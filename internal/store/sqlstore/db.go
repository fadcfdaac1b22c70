// Package sqlstore implements notify.Store once, in SQL that SQLite and
// PostgreSQL both accept. The dialect packages (store/sqlite,
// store/postgres) supply a Backend: connections, transactions, River job
// insertion on the same transaction, error translation and migrations.
// Writing the SQL once keeps the two backends' behaviour identical; the
// conformance suite in store/storetest proves it on both.
//
// Conventions: timestamps are Unix milliseconds (BIGINT), ids are text
// UUIDs, booleans are BOOLEAN, small lists and maps are JSON text.
// Placeholders are written as '?' and rebound to $N for PostgreSQL.
package sqlstore

import (
	"context"
	"time"

	"github.com/riverqueue/river"
)

// Querier runs SQL. Errors come translated: a missing row from Row.Scan is
// notify.ErrNotFound and a unique violation wraps notify.ErrConflict.
type Querier interface {
	Exec(ctx context.Context, query string, args ...any) (int64, error)
	Query(ctx context.Context, query string, args ...any) (Rows, error)
	QueryRow(ctx context.Context, query string, args ...any) Row
}

// Rows is the common subset of *sql.Rows and pgx.Rows.
type Rows interface {
	Next() bool
	Scan(dest ...any) error
	Err() error
	Close()
}

// Row is a single-row result.
type Row interface {
	Scan(dest ...any) error
}

// Conn is one open transaction of a backend.
type Conn interface {
	Querier
	Commit(ctx context.Context) error
	Rollback(ctx context.Context) error
	// InsertJobs inserts River jobs on this transaction and returns their ids.
	InsertJobs(ctx context.Context, params []river.InsertManyParams) ([]int64, error)
	// CancelJob cancels a River job on this transaction; a missing job is not an error.
	CancelJob(ctx context.Context, id int64) error
	// RescueJobs makes running River jobs fetched before r.RunningBefore
	// available again when the client that fetched them last has no
	// dispatch_workers heartbeat at or after r.LiveSince and is not
	// r.Self (this process's own heartbeat may lag behind a loaded
	// writer: it never makes its own jobs look dead), or is r.Self and
	// the job is not in r.Busy. Only the first kind, a dead process's,
	// counts a crash: metadata key r.CrashesKey goes up by one, and a
	// job whose count reaches r.IsolateAt moves to queue r.IsolateQueue.
	RescueJobs(ctx context.Context, r Rescue) (int, error)
	// RunningJobs lists the ids of the River jobs of queue that are
	// running under client owner (the last element of attempted_by).
	RunningJobs(ctx context.Context, queue, owner string) ([]int64, error)
}

// Rescue is what a RescueJobs call hands back and how it counts crashes.
type Rescue struct {
	LiveSince     int64 // Unix milliseconds
	RunningBefore time.Time
	Self          string
	Busy          []int64
	CrashesKey    string
	IsolateAt     int
	IsolateQueue  string
}

// ScanIDs reads the ids of a one-column result (a backend's own query).
func ScanIDs(rows Rows, err error) ([]int64, error) {
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var ids []int64
	for rows.Next() {
		var id int64
		if err := rows.Scan(&id); err != nil {
			return nil, err
		}
		ids = append(ids, id)
	}
	return ids, rows.Err()
}

// Backend is what a dialect package provides.
type Backend interface {
	// Begin opens a transaction; write is false for read-only use.
	Begin(ctx context.Context, write bool) (Conn, error)
	// Dialect is "sqlite" or "postgres": it picks the migrations of that
	// dialect (NNN_name.DIALECT.sql) and the executor's catalog probe.
	Dialect() string
	// MigrateQueue applies River's migrations (migrate.Queue with the
	// backend's River driver).
	MigrateQueue(ctx context.Context) error
	Close() error
}

// MigrationLock is an optional part of a Backend that several processes
// share: Migrate holds the lock, so processes starting at once migrate
// one after the other and the later ones find nothing to do.
type MigrationLock interface {
	LockMigrations(ctx context.Context) (unlock func(), err error)
}

// Copier is an optional fast path of a Conn for bulk inserts (PostgreSQL
// COPY). Values are those the INSERT statements take.
type Copier interface {
	CopyFrom(ctx context.Context, table string, cols []string, rows [][]any) (int64, error)
}

// Urgent is an optional part of a Backend with a single writer: the
// context it returns makes Begin of a write transaction go before the
// writers waiting without it.
type Urgent interface {
	Urgent(ctx context.Context) context.Context
}

// FreshPlan, as the first argument of a statement, asks the backend to
// plan it for this run instead of reusing a cached plan: PostgreSQL
// switches a prepared statement to one generic plan after five runs, and
// a generic plan of a batch update joined to a VALUES list, made while
// the table was small, is a sequential scan that the growing table keeps
// paying for. Other statements keep their cached plans (planning every
// statement, foreign-key checks included, cost a third of the database's
// time). SQLite plans each statement on its own: it drops the mark.
var FreshPlan = freshPlan{}

type freshPlan struct{}

// StripFreshPlan removes a leading FreshPlan mark from args and reports
// whether there was one.
func StripFreshPlan(args []any) ([]any, bool) {
	if len(args) > 0 && args[0] == any(FreshPlan) {
		return args[1:], true
	}
	return args, false
}
