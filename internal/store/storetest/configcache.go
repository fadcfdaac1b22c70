package storetest

import (
	"context"
	"errors"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/notifyd/notifyd/internal/notify"
	"github.com/notifyd/notifyd/internal/store"
	"github.com/notifyd/notifyd/internal/store/testdb"
)

// ConfigCacheAcrossStores: two stores on one database, as two processes
// hold them. What one changes of a workspace's send configuration
// (categories, default preferences, windows) the other's next send read
// sees, though it keeps that configuration in memory; a change rolled back
// leaves nothing behind in the memory of the store that made it.
func ConfigCacheAcrossStores(t *testing.T) {
	acrossStores(t, func(t *testing.T, a, b *store.DB) {
		s := categoryFixture(t, a)
		sms := notify.ChannelSMS
		q, read, many := marketingReads(t, s.ws1, false)
		// a reads (and keeps) the configuration.
		sc := read(a, true)
		require.False(t, sc.Category.Required)
		require.Equal(t, map[string]map[notify.Channel]bool{"marketing": {sms: false}}, sc.Preferences.Default.Categories)
		require.Empty(t, sc.Windows)
		require.False(t, many(a).Category.Required)

		// b changes all three.
		update(t, b, func(ctx context.Context, tx notify.Tx) error {
			c := *s.mkt
			c.Required = true
			require.NoError(t, tx.UpdateCategory(ctx, &c))
			require.NoError(t, tx.ReplacePreferences(ctx, s.ws1, "", &notify.Preferences{Channels: map[notify.Channel]bool{},
				Categories: map[string]map[notify.Channel]bool{"marketing": {sms: true}}}))
			return tx.PutSendWindow(ctx, &notify.SendWindow{WorkspaceID: s.ws1, Hours: "09:00-21:00", Days: []string{}, UpdatedAt: t0})
		})
		for _, lookup := range []bool{true, false} {
			sc = read(a, lookup)
			require.True(t, sc.Category.Required)
			require.Equal(t, map[string]map[notify.Channel]bool{"marketing": {sms: true}}, sc.Preferences.Default.Categories)
			require.Len(t, sc.Windows, 1)
		}
		require.True(t, many(a).Category.Required)
		require.Equal(t, notify.PreferenceDecision{Allowed: true, Rule: notify.RuleRequired}, many(a).Decide(sms))

		// a change read inside its own transaction and rolled back.
		undo := errors.New("undo")
		err := a.Update(context.Background(), func(tx notify.Tx) error {
			c := *s.mkt
			c.Required = false
			require.NoError(t, tx.UpdateCategory(context.Background(), &c))
			sc, err := tx.FindSendContext(context.Background(), s.ws1, q)
			require.NoError(t, err)
			require.False(t, sc.Category.Required, "the transaction reads its own change")
			return undo
		})
		require.ErrorIs(t, err, undo)
		require.True(t, read(a, true).Category.Required, "the rolled-back change is not kept")

		// A category's removal (its window and choices go by cascade).
		update(t, b, func(ctx context.Context, tx notify.Tx) error {
			require.NoError(t, tx.PutSendWindow(ctx, &notify.SendWindow{WorkspaceID: s.ws1, CategoryID: s.mkt.ID, Hours: "10:00-11:00",
				Days: []string{}, UpdatedAt: t0}))
			return nil
		})
		require.Len(t, read(a, true).Windows, 2)
		update(t, b, func(ctx context.Context, tx notify.Tx) error { return tx.DeleteCategory(ctx, s.ws1, "marketing") })
		sc = read(a, true)
		require.Nil(t, sc.Category)
		require.Len(t, sc.Windows, 1)
		require.Empty(t, sc.Preferences.Default.Categories)
		require.Nil(t, many(a).Category)
	})
}

// acrossStores runs fn on each backend with two stores on one database,
// as two processes hold them.
func acrossStores(t *testing.T, fn func(t *testing.T, a, b *store.DB)) {
	for name, url := range testdb.Backends(t) {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			u := url(t)
			fn(t, testdb.OpenDB(t, u), testdb.OpenDB(t, u))
		})
	}
}

