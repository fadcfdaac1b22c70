package inbox_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/notifyd/notifyd/internal/notify"
	"github.com/notifyd/notifyd/internal/notifytest"
	"github.com/notifyd/notifyd/internal/store/sqlstore"
)

// TestInboxRetention: the retention purge deletes inbox messages older
// than the data retention (NOTIFYD_RETENTION), read or not, as it deletes
// the requests that delivered them; newer messages and the counts of what
// stays are untouched.
func TestInboxRetention(t *testing.T) {
	t.Parallel()
	// The test runs the purge itself: the daemon's own (run at start)
	// would race it for the same rows.
	env, key := setup(t, notifytest.WithRetention(0, 0))
	deliver(t, key, "u-1", 3)
	deliver(t, key, "u-2", 1)
	tok := mint(t, key, "u-1")
	p := get[page](t, env, "/v1/inbox/messages", tok)
	require.Len(t, p.Messages, 3)
	// The two oldest of u-1 were stored 40 days ago; one of them was read.
	post(t, env, "/v1/inbox/messages/"+p.Messages[2].ID+"/read", tok, 200)
	ctx := context.Background()
	old := time.Now().Add(-40 * 24 * time.Hour).UnixMilli()
	require.NoError(t, env.Daemon.DB.Update(ctx, func(tx notify.Tx) error {
		_, err := tx.(*sqlstore.Tx).Conn().Exec(ctx, `UPDATE inbox_messages SET created_at = ? WHERE id IN (?, ?)`,
			old, p.Messages[1].ID, p.Messages[2].ID)
		return err
	}))

	purged, done, err := env.Daemon.Rooms.Retention.PurgeExpired(ctx, notify.Retention{Data: 30 * 24 * time.Hour})
	require.NoError(t, err)
	require.True(t, done)
	require.Equal(t, 2, purged["inbox_messages"])

	after := get[page](t, env, "/v1/inbox/messages", tok)
	require.Len(t, after.Messages, 1)
	require.Equal(t, p.Messages[0].ID, after.Messages[0].ID, "the recent message stays")
	require.Equal(t, counts{1, 1}, after.Counts)
	require.Len(t, get[page](t, env, "/v1/inbox/messages", mint(t, key, "u-2")).Messages, 1, "another profile's recent message stays")
}
