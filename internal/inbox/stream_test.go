package inbox_test

import (
	"bytes"
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/notifyd/notifyd/internal/accounts"
	"github.com/notifyd/notifyd/internal/inbox"
	"github.com/notifyd/notifyd/internal/notify"
	"github.com/notifyd/notifyd/internal/notifytest"
	"github.com/notifyd/notifyd/internal/secret"
)

// TestStreamHeartbeatAndClose: an idle stream sends heartbeats; a wake-up
// of every stream reads the log; Close ends the streams; a reader
// without a profile is refused before the stream opens.
func TestStreamHeartbeatAndClose(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := notifytest.OpenDB(t, notifytest.DatabaseURL(t))
	box, err := secret.NewBox(bytes.Repeat([]byte{7}, secret.KeySize))
	require.NoError(t, err)
	res, err := accounts.New(accounts.Options{Store: db, Box: box}).Bootstrap(ctx, "W", "owner@example.com", "owner password")
	require.NoError(t, err)
	now := time.Now()
	p := &notify.Recipient{ID: "00000000-0000-7000-8000-000000000001", WorkspaceID: res.WorkspaceID, ExternalID: "u-1",
		CreatedAt: now, UpdatedAt: now}
	require.NoError(t, db.Update(ctx, func(tx notify.Tx) error { _, err := tx.PutRecipient(ctx, p); return err }))
	room := inbox.New(inbox.Options{Store: db, Box: box, Heartbeat: 50 * time.Millisecond})
	r := inbox.Reader{WorkspaceID: res.WorkspaceID, RecipientID: "u-1"}

	err = room.Stream(ctx, inbox.Reader{WorkspaceID: res.WorkspaceID, RecipientID: "nobody"}, -1,
		func(inbox.Batch) error { return nil })
	require.ErrorContains(t, err, "Recipient not found")

	batches := make(chan inbox.Batch, 100)
	done := make(chan error, 1)
	go func() { done <- room.Stream(ctx, r, -1, func(b inbox.Batch) error { batches <- b; return nil }) }()
	require.True(t, (<-batches).Open)
	require.True(t, (<-batches).Heartbeat)
	require.Equal(t, 1, room.Streams())

	// A message stored without a wake-up (as if the feed lost it) shows
	// after a wake-up of every stream.
	require.NoError(t, db.Update(ctx, func(tx notify.Tx) error {
		return tx.CreateInboxMessages(ctx, []*notify.InboxMessage{{ID: "00000000-0000-7000-8000-000000000002",
			WorkspaceID: res.WorkspaceID, RecipientID: p.ID, RequestID: "r", CreatedAt: now}})
	}))
	room.Wake("")
	for b := range batches {
		if len(b.Events) > 0 {
			require.Equal(t, notify.InboxEventCreated, b.Events[0].Type)
			require.Equal(t, notify.InboxCounts{Unread: 1, Unseen: 1}, *b.Counts)
			break
		}
	}
	room.Close()
	select {
	case err := <-done:
		require.NoError(t, err)
	case <-time.After(5 * time.Second):
		t.Fatal("Close did not end the stream")
	}
	require.Zero(t, room.Streams())
}
