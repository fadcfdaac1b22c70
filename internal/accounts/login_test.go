package accounts_test

import (
	"bytes"
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/notifyd/notifyd/internal/accounts"
	"github.com/notifyd/notifyd/internal/notify"
	"github.com/notifyd/notifyd/internal/notifytest"
	"github.com/notifyd/notifyd/internal/secret"
	"github.com/notifyd/notifyd/internal/store"
)

const ownerEmail, ownerPassword = "owner@example.com", "owner password"

// loginEnv is the room with a settable clock over a fresh database.
type loginEnv struct {
	db     *store.DB
	offset atomic.Int64
	base   time.Time
}

func newLoginEnv(t *testing.T) (*loginEnv, *accounts.Service) {
	e := &loginEnv{db: notifytest.OpenDB(t, notifytest.DatabaseURL(t)), base: time.Now()}
	svc := e.service(t)
	_, err := svc.Bootstrap(context.Background(), "W", ownerEmail, ownerPassword)
	require.NoError(t, err)
	return e, svc
}

// service is one more process over the same database and clock.
func (e *loginEnv) service(t *testing.T) *accounts.Service {
	box, err := secret.NewBox(bytes.Repeat([]byte{7}, secret.KeySize))
	require.NoError(t, err)
	return accounts.New(accounts.Options{Store: e.db, Box: box, Now: func() time.Time { return e.base.Add(time.Duration(e.offset.Load())) }})
}

func (e *loginEnv) advance(d time.Duration) { e.offset.Add(int64(d)) }

func (e *loginEnv) counter(t *testing.T, key string) int {
	var n int
	now := e.base.Add(time.Duration(e.offset.Load()))
	require.NoError(t, e.db.View(context.Background(), func(tx notify.Tx) error {
		c, err := tx.FindLoginCounter(context.Background(), key, now)
		if err == nil {
			n = c.Attempts
		}
		return err
	}))
	return n
}

// code is the catalogue code of a login error ("" for success).
func code(t *testing.T, err error) string {
	if err == nil {
		return ""
	}
	e, ok := notify.AsError(err)
	require.True(t, ok, "not a domain error: %v", err)
	return e.Code
}

// retryAfter is the wait a throttled login was told.
func retryAfter(t *testing.T, err error) time.Duration {
	e, ok := notify.AsError(err)
	require.True(t, ok, "not a domain error: %v", err)
	require.Equal(t, notify.CodeTooManyRequests, e.Code, e.Detail)
	return e.RetryAfter
}

// watchHashes wraps the password check: it counts checks, records the
// most running at once and makes each take a while so bursts overlap.
func watchHashes(svc *accounts.Service) (checks, most *atomic.Int64) {
	var running atomic.Int64
	checks, most = new(atomic.Int64), new(atomic.Int64)
	svc.SetPasswordCheck(func(hash, pw string) bool {
		checks.Add(1)
		n := running.Add(1)
		defer running.Add(-1)
		for m := most.Load(); n > m && !most.CompareAndSwap(m, n); m = most.Load() {
		}
		time.Sleep(20 * time.Millisecond)
		return secret.CheckPassword(hash, pw)
	})
	return checks, most
}

// burst runs n logins at once and returns their errors.
func burst(svc *accounts.Service, n int, email, client func(i int) string, password string) []error {
	errs := make([]error, n)
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := range n {
		wg.Go(func() {
			<-start
			_, errs[i] = svc.Login(context.Background(), email(i), password, "", client(i))
		})
	}
	close(start)
	wg.Wait()
	return errs
}

// TestLoginBurst is issue 17 finding 1: a burst of wrong-password logins
// from one address is counted attempt by attempt before any hashing, and
// at most 4 password hashes run at once whatever the burst.
func TestLoginBurst(t *testing.T) {
	t.Parallel()
	e, svc := newLoginEnv(t)
	checks, most := watchHashes(svc)

	const n = 60
	errs := burst(svc, n, func(int) string { return ownerEmail }, func(int) string { return "203.0.113.9" }, "wrong password")
	var unauthorized int
	for _, err := range errs {
		switch code(t, err) {
		case notify.CodeUnauthorized:
			unauthorized++
		default:
			require.Positive(t, retryAfter(t, err))
		}
	}
	require.LessOrEqual(t, unauthorized, 10, "only the account's free attempts are answered 401")
	require.LessOrEqual(t, checks.Load(), int64(10), "a refused attempt hashes nothing")
	require.LessOrEqual(t, most.Load(), int64(4))
	clientKey, accountKey := accounts.LoginCounterKeys(ownerEmail, "203.0.113.9")
	require.Equal(t, n, e.counter(t, clientKey), "every attempt of the burst is counted")
	require.Equal(t, n, e.counter(t, accountKey))

	// Distinct accounts from distinct clients: no counter refuses, and the
	// hash slots alone bound the work; the excess is answered 429 at once.
	checks.Store(0)
	most.Store(0)
	errs = burst(svc, n, func(i int) string { return fmt.Sprintf("u%d@example.com", i) },
		func(i int) string { return fmt.Sprintf("198.51.100.%d", i) }, "wrong password")
	var busy int
	for i, err := range errs {
		switch code(t, err) {
		case notify.CodeUnauthorized:
		default:
			require.Equal(t, time.Second, retryAfter(t, err))
			busy++
		}
		c, _ := accounts.LoginCounterKeys(fmt.Sprintf("u%d@example.com", i), fmt.Sprintf("198.51.100.%d", i))
		require.Equal(t, 1, e.counter(t, c), "counted before waiting for a slot")
	}
	require.LessOrEqual(t, most.Load(), int64(4))
	require.Equal(t, int64(n-busy), checks.Load())
	require.Positive(t, busy, "a burst beyond the slots is answered 429")
}

