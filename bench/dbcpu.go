package main

import (
	"context"
	"time"

	"github.com/jackc/pgx/v5"
)

// dbCPU reads the CPU time of the PostgreSQL backends that serve one
// database (found in pg_stat_activity), so that a phase's cost per
// message counts the database's side as well as the server's. On a
// machine where other work runs too, CPU per message is steadier than a
// rate: the other work takes time from both phases, not CPU from ours.
// Backends of other databases (tests of other checkouts) are not counted.
type dbCPU struct {
	conn *pgx.Conn
}

// newDBCPU connects to url's database; nil (costs read as zero) for
// SQLite, whose work is in the server's process.
func newDBCPU(ctx context.Context, db, url string) (*dbCPU, error) {
	if db == "sqlite" {
		return nil, nil
	}
	c, err := pgx.Connect(ctx, url)
	if err != nil {
		return nil, err
	}
	return &dbCPU{conn: c}, nil
}

// snapshot is the CPU time of each backend of the database but this one.
func (d *dbCPU) snapshot(ctx context.Context) map[int]time.Duration {
	out := map[int]time.Duration{}
	if d == nil {
		return out
	}
	rows, err := d.conn.Query(ctx, `SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()`)
	if err != nil {
		return out
	}
	pids, _ := pgx.CollectRows(rows, pgx.RowTo[int32])
	for _, pid := range pids {
		out[int(pid)] = procCPU(int(pid))
	}
	return out
}

// since is the CPU the backends of after used since before (a backend
// that started in between counts from zero).
func cpuSince(before, after map[int]time.Duration) time.Duration {
	var d time.Duration
	for pid, t := range after {
		d += t - before[pid]
	}
	return d
}

// analyze gathers the planner's statistics of the bench's tables.
func (d *dbCPU) analyze(ctx context.Context) error {
	if d == nil {
		return nil
	}
	_, err := d.conn.Exec(ctx, "ANALYZE")
	return err
}

func (d *dbCPU) close() {
	if d != nil {
		_ = d.conn.Close(context.Background())
	}
}
