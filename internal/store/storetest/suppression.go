package storetest

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/notifyd/notifyd/internal/notify"
	"github.com/notifyd/notifyd/internal/store"
)

func testSuppressions(t *testing.T, db *store.DB) {
	ws1, ws2 := Workspace(t, db), Workspace(t, db)
	update(t, db, func(ctx context.Context, tx notify.Tx) error {
		require.NoError(t, tx.PutSuppression(ctx, ws1, "a@example.com", notify.SuppressManual, t0))
		require.NoError(t, tx.PutSuppression(ctx, ws1, "b@example.com", notify.SuppressHardBounce, t0))
		require.NoError(t, tx.PutSuppression(ctx, ws1, "c@example.com", notify.SuppressComplaint, t0.Add(time.Second)))
		require.NoError(t, tx.PutSuppression(ctx, ws2, "a@example.com", notify.SuppressUnsubscribe, t0))
		// Upsert: the reason changes, createdAt stays.
		return tx.PutSuppression(ctx, ws1, "a@example.com", notify.SuppressUnsubscribe, t0.Add(time.Hour))
	})
	view(t, db, func(ctx context.Context, tx notify.Tx) error {
		all, err := tx.FindSuppressions(ctx, ws1, notify.SuppressionFilter{Limit: 10})
		require.NoError(t, err)
		require.Len(t, all, 3)
		require.Equal(t, []string{"c@example.com", "b@example.com", "a@example.com"},
			[]string{all[0].Address, all[1].Address, all[2].Address}, "newest first, address descending on ties")
		require.Equal(t, notify.SuppressUnsubscribe, all[2].Reason)
		require.Equal(t, t0, all[2].CreatedAt)

		page, err := tx.FindSuppressions(ctx, ws1, notify.SuppressionFilter{Limit: 1, Before: &notify.Cursor{At: all[1].CreatedAt, ID: all[1].Address}})
		require.NoError(t, err)
		require.Len(t, page, 1)
		require.Equal(t, "a@example.com", page[0].Address)

		one, err := tx.FindSuppressions(ctx, ws1, notify.SuppressionFilter{Address: "b@example.com", Limit: 10})
		require.NoError(t, err)
		require.Len(t, one, 1)
		other, err := tx.FindSuppressions(ctx, ws2, notify.SuppressionFilter{Limit: 10})
		require.NoError(t, err)
		require.Len(t, other, 1, "workspace isolation")

		s, err := tx.FindSuppression(ctx, ws2, "a@example.com")
		require.NoError(t, err)
		require.Equal(t, notify.SuppressUnsubscribe, s.Reason)
		_, err = tx.FindSuppression(ctx, ws2, "b@example.com")
		require.ErrorIs(t, err, notify.ErrNotFound)
		return nil
	})
	update(t, db, func(ctx context.Context, tx notify.Tx) error {
		require.ErrorIs(t, tx.DeleteSuppression(ctx, ws2, "b@example.com"), notify.ErrNotFound)
		require.NoError(t, tx.DeleteSuppression(ctx, ws1, "a@example.com"))
		require.ErrorIs(t, tx.DeleteSuppression(ctx, ws1, "a@example.com"), notify.ErrNotFound)
		return nil
	})
	view(t, db, func(ctx context.Context, tx notify.Tx) error {
		ok, err := tx.IsSuppressed(ctx, ws1, "a@example.com")
		require.NoError(t, err)
		require.False(t, ok)
		ok, err = tx.IsSuppressed(ctx, ws2, "a@example.com")
		require.NoError(t, err)
		require.True(t, ok, "the other workspace's entry stays")
		return nil
	})
}

func emailProvider(t *testing.T, db *store.DB, ws, kind string) *notify.ProviderAccount {
	p := &notify.ProviderAccount{ID: id(), WorkspaceID: ws, ProviderKind: kind, Channel: notify.ChannelEmail, DisplayName: kind,
		Enabled: true, ConfigEnc: "enc", CreatedAt: t0, UpdatedAt: t0}
	update(t, db, func(ctx context.Context, tx notify.Tx) error { return tx.CreateProviderAccount(ctx, p) })
	return p
}

func testCallbackSecrets(t *testing.T, db *store.DB) {
	ws := Workspace(t, db)
	p := emailProvider(t, db, ws, "maily_email")
	view(t, db, func(ctx context.Context, tx notify.Tx) error {
		_, err := tx.FindCallbackSecret(ctx, p.ID)
		require.ErrorIs(t, err, notify.ErrNotFound)
		got, err := tx.FindProviderAccountAnyWorkspace(ctx, p.ID)
		require.NoError(t, err)
		require.Equal(t, ws, got.WorkspaceID)
		_, err = tx.FindProviderAccountAnyWorkspace(ctx, id())
		require.ErrorIs(t, err, notify.ErrNotFound)
		_, _, err = tx.FindCallbackSender(ctx, p.ID)
		require.ErrorIs(t, err, notify.ErrNotFound, "no secret yet")
		return nil
	})
	update(t, db, func(ctx context.Context, tx notify.Tx) error {
		return tx.PutCallbackSecret(ctx, &notify.CallbackSecret{ProviderAccountID: p.ID, WorkspaceID: ws, CurrentHash: "h1", RotatedAt: t0})
	})
	update(t, db, func(ctx context.Context, tx notify.Tx) error {
		return tx.PutCallbackSecret(ctx, &notify.CallbackSecret{ProviderAccountID: p.ID, WorkspaceID: ws, CurrentHash: "h2",
			PreviousHash: "h1", RotatedAt: t0.Add(time.Second)})
	})
	view(t, db, func(ctx context.Context, tx notify.Tx) error {
		s, err := tx.FindCallbackSecret(ctx, p.ID)
		require.NoError(t, err)
		require.Equal(t, notify.CallbackSecret{ProviderAccountID: p.ID, WorkspaceID: ws, CurrentHash: "h2", PreviousHash: "h1",
			RotatedAt: t0.Add(time.Second)}, *s)
		acct, s2, err := tx.FindCallbackSender(ctx, p.ID)
		require.NoError(t, err)
		require.Equal(t, p, acct)
		require.Equal(t, s, s2)
		_, _, err = tx.FindCallbackSender(ctx, id())
		require.ErrorIs(t, err, notify.ErrNotFound)
		return nil
	})
	update(t, db, func(ctx context.Context, tx notify.Tx) error {
		return tx.PutCallbackSecret(ctx, &notify.CallbackSecret{ProviderAccountID: p.ID, WorkspaceID: ws, CurrentHash: "h2", RotatedAt: t0.Add(2 * time.Second)})
	})
	view(t, db, func(ctx context.Context, tx notify.Tx) error {
		s, err := tx.FindCallbackSecret(ctx, p.ID)
		require.NoError(t, err)
		require.Empty(t, s.PreviousHash)
		return nil
	})
}