// TestLoginDelays is issue 17 finding 2: failures make the account and
// the client wait growing delays, never a lock of the right password.
func TestLoginDelays(t *testing.T) {
	t.Parallel()
	e, svc := newLoginEnv(t)
	ctx := context.Background()
	login := func(password, client string) error {
		_, err := svc.Login(ctx, ownerEmail, password, "", client)
		return err
	}
	const owner = "192.0.2.1"
	// The owner's usual address becomes known with a login.
	require.NoError(t, login(ownerPassword, owner))

	for range 10 {
		require.Equal(t, notify.CodeUnauthorized, code(t, login("wrong password", "203.0.113.1")))
	}
	// After 10 failures the next attempt waits a second, even with the
	// right password; one made too soon does not move the wait.
	require.Equal(t, time.Second, retryAfter(t, login("wrong password", "203.0.113.1")))
	require.Equal(t, time.Second, retryAfter(t, login(ownerPassword, "203.0.113.1")))
	e.advance(time.Second)
	require.Equal(t, notify.CodeUnauthorized, code(t, login("wrong password", "203.0.113.1")))
	// The 13th attempt: the delay doubled three times.
	require.Equal(t, 8*time.Second, retryAfter(t, login("wrong password", "203.0.113.1")))

	// Many addresses keep failing: the account's delay grows to its cap
	// (5 minutes) and no further.
	for i := range 60 {
		err := login("wrong password", fmt.Sprintf("198.51.100.%d", i))
		if code(t, err) == notify.CodeTooManyRequests {
			d := retryAfter(t, err)
			require.LessOrEqual(t, d, 5*time.Minute)
			e.advance(d)
		}
	}
	// The owner at the known address logs in at once.
	require.NoError(t, login(ownerPassword, owner))
	// So the account counter started again; fill it once more.
	for i := range 40 {
		if err := login("wrong password", fmt.Sprintf("198.51.100.%d", i)); code(t, err) == notify.CodeTooManyRequests {
			e.advance(retryAfter(t, err))
		}
	}
	require.NoError(t, login(ownerPassword, owner), "failures by others never delay a known client")
	for i := range 40 {
		if err := login("wrong password", fmt.Sprintf("198.51.100.%d", i)); code(t, err) == notify.CodeTooManyRequests {
			e.advance(retryAfter(t, err))
		}
	}
	// From a new address the owner waits at most the cap, then gets in.
	err := login(ownerPassword, "192.0.2.200")
	require.Equal(t, notify.CodeTooManyRequests, code(t, err))
	d := retryAfter(t, err)
	require.LessOrEqual(t, d, 5*time.Minute)
	e.advance(d)
	require.NoError(t, login(ownerPassword, "192.0.2.200"))

	// A client that fails across many accounts waits too (50 free
	// attempts), and only that client.
	for i := range 50 {
		_, err := svc.Login(ctx, fmt.Sprintf("spray%d@example.com", i), "wrong password", "", "203.0.113.50")
		require.Equal(t, notify.CodeUnauthorized, code(t, err), i)
	}
	_, err = svc.Login(ctx, "spray-next@example.com", "wrong password", "", "203.0.113.50")
	require.Equal(t, time.Second, retryAfter(t, err))
	_, err = svc.Login(ctx, "spray-next@example.com", "wrong password", "", "203.0.113.51")
	require.Equal(t, notify.CodeUnauthorized, code(t, err))
}

// TestLoginThrottleShared: the counters live in the database, so a
// second process sees the failures the first one counted.
func TestLoginThrottleShared(t *testing.T) {
	t.Parallel()
	e, svc := newLoginEnv(t)
	other := e.service(t)
	for range 10 {
		_, err := svc.Login(context.Background(), ownerEmail, "wrong password", "", "203.0.113.7")
		require.Equal(t, notify.CodeUnauthorized, code(t, err))
	}
	_, err := other.Login(context.Background(), ownerEmail, "wrong password", "", "203.0.113.7")
	require.Equal(t, time.Second, retryAfter(t, err))
}

// TestPasswordRule: bootstrap follows the members' rule (8 to 256).
func TestPasswordRule(t *testing.T) {
	t.Parallel()
	_, svc := newLoginEnv(t)
	for _, pw := range []string{"x", "1234567", string(bytes.Repeat([]byte{'a'}, 257))} {
		_, err := svc.Bootstrap(context.Background(), "W2", "second@example.com", pw)
		require.Equal(t, notify.CodeValidation, code(t, err), pw)
		require.ErrorContains(t, err, "password must be 8 to 256 characters")
	}
	_, err := svc.Bootstrap(context.Background(), "W2", "second@example.com", "12345678")
	require.NoError(t, err)
}
