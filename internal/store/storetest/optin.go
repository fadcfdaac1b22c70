package storetest

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/notifyd/notifyd/internal/notify"
	"github.com/notifyd/notifyd/internal/store"
)

// testOptIn pins the double opt-in verbs: settings default to off until
// stored and stay per workspace; confirmation mails are upserted with a
// growing count and disappear with their subscriber.
func testOptIn(t *testing.T, db *store.DB) {
	ws1, ws2 := Workspace(t, db), Workspace(t, db)
	a, b := newSubscriber(ws1, "a@example.com", t0), newSubscriber(ws1, "b@example.com", t0)
	update(t, db, func(ctx context.Context, tx notify.Tx) error {
		s, err := tx.FindNewsletterSettings(ctx, ws1)
		require.NoError(t, err)
		require.Equal(t, &notify.NewsletterSettings{WorkspaceID: ws1}, s, "defaults when none is stored")
		at := t0
		require.NoError(t, tx.PutNewsletterSettings(ctx, &notify.NewsletterSettings{WorkspaceID: ws1, DoubleOptIn: true, UpdatedAt: &at}))
		s, err = tx.FindNewsletterSettings(ctx, ws1)
		require.NoError(t, err)
		require.Equal(t, &notify.NewsletterSettings{WorkspaceID: ws1, DoubleOptIn: true, UpdatedAt: &at}, s)
		later := t0.Add(time.Minute)
		require.NoError(t, tx.PutNewsletterSettings(ctx, &notify.NewsletterSettings{WorkspaceID: ws1, DoubleOptIn: false, UpdatedAt: &later}))
		s, err = tx.FindNewsletterSettings(ctx, ws1)
		require.NoError(t, err)
		require.False(t, s.DoubleOptIn)
		require.Equal(t, later, *s.UpdatedAt)
		s, err = tx.FindNewsletterSettings(ctx, ws2)
		require.NoError(t, err)
		require.Equal(t, &notify.NewsletterSettings{WorkspaceID: ws2}, s, "another workspace keeps its own")

		require.NoError(t, tx.CreateSubscriber(ctx, a))
		require.NoError(t, tx.CreateSubscriber(ctx, b))
		_, err = tx.FindConfirmationSent(ctx, ws1, a.ID)
		require.ErrorIs(t, err, notify.ErrNotFound)
		require.NoError(t, tx.PutConfirmationsSent(ctx, ws1, []notify.ConfirmationSent{
			{SubscriberID: a.ID, RequestID: "r1", SentAt: t0}, {SubscriberID: b.ID, RequestID: "r2", SentAt: t0}}))
		require.NoError(t, tx.PutConfirmationsSent(ctx, ws1, []notify.ConfirmationSent{{SubscriberID: a.ID, RequestID: "r3", SentAt: later}}))
		c, err := tx.FindConfirmationSent(ctx, ws1, a.ID)
		require.NoError(t, err)
		require.Equal(t, &notify.ConfirmationSent{WorkspaceID: ws1, SubscriberID: a.ID, RequestID: "r3", SentAt: later, Sends: 2}, c)
		c, err = tx.FindConfirmationSent(ctx, ws1, b.ID)
		require.NoError(t, err)
		require.Equal(t, 1, c.Sends)
		_, err = tx.FindConfirmationSent(ctx, ws2, a.ID)
		require.ErrorIs(t, err, notify.ErrNotFound, "scoped by workspace")
		require.NoError(t, tx.DeleteSubscriber(ctx, ws1, a.ID))
		_, err = tx.FindConfirmationSent(ctx, ws1, a.ID)
		require.ErrorIs(t, err, notify.ErrNotFound, "gone with its subscriber")
		return nil
	})
}
