package main

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"strings"

	"github.com/google/uuid"
	"github.com/riverqueue/river"

	"github.com/notifyd/notifyd/internal/groupcommit"
	"github.com/notifyd/notifyd/internal/notify"
	"github.com/notifyd/notifyd/internal/store"
	"github.com/notifyd/notifyd/internal/store/sqlstore"
)

// The durable minimum: the least a server can do to answer a send 201
// only after it is durable. It is the bare handler (read, HMAC check,
// decode) plus a group commit like notifyd's (one writer, up to 256 sends
// per transaction): one row per send holding its body, one multi-row
// INSERT and one River job per commit. No nonce, no request limits, no
// job rows, no routing: whatever notifyd's api role spends beyond this is
// its own, and what this spends is the floor of any durable acceptance on
// the machine. It runs in a process of its own, as notifyd does.

// durableProcessBaseline runs the durable-minimum server as a child
// process on a fresh database of the run's backend and drives it with the
// bare handler's client.
func (b *bench) durableProcessBaseline(ctx context.Context) (result, error) {
	dbURL, err := b.databaseURL()
	if err != nil {
		return result{}, err
	}
	return b.childBaseline(ctx, "baseline: durable minimum, own process", "durableserve", "BENCH_DURABLE_URL="+dbURL)
}

// durableCall is one send waiting for its commit.
type durableCall struct {
	ctx  context.Context
	body []byte
	done chan error
}

func (c *durableCall) Context() context.Context { return c.ctx }
func (c *durableCall) Answer(err error)         { c.done <- err }

// durableServe is the durableserve scenario: the durable-minimum server
// on BENCH_DURABLE_URL, its URL on stdout, until the process is killed.
func durableServe() error {
	ctx := context.Background()
	db, err := store.Open(ctx, os.Getenv("BENCH_DURABLE_URL"), store.Options{SQLiteSynchronous: "FULL"})
	if err != nil {
		return err
	}
	defer db.Close()
	if err := db.Migrate(ctx); err != nil {
		return err
	}
	if _, err := db.NewQueue(&river.Config{}); err != nil { // insert-only
		return err
	}
	err = db.Update(ctx, func(tx notify.Tx) error {
		_, err := tx.(*sqlstore.Tx).Conn().Exec(ctx, `CREATE TABLE bench_rows (id TEXT PRIMARY KEY, body TEXT NOT NULL)`)
		return err
	})
	if err != nil {
		return err
	}
	q := groupcommit.New(1, 256, func(calls []*durableCall) {
		live := groupcommit.Live(calls)
		if len(live) == 0 {
			return
		}
		err := db.Update(ctx, func(tx notify.Tx) error {
			c := tx.(*sqlstore.Tx).Conn()
			args := make([]any, 0, 2*len(live))
			for _, call := range live {
				args = append(args, uuid.Must(uuid.NewV7()).String(), string(call.body))
			}
			if _, err := c.Exec(ctx, `INSERT INTO bench_rows (id, body) VALUES (?, ?)`+strings.Repeat(", (?, ?)", len(live)-1), args...); err != nil {
				return err
			}
			_, err := c.InsertJobs(ctx, []river.InsertManyParams{{Args: noop{}}})
			return err
		})
		for _, call := range live {
			call.Answer(err)
		}
	})
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, ok := bareCheck(w, r, bareSecret)
		if !ok {
			return
		}
		c := &durableCall{ctx: r.Context(), body: body, done: make(chan error, 1)}
		if err := groupcommit.Wait(r.Context(), q, c, c.done); err != nil {
			http.Error(w, err.Error(), 500)
			return
		}
		created(w)
	})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	fmt.Println("http://" + ln.Addr().String())
	return (&http.Server{Handler: h}).Serve(ln)
}
