package storetest

import (
	"context"
	"errors"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/notifyd/notifyd/internal/notify"
	"github.com/notifyd/notifyd/internal/store"
)

// ProfileCacheAcrossStores: two stores on one database, as two processes
// hold them. What one changes of a recipient profile or of its own
// preferences (a put, a bulk upsert, a preference change, an erasure) the
// other's next send read sees, at acceptance and at dispatch, though it
// keeps the profiles it read in memory; a change rolled back leaves
// nothing behind in the memory of the store that made it.
func ProfileCacheAcrossStores(t *testing.T) {
	acrossStores(t, func(t *testing.T, a, b *store.DB) {
		s := categoryFixture(t, a)
		sms := notify.ChannelSMS
		// The dispatch read runs in the claim's write transaction.
		q, read, many := marketingReads(t, s.ws1, true)
		// a reads (and keeps) the profile and its choices.
		for range 2 {
			sc := read(a, true)
			require.Equal(t, s.r1.ID, sc.Recipient.ID)
			require.Equal(t, map[string]map[notify.Channel]bool{"marketing": {sms: true}}, sc.Preferences.Recipient.Categories)
			require.Equal(t, notify.PreferenceDecision{Allowed: true, Rule: notify.RuleRecipientCategoryChannel}, many(a).Decide(sms))
		}

		// b changes the profile's own choices: a's acceptance and
		// dispatch reads see it.
		update(t, b, func(ctx context.Context, tx notify.Tx) error {
			return tx.ReplacePreferences(ctx, s.ws1, s.r1.ID, &notify.Preferences{Channels: map[notify.Channel]bool{},
				Categories: map[string]map[notify.Channel]bool{"marketing": {sms: false}}})
		})
		for _, lookup := range []bool{true, false} {
			require.Equal(t, map[string]map[notify.Channel]bool{"marketing": {sms: false}}, read(a, lookup).Preferences.Recipient.Categories)
		}
		require.False(t, many(a).Decide(sms).Allowed)

		// b changes the profile itself, then by bulk upsert.
		r := *s.r1
		r.Phone = "+821012345678"
		update(t, b, func(ctx context.Context, tx notify.Tx) error { _, err := tx.PutRecipient(ctx, &r); return err })
		require.Equal(t, "+821012345678", read(a, true).Recipient.Phone)
		r.Phone = "+821087654321"
		update(t, b, func(ctx context.Context, tx notify.Tx) error {
			_, err := tx.UpsertRecipients(ctx, []*notify.Recipient{&r})
			return err
		})
		require.Equal(t, "+821087654321", read(a, true).Recipient.Phone)

		// a change read inside its own transaction and rolled back.
		undo := errors.New("undo")
		err := a.Update(context.Background(), func(tx notify.Tx) error {
			require.NoError(t, tx.ReplacePreferences(context.Background(), s.ws1, s.r1.ID, s.p1))
			sc, err := tx.FindSendContext(context.Background(), s.ws1, q)
			require.NoError(t, err)
			require.Equal(t, map[string]map[notify.Channel]bool{"marketing": {sms: true}}, sc.Preferences.Recipient.Categories,
				"the transaction reads its own change")
			return undo
		})
		require.ErrorIs(t, err, undo)
		require.Equal(t, map[string]map[notify.Channel]bool{"marketing": {sms: false}}, read(a, true).Preferences.Recipient.Categories,
			"the rolled-back change is not kept")

		// b erases the profile: a's reads find none.
		update(t, b, func(ctx context.Context, tx notify.Tx) error { return tx.DeleteRecipient(ctx, s.ws1, "user-1") })
		require.Nil(t, read(a, true).Recipient)
		require.Nil(t, read(a, false).Recipient)
		sp := many(a)
		require.Empty(t, sp.RecipientRow)
		require.Nil(t, sp.Recipient)
	})
}
