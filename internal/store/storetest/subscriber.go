package storetest

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/notifyd/notifyd/internal/notify"
	"github.com/notifyd/notifyd/internal/store"
)

func newSubscriber(ws, addr string, at time.Time) *notify.Subscriber {
	return &notify.Subscriber{ID: id(), WorkspaceID: ws, Channel: notify.ChannelEmail, Address: addr, Name: "",
		ConsentStatus: notify.ConsentPending, Attributes: map[string]string{}, UnsubscribeToken: "tok-" + id(),
		CreatedAt: at, UpdatedAt: at}
}

// subscriberSet is two subscribers of ws1 and one of ws2 at a's address.
type subscriberSet struct {
	ws1, ws2 string
	a, b     *notify.Subscriber // a subscribed with a name and attributes; b pending, newer
	other    *notify.Subscriber
}

func subscriberFixture(t *testing.T, db *store.DB) *subscriberSet {
	t.Helper()
	ws1, ws2 := Workspace(t, db), Workspace(t, db)
	cons := t0.Add(time.Second)
	a := newSubscriber(ws1, "ann@example.com", t0)
	a.Name, a.ConsentStatus, a.ConsentSource, a.ConsentedAt = "Ann Lee", notify.ConsentSubscribed, "form", &cons
	a.Attributes = map[string]string{"plan": "pro", "이름": "값"}
	b := newSubscriber(ws1, "bob_x@example.com", t0.Add(time.Millisecond))
	b.Name = "Bob 100%"
	other := newSubscriber(ws2, "ann@example.com", t0) // same address, other workspace
	update(t, db, func(ctx context.Context, tx notify.Tx) error {
		require.NoError(t, tx.CreateSubscriber(ctx, a))
		require.NoError(t, tx.CreateSubscriber(ctx, b))
		return tx.CreateSubscriber(ctx, other)
	})
	return &subscriberSet{ws1: ws1, ws2: ws2, a: a, b: b, other: other}
}

func testSubscribers(t *testing.T, open Opener) {
	runVerbs(t, open, []verb{
		{"CreateSubscriber", testCreateSubscriber, perWorkspace},
		{"FindSubscriber", testFindSubscriber, perWorkspace},
		{"FindSubscriberByToken", testFindSubscriberByToken, perWorkspace},
		{"FindSubscribersByAddress", testFindSubscribersByAddress, perWorkspace},
		{"FindSubscribers", testFindSubscribers, perWorkspace},
		{"UpdateSubscriber", testUpdateSubscriber, perWorkspace},
		{"DeleteSubscriber", testDeleteSubscriber, perWorkspace},
	})
}

// testCreateSubscriber: a duplicate answers ErrConflict and leaves the
// transaction usable.
func testCreateSubscriber(t *testing.T, db *store.DB) {
	s := subscriberFixture(t, db)
	update(t, db, func(ctx context.Context, tx notify.Tx) error {
		require.ErrorIs(t, tx.CreateSubscriber(ctx, newSubscriber(s.ws1, "ann@example.com", t0)), notify.ErrConflict)
		_, err := tx.FindSubscriber(ctx, s.ws1, s.a.ID)
		return err
	})
}

func testFindSubscriber(t *testing.T, db *store.DB) {
	s := subscriberFixture(t, db)
	view(t, db, func(ctx context.Context, tx notify.Tx) error {
		got, err := tx.FindSubscriber(ctx, s.ws1, s.a.ID)
		require.NoError(t, err)
		require.Equal(t, s.a, got)
		_, err = tx.FindSubscriber(ctx, s.ws2, s.a.ID)
		require.ErrorIs(t, err, notify.ErrNotFound, "other workspace")
		return nil
	})
}

func testFindSubscriberByToken(t *testing.T, db *store.DB) {
	s := subscriberFixture(t, db)
	view(t, db, func(ctx context.Context, tx notify.Tx) error {
		got, err := tx.FindSubscriberByToken(ctx, s.other.UnsubscribeToken)
		require.NoError(t, err)
		require.Equal(t, s.ws2, got.WorkspaceID)
		_, err = tx.FindSubscriberByToken(ctx, "nope")
		require.ErrorIs(t, err, notify.ErrNotFound)
		return nil
	})
}

func testFindSubscribersByAddress(t *testing.T, db *store.DB) {
	s := subscriberFixture(t, db)
	view(t, db, func(ctx context.Context, tx notify.Tx) error {
		m, err := tx.FindSubscribersByAddress(ctx, s.ws1, notify.ChannelEmail, []string{"ann@example.com", "zed@example.com"})
		require.NoError(t, err)
		require.Len(t, m, 1)
		require.Equal(t, s.a.ID, m["ann@example.com"].ID)
		return nil
	})
}

