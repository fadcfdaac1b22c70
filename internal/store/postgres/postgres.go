// Package postgres is the many-node backend: a pgx v5 pool and River's
// riverpgxv5 driver. The SQL lives in store/sqlstore, shared with SQLite;
// this package rebinds its '?' placeholders to $N and translates errors.
package postgres

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"strconv"
	"strings"
	"sync"
	"syscall"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"
	"github.com/riverqueue/river/rivertype"

	"github.com/notifyd/notifyd/internal/notify"
	"github.com/notifyd/notifyd/internal/store/migrate"
	"github.com/notifyd/notifyd/internal/store/sqlstore"
)

// Backend is the PostgreSQL sqlstore.Backend.
type Backend struct {
	pool   *pgxpool.Pool
	driver *riverpgxv5.Driver
	river  *river.Client[pgx.Tx]
	// journal is the outcome notes' own small pool (BeginJournal).
	journal *pgxpool.Pool
}

// Open connects to the database at url (postgres://…).
func Open(ctx context.Context, url string) (*Backend, error) {
	cfg, err := pgxpool.ParseConfig(url)
	if err != nil {
		return nil, fmt.Errorf("parse database url: %w", err)
	}
	// pgxpool's default (4 on 2 cores) starves River and the API; 16 unless
	// the URL sets pool_max_conns itself.
	if !strings.Contains(url, "pool_max_conns") && cfg.MaxConns < 16 {
		cfg.MaxConns = 16
	}
	jcfg := cfg.Copy()
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, err
	}
	// The outcome notes' pool: three connections of their own, so a note
	// never waits for one of the main pool, which acceptance and delivery
	// keep busy under load; and commits that do not wait for the WAL
	// flush, since a note guards against notifyd's death, not the
	// database's (a note lost costs a message sent again, never one lost).
	jcfg.MaxConns, jcfg.MinConns = journalWriters+1, 0
	jcfg.ConnConfig.RuntimeParams["synchronous_commit"] = "off"
	journal, err := pgxpool.NewWithConfig(ctx, jcfg)
	if err != nil {
		pool.Close()
		return nil, err
	}
	return &Backend{pool: pool, driver: riverpgxv5.New(pool), journal: journal}, nil
}

// journalWriters is how many note writes run at once (JournalWriters):
// a note then seldom waits behind another note write in progress (issue
// 31, item 1: under load that wait was half of a note's 2–3 ms). The
// notes' pool has one connection more, for the forgets and prunes.
const journalWriters = 2

// JournalWriters is how many note writes run at once
// (sqlstore.DirectJournal).
func (b *Backend) JournalWriters() int { return journalWriters }

// DirectJournal is the outcome notes' pool, each statement a transaction
// of its own (sqlstore.DirectJournal).
func (b *Backend) DirectJournal() sqlstore.Conn { return &conn{tx: b.journal, b: b} }

// BeginJournal opens a transaction of the outcome notes on their own pool
// (sqlstore.Journal).
func (b *Backend) BeginJournal(ctx context.Context, _ bool) (sqlstore.Conn, error) {
	tx, err := b.journal.Begin(ctx)
	if err != nil {
		return nil, err
	}
	return &conn{tx: tx, b: b}, nil
}

// Writers is 0: no group commit on PostgreSQL. It commits concurrent
// transactions in parallel on its own, and measured here a shared batch
// (with a savepoint per caller) was slower than a transaction per caller.
func (b *Backend) Writers() int { return 0 }

// UrgentWriters is 1: Store.BatchUrgent (a vendor's delivery reports,
// issue 35) is a group commit here, one shared transaction at a time. A
// burst of callbacks then costs one commit per batch, not one per report,
// and takes one connection's turns on the cores the sends share instead
// of one per callback (docs/DECISIONS.md "Delivery reports in a group
// commit of their own on PostgreSQL").
func (b *Backend) UrgentWriters() int { return 1 }

// Pool exposes the pool to tests and benchmarks of this backend.
func (b *Backend) Pool() *pgxpool.Pool { return b.pool }

// StartRiver creates the River client. Call once, after Migrate.
func (b *Backend) StartRiver(cfg *river.Config) (*river.Client[pgx.Tx], error) {
	c, err := river.NewClient(b.driver, cfg)
	if err != nil {
		return nil, err
	}
	b.river = c
	return c, nil
}

// Dialect is postgres (sqlstore.Backend).
func (b *Backend) Dialect() string { return "postgres" }

// MigrateQueue applies River's migrations.
func (b *Backend) MigrateQueue(ctx context.Context) error { return migrate.Queue(ctx, b.driver) }

