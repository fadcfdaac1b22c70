package storetest

import (
	"context"
	"errors"
	"fmt"
	"sync"
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

// ProfileCacheConcurrentMisses: sends of one workspace that name profiles
// not kept, at the same moment, share their reads; each still gets its
// own profile with its own choices, a name without a profile gets none,
// and a change made after the reads is seen by the next ones.
func ProfileCacheConcurrentMisses(t *testing.T) {
	acrossStores(t, func(t *testing.T, a, b *store.DB) {
		s := categoryFixture(t, a)
		sms := notify.ChannelSMS
		const n = 40
		rs := make([]*notify.Recipient, n)
		update(t, b, func(ctx context.Context, tx notify.Tx) error {
			for i := range rs {
				rs[i] = newRecipient(s.ws1, fmt.Sprintf("many-%02d", i), t0)
				rs[i].Phone = fmt.Sprintf("+8210%08d", i)
				if _, err := tx.PutRecipient(ctx, rs[i]); err != nil {
					return err
				}
				if i%2 == 0 {
					if err := tx.ReplacePreferences(ctx, s.ws1, rs[i].ID, &notify.Preferences{Channels: map[notify.Channel]bool{sms: false},
						Categories: map[string]map[notify.Channel]bool{}}); err != nil {
						return err
					}
				}
			}
			return nil
		})
		reads := func(phone func(i int) string) {
			t.Helper()
			var wg sync.WaitGroup
			errs := make(chan error, n+1)
			for i := range n + 1 {
				wg.Go(func() {
					ext := fmt.Sprintf("many-%02d", i)
					if i == n {
						ext = "nobody"
					}
					q := notify.SendContextQuery{RecipientExternalID: ext, CategoryKey: "marketing", Channels: []notify.Channel{sms}}
					err := a.Lookup(context.Background(), func(tx notify.Tx) error {
						sc, err := tx.FindSendContext(context.Background(), s.ws1, q)
						switch {
						case err != nil:
							return err
						case i == n && sc.Recipient != nil:
							return fmt.Errorf("nobody: got profile %s", sc.Recipient.ExternalID)
						case i == n:
							return nil
						case sc.Recipient == nil || sc.Recipient.ExternalID != ext || sc.Recipient.Phone != phone(i):
							return fmt.Errorf("%s: got %+v", ext, sc.Recipient)
						case (i%2 == 0) != (sc.Preferences.Recipient != nil && !sc.Preferences.Recipient.Channels[sms] &&
							len(sc.Preferences.Recipient.Channels) == 1):
							return fmt.Errorf("%s: own choices %+v", ext, sc.Preferences.Recipient)
						}
						return nil
					})
					errs <- err
				})
			}
			wg.Wait()
			close(errs)
			for err := range errs {
				require.NoError(t, err)
			}
		}
		reads(func(i int) string { return rs[i].Phone })
		reads(func(i int) string { return rs[i].Phone }) // kept now
		// b changes one profile: every read after it sees the workspace's
		// new version, and the change.
		r := *rs[3]
		r.Phone = "+821099999999"
		update(t, b, func(ctx context.Context, tx notify.Tx) error { _, err := tx.PutRecipient(ctx, &r); return err })
		reads(func(i int) string {
			if i == 3 {
				return r.Phone
			}
			return rs[i].Phone
		})
	})
}
