package storetest

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/notifyd/notifyd/internal/notify"
	"github.com/notifyd/notifyd/internal/store"
)

// The in-app inbox (issue 33): messages, states, counts and the event
// log, each verb scoped by workspace and profile.

func testInbox(t *testing.T, open Opener) {
	runVerbs(t, open, []verb{
		{"CreateInboxMessages", testCreateInboxMessages, perWorkspace},
		{"FindInboxMessages", testFindInboxMessages, perWorkspace},
		{"CountInbox", testChangeInbox, perWorkspace},
		{"ChangeInbox", testChangeInbox, perWorkspace},
		{"FindInboxEvents", testFindInboxEvents, perWorkspace},
		{"FindInboxMessagesOfRequest", testCreateInboxMessages, perWorkspace},
		{"ListenInbox", testListenInbox, perWorkspace},
		{"InboxLogOrder", testInboxLogOrder, perWorkspace},
		{"FindInboxSettings", testInboxSettings, perWorkspace},
		{"PutInboxSettings", testInboxSettings, perWorkspace},
		{"HoldRecipientRows", testHoldRecipientRows, perWorkspace},
		{"FollowInbox", testFollowInbox, perWorkspace},
	})
}

// testFollowInbox reads the events after a number with their messages,
// and the counts, of one profile of one workspace.
func testFollowInbox(t *testing.T, db *store.DB) {
	f := newInboxFixture(t, db, 3)
	update(t, db, func(ctx context.Context, tx notify.Tx) error {
		_, err := tx.ChangeInbox(ctx, f.ws1, f.p.ID, notify.InboxChange{Op: notify.InboxRead, MessageID: f.ms[0].ID, At: t0})
		return err
	})
	view(t, db, func(ctx context.Context, tx notify.Tx) error {
		es, c, err := tx.FollowInbox(ctx, f.ws1, f.p.ID, 1, 2)
		require.NoError(t, err)
		require.Len(t, es, 2, "events 2 and 3 of 4, at most 2")
		require.Equal(t, []int64{2, 3}, []int64{es[0].Seq, es[1].Seq})
		require.Equal(t, notify.InboxEventCreated, es[0].Type)
		require.Equal(t, f.ms[1].ID, es[0].Message.ID)
		require.Equal(t, notify.InboxCounts{Unread: 2, Unseen: 2}, c)
		es, _, err = tx.FollowInbox(ctx, f.ws1, f.p.ID, 3, 10)
		require.NoError(t, err)
		require.Len(t, es, 1)
		require.Equal(t, notify.InboxEventRead, es[0].Type)
		es, c, err = tx.FollowInbox(ctx, f.ws2, f.p.ID, 0, 10)
		require.NoError(t, err)
		require.Empty(t, es, "another workspace")
		require.Zero(t, c)
		return nil
	})
}

// testHoldRecipientRows answers the profile rows that exist, each with
// its workspace; an erased one is not among them.
func testHoldRecipientRows(t *testing.T, db *store.DB) {
	f := newInboxFixture(t, db, 0)
	gone := newRecipient(f.ws1, "user-gone", t0)
	update(t, db, func(ctx context.Context, tx notify.Tx) error {
		if _, err := tx.PutRecipient(ctx, gone); err != nil {
			return err
		}
		return tx.DeleteRecipient(ctx, f.ws1, "user-gone")
	})
	update(t, db, func(ctx context.Context, tx notify.Tx) error {
		held, err := tx.HoldRecipientRows(ctx, []string{f.p.ID, f.other.ID, gone.ID, "no-such-row"})
		require.NoError(t, err)
		require.Equal(t, map[string]string{f.p.ID: f.ws1, f.other.ID: f.ws2}, held)
		held, err = tx.HoldRecipientRows(ctx, nil)
		require.NoError(t, err)
		require.Empty(t, held)
		return nil
	})
}

