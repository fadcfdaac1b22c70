package storetest

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/notifyd/notifyd/internal/notify"
	"github.com/notifyd/notifyd/internal/store"
)

// testSealed: the key ids of every sealed column, the values not sealed
// with a key, and a compare-and-set replacement.
func testSealed(t *testing.T, db *store.DB) {
	ws := Workspace(t, db)
	view(t, db, func(ctx context.Context, tx notify.Tx) error {
		ids, err := tx.SealedKeyIDs(ctx)
		require.NoError(t, err)
		require.Empty(t, ids)
		return nil
	})
	p := &notify.ProviderAccount{ID: id(), WorkspaceID: ws, ProviderKind: "mailx_email", Channel: notify.ChannelEmail, DisplayName: "p",
		Enabled: true, ConfigEnc: "v1.aaaaaaaa.config", CreatedAt: t0, UpdatedAt: t0}
	k := &notify.APIKey{ID: id(), WorkspaceID: ws, KeyID: "nk_" + id(), Name: "k", Scopes: []string{}, Status: notify.APIKeyActive,
		SecretHash: "sh", HMACSecretEnc: "v1.bbbbbbbb.hmac", CreatedAt: t0, UpdatedAt: t0}
	w := &notify.Webhook{ID: id(), WorkspaceID: ws, URL: "https://a.example/hook", Events: []string{notify.EventDelivered},
		SecretEnc: "v1.bbbbbbbb.current", PreviousSecretEnc: "v1.cccccccc.previous", CreatedAt: t0, UpdatedAt: t0}
	w2 := &notify.Webhook{ID: id(), WorkspaceID: ws, URL: "https://b.example/hook", Events: []string{notify.EventDelivered},
		SecretEnc: "v1.aaaaaaaa.only", CreatedAt: t0, UpdatedAt: t0}
	// Not in the sealed format: neither a key id nor a value to re-seal.
	w3 := &notify.Webhook{ID: id(), WorkspaceID: ws, URL: "https://c.example/hook", Events: []string{notify.EventDelivered},
		SecretEnc: "plain", CreatedAt: t0, UpdatedAt: t0}
	update(t, db, func(ctx context.Context, tx notify.Tx) error {
		require.NoError(t, tx.CreateProviderAccount(ctx, p))
		require.NoError(t, tx.CreateAPIKey(ctx, k))
		require.NoError(t, tx.CreateWebhook(ctx, w))
		require.NoError(t, tx.CreateWebhook(ctx, w2))
		return tx.CreateWebhook(ctx, w3)
	})
	var stale []notify.SealedValue
	view(t, db, func(ctx context.Context, tx notify.Tx) error {
		ids, err := tx.SealedKeyIDs(ctx)
		require.NoError(t, err)
		require.Equal(t, []string{"aaaaaaaa", "bbbbbbbb", "cccccccc"}, ids)
		stale, err = tx.FindSealedValues(ctx, "aaaaaaaa")
		require.NoError(t, err)
		require.ElementsMatch(t, []notify.SealedValue{
			{Kind: notify.SealedAPIKeyHMAC, ID: k.ID, Value: k.HMACSecretEnc},
			{Kind: notify.SealedWebhookSecret, ID: w.ID, Value: w.SecretEnc},
			{Kind: notify.SealedWebhookPreviousSecret, ID: w.ID, Value: w.PreviousSecretEnc},
		}, stale)
		return nil
	})
	update(t, db, func(ctx context.Context, tx notify.Tx) error {
		for _, v := range stale {
			require.NoError(t, tx.UpdateSealedValue(ctx, v, "v1.aaaaaaaa.resealed-"+v.Kind))
		}
		return nil
	})
	// The text changed meanwhile: not replaced.
	update(t, db, func(ctx context.Context, tx notify.Tx) error {
		require.ErrorIs(t, tx.UpdateSealedValue(ctx, stale[0], "v1.aaaaaaaa.lost"), notify.ErrNotFound)
		return nil
	})
	view(t, db, func(ctx context.Context, tx notify.Tx) error {
		ids, err := tx.SealedKeyIDs(ctx)
		require.NoError(t, err)
		require.Equal(t, []string{"aaaaaaaa"}, ids)
		left, err := tx.FindSealedValues(ctx, "aaaaaaaa")
		require.NoError(t, err)
		require.Empty(t, left)
		got, err := tx.FindAPIKey(ctx, ws, k.ID)
		require.NoError(t, err)
		require.Equal(t, "v1.aaaaaaaa.resealed-"+notify.SealedAPIKeyHMAC, got.HMACSecretEnc)
		wh, err := tx.FindWebhook(ctx, ws, w.ID)
		require.NoError(t, err)
		require.Equal(t, "v1.aaaaaaaa.resealed-"+notify.SealedWebhookPreviousSecret, wh.PreviousSecretEnc)
		return nil
	})
}