func testDeliveryFeedback(t *testing.T, db *store.DB) {
	ws, ws2 := Workspace(t, db), Workspace(t, db)
	p := emailProvider(t, db, ws, "mailz_email")
	r := newRequest(ws, "")
	r.Channel, r.RecipientAddress, r.Status = notify.ChannelEmail, "to@example.com", notify.StatusSent
	j := &notify.Job{ID: id(), WorkspaceID: ws, RequestID: r.ID, Status: notify.JobCompleted, AttemptsMade: 1, MaxAttempts: 3, QueuedAt: t0}
	fail := &notify.Attempt{ID: id(), WorkspaceID: ws, RequestID: r.ID, JobID: j.ID, ProviderAccountID: p.ID, ProviderKind: p.ProviderKind,
		ProviderDisplayName: "pm", Channel: notify.ChannelEmail, FailureCode: "rate_limited", StartedAt: t0, FinishedAt: t0, RequestJSON: "{}", ResponseJSON: "{}"}
	ok := &notify.Attempt{ID: id(), WorkspaceID: ws, RequestID: r.ID, JobID: j.ID, ProviderAccountID: p.ID, ProviderKind: p.ProviderKind,
		ProviderDisplayName: "pm", Channel: notify.ChannelEmail, Success: true, ProviderMessageID: "pm-1",
		StartedAt: t0.Add(time.Second), FinishedAt: t0.Add(time.Second), RequestJSON: "{}", ResponseJSON: "{}"}
	update(t, db, func(ctx context.Context, tx notify.Tx) error {
		require.NoError(t, tx.CreateDirectRequest(ctx, r, j))
		return tx.CreateAttempts(ctx, []*notify.Attempt{fail, ok})
	})
	view(t, db, func(ctx context.Context, tx notify.Tx) error {
		a, err := tx.FindAttemptByMessageID(ctx, ws, p.ID, "pm-1")
		require.NoError(t, err)
		require.Equal(t, ok.ID, a.ID)
		_, err = tx.FindAttemptByMessageID(ctx, ws2, p.ID, "pm-1")
		require.ErrorIs(t, err, notify.ErrNotFound, "workspace isolation")
		_, err = tx.FindAttemptByMessageID(ctx, ws, id(), "pm-1")
		require.ErrorIs(t, err, notify.ErrNotFound, "other provider")
		return nil
	})
	f := &notify.DeliveryFeedback{ID: id(), WorkspaceID: ws, ProviderAccountID: p.ID, ProviderMessageID: "pm-1", RequestID: r.ID,
		AttemptID: ok.ID, RecipientAddress: "to@example.com", Type: notify.FeedbackBounce, BounceType: notify.BouncePermanent,
		Detail: "HardBounce", Suppressed: true, VendorEventID: "postmark:1:to@example.com", OccurredAt: t0, ReceivedAt: t0.Add(time.Minute)}
	update(t, db, func(ctx context.Context, tx notify.Tx) error {
		inserted, err := tx.CreateDeliveryFeedback(ctx, f)
		require.NoError(t, err)
		require.True(t, inserted)
		dup := *f
		dup.ID = id()
		inserted, err = tx.CreateDeliveryFeedback(ctx, &dup)
		require.NoError(t, err)
		require.False(t, inserted, "a retried vendor event is not stored twice")
		// An event whose message matched no attempt is kept unlinked.
		inserted, err = tx.CreateDeliveryFeedback(ctx, &notify.DeliveryFeedback{ID: id(), WorkspaceID: ws, ProviderAccountID: p.ID,
			ProviderMessageID: "unknown", RecipientAddress: "x@example.com", Type: notify.FeedbackComplaint, VendorEventID: "postmark:2",
			OccurredAt: t0, ReceivedAt: t0})
		require.NoError(t, err)
		require.True(t, inserted)
		return nil
	})
	view(t, db, func(ctx context.Context, tx notify.Tx) error {
		as, err := tx.FindAttemptsOfRequest(ctx, ws, r.ID)
		require.NoError(t, err)
		require.Len(t, as, 2)
		require.Empty(t, as[0].Feedback)
		require.Len(t, as[1].Feedback, 1)
		require.Equal(t, *f, *as[1].Feedback[0])
		hist, _, err := tx.FindAttempts(ctx, ws, notify.AttemptFilter{Limit: 10})
		require.NoError(t, err)
		require.Len(t, hist, 2)
		require.Len(t, hist[0].Feedback, 1, "newest first: the successful attempt")
		return nil
	})
}
