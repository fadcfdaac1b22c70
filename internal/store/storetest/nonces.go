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

// UseNonces is the replay check of every signed send (the accept group
// commit records a batch's nonces in one call).

// useNonces records uses at now and returns which were new.
func useNonces(t *testing.T, db *store.DB, now time.Time, uses ...notify.NonceUse) []bool {
	t.Helper()
	var fresh []bool
	update(t, db, func(ctx context.Context, tx notify.Tx) (err error) {
		fresh, err = tx.UseNonces(ctx, uses, now)
		return err
	})
	require.Len(t, fresh, len(uses))
	return fresh
}

func nonce(key, n string, expires time.Time) notify.NonceUse {
	return notify.NonceUse{KeyID: key, Nonce: n, ExpiresAt: expires}
}

// testUseNonces: new nonces are reported new, a nonce seen before and not
// expired is a replay, per key; an expired one is new again with its new
// expiry; UseNonce and UseNonces see each other's nonces.
func testUseNonces(t *testing.T, db *store.DB) {
	k1, k2, k3 := "k1-"+id(), "k2-"+id(), "k3-"+id()
	exp := t0.Add(time.Minute)
	require.Empty(t, useNonces(t, db, t0), "no uses, no statement")
	require.Equal(t, []bool{true, true, true}, useNonces(t, db, t0, nonce(k1, "n1", exp), nonce(k1, "n2", exp), nonce(k2, "n1", exp)))
	require.Equal(t, []bool{false, true, false, true}, useNonces(t, db, t0.Add(time.Second),
		nonce(k1, "n1", exp), nonce(k1, "n3", exp.Add(time.Second)), nonce(k2, "n1", exp), nonce(k3, "n1", exp)),
		"replays are reported in their place; a nonce is per key")

	// The expiry: at one millisecond before it a replay, at it new again,
	// and from then on a replay until the new expiry.
	require.Equal(t, []bool{false}, useNonces(t, db, exp.Add(-time.Millisecond), nonce(k1, "n1", exp.Add(time.Hour))))
	require.Equal(t, []bool{true, true, false}, useNonces(t, db, exp,
		nonce(k1, "n1", exp.Add(time.Minute)), nonce(k1, "n2", exp.Add(time.Minute)), nonce(k1, "n3", exp.Add(time.Minute))),
		"n1 and n2 expire now, n3 a second later")
	require.Equal(t, []bool{false}, useNonces(t, db, exp.Add(time.Second), nonce(k1, "n1", exp.Add(time.Hour))),
		"an expired nonce used again keeps its new expiry")

	// UseNonce (the unbatched path) and UseNonces share the record.
	update(t, db, func(ctx context.Context, tx notify.Tx) error { return tx.UseNonce(ctx, k2, "single", t0, exp) })
	require.Equal(t, []bool{false, true}, useNonces(t, db, t0, nonce(k2, "single", exp), nonce(k2, "other", exp)))
	conflict(t, db, func(ctx context.Context, tx notify.Tx) error { return tx.UseNonce(ctx, k2, "other", t0, exp) })
}

// testUseNoncesMany: a batch larger than one statement's rows (several
// statements on both dialects) reports each use in its own place.
func testUseNoncesMany(t *testing.T, db *store.DB) {
	key := "k-" + id()
	exp := t0.Add(time.Minute)
	const n = 301
	var seen []notify.NonceUse
	for i := 0; i < n; i += 3 {
		seen = append(seen, nonce(key, fmt.Sprint(i), exp))
	}
	require.NotContains(t, useNonces(t, db, t0, seen...), false)
	uses := make([]notify.NonceUse, n)
	want := make([]bool, n)
	for i := range uses {
		uses[i] = nonce(key, fmt.Sprint(i), exp)
		want[i] = i%3 != 0
	}
	require.Equal(t, want, useNonces(t, db, t0, uses...))
	require.Equal(t, make([]bool, n), useNonces(t, db, t0, uses...), "all replays the second time")
}

// testUseNoncesDuplicates: a nonce given twice in one call is new once,
// at its first place, and a replay at the others, on both dialects
// (PostgreSQL refuses to upsert one row twice in a statement).
func testUseNoncesDuplicates(t *testing.T, db *store.DB) {
	k1, k2 := "k1-"+id(), "k2-"+id()
	exp := t0.Add(time.Minute)
	require.Equal(t, []bool{true, false, true, false, true},
		useNonces(t, db, t0, nonce(k1, "a", exp), nonce(k1, "a", exp.Add(time.Hour)), nonce(k2, "a", exp), nonce(k1, "a", exp), nonce(k1, "b", exp)))
	require.Equal(t, []bool{true, false}, useNonces(t, db, exp, nonce(k1, "a", exp.Add(time.Minute)), nonce(k1, "a", exp.Add(time.Minute))),
		"the first use's expiry is stored, and the duplicate of an expired nonce is a replay too")
	require.Equal(t, []bool{false}, useNonces(t, db, exp.Add(time.Second), nonce(k1, "a", exp.Add(time.Hour))))

	// Duplicates far apart in a batch of several statements.
	uses := make([]notify.NonceUse, 250)
	for i := range uses {
		uses[i] = nonce(k2, fmt.Sprint("m", i%200), exp)
	}
	fresh := useNonces(t, db, t0, uses...)
	for i, f := range fresh {
		require.Equal(t, i < 200, f, "use %d", i)
	}
}
