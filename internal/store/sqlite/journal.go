package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"sync"
	"time"

	"github.com/notifyd/notifyd/internal/store/sqlstore"
)

// The outcome notes (notify.OutcomeNotes) live in a database file of
// their own beside the main one, PATH.outcomes: SQLite has one writer per
// file, and a note must be durable within milliseconds of its vendor
// call's answer, not wait behind the send group commits and delivery
// records that queue for the main writer (docs/DECISIONS.md "Duplicates
// after a crash"). The file holds only notes of runs not yet recorded; it
// needs no backup (a restore starts with no run in flight).

// JournalPath is the notes' file of the database at path.
func JournalPath(path string) string {
	if path == ":memory:" {
		return path
	}
	return path + ".outcomes"
}

// openJournal opens the notes' file with synchronous NORMAL whatever the
// main file's setting: in WAL mode a commit then survives the process's
// death (kill -9), which is what notes are for, and a note lost to a
// power cut costs what no note costs, the message sent again, never a
// message lost.
//
// The writer never checkpoints (wal_autocheckpoint 0): a checkpoint in a
// commit held notes back for up to 6 ms, and every note then waiting was
// a message a crash would send again. A connection of its own copies the
// log into the file every second instead (PASSIVE: it never blocks the
// writer).
func openJournal(path string, opts Options) (*Backend, error) {
	opts.Synchronous = "NORMAL"
	j, err := open(JournalPath(path), opts, "wal_autocheckpoint(0)")
	if err != nil {
		return nil, fmt.Errorf("outcome notes: %w", err)
	}
	if _, err := j.write.Exec(sqlstore.OutcomeNotesSchema); err != nil {
		j.Close()
		return nil, fmt.Errorf("outcome notes: %w", err)
	}
	if path != ":memory:" {
		if j.checkpoints, err = startCheckpoints(JournalPath(path), time.Second); err != nil {
			j.Close()
			return nil, fmt.Errorf("outcome notes: %w", err)
		}
	}
	return j, nil
}

// checkpointer runs PASSIVE checkpoints of one file on a connection of
// its own until closed.
type checkpointer struct {
	db   *sql.DB
	stop chan struct{}
	done chan struct{}
	once sync.Once
	err  error
}

func startCheckpoints(path string, every time.Duration) (*checkpointer, error) {
	c, err := newConnector("file:" + path + "?_pragma=busy_timeout(10000)")
	if err != nil {
		return nil, err
	}
	cp := &checkpointer{db: sql.OpenDB(c), stop: make(chan struct{}), done: make(chan struct{})}
	cp.db.SetMaxOpenConns(1)
	go func() {
		defer close(cp.done)
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			select {
			case <-cp.stop:
				return
			case <-t.C:
				// A failed checkpoint is tried again at the next tick.
				_, _ = cp.db.Exec("PRAGMA wal_checkpoint(PASSIVE)")
			}
		}
	}()
	return cp, nil
}

// close stops the checkpoints; a second call answers the first's error.
func (cp *checkpointer) close() error {
	cp.once.Do(func() {
		close(cp.stop)
		<-cp.done
		cp.err = cp.db.Close()
	})
	return cp.err
}

// BeginJournal opens a transaction on the notes' file (sqlstore.Journal).
func (b *Backend) BeginJournal(ctx context.Context, _ bool) (sqlstore.Conn, error) {
	// Always the writer: the notes are read only when a run is taken
	// over, and a ":memory:" database has no second connection to read.
	return b.journal.Begin(ctx, true)
}