func testInboxSettings(t *testing.T, db *store.DB) {
	ws1, ws2 := Workspace(t, db), Workspace(t, db)
	view(t, db, func(ctx context.Context, tx notify.Tx) error {
		_, err := tx.FindInboxSettings(ctx, ws1)
		require.ErrorIs(t, err, notify.ErrNotFound)
		return nil
	})
	s := &notify.InboxSettings{WorkspaceID: ws1, AllowedOrigins: []string{"https://a.example.com"}, UpdatedAt: t0}
	update(t, db, func(ctx context.Context, tx notify.Tx) error { return tx.PutInboxSettings(ctx, s) })
	view(t, db, func(ctx context.Context, tx notify.Tx) error {
		got, err := tx.FindInboxSettings(ctx, ws1)
		require.NoError(t, err)
		require.Equal(t, s, got)
		_, err = tx.FindInboxSettings(ctx, ws2)
		require.ErrorIs(t, err, notify.ErrNotFound, "another workspace")
		return nil
	})
	s.SecretSealed, s.AllowedOrigins, s.UpdatedAt = "v1.sealed", nil, t0.Add(time.Second)
	update(t, db, func(ctx context.Context, tx notify.Tx) error { return tx.PutInboxSettings(ctx, s) })
	view(t, db, func(ctx context.Context, tx notify.Tx) error {
		got, err := tx.FindInboxSettings(ctx, ws1)
		require.NoError(t, err)
		require.Equal(t, "v1.sealed", got.SecretSealed)
		require.Equal(t, []string{}, got.AllowedOrigins)
		return nil
	})
}

// inboxFixture is a profile of ws1 with n messages a millisecond apart
// (the last newest), and a profile of ws2.
type inboxFixture struct {
	ws1, ws2 string
	p, other *notify.Recipient
	ms       []*notify.InboxMessage
}

func newInboxFixture(t *testing.T, db *store.DB, n int) *inboxFixture {
	t.Helper()
	f := &inboxFixture{ws1: Workspace(t, db), ws2: Workspace(t, db)}
	f.p, f.other = newRecipient(f.ws1, "user-1", t0), newRecipient(f.ws2, "user-1", t0)
	for i := 0; i < n; i++ {
		cat := "news"
		if i%2 == 1 {
			cat = "billing"
		}
		f.ms = append(f.ms, &notify.InboxMessage{ID: id(), WorkspaceID: f.ws1, RecipientID: f.p.ID, RequestID: id(), Category: cat,
			Title: "t", Body: "b", ActionURL: "/x", Data: map[string]any{"n": float64(i)}, CreatedAt: t0.Add(time.Duration(i) * time.Millisecond)})
	}
	update(t, db, func(ctx context.Context, tx notify.Tx) error {
		for _, r := range []*notify.Recipient{f.p, f.other} {
			if _, err := tx.PutRecipient(ctx, r); err != nil {
				return err
			}
		}
		if n == 0 {
			return nil
		}
		return tx.CreateInboxMessages(ctx, f.ms)
	})
	return f
}

func testCreateInboxMessages(t *testing.T, db *store.DB) {
	f := newInboxFixture(t, db, 2)
	// A delivery recorded again stores nothing and appends nothing.
	again := *f.ms[0]
	again.ID = id()
	update(t, db, func(ctx context.Context, tx notify.Tx) error {
		return tx.CreateInboxMessages(ctx, []*notify.InboxMessage{&again})
	})
	view(t, db, func(ctx context.Context, tx notify.Tx) error {
		got, err := tx.FindInboxMessagesOfRequest(ctx, f.ws1, f.ms[0].RequestID)
		require.NoError(t, err)
		require.Len(t, got, 1)
		require.Equal(t, f.ms[0].ID, got[0].ID)
		require.Equal(t, "/x", got[0].ActionURL)
		require.Equal(t, map[string]any{"n": float64(0)}, got[0].Data)
		require.Nil(t, got[0].ReadAt)
		got, err = tx.FindInboxMessagesOfRequest(ctx, f.ws2, f.ms[0].RequestID)
		require.NoError(t, err)
		require.Empty(t, got, "another workspace's request")
		es, _, err := tx.FindInboxEvents(ctx, f.ws1, f.p.ID, 0, 10)
		require.NoError(t, err)
		require.Len(t, es, 2)
		return nil
	})
}