// testFindSubscribers: pages newest first, filters by consent and
// channel, and searches name and address with LIKE wildcards taken
// literally.
func testFindSubscribers(t *testing.T, db *store.DB) {
	s := subscriberFixture(t, db)
	view(t, db, func(ctx context.Context, tx notify.Tx) error {
		page := func(f notify.SubscriberFilter) ([]string, int) {
			if f.Limit == 0 {
				f.Limit = 50
			}
			subs, total, err := tx.FindSubscribers(ctx, s.ws1, f)
			require.NoError(t, err)
			var addrs []string
			for _, s := range subs {
				addrs = append(addrs, s.Address)
			}
			return addrs, total
		}
		addrs, total := page(notify.SubscriberFilter{})
		require.Equal(t, []string{"bob_x@example.com", "ann@example.com"}, addrs, "newest first")
		require.Equal(t, 2, total)
		addrs, total = page(notify.SubscriberFilter{Limit: 1, Offset: 1})
		require.Equal(t, []string{"ann@example.com"}, addrs)
		require.Equal(t, 2, total)
		addrs, _ = page(notify.SubscriberFilter{ConsentStatus: notify.ConsentPending})
		require.Equal(t, []string{"bob_x@example.com"}, addrs)
		addrs, _ = page(notify.SubscriberFilter{Channel: notify.ChannelEmail, Search: "ANN LEE"})
		require.Equal(t, []string{"ann@example.com"}, addrs, "search matches the name, case-insensitively")
		addrs, _ = page(notify.SubscriberFilter{Search: "b_x@"})
		require.Equal(t, []string{"bob_x@example.com"}, addrs, "search matches part of the address")
		addrs, total = page(notify.SubscriberFilter{Search: "_"})
		require.Equal(t, []string{"bob_x@example.com"}, addrs, "LIKE wildcards are literal")
		require.Equal(t, 1, total)
		addrs, _ = page(notify.SubscriberFilter{Search: "100%"})
		require.Equal(t, []string{"bob_x@example.com"}, addrs)
		addrs, total = page(notify.SubscriberFilter{Search: "%"})
		require.Equal(t, []string{"bob_x@example.com"}, addrs)
		require.Equal(t, 1, total)
		return nil
	})
}

func testUpdateSubscriber(t *testing.T, db *store.DB) {
	s := subscriberFixture(t, db)
	a := s.a
	unsub := t0.Add(time.Hour)
	a.ConsentStatus, a.UnsubscribedAt, a.Name, a.Attributes, a.UpdatedAt = notify.ConsentUnsubscribed, &unsub, "Ann", map[string]string{}, unsub
	update(t, db, func(ctx context.Context, tx notify.Tx) error {
		require.NoError(t, tx.UpdateSubscriber(ctx, a))
		wrong := *a
		wrong.WorkspaceID = s.ws2
		require.ErrorIs(t, tx.UpdateSubscriber(ctx, &wrong), notify.ErrNotFound)
		return nil
	})
	view(t, db, func(ctx context.Context, tx notify.Tx) error {
		got, err := tx.FindSubscriber(ctx, s.ws1, a.ID)
		require.NoError(t, err)
		require.Equal(t, a, got)
		got, err = tx.FindSubscriber(ctx, s.ws2, s.other.ID)
		require.NoError(t, err)
		require.Equal(t, s.other, got, "the other workspace is untouched")
		return nil
	})
}

func testDeleteSubscriber(t *testing.T, db *store.DB) {
	s := subscriberFixture(t, db)
	update(t, db, func(ctx context.Context, tx notify.Tx) error {
		require.ErrorIs(t, tx.DeleteSubscriber(ctx, s.ws2, s.b.ID), notify.ErrNotFound)
		return tx.DeleteSubscriber(ctx, s.ws1, s.b.ID)
	})
	view(t, db, func(ctx context.Context, tx notify.Tx) error {
		_, err := tx.FindSubscriber(ctx, s.ws1, s.b.ID)
		require.ErrorIs(t, err, notify.ErrNotFound)
		return nil
	})
}

