package main

import (
	"context"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/riverqueue/river"

	"github.com/notifyd/notifyd/internal/notify"
	"github.com/notifyd/notifyd/internal/store"
	"github.com/notifyd/notifyd/internal/store/sqlstore"
)

// noop is the empty job of the River baselines.
type noop struct{}

func (noop) Kind() string { return "bench_noop" }

type noopWorker struct {
	river.WorkerDefaults[noop]
	done *atomic.Int64
}

func (w *noopWorker) Work(context.Context, *river.Job[noop]) error {
	w.done.Add(1)
	return nil
}

// riverDB opens a fresh migrated database with an insert-only client and a
// bench_rows table.
func (b *bench) riverDB(ctx context.Context, cfg *river.Config) (*store.DB, store.Queue, error) {
	url, err := b.databaseURL()
	if err != nil {
		return nil, nil, err
	}
	db, err := store.Open(ctx, url, store.Options{SQLiteSynchronous: "FULL"})
	if err != nil {
		return nil, nil, err
	}
	b.cleanups = append(b.cleanups, func() { db.Close() })
	if err := db.Migrate(ctx); err != nil {
		return nil, nil, err
	}
	q, err := db.NewQueue(cfg)
	if err != nil {
		return nil, nil, err
	}
	err = db.Update(ctx, func(tx notify.Tx) error {
		_, err := tx.(*sqlstore.Tx).Conn().Exec(ctx, `CREATE TABLE bench_rows (id TEXT PRIMARY KEY, body TEXT NOT NULL)`)
		return err
	})
	return db, q, err
}

// riverInsertBaseline: one transaction per request holding a row and a
// River InsertTx of an empty job, 32 clients (PERFORMANCE.md baseline).
func (b *bench) riverInsertBaseline(ctx context.Context) (result, error) {
	db, _, err := b.riverDB(ctx, &river.Config{})
	if err != nil {
		return result{}, err
	}
	var seq atomic.Int64
	body := string(sendBody(1))
	return run("baseline: row + River InsertTx, 1 tx each, 32", 32, b.duration, func(ctx context.Context, _ int) error {
		return db.Update(ctx, func(tx notify.Tx) error {
			c := tx.(*sqlstore.Tx).Conn()
			if _, err := c.Exec(ctx, `INSERT INTO bench_rows (id, body) VALUES (?, ?)`, fmt.Sprint(seq.Add(1)), body); err != nil {
				return err
			}
			_, err := c.InsertJobs(ctx, []river.InsertManyParams{{Args: noop{}}})
			return err
		})
	}), nil
}

// riverBatchBaseline: batches of 500 rows + 500 jobs per transaction, one
// writer; returns rows per second.
func (b *bench) riverBatchBaseline(ctx context.Context) (result, error) {
	db, _, err := b.riverDB(ctx, &river.Config{})
	if err != nil {
		return result{}, err
	}
	var seq atomic.Int64
	body := string(sendBody(1))
	r := run("baseline: 500 rows + 500 jobs per tx, 1 writer", 1, b.duration, func(ctx context.Context, _ int) error {
		return db.Update(ctx, func(tx notify.Tx) error {
			c := tx.(*sqlstore.Tx).Conn()
			params := make([]river.InsertManyParams, 500)
			for i := range params {
				if _, err := c.Exec(ctx, `INSERT INTO bench_rows (id, body) VALUES (?, ?)`, fmt.Sprint(seq.Add(1)), body); err != nil {
					return err
				}
				params[i] = river.InsertManyParams{Args: noop{}}
			}
			_, err := c.InsertJobs(ctx, params)
			return err
		})
	})
	r.ok *= 500
	return r, nil
}

// riverWorkBaseline: River working n empty jobs with tuned fetch settings.
func (b *bench) riverWorkBaseline(ctx context.Context, n int) (float64, error) {
	var done atomic.Int64
	workers := river.NewWorkers()
	river.AddWorker(workers, &noopWorker{done: &done})
	db, q, err := b.riverDB(ctx, &river.Config{Workers: workers, FetchCooldown: 5 * time.Millisecond,
		FetchPollInterval: 20 * time.Millisecond, Queues: map[string]river.QueueConfig{river.QueueDefault: {MaxWorkers: 100}}})
	if err != nil {
		return 0, err
	}
	for sent := 0; sent < n; sent += 500 {
		err := db.Update(ctx, func(tx notify.Tx) error {
			params := make([]river.InsertManyParams, min(500, n-sent))
			for i := range params {
				params[i] = river.InsertManyParams{Args: noop{}}
			}
			_, err := tx.(*sqlstore.Tx).Conn().InsertJobs(ctx, params)
			return err
		})
		if err != nil {
			return 0, err
		}
	}
	start := time.Now()
	if err := q.Start(ctx); err != nil {
		return 0, err
	}
	defer q.Stop(ctx)
	for done.Load() < int64(n) {
		if time.Since(start) > 5*time.Minute {
			return 0, fmt.Errorf("river baseline did not finish")
		}
		time.Sleep(5 * time.Millisecond)
	}
	return float64(n) / time.Since(start).Seconds(), nil
}
