package sqlite

import (
	"context"
	"database/sql/driver"

	"modernc.org/sqlite"
)

// The statement cache of the driver. database/sql prepares, runs and
// finalizes a statement for every Query or Exec that is not on a
// prepared *sql.Stmt, and SQLite's parser is slow: River's queries (its
// fetch, completion and insert, which go through database/sql without
// prepared statements) spent a fifth of a loaded serve's CPU being parsed
// (docs/BENCHMARKS.md, issue 15 step 10). So every connection keeps the
// statements it ran, keyed by their text, and runs them again prepared.
// modernc resets a prepared statement when its rows close.

// Statements longer than maxDriverQueryLen, or beyond maxDriverStmts per
// connection, run unprepared: an unbounded variety of texts (IN lists of
// every length) must not grow the cache forever.
const (
	maxDriverQueryLen = 64 << 10
	maxDriverStmts    = 512
)

// connector opens modernc connections wrapped in a cachingConn.
type connector struct{ inner driver.Connector }

// newConnector is modernc's connector for dsn, caching statements.
func newConnector(dsn string) (connector, error) {
	c, err := sqlite.NewConnector(dsn)
	return connector{c}, err
}

func (c connector) Connect(ctx context.Context) (driver.Conn, error) {
	conn, err := c.inner.Connect(ctx)
	if err != nil {
		return nil, err
	}
	return &cachingConn{inner: conn, stmts: map[string]*cachedStmt{}}, nil
}

func (c connector) Driver() driver.Driver { return c.inner.Driver() }

// innerConn is what modernc's connection offers and database/sql uses.
type innerConn interface {
	driver.Conn
	driver.ConnBeginTx
	driver.ConnPrepareContext
	driver.ExecerContext
	driver.QueryerContext
	driver.Pinger
	driver.SessionResetter
	driver.Validator
}

// cachingConn is used by one goroutine at a time (database/sql's rule
// for a driver connection), so its map needs no lock.
type cachingConn struct {
	inner driver.Conn
	stmts map[string]*cachedStmt
}

type cachedStmt struct {
	st   driver.Stmt
	busy bool // its rows are open: a second use runs unprepared
}

func (c *cachingConn) conn() innerConn { return c.inner.(innerConn) }

// cached returns q's prepared statement, preparing it on first use, or nil
// when q runs unprepared.
func (c *cachingConn) cached(ctx context.Context, q string) *cachedStmt {
	if e, ok := c.stmts[q]; ok {
		if e.busy {
			return nil
		}
		return e
	}
	if len(q) > maxDriverQueryLen || len(c.stmts) >= maxDriverStmts {
		return nil
	}
	st, err := c.conn().PrepareContext(ctx, q)
	if err != nil {
		return nil // run unprepared: the error, if any, comes from there
	}
	e := &cachedStmt{st: st}
	c.stmts[q] = e
	return e
}

func (c *cachingConn) QueryContext(ctx context.Context, q string, args []driver.NamedValue) (driver.Rows, error) {
	e := c.cached(ctx, q)
	if e == nil {
		return c.conn().QueryContext(ctx, q, args)
	}
	rows, err := e.st.(driver.StmtQueryContext).QueryContext(ctx, args)
	if err != nil {
		return nil, err
	}
	e.busy = true
	if rt, ok := rows.(rowsWithTypes); ok {
		return &cachedRows{rowsWithTypes: rt, e: e}, nil
	}
	return &plainRows{Rows: rows, e: e}, nil
}

func (c *cachingConn) ExecContext(ctx context.Context, q string, args []driver.NamedValue) (driver.Result, error) {
	e := c.cached(ctx, q)
	if e == nil {
		return c.conn().ExecContext(ctx, q, args)
	}
	return e.st.(driver.StmtExecContext).ExecContext(ctx, args)
}

func (c *cachingConn) Prepare(q string) (driver.Stmt, error) { return c.inner.Prepare(q) }
func (c *cachingConn) PrepareContext(ctx context.Context, q string) (driver.Stmt, error) {
	return c.conn().PrepareContext(ctx, q)
}
func (c *cachingConn) Begin() (driver.Tx, error) {
	return c.conn().BeginTx(context.Background(), driver.TxOptions{})
}
func (c *cachingConn) BeginTx(ctx context.Context, opts driver.TxOptions) (driver.Tx, error) {
	return c.conn().BeginTx(ctx, opts)
}
func (c *cachingConn) Ping(ctx context.Context) error         { return c.conn().Ping(ctx) }
func (c *cachingConn) ResetSession(ctx context.Context) error { return c.conn().ResetSession(ctx) }
func (c *cachingConn) IsValid() bool                          { return c.conn().IsValid() }

// Close finalizes the cached statements, then closes the connection.
func (c *cachingConn) Close() error {
	for q, e := range c.stmts {
		e.st.Close()
		delete(c.stmts, q)
	}
	return c.inner.Close()
}

// rowsWithTypes is what modernc's rows offer beyond driver.Rows.
type rowsWithTypes interface {
	driver.Rows
	driver.RowsColumnTypeDatabaseTypeName
	driver.RowsColumnTypeScanType
	driver.RowsColumnTypeNullable
	driver.RowsColumnTypeLength
	driver.RowsColumnTypePrecisionScale
}

// cachedRows frees its statement for the next use when closed.
type cachedRows struct {
	rowsWithTypes
	e *cachedStmt
}

func (r *cachedRows) Close() error {
	err := r.rowsWithTypes.Close()
	r.e.busy = false
	return err
}

// plainRows is cachedRows for rows without the column-type methods.
type plainRows struct {
	driver.Rows
	e *cachedStmt
}

func (r *plainRows) Close() error {
	err := r.Rows.Close()
	r.e.busy = false
	return err
}

var (
	_ driver.Connector = connector{}
	_ innerConn        = (*cachingConn)(nil)
)