func testSubscriberUpsert(t *testing.T, db *store.DB) {
	ws := Workspace(t, db)
	first := newSubscriber(ws, "keep@example.com", t0)
	update(t, db, func(ctx context.Context, tx notify.Tx) error { return tx.CreateSubscriber(ctx, first) })

	// 1,200 rows cross the statement chunk size; one of them exists.
	at := t0.Add(time.Minute)
	var subs []*notify.Subscriber
	for i := range 1200 {
		subs = append(subs, newSubscriber(ws, fmt.Sprintf("u%04d@example.com", i), at))
	}
	changed := newSubscriber(ws, "keep@example.com", at) // fresh id and token: both must be ignored
	changed.Name, changed.ConsentStatus, changed.ConsentSource = "Kept", notify.ConsentSubscribed, "import"
	changed.Attributes, changed.ConsentedAt = map[string]string{"k": "v"}, &at
	subs = append(subs, changed)
	update(t, db, func(ctx context.Context, tx notify.Tx) error { return tx.UpsertSubscribers(ctx, subs) })

	view(t, db, func(ctx context.Context, tx notify.Tx) error {
		_, total, err := tx.FindSubscribers(ctx, ws, notify.SubscriberFilter{Limit: 1})
		require.NoError(t, err)
		require.Equal(t, 1201, total)
		got, err := tx.FindSubscriber(ctx, ws, first.ID)
		require.NoError(t, err)
		want := *first
		want.Name, want.ConsentStatus, want.ConsentSource, want.Attributes = "Kept", notify.ConsentSubscribed, "import", map[string]string{"k": "v"}
		want.ConsentedAt, want.UpdatedAt = &at, at
		require.Equal(t, &want, got, "id, token and createdAt stay")
		addrs := make([]string, 0, 1200)
		for i := range 1200 {
			addrs = append(addrs, fmt.Sprintf("u%04d@example.com", i))
		}
		m, err := tx.FindSubscribersByAddress(ctx, ws, notify.ChannelEmail, addrs)
		require.NoError(t, err)
		require.Len(t, m, 1200)
		return nil
	})
}

func testLiftUnsubscribeSuppressions(t *testing.T, db *store.DB) {
	ws1, ws2 := Workspace(t, db), Workspace(t, db)
	// 600 unsubscribe entries cross the statement chunk size.
	var addrs []string
	update(t, db, func(ctx context.Context, tx notify.Tx) error {
		for i := range 600 {
			a := fmt.Sprintf("u%04d@example.com", i)
			addrs = append(addrs, a)
			require.NoError(t, tx.PutSuppression(ctx, ws1, a, notify.SuppressUnsubscribe, t0))
		}
		require.NoError(t, tx.PutSuppression(ctx, ws1, "bounce@example.com", notify.SuppressHardBounce, t0))
		require.NoError(t, tx.PutSuppression(ctx, ws1, "manual@example.com", notify.SuppressManual, t0))
		return tx.PutSuppression(ctx, ws2, "u0000@example.com", notify.SuppressUnsubscribe, t0)
	})
	update(t, db, func(ctx context.Context, tx notify.Tx) error {
		require.NoError(t, tx.LiftUnsubscribeSuppressions(ctx, ws1, nil))
		return tx.LiftUnsubscribeSuppressions(ctx, ws1, append(addrs, "bounce@example.com", "manual@example.com", "none@example.com"))
	})
	view(t, db, func(ctx context.Context, tx notify.Tx) error {
		left, err := tx.FindSuppressions(ctx, ws1, notify.SuppressionFilter{Limit: 1000})
		require.NoError(t, err)
		reasons := map[string]string{}
		for _, s := range left {
			reasons[s.Address] = s.Reason
		}
		require.Equal(t, map[string]string{"bounce@example.com": notify.SuppressHardBounce, "manual@example.com": notify.SuppressManual}, reasons)
		other, err := tx.FindSuppression(ctx, ws2, "u0000@example.com")
		require.NoError(t, err)
		require.Equal(t, notify.SuppressUnsubscribe, other.Reason, "another workspace keeps its entry")
		return nil
	})
}

func testLockSubscriber(t *testing.T, db *store.DB) {
	ws1, ws2 := Workspace(t, db), Workspace(t, db)
	a := newSubscriber(ws1, "lock@example.com", t0)
	update(t, db, func(ctx context.Context, tx notify.Tx) error { return tx.CreateSubscriber(ctx, a) })
	update(t, db, func(ctx context.Context, tx notify.Tx) error {
		got, err := tx.LockSubscriber(ctx, ws1, a.ID)
		require.NoError(t, err)
		require.Equal(t, a, got, "the row as stored, unchanged")
		_, err = tx.LockSubscriber(ctx, ws2, a.ID)
		require.ErrorIs(t, err, notify.ErrNotFound, "other workspace")
		return nil
	})
}
