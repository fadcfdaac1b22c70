package storetest

import (
	"cmp"
	"context"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/notifyd/notifyd/internal/notify"
	"github.com/notifyd/notifyd/internal/store"
)

// testOutcomeNotes: notes are written, replaced per job row, read by job
// row, forgotten and pruned by age, in transactions of their own (on
// SQLite in a file of their own, so a note is written while the main
// writer is held).
func testOutcomeNotes(t *testing.T, db *store.DB) {
	ctx := context.Background()
	a, b, c := id(), id(), id()
	note := func(job string, attempts int, body string, at time.Time) *notify.OutcomeNote {
		return &notify.OutcomeNote{JobID: job, RunStartedAt: t0.Add(time.Second), AttemptsMade: attempts, Body: []byte(body), CreatedAt: at}
	}
	require.NoError(t, db.NoteOutcomes(ctx, []*notify.OutcomeNote{note(a, 1, `{"a":1}`, t0), note(b, 2, `{"b":2}`, t0.Add(time.Hour))}, nil))
	// A later note of the same job row replaces the first; a forget of an
	// unknown row is no error.
	require.NoError(t, db.NoteOutcomes(ctx, []*notify.OutcomeNote{note(a, 3, `{"a":3}`, t0.Add(time.Minute))}, []string{id()}))
	got, err := db.FindOutcomeNotes(ctx, []string{a, b, c})
	require.NoError(t, err)
	require.Len(t, got, 2)
	require.Equal(t, note(a, 3, `{"a":3}`, t0.Add(time.Minute)), got[a])
	require.Equal(t, note(b, 2, `{"b":2}`, t0.Add(time.Hour)), got[b])
	none, err := db.FindOutcomeNotes(ctx, nil)
	require.NoError(t, err)
	require.Empty(t, none)

	// Written while the main writer is held by another transaction.
	require.NoError(t, db.Update(ctx, func(tx notify.Tx) error {
		return db.NoteOutcomes(ctx, []*notify.OutcomeNote{note(c, 1, `{}`, t0)}, nil)
	}))

	require.NoError(t, db.NoteOutcomes(ctx, nil, []string{b}))
	n, err := db.PruneOutcomeNotes(ctx, t0.Add(30*time.Second))
	require.NoError(t, err)
	require.Equal(t, 1, n, "c is older than the bound; a is not")
	got, err = db.FindOutcomeNotes(ctx, []string{a, b, c})
	require.NoError(t, err)
	require.Len(t, got, 1)
	require.Contains(t, got, a)

	// NoteWriters writes at once (one on SQLite's file of its own, more on
	// PostgreSQL), each of one statement or of several (more than fit in
	// one): every note is kept.
	writers := db.NoteWriters()
	require.GreaterOrEqual(t, writers, 1)
	if db.Dialect == "sqlite" {
		require.Equal(t, 1, writers, "the notes' file has one writer")
	}
	var ids []string
	errs := make(chan error, writers+1)
	var wg sync.WaitGroup
	for w := range writers + 1 {
		batch := make([]*notify.OutcomeNote, 0, 250)
		for range cmp.Or(w*250, 1) {
			x := id()
			ids = append(ids, x)
			batch = append(batch, note(x, 1, `{}`, t0.Add(time.Hour)))
		}
		wg.Go(func() { errs <- db.NoteOutcomes(ctx, batch, nil) })
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}
	got, err = db.FindOutcomeNotes(ctx, ids)
	require.NoError(t, err)
	require.Len(t, got, len(ids))
	require.NoError(t, db.NoteOutcomes(ctx, nil, ids))
	got, err = db.FindOutcomeNotes(ctx, ids)
	require.NoError(t, err)
	require.Empty(t, got)
}
