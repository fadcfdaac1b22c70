package delivery

import (
	"bytes"
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/notifyd/notifyd/internal/notify"
	"github.com/notifyd/notifyd/internal/provider/kinds"
	"github.com/notifyd/notifyd/internal/secret"
)

// TestUnkeyedSlots: a call is unkeyed when its kind's vendor honours no
// idempotency key and it carries one message; at most unkeyedPerJob runs
// of one job hold a slot for one, a run's second call (a fallback) takes
// no other, a run no job carries takes none, and a wait ends with the
// job's context.
func TestUnkeyedSlots(t *testing.T) {
	t.Parallel()
	box, err := secret.NewBox(bytes.Repeat([]byte{7}, secret.KeySize))
	require.NoError(t, err)
	reg := kinds.All()
	keyed := reg["chata_webhook"]
	keyed.ID, keyed.Idempotent = "keyed_webhook", true
	reg[keyed.ID] = keyed
	e := New(Options{Kinds: reg, Box: box})
	webhook := &notify.ProviderAccount{ID: "w", ProviderKind: "chata_webhook"}
	require.True(t, e.unkeyed(webhook))
	require.True(t, e.unkeyed(&notify.ProviderAccount{ID: "s", ProviderKind: "maily_email"}), "SES: one message a call, no key")
	require.False(t, e.unkeyed(&notify.ProviderAccount{ID: "m", ProviderKind: "mailx_email"}), "batched, and keyed")
	require.False(t, e.unkeyed(&notify.ProviderAccount{ID: "k", ProviderKind: keyed.ID}), "keyed")

	ctx := context.Background()
	job := make(chan struct{}, unkeyedPerJob)
	runs := make([]*run, unkeyedPerJob+1)
	for i := range runs {
		runs[i] = &run{unkeyed: job}
	}
	for _, rn := range runs[:unkeyedPerJob] {
		require.NoError(t, e.unkeyedSlot(ctx, rn, webhook))
		require.True(t, rn.unkeyedHeld)
	}
	require.NoError(t, e.unkeyedSlot(ctx, runs[0], webhook), "a run's second call takes no other slot")
	short, cancel := context.WithTimeout(ctx, 20*time.Millisecond)
	defer cancel()
	last := runs[unkeyedPerJob]
	require.ErrorIs(t, e.unkeyedSlot(short, last, webhook), context.DeadlineExceeded)
	require.False(t, last.unkeyedHeld)
	require.NoError(t, e.unkeyedSlot(ctx, last, &notify.ProviderAccount{ID: "k", ProviderKind: keyed.ID}), "a keyed call never waits")
	unkeyedRelease(runs[0]) // one run's outcome noted
	require.False(t, runs[0].unkeyedHeld)
	require.NoError(t, e.unkeyedSlot(ctx, last, webhook))
	require.True(t, last.unkeyedHeld)

	sync := &run{}
	require.NoError(t, e.unkeyedSlot(ctx, sync, webhook))
	require.False(t, sync.unkeyedHeld, "OTP and test-sends are not bounded")
}

// TestUnkeyedSlotsPerAccount: across jobs, at most unkeyedPerAccount runs
// hold a slot for an unkeyed call through one account; another account's
// calls do not wait for them, and a released slot lets the next through.
func TestUnkeyedSlotsPerAccount(t *testing.T) {
	t.Parallel()
	box, err := secret.NewBox(bytes.Repeat([]byte{7}, secret.KeySize))
	require.NoError(t, err)
	e := New(Options{Kinds: kinds.All(), Box: box})
	webhook := &notify.ProviderAccount{ID: "w", ProviderKind: "chata_webhook"}
	other := &notify.ProviderAccount{ID: "o", ProviderKind: "chata_webhook"}
	ctx := context.Background()
	newRun := func() *run { return &run{unkeyed: make(chan struct{}, unkeyedPerJob)} } // a job each
	held := make([]*run, unkeyedPerAccount)
	for i := range held {
		held[i] = newRun()
		require.NoError(t, e.unkeyedSlot(ctx, held[i], webhook))
	}
	short, cancel := context.WithTimeout(ctx, 20*time.Millisecond)
	defer cancel()
	waiting := newRun()
	require.ErrorIs(t, e.unkeyedSlot(short, waiting, webhook), context.DeadlineExceeded)
	require.False(t, waiting.unkeyedHeld)
	require.Empty(t, waiting.unkeyed, "a wait that ends gives its job's slot back")
	require.NoError(t, e.unkeyedSlot(ctx, newRun(), other), "another account does not wait")
	unkeyedRelease(held[0])
	require.NoError(t, e.unkeyedSlot(ctx, waiting, webhook))
	require.True(t, waiting.unkeyedHeld)
}
