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

// otpSessions stores a code session and a link session of ws1, and
// makes a second workspace.
func otpSessions(t *testing.T, db *store.DB) (ws1, ws2 string, s, l *notify.OTPSession) {
	t.Helper()
	ws1, ws2 = Workspace(t, db), Workspace(t, db)
	s = &notify.OTPSession{ID: id(), WorkspaceID: ws1, Channel: notify.ChannelSMS, Mode: notify.OTPModeCode, Purpose: "login",
		Recipient: "01012345678", RecipientMasked: "*******5678", Status: notify.OTPPending, CodeHash: "abc",
		ExpiresAt: t0.Add(180 * time.Second), ResendAvailableAt: t0.Add(30 * time.Second), CreatedAt: t0, UpdatedAt: t0}
	l = &notify.OTPSession{ID: id(), WorkspaceID: ws1, Channel: notify.ChannelEmail, Mode: notify.OTPModeLink,
		Recipient: "a@b.c", RecipientMasked: "a@b.c", Status: notify.OTPPending, LinkHash: "linkhash-" + id(),
		ExpiresAt: t0.Add(180 * time.Second), ResendAvailableAt: t0.Add(30 * time.Second), CreatedAt: t0, UpdatedAt: t0}
	update(t, db, func(ctx context.Context, tx notify.Tx) error {
		require.NoError(t, tx.CreateOTPSession(ctx, s))
		return tx.CreateOTPSession(ctx, l)
	})
	return ws1, ws2, s, l
}

func testOTP(t *testing.T, open Opener) {
	runVerbs(t, open, []verb{
		{"FindOTPSession", testFindOTPSession, perWorkspace},
		{"FindOTPSessionByLink", testFindOTPSessionByLink, perWorkspace},
		{"UseOTPAttempt", testUseOTPAttempt, perWorkspace},
		{"UpdateOTPSession", testUpdateOTPSession, perWorkspace},
		{"IncrementOTPSendCount", testIncrementOTPSendCount, perWorkspace},
	})
}

func testFindOTPSession(t *testing.T, db *store.DB) {
	ws1, ws2, s, _ := otpSessions(t, db)
	view(t, db, func(ctx context.Context, tx notify.Tx) error {
		got, err := tx.FindOTPSession(ctx, ws1, s.ID)
		require.NoError(t, err)
		require.Equal(t, s, got)
		_, err = tx.FindOTPSession(ctx, ws2, s.ID)
		require.ErrorIs(t, err, notify.ErrNotFound)
		return nil
	})
}

func testFindOTPSessionByLink(t *testing.T, db *store.DB) {
	_, _, _, l := otpSessions(t, db)
	view(t, db, func(ctx context.Context, tx notify.Tx) error {
		got, err := tx.FindOTPSessionByLink(ctx, l.LinkHash)
		require.NoError(t, err)
		require.Equal(t, l, got)
		_, err = tx.FindOTPSessionByLink(ctx, "nope")
		require.ErrorIs(t, err, notify.ErrNotFound)
		return nil
	})
}

