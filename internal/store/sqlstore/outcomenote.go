package sqlstore

import (
	"context"
	"strings"
	"time"

	"github.com/notifyd/notifyd/internal/notify"
)

// Journal is an optional part of a Backend whose writes share one writer
// (SQLite): outcome notes get transactions of their own elsewhere (a file
// of their own), so a note never waits behind the main writer. Without it
// they go to the main database, in transactions of their own.
type Journal interface {
	BeginJournal(ctx context.Context, write bool) (Conn, error)
}

// DirectJournal is an optional part of a Journal whose database commits
// concurrent writers in parallel (PostgreSQL): Writers is how many note
// writes may run at once, and DirectJournal a connection of the notes'
// own on which each statement is a transaction of its own (one round
// trip, where BEGIN, the statement and COMMIT are three).
type DirectJournal interface {
	JournalWriters() int
	DirectJournal() Conn
}

// OutcomeNotesSchema creates the notes table where the migrations do not
// (a Journal's own file).
const OutcomeNotesSchema = `CREATE TABLE IF NOT EXISTS outcome_notes (
	job_id TEXT PRIMARY KEY,
	run_started_at BIGINT NOT NULL,
	attempts_made INTEGER NOT NULL,
	body TEXT NOT NULL,
	created_at BIGINT NOT NULL
)`

// journal runs fn in a transaction of the notes' database.
func (s *Store) journal(ctx context.Context, write bool, fn func(c Conn) error) (err error) {
	defer func() { err = s.unavailable(err) }()
	var c Conn
	if j, ok := s.b.(Journal); ok {
		c, err = j.BeginJournal(ctx, write)
	} else {
		c, err = s.b.Begin(ctx, write)
	}
	if err != nil {
		return err
	}
	if err := fn(c); err != nil {
		_ = c.Rollback(context.WithoutCancel(ctx))
		return err
	}
	return c.Commit(ctx)
}

// NoteWriters implements notify.OutcomeNotes.
func (s *Store) NoteWriters() int {
	if d, ok := s.b.(DirectJournal); ok {
		return d.JournalWriters()
	}
	return 1
}

// maxNotesPerStatement and maxForgetsPerStatement bound one statement of
// NoteOutcomes.
const (
	maxNotesPerStatement   = 200
	maxForgetsPerStatement = 500
)

// NoteOutcomes implements notify.OutcomeNotes. Work that fits in one
// statement goes without BEGIN and COMMIT where the backend offers a
// DirectJournal: a note waits one round trip, not three.
func (s *Store) NoteOutcomes(ctx context.Context, add []*notify.OutcomeNote, forget []string) error {
	if len(add) == 0 && len(forget) == 0 {
		return nil
	}
	write := func(c Conn) error { return writeNotes(ctx, c, add, forget) }
	if d, ok := s.b.(DirectJournal); ok && (len(add) == 0 || len(forget) == 0) &&
		len(add) <= maxNotesPerStatement && len(forget) <= maxForgetsPerStatement {
		return s.unavailable(write(d.DirectJournal()))
	}
	return s.journal(ctx, true, write)
}

// writeNotes writes add and deletes the notes of forget on c.
func writeNotes(ctx context.Context, c Conn, add []*notify.OutcomeNote, forget []string) error {
	for len(add) > 0 {
		n := min(len(add), maxNotesPerStatement)
		var b strings.Builder
		args := make([]any, 0, 5*n)
		b.WriteString(`INSERT INTO outcome_notes (job_id, run_started_at, attempts_made, body, created_at) VALUES `)
		for i, x := range add[:n] {
			if i > 0 {
				b.WriteString(", ")
			}
			b.WriteString("(?, ?, ?, ?, ?)")
			args = append(args, x.JobID, ms(x.RunStartedAt), x.AttemptsMade, string(x.Body), ms(x.CreatedAt))
		}
		b.WriteString(` ON CONFLICT (job_id) DO UPDATE SET run_started_at = excluded.run_started_at,
			attempts_made = excluded.attempts_made, body = excluded.body, created_at = excluded.created_at`)
		if _, err := c.Exec(ctx, b.String(), args...); err != nil {
			return err
		}
		add = add[n:]
	}
	for len(forget) > 0 {
		n := min(len(forget), maxForgetsPerStatement)
		args := make([]any, n)
		for i, id := range forget[:n] {
			args[i] = id
		}
		if _, err := c.Exec(ctx, `DELETE FROM outcome_notes WHERE job_id IN (`+marks(n)+`)`, args...); err != nil {
			return err
		}
		forget = forget[n:]
	}
	return nil
}

// FindOutcomeNotes implements notify.OutcomeNotes.
func (s *Store) FindOutcomeNotes(ctx context.Context, jobIDs []string) (map[string]*notify.OutcomeNote, error) {
	out := map[string]*notify.OutcomeNote{}
	if len(jobIDs) == 0 {
		return out, nil
	}
	err := s.journal(ctx, false, func(c Conn) error {
		for ids := jobIDs; len(ids) > 0; {
			n := min(len(ids), 500)
			args := make([]any, n)
			for i, id := range ids[:n] {
				args[i] = id
			}
			rows, err := c.Query(ctx, `SELECT job_id, run_started_at, attempts_made, body, created_at
				FROM outcome_notes WHERE job_id IN (`+marks(n)+`)`, args...)
			if err != nil {
				return err
			}
			for rows.Next() {
				var x notify.OutcomeNote
				var started, created int64
				var body string
				if err := rows.Scan(&x.JobID, &started, &x.AttemptsMade, &body, &created); err != nil {
					rows.Close()
					return err
				}
				x.RunStartedAt, x.CreatedAt, x.Body = fromMs(started), fromMs(created), []byte(body)
				out[x.JobID] = &x
			}
			rows.Close()
			if err := rows.Err(); err != nil {
				return err
			}
			ids = ids[n:]
		}
		return nil
	})
	return out, err
}

// PruneOutcomeNotes implements notify.OutcomeNotes. created_at has no
// index: the table holds only the notes of runs not yet recorded (a few
// thousand under load), so the rare prune scans little, and every note
// written is cheaper without one.
func (s *Store) PruneOutcomeNotes(ctx context.Context, before time.Time) (n int, err error) {
	err = s.journal(ctx, true, func(c Conn) error {
		m, err := c.Exec(ctx, `DELETE FROM outcome_notes WHERE created_at < ?`, ms(before))
		n = int(m)
		return err
	})
	return n, err
}

// marks is n comma-separated placeholders.
func marks(n int) string {
	return strings.TrimSuffix(strings.Repeat("?, ", n), ", ")
}