func testFindInboxMessages(t *testing.T, db *store.DB) {
	f := newInboxFixture(t, db, 5)
	view(t, db, func(ctx context.Context, tx notify.Tx) error {
		got, err := tx.FindInboxMessages(ctx, f.ws1, f.p.ID, notify.InboxFilter{Limit: 3})
		require.NoError(t, err)
		require.Equal(t, []string{f.ms[4].ID, f.ms[3].ID, f.ms[2].ID}, inboxIDs(got))
		got, err = tx.FindInboxMessages(ctx, f.ws1, f.p.ID, notify.InboxFilter{Limit: 3,
			Before: &notify.Cursor{At: f.ms[2].CreatedAt, ID: f.ms[2].ID}})
		require.NoError(t, err)
		require.Equal(t, []string{f.ms[1].ID, f.ms[0].ID}, inboxIDs(got))
		got, err = tx.FindInboxMessages(ctx, f.ws1, f.p.ID, notify.InboxFilter{Limit: 10, Category: "billing"})
		require.NoError(t, err)
		require.Equal(t, []string{f.ms[3].ID, f.ms[1].ID}, inboxIDs(got))
		got, err = tx.FindInboxMessages(ctx, f.ws2, f.p.ID, notify.InboxFilter{Limit: 10})
		require.NoError(t, err)
		require.Empty(t, got, "the profile row read with another workspace")
		return nil
	})
	update(t, db, func(ctx context.Context, tx notify.Tx) error {
		at := t0.Add(time.Hour)
		for _, c := range []notify.InboxChange{{Op: notify.InboxRead, MessageID: f.ms[0].ID, At: at},
			{Op: notify.InboxSeen, MessageID: f.ms[1].ID, At: at}, {Op: notify.InboxArchive, MessageID: f.ms[2].ID, At: at}} {
			if _, err := tx.ChangeInbox(ctx, f.ws1, f.p.ID, c); err != nil {
				return err
			}
		}
		return nil
	})
	view(t, db, func(ctx context.Context, tx notify.Tx) error {
		for _, c := range []struct {
			f    notify.InboxFilter
			want []string
		}{
			{notify.InboxFilter{Unread: true}, []string{f.ms[4].ID, f.ms[3].ID, f.ms[1].ID}},
			{notify.InboxFilter{Unseen: true}, []string{f.ms[4].ID, f.ms[3].ID}},
			{notify.InboxFilter{Archived: true}, []string{f.ms[2].ID}},
		} {
			c.f.Limit = 10
			got, err := tx.FindInboxMessages(ctx, f.ws1, f.p.ID, c.f)
			require.NoError(t, err)
			require.Equal(t, c.want, inboxIDs(got), "%+v", c.f)
		}
		return nil
	})
}

