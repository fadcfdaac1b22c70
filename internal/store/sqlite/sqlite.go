// Package sqlite is the embedded backend: modernc.org/sqlite (pure Go) in
// WAL mode with one write connection, a separate read pool, and River's
// riversqlite driver on the write connection. The SQL itself lives in
// store/sqlstore, shared with PostgreSQL.
package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riversqlite"
	"github.com/riverqueue/river/rivertype"
	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"

	"github.com/notifyd/notifyd/internal/notify"
	"github.com/notifyd/notifyd/internal/store/migrate"
	"github.com/notifyd/notifyd/internal/store/sqlstore"
)

// Options tune the backend.
type Options struct {
	// Synchronous is SQLite's synchronous pragma: FULL (default, survives
	// power loss) or NORMAL (faster; may lose the last commits on power loss).
	Synchronous string
}

// Backend is the SQLite sqlstore.Backend.
type Backend struct {
	// stmts caches prepared statements per pool: database/sql would
	// otherwise parse every statement on every call, which is a fifth of
	// the CPU of an acceptance.
	wstmts, rstmts sync.Map // query -> *sql.Stmt
	cached         atomic.Int64
	writers        gate // orders our write transactions (gate.go)
	write          *sql.DB
	read           *sql.DB
	river          *river.Client[*sql.Tx]
	driver         *riversqlite.Driver
	// journal is the outcome notes' own database file (journal.go).
	journal *Backend
	// checkpoints copies a journal's write-ahead log into its file
	// (journal.go); nil elsewhere.
	checkpoints *checkpointer
}

// Open opens (creating when missing) the database file at path, and the
// file of its outcome notes beside it.
func Open(path string, opts Options) (*Backend, error) {
	b, err := open(path, opts)
	if err != nil {
		return nil, err
	}
	if b.journal, err = openJournal(path, opts); err != nil {
		b.Close()
		return nil, err
	}
	return b, nil
}

// open opens one database file; pragmas are added to the writer's.
func open(path string, opts Options, pragmas ...string) (*Backend, error) {
	if path != ":memory:" {
		if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
			return nil, fmt.Errorf("create database folder: %w", err)
		}
	}
	if err := privateFiles(path); err != nil {
		return nil, err
	}
	syncMode := opts.Synchronous
	if syncMode == "" {
		syncMode = "FULL"
	}
	if syncMode != "FULL" && syncMode != "NORMAL" {
		return nil, fmt.Errorf("sqlite synchronous must be FULL or NORMAL, got %q", syncMode)
	}
	q := url.Values{}
	for _, p := range append([]string{"journal_mode(WAL)", "busy_timeout(10000)", "foreign_keys(1)", "synchronous(" + syncMode + ")"}, pragmas...) {
		q.Add("_pragma", p)
	}
	q.Set("_txlock", "immediate")
	wc, err := newConnector("file:" + path + "?" + q.Encode())
	if err != nil {
		return nil, err
	}
	write := sql.OpenDB(wc)
	// One writer: SQLite allows one at a time, and more connections only
	// add busy-wait latency (PERFORMANCE.md).
	write.SetMaxOpenConns(1)
	write.SetConnMaxLifetime(0)
	write.SetConnMaxIdleTime(0)
	rq := url.Values{}
	for _, p := range []string{"busy_timeout(10000)", "foreign_keys(1)", "query_only(1)"} {
		rq.Add("_pragma", p)
	}
	rc, err := newConnector("file:" + path + "?" + rq.Encode())
	if err != nil {
		write.Close()
		return nil, err
	}
	read := sql.OpenDB(rc)
	// Keep every read connection open: database/sql's default keeps two
	// idle and closes the others, and a new SQLite connection reads and
	// parses the whole schema on its first statement and prepares each
	// cached statement again. Under load that was a tenth of serve's CPU
	// (docs/BENCHMARKS.md, sends by recipient id).
	read.SetMaxOpenConns(readConns)
	read.SetMaxIdleConns(readConns)
	read.SetConnMaxIdleTime(0)
	read.SetConnMaxLifetime(0)
	return &Backend{write: write, read: read, driver: riversqlite.New(write)}, nil
}

// StartRiver creates the River client on the write connection. Call once,
// after Migrate.
func (b *Backend) StartRiver(cfg *river.Config) (*river.Client[*sql.Tx], error) {
	c, err := river.NewClient(b.driver, cfg)
	if err != nil {
		return nil, err
	}
	b.river = c
	return c, nil
}

// Dialect is sqlite (sqlstore.Backend).
func (b *Backend) Dialect() string { return "sqlite" }

// MigrateQueue applies River's migrations on the write connection.
func (b *Backend) MigrateQueue(ctx context.Context) error { return migrate.Queue(ctx, b.driver) }