// testUseOTPAttempt: attempts are bounded by max, refused on link mode,
// other workspace and expiry.
func testUseOTPAttempt(t *testing.T, db *store.DB) {
	ws1, ws2, s, l := otpSessions(t, db)
	ctx := context.Background()
	use := func(ws, sid string, now time.Time) bool {
		var ok bool
		require.NoError(t, db.Update(ctx, func(tx notify.Tx) error {
			var err error
			ok, err = tx.UseOTPAttempt(ctx, ws, sid, 5, now)
			return err
		}))
		return ok
	}
	require.False(t, use(ws2, s.ID, t0))
	require.False(t, use(ws1, l.ID, t0))
	require.False(t, use(ws1, s.ID, t0.Add(180*time.Second)))
	var wg sync.WaitGroup
	var mu sync.Mutex
	taken := 0
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if use(ws1, s.ID, t0) {
				mu.Lock()
				taken++
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	require.Equal(t, 5, taken, "concurrent attempts never exceed the maximum")
}

// testUpdateOTPSession: the update is optimistic, on status and resend
// count.
func testUpdateOTPSession(t *testing.T, db *store.DB) {
	ws1, _, s, _ := otpSessions(t, db)
	v := t0.Add(time.Minute)
	s2 := *s
	s2.Status, s2.CodeHash, s2.VerifiedAt, s2.Attempts, s2.UpdatedAt = notify.OTPVerified, "", &v, 5, v
	update(t, db, func(ctx context.Context, tx notify.Tx) error {
		ok, err := tx.UpdateOTPSession(ctx, &s2, notify.OTPPending, 1)
		require.NoError(t, err)
		require.False(t, ok, "resend count mismatch")
		ok, err = tx.UpdateOTPSession(ctx, &s2, notify.OTPPending, 0)
		require.NoError(t, err)
		require.True(t, ok)
		ok, err = tx.UpdateOTPSession(ctx, &s2, notify.OTPPending, 0)
		require.NoError(t, err)
		require.False(t, ok, "status changed")
		return nil
	})
	view(t, db, func(ctx context.Context, tx notify.Tx) error {
		got, err := tx.FindOTPSession(ctx, ws1, s.ID)
		require.NoError(t, err)
		require.Equal(t, &s2, got)
		return nil
	})
}

// testIncrementOTPSendCount: send counters are per workspace, recipient,
// window kind and start.
func testIncrementOTPSendCount(t *testing.T, db *store.DB) {
	ws1, ws2 := Workspace(t, db), Workspace(t, db)
	h := t0.Truncate(time.Hour)
	inc := func(ws, rcpt, kind string, start time.Time) int {
		var n int
		update(t, db, func(ctx context.Context, tx notify.Tx) error {
			var err error
			n, err = tx.IncrementOTPSendCount(ctx, ws, rcpt, kind, start)
			return err
		})
		return n
	}
	require.Equal(t, 1, inc(ws1, "010", notify.OTPWindowHour, h))
	require.Equal(t, 2, inc(ws1, "010", notify.OTPWindowHour, h))
	require.Equal(t, 1, inc(ws1, "010", notify.OTPWindowDay, h))
	require.Equal(t, 1, inc(ws2, "010", notify.OTPWindowHour, h))
	require.Equal(t, 1, inc(ws1, "011", notify.OTPWindowHour, h))
	require.Equal(t, 1, inc(ws1, "010", notify.OTPWindowHour, h.Add(time.Hour)))
	require.Equal(t, 3, inc(ws1, "010", notify.OTPWindowHour, h))
	// A rolled-back increment leaves no trace.
	ctx := context.Background()
	require.Error(t, db.Update(ctx, func(tx notify.Tx) error {
		_, err := tx.IncrementOTPSendCount(ctx, ws1, "010", notify.OTPWindowHour, h)
		require.NoError(t, err)
		return notify.Invalid("rollback")
	}))
	require.Equal(t, 4, inc(ws1, "010", notify.OTPWindowHour, h))
}

func testOTPCleanup(t *testing.T, db *store.DB) {
	ws1, ws2 := Workspace(t, db), Workspace(t, db)
	mk := func(ws string, exp time.Time, status string) *notify.OTPSession {
		return &notify.OTPSession{ID: id(), WorkspaceID: ws, Channel: notify.ChannelSMS, Mode: notify.OTPModeCode,
			Recipient: "010", RecipientMasked: "010", Status: status, ExpiresAt: exp, ResendAvailableAt: exp, CreatedAt: t0, UpdatedAt: t0}
	}
	cut := t0.Add(-24 * time.Hour)
	old1, old2 := mk(ws1, cut.Add(-time.Millisecond), notify.OTPVerified), mk(ws2, cut.Add(-time.Hour), notify.OTPPending)
	edge, fresh := mk(ws1, cut, notify.OTPExpired), mk(ws2, t0, notify.OTPPending)
	update(t, db, func(ctx context.Context, tx notify.Tx) error {
		for _, s := range []*notify.OTPSession{old1, old2, edge, fresh} {
			require.NoError(t, tx.CreateOTPSession(ctx, s))
		}
		n, err := tx.DeleteOTPSessionsExpiredBefore(ctx, cut)
		require.NoError(t, err)
		require.Equal(t, 2, n, "every workspace and status, strictly before")
		return nil
	})
	view(t, db, func(ctx context.Context, tx notify.Tx) error {
		for _, s := range []*notify.OTPSession{old1, old2} {
			_, err := tx.FindOTPSession(ctx, s.WorkspaceID, s.ID)
			require.ErrorIs(t, err, notify.ErrNotFound)
		}
		for _, s := range []*notify.OTPSession{edge, fresh} {
			_, err := tx.FindOTPSession(ctx, s.WorkspaceID, s.ID)
			require.NoError(t, err)
		}
		return nil
	})

	h := t0.Truncate(time.Hour)
	d := t0.Truncate(24 * time.Hour)
	count := func(ws, kind string, start time.Time) int { // increments, so the result minus one is the stored count
		var n int
		update(t, db, func(ctx context.Context, tx notify.Tx) error {
			var err error
			n, err = tx.IncrementOTPSendCount(ctx, ws, "010", kind, start)
			return err
		})
		return n - 1
	}
	for _, c := range []struct {
		ws, kind string
		start    time.Time
	}{
		{ws1, notify.OTPWindowHour, h.Add(-2 * time.Hour)}, // deleted
		{ws2, notify.OTPWindowHour, h.Add(-time.Hour)},     // kept: hour cut
		{ws1, notify.OTPWindowHour, h},                     // kept
		{ws1, notify.OTPWindowDay, d.AddDate(0, 0, -2)},    // deleted
		{ws2, notify.OTPWindowDay, d.AddDate(0, 0, -1)},    // kept: day cut
		{ws1, notify.OTPWindowDay, h.Add(-2 * time.Hour)},  // kept: a daily counter is judged by the day cut
	} {
		require.Equal(t, 0, count(c.ws, c.kind, c.start))
	}
	update(t, db, func(ctx context.Context, tx notify.Tx) error {
		n, err := tx.DeleteOTPSendCountersBefore(ctx, h.Add(-time.Hour), d.AddDate(0, 0, -1))
		require.NoError(t, err)
		require.Equal(t, 2, n)
		return nil
	})
	require.Equal(t, 0, count(ws1, notify.OTPWindowHour, h.Add(-2*time.Hour)), "deleted: starts again")
	require.Equal(t, 0, count(ws1, notify.OTPWindowDay, d.AddDate(0, 0, -2)), "deleted: starts again")
	require.Equal(t, 1, count(ws2, notify.OTPWindowHour, h.Add(-time.Hour)))
	require.Equal(t, 1, count(ws1, notify.OTPWindowHour, h))
	require.Equal(t, 1, count(ws2, notify.OTPWindowDay, d.AddDate(0, 0, -1)))
	require.Equal(t, 1, count(ws1, notify.OTPWindowDay, h.Add(-2*time.Hour)))
}