// LockMigrations holds a session advisory lock on a connection of its own
// until unlock (sqlstore.MigrationLock): several nodes starting at once
// migrate one after the other.
func (b *Backend) LockMigrations(ctx context.Context) (func(), error) {
	conn, err := b.pool.Acquire(ctx)
	if err != nil {
		return nil, err
	}
	const lockID = 0x6e6f7469667964 // "notifyd"
	if _, err := conn.Exec(ctx, `SELECT pg_advisory_lock($1)`, lockID); err != nil {
		conn.Release()
		return nil, err
	}
	return func() {
		_, _ = conn.Exec(context.WithoutCancel(ctx), `SELECT pg_advisory_unlock($1)`, lockID)
		conn.Release()
	}, nil
}

// Close closes the pools.
func (b *Backend) Close() error {
	b.pool.Close()
	b.journal.Close()
	return nil
}

// Begin opens a transaction; reads use a read-only one.
func (b *Backend) Begin(ctx context.Context, write bool) (sqlstore.Conn, error) {
	opts := pgx.TxOptions{}
	if !write {
		// One snapshot for the whole read, so a status lookup never mixes
		// a request's old state with its new attempts.
		opts.AccessMode, opts.IsoLevel = pgx.ReadOnly, pgx.RepeatableRead
	}
	tx, err := b.pool.BeginTx(ctx, opts)
	if err != nil {
		return nil, err
	}
	return &conn{tx: tx, b: b}, nil
}

type conn struct {
	tx querier
	b  *Backend
}

// querier is what a conn runs statements on: a transaction, or the pool
// for Direct.
type querier interface {
	Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error)
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
	CopyFrom(ctx context.Context, table pgx.Identifier, cols []string, src pgx.CopyFromSource) (int64, error)
	SendBatch(ctx context.Context, b *pgx.Batch) pgx.BatchResults
}

// Direct is a connection without a transaction, for one-statement reads
// (sqlstore.Store.Lookup): each statement commits on its own.
func (b *Backend) Direct() sqlstore.Conn { return &conn{tx: b.pool, b: b} }

// mode turns the sqlstore.FreshPlan mark into pgx's per-statement mode:
// the statement goes as an unnamed one, planned with its values.
func mode(args []any) []any {
	if rest, ok := sqlstore.StripFreshPlan(args); ok {
		return append([]any{pgx.QueryExecModeExec}, rest...)
	}
	return args
}

// LocksRows says PostgreSQL takes row locks (sqlstore's SELECT ... FOR
// UPDATE).
func (c *conn) LocksRows() bool { return true }

// MultiStatement says an Exec without arguments may hold several
// statements: pgx sends it by the simple protocol, one round trip
// (sqlstore's group commit joins a savepoint's release to the next).
func (c *conn) MultiStatement() bool { return true }

func (c *conn) Exec(ctx context.Context, q string, args ...any) (int64, error) {
	tag, err := c.tx.Exec(ctx, rebind(q), mode(args)...)
	if err != nil {
		return 0, translate(err)
	}
	return tag.RowsAffected(), nil
}

func (c *conn) Query(ctx context.Context, q string, args ...any) (sqlstore.Rows, error) {
	rows, err := c.tx.Query(ctx, rebind(q), mode(args)...)
	if err != nil {
		return nil, translate(err)
	}
	return pgRows{rows}, nil
}

func (c *conn) QueryRow(ctx context.Context, q string, args ...any) sqlstore.Row {
	return pgRow{c.tx.QueryRow(ctx, rebind(q), mode(args)...)}
}

// Pipeline sends reads as one batch: one round trip for all of them
// (sqlstore.Pipeliner).
func (c *conn) Pipeline(ctx context.Context, reads []sqlstore.Read) error {
	b := &pgx.Batch{}
	for _, r := range reads {
		b.Queue(rebind(r.SQL), mode(r.Args)...)
	}
	br := c.tx.SendBatch(ctx, b)
	for _, r := range reads {
		rows, err := br.Query()
		if err != nil {
			_ = br.Close()
			return translate(err)
		}
		err = r.Scan(pgRows{rows})
		rows.Close()
		if err == nil {
			err = rows.Err()
		}
		if err != nil {
			_ = br.Close()
			return translate(err)
		}
	}
	return translate(br.Close())
}

// CopyFrom is the COPY fast path of bulk inserts (sqlstore.Copier).
func (c *conn) CopyFrom(ctx context.Context, table string, cols []string, rows [][]any) (int64, error) {
	n, err := c.tx.CopyFrom(ctx, pgx.Identifier{table}, cols, pgx.CopyFromRows(rows))
	return n, translate(err)
}

// errDirect refuses transaction verbs on a Direct connection.
var errDirect = errors.New("not in a transaction")

func (c *conn) Commit(ctx context.Context) error {
	if tx, ok := c.tx.(pgx.Tx); ok {
		return translate(tx.Commit(ctx))
	}
	return nil
}

func (c *conn) Rollback(ctx context.Context) error {
	if tx, ok := c.tx.(pgx.Tx); ok {
		return tx.Rollback(ctx)
	}
	return nil
}