// Close closes the cached statements and both pools.
func (b *Backend) Close() error {
	for _, m := range []*sync.Map{&b.wstmts, &b.rstmts} {
		m.Range(func(_, v any) bool {
			if st, ok := v.(*sql.Stmt); ok && st != nil {
				st.Close()
			}
			return true
		})
	}
	var j error
	if b.journal != nil {
		j = b.journal.Close()
	}
	if b.checkpoints != nil {
		j = errors.Join(j, b.checkpoints.close())
	}
	return errors.Join(b.read.Close(), b.write.Close(), j)
}

// Begin opens a write transaction on the single writer or a read
// transaction on the read pool.
func (b *Backend) Begin(ctx context.Context, write bool) (sqlstore.Conn, error) {
	db := b.read
	if write {
		db = b.write
		if err := b.writers.acquire(ctx); err != nil {
			return nil, err
		}
	}
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		if write {
			b.writers.release()
		}
		return nil, err
	}
	c := &conn{tx: tx, q: tx, b: b, db: db, stmts: &b.rstmts, write: write}
	if write {
		c.stmts = &b.wstmts
	}
	return c, nil
}

// Direct answers a connection of the read pool without a transaction:
// each statement is a read of its own. Store.Lookup's one-statement reads
// (the signed API's key, a send's recipient context) thus skip a BEGIN and
// a COMMIT, as they do on PostgreSQL.
func (b *Backend) Direct() sqlstore.Conn {
	return &conn{b: b, db: b.read, q: b.read, stmts: &b.rstmts}
}

// querier is what a conn runs its statements on: its transaction, or the
// read pool itself for a Direct one.
type querier interface {
	ExecContext(ctx context.Context, q string, args ...any) (sql.Result, error)
	QueryContext(ctx context.Context, q string, args ...any) (*sql.Rows, error)
	QueryRowContext(ctx context.Context, q string, args ...any) *sql.Row
}

type conn struct {
	tx    *sql.Tx // nil for a Direct conn
	q     querier // tx, or the read pool
	b     *Backend
	db    *sql.DB
	stmts *sync.Map
	write bool // holds the writers' gate until Commit or Rollback
	done  bool
}

// end releases the writers' gate once.
func (c *conn) end() {
	if c.write && !c.done {
		c.done = true
		c.b.writers.release()
	}
}

// Statements are cached up to maxCachedQueryLen bytes, and up to
// maxCachedStmts of them: the multi-row statements of the store come in a
// few shapes (sqlstore's ladder), while an unbounded variety (IN lists of
// every length) must not grow the cache forever.
// readConns is the size of the read pool (WAL lets readers run beside
// the one writer).
const readConns = 4

const (
	maxCachedQueryLen = 64 << 10
	maxCachedStmts    = 2048
)

// stmt returns q prepared on this transaction's connection when the cache
// has it, else nil (the caller runs q unprepared). A miss prepares q in the
// background: preparing on the pool needs a connection, and with one
// writer the only one is held by this very transaction.
func (c *conn) stmt(ctx context.Context, q string) *sql.Stmt {
	if len(q) > maxCachedQueryLen {
		return nil
	}
	v, ok := c.stmts.Load(q)
	if !ok {
		if c.b.cached.Load() >= maxCachedStmts {
			return nil
		}
		if _, loaded := c.stmts.LoadOrStore(q, nil); loaded {
			return nil
		}
		c.b.cached.Add(1)
		db, m := c.db, c.stmts
		go func() {
			st, err := db.PrepareContext(context.Background(), q)
			if err != nil {
				m.Delete(q)
				c.b.cached.Add(-1)
				return
			}
			m.Store(q, st)
		}()
		return nil
	}
	st, _ := v.(*sql.Stmt)
	if st == nil {
		return nil // being prepared
	}
	if c.tx == nil {
		return st // Direct: the pool's statement, prepared on each connection once
	}
	return c.tx.StmtContext(ctx, st)
}

// FixedShapes: multi-row statements should come in a few sizes, which
// the statement cache keeps prepared (sqlstore's ladder).
func (c *conn) FixedShapes() bool { return true }

func (c *conn) Exec(ctx context.Context, q string, args ...any) (int64, error) {
	args, _ = sqlstore.StripFreshPlan(args)
	st := c.stmt(ctx, q)
	var res sql.Result
	var err error
	if st != nil {
		res, err = st.ExecContext(ctx, args...)
	} else {
		res, err = c.q.ExecContext(ctx, q, args...)
	}
	if err != nil {
		return 0, translate(err)
	}
	return res.RowsAffected()
}

func (c *conn) Query(ctx context.Context, q string, args ...any) (sqlstore.Rows, error) {
	args, _ = sqlstore.StripFreshPlan(args)
	st := c.stmt(ctx, q)
	var rows *sql.Rows
	var err error
	if st != nil {
		rows, err = st.QueryContext(ctx, args...)
	} else {
		rows, err = c.q.QueryContext(ctx, q, args...)
	}
	if err != nil {
		return nil, translate(err)
	}
	return sqlRows{rows}, nil
}

func (c *conn) QueryRow(ctx context.Context, q string, args ...any) sqlstore.Row {
	args, _ = sqlstore.StripFreshPlan(args)
	if st := c.stmt(ctx, q); st != nil {
		return sqlRow{st.QueryRowContext(ctx, args...)}
	}
	return sqlRow{c.q.QueryRowContext(ctx, q, args...)}
}

