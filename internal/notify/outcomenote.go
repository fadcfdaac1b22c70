package notify

import (
	"context"
	"time"
)

// OutcomeNote is a delivery outcome written the moment its vendor call
// answers, ahead of the run's full record (docs/DECISIONS.md "Duplicates
// after a crash"). A run taken over after its process died reads the note
// of the job row it takes and records that outcome instead of sending
// again. RunStartedAt and AttemptsMade name the run: a note applies only
// while the job row is still processing with both unchanged, so a note
// left behind by a run that was recorded never applies.
type OutcomeNote struct {
	JobID        string
	RunStartedAt time.Time
	AttemptsMade int
	Body         []byte // the run's outcome and attempts, as the engine encodes them
	CreatedAt    time.Time
}

// OutcomeNotes is the store's journal of outcome notes. Its writes are
// transactions of their own, never waiting for the main writer (on
// SQLite the notes live in a file of their own).
type OutcomeNotes interface {
	// NoteOutcomes writes add (replacing a job row's earlier note) and
	// deletes the notes of the job rows in forget, in one transaction.
	NoteOutcomes(ctx context.Context, add []*OutcomeNote, forget []string) error
	// FindOutcomeNotes reads the notes of jobIDs, by job row id.
	FindOutcomeNotes(ctx context.Context, jobIDs []string) (map[string]*OutcomeNote, error)
	// PruneOutcomeNotes deletes the notes written before before.
	PruneOutcomeNotes(ctx context.Context, before time.Time) (int, error)
	// NoteWriters is how many NoteOutcomes calls are worth running at
	// once: one where the notes have one writer (SQLite's file), more
	// where they commit in parallel (PostgreSQL's pool of their own).
	NoteWriters() int
}