func (c *conn) InsertJobs(ctx context.Context, params []river.InsertManyParams) ([]int64, error) {
	if c.b.river == nil {
		return nil, errors.New("queue client not started")
	}
	tx, ok := c.tx.(pgx.Tx)
	if !ok {
		return nil, errDirect
	}
	res, err := c.b.river.InsertManyTx(ctx, tx, params)
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
	tx, ok := c.tx.(pgx.Tx)
	if !ok {
		return errDirect
	}
	_, err := c.b.river.JobCancelTx(ctx, tx, id)
	if err != nil && errors.Is(err, rivertype.ErrNotFound) {
		return nil
	}
	return err
}

// Tx returns the underlying pgx.Tx of a store transaction.
func Tx(c sqlstore.Conn) pgx.Tx { return c.(*conn).tx.(pgx.Tx) }

type pgRows struct{ pgx.Rows }

func (r pgRows) Scan(dest ...any) error { return translate(r.Rows.Scan(dest...)) }

type pgRow struct{ pgx.Row }

func (r pgRow) Scan(dest ...any) error { return translate(r.Row.Scan(dest...)) }

func translate(err error) error {
	if err == nil {
		return nil
	}
	if errors.Is(err, pgx.ErrNoRows) {
		return notify.ErrNotFound
	}
	var pe *pgconn.PgError
	if errors.As(err, &pe) && pe.Code == "23505" {
		return fmt.Errorf("%w: %v", notify.ErrConflict, err)
	}
	return err
}

var rebound sync.Map // query text -> rebound text

// rebind turns '?' placeholders into $1, $2, … The shared SQL never has a
// '?' inside a string literal.
func rebind(q string) string {
	if v, ok := rebound.Load(q); ok {
		return v.(string)
	}
	var b strings.Builder
	b.Grow(len(q) + 16)
	n := 0
	for i := 0; i < len(q); i++ {
		if q[i] == '?' {
			n++
			b.WriteByte('$')
			b.WriteString(strconv.Itoa(n))
			continue
		}
		b.WriteByte(q[i])
	}
	out := b.String()
	rebound.Store(q, out)
	return out
}

// RescueJobs makes running River jobs available again when the client
// that fetched them last (the last element of attempted_by, a worker
// process id) has no heartbeat row at or after r.LiveSince, counting the
// crash (sqlstore.Conn), or when it is r.Self and the job is not busy.
func (c *conn) RescueJobs(ctx context.Context, r sqlstore.Rescue) (int, error) {
	const last = `river_job.attempted_by[array_length(river_job.attempted_by, 1)]`
	dead, err := c.Exec(ctx, `UPDATE river_job SET state = 'available', scheduled_at = now(),
		metadata = jsonb_set(metadata, ARRAY[?::text], to_jsonb(COALESCE((metadata->>?::text)::int, 0) + 1)),
		queue = CASE WHEN COALESCE((metadata->>?::text)::int, 0) + 1 >= ? THEN ? ELSE queue END
		WHERE state = 'running' AND attempted_at < ? AND `+last+` IS DISTINCT FROM ?
		AND NOT EXISTS (SELECT 1 FROM dispatch_workers w WHERE w.worker_id = `+last+` AND w.heartbeat_at >= ?)`,
		r.CrashesKey, r.CrashesKey, r.CrashesKey, r.IsolateAt, r.IsolateQueue, r.RunningBefore, r.Self, r.LiveSince)
	if err != nil || r.Self == "" {
		return int(dead), err
	}
	own, err := c.Exec(ctx, `UPDATE river_job SET state = 'available', scheduled_at = now()
		WHERE state = 'running' AND attempted_at < ? AND `+last+` = ? AND NOT (id = ANY(?))`,
		r.RunningBefore, r.Self, r.Busy)
	return int(dead + own), err
}

// RunningJobs lists the running River jobs of queue fetched last by owner.
func (c *conn) RunningJobs(ctx context.Context, queue, owner string) ([]int64, error) {
	return sqlstore.ScanIDs(c.Query(ctx, `SELECT id FROM river_job WHERE state = 'running' AND queue = ?
		AND attempted_by[array_length(attempted_by, 1)] = ? ORDER BY id`, queue, owner))
}

// Unavailable tells the errors of a server that cannot be reached or is
// shutting down (connection failures, SQLSTATE class 08, 57P01–57P03):
// the API answers them 503 with Retry-After, and pgxpool reconnects by
// itself once the server is back.
func (b *Backend) Unavailable(err error) bool {
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		return strings.HasPrefix(pe.Code, "08") || pe.Code == "57P01" || pe.Code == "57P02" || pe.Code == "57P03"
	}
	var ce *pgconn.ConnectError
	var ne net.Error
	return errors.As(err, &ce) || errors.As(err, &ne) || errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) ||
		errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, syscall.ECONNRESET) || pgconn.SafeToRetry(err)
}