func (c *conn) Commit(context.Context) error {
	defer c.end()
	if c.tx == nil {
		return nil
	}
	return translate(c.tx.Commit())
}

func (c *conn) Rollback(context.Context) error {
	defer c.end()
	if c.tx == nil {
		return nil
	}
	return c.tx.Rollback()
}

func (c *conn) InsertJobs(ctx context.Context, params []river.InsertManyParams) ([]int64, error) {
	if c.b.river == nil {
		return nil, errors.New("queue client not started")
	}
	if c.tx == nil {
		return nil, errNoTx
	}
	res, err := c.b.river.InsertManyTx(ctx, c.tx, params)
	if err != nil {
		return nil, err
	}
	ids := make([]int64, len(res))
	for i, r := range res {
		ids[i] = r.Job.ID
	}
	return ids, nil
}

func (c *conn) CancelJob(ctx context.Context, id int64) error {
	if c.b.river == nil {
		return errors.New("queue client not started")
	}
	if c.tx == nil {
		return errNoTx
	}
	_, err := c.b.river.JobCancelTx(ctx, c.tx, id)
	if err != nil && errors.Is(err, rivertype.ErrNotFound) {
		return nil
	}
	return err
}

// errNoTx refuses a queue write on a Direct conn (a read of its own).
var errNoTx = errors.New("sqlite: queue write outside a transaction")

// Tx returns the underlying *sql.Tx of a store transaction, for River
// calls that must share it.
func Tx(c sqlstore.Conn) *sql.Tx { return c.(*conn).tx }

type sqlRows struct{ *sql.Rows }

func (r sqlRows) Close()                 { _ = r.Rows.Close() }
func (r sqlRows) Scan(dest ...any) error { return translate(r.Rows.Scan(dest...)) }

type sqlRow struct{ *sql.Row }

func (r sqlRow) Scan(dest ...any) error { return translate(r.Row.Scan(dest...)) }

// translate maps driver errors onto the store's sentinel errors.
func translate(err error) error {
	if err == nil {
		return nil
	}
	if errors.Is(err, sql.ErrNoRows) {
		return notify.ErrNotFound
	}
	var se *sqlite.Error
	if errors.As(err, &se) {
		switch se.Code() {
		case sqlite3.SQLITE_CONSTRAINT_UNIQUE, sqlite3.SQLITE_CONSTRAINT_PRIMARYKEY:
			return fmt.Errorf("%w: %v", notify.ErrConflict, err)
		}
	}
	return err
}

// RescueJobs makes running River jobs available again when the client
// that fetched them last (the last element of attempted_by, a worker
// process id) has no heartbeat row at or after r.LiveSince, counting the
// crash (sqlstore.Conn), or when it is r.Self and the job is not busy.
// Times in River's SQLite tables are text in River's one format.
func (c *conn) RescueJobs(ctx context.Context, r sqlstore.Rescue) (int, error) {
	const last = `json_extract(river_job.attempted_by, '$[#-1]')`
	path := `$."` + r.CrashesKey + `"`
	now := riverTime(time.Now())
	dead, err := c.Exec(ctx, `UPDATE river_job SET state = 'available', scheduled_at = ?,
		metadata = jsonb_set(metadata, ?, COALESCE(json_extract(metadata, ?), 0) + 1),
		queue = CASE WHEN COALESCE(json_extract(metadata, ?), 0) + 1 >= ? THEN ? ELSE queue END
		WHERE state = 'running' AND attempted_at < ? AND `+last+` IS NOT ?
		AND NOT EXISTS (SELECT 1 FROM dispatch_workers w WHERE w.worker_id = `+last+` AND w.heartbeat_at >= ?)`,
		now, path, path, path, r.IsolateAt, r.IsolateQueue, riverTime(r.RunningBefore), r.Self, r.LiveSince)
	if err != nil || r.Self == "" {
		return int(dead), err
	}
	ids, _ := json.Marshal(r.Busy)
	own, err := c.Exec(ctx, `UPDATE river_job SET state = 'available', scheduled_at = ?
		WHERE state = 'running' AND attempted_at < ? AND `+last+` = ? AND id NOT IN (SELECT value FROM json_each(?))`,
		now, riverTime(r.RunningBefore), r.Self, string(ids))
	return int(dead + own), err
}

// RunningJobs lists the running River jobs of queue fetched last by owner.
func (c *conn) RunningJobs(ctx context.Context, queue, owner string) ([]int64, error) {
	return sqlstore.ScanIDs(c.Query(ctx, `SELECT id FROM river_job WHERE state = 'running' AND queue = ?
		AND json_extract(attempted_by, '$[#-1]') = ? ORDER BY id`, queue, owner))
}

// riverTime formats t as River's SQLite driver stores times (it compares
// them as text).
func riverTime(t time.Time) string {
	return t.UTC().Round(time.Millisecond).Format("2006-01-02 15:04:05.000")
}