// marketingReads are the reads of user-1's sms under "marketing" in ws:
// the acceptance read's query, the acceptance read by Lookup or View, and
// the dispatch read in a write transaction or a read one.
func marketingReads(t *testing.T, ws string, write bool) (notify.SendContextQuery, func(*store.DB, bool) *notify.SendContext,
	func(*store.DB) *notify.SendPreferences) {
	sms := notify.ChannelSMS
	q := notify.SendContextQuery{RecipientExternalID: "user-1", CategoryKey: "marketing", Channels: []notify.Channel{sms}}
	read := func(db *store.DB, lookup bool) *notify.SendContext {
		t.Helper()
		return sendContextOf(t, db, lookup, ws, q)
	}
	many := func(db *store.DB) *notify.SendPreferences {
		t.Helper()
		return sendPreferencesOf(t, db, write, ws, notify.PreferenceQuery{RecipientExternalID: "user-1", CategoryKey: "marketing", Channel: sms})
	}
	return q, read, many
}

// sendContextOf is a send's acceptance read of ws on db, by Lookup or View.
func sendContextOf(t *testing.T, db *store.DB, lookup bool, ws string, q notify.SendContextQuery) *notify.SendContext {
	t.Helper()
	var sc *notify.SendContext
	require.NoError(t, reader(db, lookup)(context.Background(), func(tx notify.Tx) (err error) {
		sc, err = tx.FindSendContext(context.Background(), ws, q)
		return err
	}))
	return sc
}

// sendPreferencesOf is the dispatch read of one query's preferences, in a
// write transaction (as a claim runs it) or a read one.
func sendPreferencesOf(t *testing.T, db *store.DB, write bool, ws string, pq notify.PreferenceQuery) *notify.SendPreferences {
	t.Helper()
	var got []*notify.SendPreferences
	do := view
	if write {
		do = update
	}
	do(t, db, func(ctx context.Context, tx notify.Tx) (err error) {
		got, err = tx.FindSendPreferencesMany(ctx, ws, []notify.PreferenceQuery{pq})
		return err
	})
	return got[0]
}

// reader is db's Lookup (no transaction) or View.
func reader(db *store.DB, lookup bool) func(context.Context, func(notify.Tx) error) error {
	if lookup {
		return db.Lookup
	}
	return db.View
}