func testChangeInbox(t *testing.T, db *store.DB) {
	f := newInboxFixture(t, db, 3)
	ctx := context.Background()
	counts := func() notify.InboxCounts {
		var c notify.InboxCounts
		view(t, db, func(ctx context.Context, tx notify.Tx) (err error) {
			c, err = tx.CountInbox(ctx, f.ws1, f.p.ID)
			return err
		})
		return c
	}
	change := func(ws string, c notify.InboxChange) (n int, err error) {
		c.At = t0.Add(time.Hour)
		err = db.Update(ctx, func(tx notify.Tx) error {
			ms, err := tx.ChangeInbox(ctx, ws, f.p.ID, c)
			n = len(ms)
			if c.Op != notify.InboxDelete {
				for _, m := range ms {
					require.Equal(t, f.p.ID, m.RecipientID, "the changed messages as they are now")
				}
			}
			return err
		})
		return n, err
	}
	require.Equal(t, notify.InboxCounts{Unread: 3, Unseen: 3}, counts())
	n, err := change(f.ws1, notify.InboxChange{Op: notify.InboxSeen, MessageID: f.ms[0].ID})
	require.NoError(t, err)
	require.Equal(t, 1, n)
	require.Equal(t, notify.InboxCounts{Unread: 3, Unseen: 2}, counts())
	n, err = change(f.ws1, notify.InboxChange{Op: notify.InboxSeen, MessageID: f.ms[0].ID})
	require.NoError(t, err)
	require.Zero(t, n, "seen again changes nothing")
	// Reading sees; archiving leaves the counts.
	_, err = change(f.ws1, notify.InboxChange{Op: notify.InboxRead, MessageID: f.ms[1].ID})
	require.NoError(t, err)
	require.Equal(t, notify.InboxCounts{Unread: 2, Unseen: 1}, counts())
	_, err = change(f.ws1, notify.InboxChange{Op: notify.InboxArchive, MessageID: f.ms[2].ID})
	require.NoError(t, err)
	require.Equal(t, notify.InboxCounts{Unread: 1, Unseen: 0}, counts())
	n, err = change(f.ws1, notify.InboxChange{Op: notify.InboxRead})
	require.NoError(t, err)
	require.Equal(t, 1, n, "read all: the one unread message not archived")
	require.Equal(t, notify.InboxCounts{}, counts())
	_, err = change(f.ws1, notify.InboxChange{Op: notify.InboxUnarchive, MessageID: f.ms[2].ID})
	require.NoError(t, err)
	require.Equal(t, notify.InboxCounts{Unread: 1, Unseen: 1}, counts())
	_, err = change(f.ws1, notify.InboxChange{Op: notify.InboxDelete, MessageID: f.ms[2].ID})
	require.NoError(t, err)
	require.Equal(t, notify.InboxCounts{}, counts())
	_, err = change(f.ws1, notify.InboxChange{Op: notify.InboxRead, MessageID: f.ms[2].ID})
	require.ErrorIs(t, err, notify.ErrNotFound, "deleted")
	_, err = change(f.ws2, notify.InboxChange{Op: notify.InboxRead, MessageID: f.ms[0].ID})
	require.ErrorIs(t, err, notify.ErrNotFound, "another workspace")
	var es []*notify.InboxEvent
	view(t, db, func(ctx context.Context, tx notify.Tx) (err error) {
		es, _, err = tx.FindInboxEvents(ctx, f.ws1, f.p.ID, 3, 100)
		return err
	})
	var types []string
	for _, e := range es {
		types = append(types, e.Type)
	}
	require.Equal(t, []string{notify.InboxEventSeen, notify.InboxEventRead, notify.InboxEventArchived, notify.InboxEventAllRead,
		notify.InboxEventUnarchived, notify.InboxEventDeleted}, types)
}

func testFindInboxEvents(t *testing.T, db *store.DB) {
	f := newInboxFixture(t, db, 3)
	update(t, db, func(ctx context.Context, tx notify.Tx) error {
		_, err := tx.ChangeInbox(ctx, f.ws1, f.p.ID, notify.InboxChange{Op: notify.InboxDelete, MessageID: f.ms[0].ID, At: t0})
		return err
	})
	view(t, db, func(ctx context.Context, tx notify.Tx) error {
		es, lg, err := tx.FindInboxEvents(ctx, f.ws1, f.p.ID, 0, 100)
		require.NoError(t, err)
		require.Equal(t, notify.InboxLog{Oldest: 1, Newest: 4}, lg)
		require.Len(t, es, 4)
		for i, e := range es {
			require.Equal(t, int64(i+1), e.Seq)
		}
		require.Nil(t, es[0].Message, "the message was deleted since")
		require.Equal(t, f.ms[1].ID, es[1].Message.ID)
		require.Equal(t, notify.InboxEventDeleted, es[3].Type)
		es, _, err = tx.FindInboxEvents(ctx, f.ws1, f.p.ID, 2, 1)
		require.NoError(t, err)
		require.Len(t, es, 1)
		require.Equal(t, int64(3), es[0].Seq)
		_, lg, err = tx.FindInboxEvents(ctx, f.ws1, f.p.ID, 0, 0)
		require.NoError(t, err)
		require.Equal(t, notify.InboxLog{Oldest: 1, Newest: 4}, lg, "bounds alone")
		es, lg, err = tx.FindInboxEvents(ctx, f.ws2, f.p.ID, 0, 100)
		require.NoError(t, err)
		require.Empty(t, es, "another workspace")
		require.Zero(t, lg)
		return nil
	})
}

// testListenInbox: a commit that appends to a log wakes its profile's
// listeners; a rolled-back one does not.
func testListenInbox(t *testing.T, db *store.DB) {
	f := newInboxFixture(t, db, 0)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var mu sync.Mutex
	woken := map[string]int{}
	go func() {
		_ = db.ListenInbox(ctx, func(id string) {
			mu.Lock()
			woken[id]++
			mu.Unlock()
		})
	}()
	seen := func() int {
		mu.Lock()
		defer mu.Unlock()
		return woken[f.p.ID]
	}
	// The listener is up once a first commit reaches it.
	m := &notify.InboxMessage{WorkspaceID: f.ws1, RecipientID: f.p.ID, CreatedAt: t0}
	require.Eventually(t, func() bool {
		m.ID, m.RequestID = id(), id()
		update(t, db, func(ctx context.Context, tx notify.Tx) error {
			return tx.CreateInboxMessages(ctx, []*notify.InboxMessage{m})
		})
		return seen() > 0
	}, 10*time.Second, 50*time.Millisecond)
	time.Sleep(200 * time.Millisecond) // the wake-ups of the last tries still on their way
	before := seen()
	err := db.Update(ctx, func(tx notify.Tx) error {
		m.ID, m.RequestID = id(), id()
		require.NoError(t, tx.CreateInboxMessages(ctx, []*notify.InboxMessage{m}))
		return context.Canceled // rolled back
	})
	require.ErrorIs(t, err, context.Canceled)
	m.ID, m.RequestID = id(), id()
	update(t, db, func(ctx context.Context, tx notify.Tx) error {
		return tx.CreateInboxMessages(ctx, []*notify.InboxMessage{m})
	})
	require.Eventually(t, func() bool { return seen() > before }, 5*time.Second, 10*time.Millisecond)
	time.Sleep(100 * time.Millisecond)
	require.Equal(t, before+1, seen(), "the rolled-back append woke nobody")
}

// testInboxLogOrder: concurrent appends to one log get every number once,
// in commit order.
func testInboxLogOrder(t *testing.T, db *store.DB) {
	f := newInboxFixture(t, db, 0)
	var wg sync.WaitGroup
	for i := 0; i < 8; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := 0; j < 5; j++ {
				m := &notify.InboxMessage{ID: id(), WorkspaceID: f.ws1, RecipientID: f.p.ID, RequestID: id(), CreatedAt: t0}
				update(t, db, func(ctx context.Context, tx notify.Tx) error {
					return tx.CreateInboxMessages(ctx, []*notify.InboxMessage{m})
				})
			}
		}()
	}
	wg.Wait()
	view(t, db, func(ctx context.Context, tx notify.Tx) error {
		es, _, err := tx.FindInboxEvents(ctx, f.ws1, f.p.ID, 0, 100)
		require.NoError(t, err)
		require.Len(t, es, 40)
		for i, e := range es {
			require.Equal(t, int64(i+1), e.Seq)
		}
		return nil
	})
}

func inboxIDs(ms []*notify.InboxMessage) []string {
	out := make([]string, len(ms))
	for i, m := range ms {
		out[i] = m.ID
	}
	return out
}