// WorkflowCacheAcrossStores: two stores on one database, as two processes
// hold them. A trigger's read of a workflow and its published version,
// kept in memory by the store that read it, follows what the other store
// publishes on its next read; the count of profiles is read every time;
// a publication rolled back leaves nothing behind in the memory of the
// store that made it.
func WorkflowCacheAcrossStores(t *testing.T) {
	acrossStores(t, func(t *testing.T, a, b *store.DB) {
		ws := Workspace(t, a)
		w := &notify.Workflow{ID: id(), WorkspaceID: ws, Key: "comment", Name: "Comment", CreatedAt: t0, UpdatedAt: t0}
		step := func(code string) []notify.WorkflowStep {
			return []notify.WorkflowStep{{Key: "a", Type: notify.StepSend, Channel: "sms", TemplateCode: code}}
		}
		version := func(n int, code string) *notify.WorkflowVersion {
			return &notify.WorkflowVersion{WorkflowID: w.ID, WorkspaceID: ws, Version: n, Steps: step(code), CreatedAt: t0}
		}
		update(t, b, func(ctx context.Context, tx notify.Tx) error {
			require.NoError(t, tx.CreateWorkflow(ctx, w))
			_, err := tx.PutRecipient(ctx, newRecipient(ws, "p-1", t0))
			return err
		})
		read := func(db *store.DB, lookup bool) (*notify.WorkflowVersion, int) {
			t.Helper()
			var v *notify.WorkflowVersion
			var n int
			require.NoError(t, reader(db, lookup)(context.Background(), func(tx notify.Tx) (err error) {
				_, v, n, err = tx.FindTriggerWorkflow(context.Background(), ws, "comment", []string{"p-1", "p-2"})
				return err
			}))
			return v, n
		}
		// a reads (and keeps) the workflow with nothing published.
		v, n := read(a, true)
		require.Nil(t, v)
		require.Equal(t, 1, n)

		// b adds a version and publishes it, and a second profile.
		update(t, b, func(ctx context.Context, tx notify.Tx) error {
			require.NoError(t, tx.CreateWorkflowVersion(ctx, version(1, "one")))
			require.NoError(t, tx.PublishWorkflowVersion(ctx, ws, w.ID, 1, t0))
			_, err := tx.PutRecipient(ctx, newRecipient(ws, "p-2", t0))
			return err
		})
		for _, lookup := range []bool{true, false} {
			v, n = read(a, lookup)
			require.Equal(t, 1, v.Version)
			require.Equal(t, "one", v.Steps[0].TemplateCode)
			require.Equal(t, 2, n)
		}
		// b publishes a second version; a's next read has it.
		update(t, b, func(ctx context.Context, tx notify.Tx) error {
			require.NoError(t, tx.CreateWorkflowVersion(ctx, version(2, "two")))
			return tx.PublishWorkflowVersion(ctx, ws, w.ID, 2, t0)
		})
		v, _ = read(a, true)
		require.Equal(t, 2, v.Version)
		require.Equal(t, "two", v.Steps[0].TemplateCode)
		// b publishes the first again.
		update(t, b, func(ctx context.Context, tx notify.Tx) error { return tx.PublishWorkflowVersion(ctx, ws, w.ID, 1, t0) })
		v, _ = read(a, true)
		require.Equal(t, 1, v.Version)

		// a publication read inside its own transaction and rolled back.
		undo := errors.New("undo")
		err := a.Update(context.Background(), func(tx notify.Tx) error {
			ctx := context.Background()
			require.NoError(t, tx.CreateWorkflowVersion(ctx, version(3, "three")))
			require.NoError(t, tx.PublishWorkflowVersion(ctx, ws, w.ID, 3, t0))
			_, v, _, err := tx.FindTriggerWorkflow(ctx, ws, "comment", nil)
			require.NoError(t, err)
			require.Equal(t, 3, v.Version, "the transaction reads its own change")
			return undo
		})
		require.ErrorIs(t, err, undo)
		v, _ = read(a, true)
		require.Equal(t, 1, v.Version, "the rolled-back publication is not kept")
		v, _ = read(b, true)
		require.Equal(t, 1, v.Version)

		// a keeps both profiles (the acceptance reads of sends by id): a
		// trigger then checks them and its workflow by the versions alone,
		// and still sees b's erasure of one and b's publication.
		ctx := context.Background()
		for _, ext := range []string{"p-1", "p-2"} {
			require.NoError(t, a.Lookup(ctx, func(tx notify.Tx) error {
				_, err := tx.FindSendContext(ctx, ws, notify.SendContextQuery{RecipientExternalID: ext})
				return err
			}))
		}
		v, n = read(a, true)
		require.Equal(t, 1, v.Version)
		require.Equal(t, 2, n)
		update(t, b, func(ctx context.Context, tx notify.Tx) error { return tx.DeleteRecipient(ctx, ws, "p-2") })
		_, n = read(a, true)
		require.Equal(t, 1, n, "the erased profile is no longer counted")
		require.NoError(t, a.Lookup(ctx, func(tx notify.Tx) error {
			_, err := tx.FindSendContext(ctx, ws, notify.SendContextQuery{RecipientExternalID: "p-1"})
			return err
		}))
		update(t, b, func(ctx context.Context, tx notify.Tx) error { return tx.PublishWorkflowVersion(ctx, ws, w.ID, 2, t0) })
		v, n = read(a, true)
		require.Equal(t, 2, v.Version, "b's publication is seen with p-1 kept")
		require.Equal(t, 1, n)
	})
}
