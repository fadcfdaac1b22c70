package accounts

import (
	"context"
	"errors"
	"sync/atomic"
	"time"

	"github.com/notifyd/notifyd/internal/notify"
	"github.com/notifyd/notifyd/internal/secret"
	"github.com/notifyd/notifyd/internal/usecase"
)

// Login throttle (docs/DECISIONS.md, "Login throttle"). Every attempt is
// counted in the database before its password is hashed, under three keys:
// the client address, the account (email) and the pair. A key's first
// attempts are free; after that each attempt makes the key's next one wait
// a delay that doubles per attempt, up to the rule's cap. No key ever
// refuses the right password for longer than its cap, and a client that
// logged in to the account before (a known client) is checked only on the
// pair key, so failures by others delay neither the account nor its
// owner's usual address.
type throttleRule struct {
	free int           // attempts before the first delay
	cap  time.Duration // longest delay
}

var (
	clientRule  = throttleRule{free: 50, cap: 15 * time.Minute}
	accountRule = throttleRule{free: 10, cap: 5 * time.Minute}
	pairRule    = throttleRule{free: 10, cap: 15 * time.Minute}
)

// delay is how long the key's next attempt waits after its n-th.
func (r throttleRule) delay(n int) time.Duration {
	if n < r.free {
		return 0
	}
	if n-r.free >= 20 {
		return r.cap
	}
	return min(time.Second<<(n-r.free), r.cap)
}

const (
	// loginQuiet ends a counter after this long without attempts.
	loginQuiet = time.Hour
	// knownClientTTL is how long a client stays known after a login.
	knownClientTTL = 30 * 24 * time.Hour
	// loginHashes bounds concurrent password hashes per process: argon2id
	// takes 19 MiB each, so 4 hold about 80 MiB at most.
	loginHashes = 4
	// loginHashWait is how long an admitted attempt waits for a hash slot
	// before it is answered 429.
	loginHashWait = 200 * time.Millisecond
	// loginSweepEvery: one reservation in this many deletes ended counters.
	loginSweepEvery = 64
)

// loginThrottle is the process's share of the throttle: the hash slots.
// The counters are in the database, so every process sees them.
type loginThrottle struct {
	usecase.Kit
	slots chan struct{}
	wait  time.Duration
	// check is secret.CheckPassword; tests wrap it to watch concurrency.
	check func(hash, pw string) bool
	// hash is secret.HashPassword, bounded by the same slots.
	hash   func(pw string) (string, error)
	sweeps atomic.Uint64
}

func newLoginThrottle(kit usecase.Kit) *loginThrottle {
	return &loginThrottle{Kit: kit, slots: make(chan struct{}, loginHashes), wait: loginHashWait,
		check: secret.CheckPassword, hash: secret.HashPassword}
}

// errLoginBusy answers an attempt that found every hash slot taken.
func errLoginBusy() error {
	e := notify.Errorf(notify.CodeTooManyRequests, "Too many login attempts at once; try again shortly")
	e.RetryAfter = time.Second
	return e
}

// acquire takes a hash slot, waiting at most l.wait.
func (l *loginThrottle) acquire(ctx context.Context) (release func(), err error) {
	select {
	case l.slots <- struct{}{}:
	default:
		t := time.NewTimer(l.wait)
		defer t.Stop()
		select {
		case l.slots <- struct{}{}:
		case <-t.C:
			return nil, errLoginBusy()
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	return func() { <-l.slots }, nil
}

// checkPassword runs l.check in a hash slot.
func (l *loginThrottle) checkPassword(ctx context.Context, hash, pw string) (bool, error) {
	release, err := l.acquire(ctx)
	if err != nil {
		return false, err
	}
	defer release()
	return l.check(hash, pw), nil
}

// hashPassword runs l.hash in a hash slot.
func (l *loginThrottle) hashPassword(ctx context.Context, pw string) (string, error) {
	release, err := l.acquire(ctx)
	if err != nil {
		return "", err
	}
	defer release()
	return l.hash(pw)
}

// loginKeys are the counter keys of one attempt, hashed so the table
// holds no email or address in the clear.
type loginKeys struct {
	client, account, pair, known string
}

func newLoginKeys(email, client string) loginKeys {
	return loginKeys{
		client:  secret.HashToken("login-client\x00" + client),
		account: secret.HashToken("login-account\x00" + email),
		pair:    secret.HashToken("login-pair\x00" + email + "\x00" + client),
		known:   secret.HashToken("login-known\x00" + email + "\x00" + client),
	}
}

// reserve counts one attempt before any hashing, and refuses it with
// 429 and Retry-After while a checked key waits out its delay.
func (l *loginThrottle) reserve(ctx context.Context, k loginKeys) error {
	now := l.Now().Truncate(time.Millisecond) // as stored
	var wait time.Duration
	err := l.Store.Update(ctx, func(tx notify.Tx) error {
		wait = 0
		known := true
		if _, err := tx.FindLoginCounter(ctx, k.known, now); errors.Is(err, notify.ErrNotFound) {
			known = false
		} else if err != nil {
			return err
		}
		steps := []struct {
			key     string
			rule    throttleRule
			checked bool
		}{{k.client, clientRule, !known}, {k.account, accountRule, !known}, {k.pair, pairRule, true}}
		counted := make([]*notify.LoginCounter, len(steps))
		for i, st := range steps {
			c, err := tx.CountLoginAttempt(ctx, st.key, now, now.Add(loginQuiet))
			if err != nil {
				return err
			}
			if st.checked && c.BlockedUntil.After(now) {
				// Refused: counted on the keys so far, and the block is
				// not moved, so a client that waits as told is not
				// delayed further.
				wait = c.BlockedUntil.Sub(now)
				return nil
			}
			counted[i] = c
		}
		for i, c := range counted {
			if d := steps[i].rule.delay(c.Attempts); d > 0 {
				c.BlockedUntil = now.Add(d)
				if err := tx.PutLoginCounter(ctx, c); err != nil {
					return err
				}
			}
		}
		if l.sweeps.Add(1)%loginSweepEvery == 0 {
			_, err := tx.DeleteExpiredLoginCounters(ctx, now)
			return err
		}
		return nil
	})
	if err != nil {
		return err
	}
	if wait > 0 {
		e := notify.Errorf(notify.CodeTooManyRequests, "Too many failed login attempts; try again later")
		e.RetryAfter = wait
		return e
	}
	return nil
}

// succeeded clears the account's and the pair's counters, takes the
// attempt back from the client's, and makes the client known.
func (l *loginThrottle) succeeded(ctx context.Context, k loginKeys) error {
	now := l.Now()
	return l.Store.Update(ctx, func(tx notify.Tx) error {
		c, err := tx.FindLoginCounter(ctx, k.client, now)
		switch {
		case err == nil && c.Attempts > 0:
			c.Attempts--
			if err := tx.PutLoginCounter(ctx, c); err != nil {
				return err
			}
		case err != nil && !errors.Is(err, notify.ErrNotFound):
			return err
		}
		for _, key := range []string{k.account, k.pair} {
			if err := tx.DeleteLoginCounter(ctx, key); err != nil {
				return err
			}
		}
		return tx.PutLoginCounter(ctx, &notify.LoginCounter{Key: k.known, ExpiresAt: now.Add(knownClientTTL)})
	})
}

// verify checks email and password through the throttle: the attempt is
// counted first, the hash runs in a bounded slot, and a success clears
// the counters. Wrong email and wrong password answer the same 401.
func (l *loginThrottle) verify(ctx context.Context, email, password, clientAddr string) (*notify.User, error) {
	keys := newLoginKeys(email, clientAddr)
	if err := l.reserve(ctx, keys); err != nil {
		return nil, err
	}
	var user *notify.User
	var err error
	if usecase.Storable(email) { // anything else names no user (and PostgreSQL refuses it)
		err = l.Store.View(ctx, func(tx notify.Tx) (err error) {
			user, err = tx.FindUserByEmail(ctx, email)
			return err
		})
	}
	if err != nil && !errors.Is(err, notify.ErrNotFound) {
		return nil, err
	}
	// Check a password even for an unknown email so timing does not tell
	// which emails exist.
	// An account added without a password has none until one is set
	// (AddMember): it checks against the dummy and cannot log in.
	hash := dummyHash
	if user != nil && user.PasswordHash != "" {
		hash = user.PasswordHash
	}
	ok, err := l.checkPassword(ctx, hash, password)
	if err != nil {
		return nil, err
	}
	if !ok || user == nil || user.PasswordHash == "" {
		return nil, notify.Unauthorized("Invalid email or password")
	}
	if err := l.succeeded(ctx, keys); err != nil {
		return nil, err
	}
	return user, nil
}

var dummyHash = func() string {
	h, err := secret.HashPassword("notifyd-dummy-password")
	if err != nil {
		panic(err)
	}
	return h
}()

// CheckPasswordRule is the one password rule of every password a user
// sets (bootstrap, members, password change): 8 to 256 characters.
func CheckPasswordRule(field, pw string) error {
	if len(pw) < 8 || len(pw) > 256 {
		return notify.Invalid("%s must be 8 to 256 characters", field)
	}
	return nil
}

// ChangePassword sets the actor's password after checking the current
// one (through the login throttle) and ends the user's other sessions.
func (s *Service) ChangePassword(ctx context.Context, a *usecase.Actor, current, next, clientAddr string) error {
	if err := CheckPasswordRule("newPassword", next); err != nil {
		return err
	}
	if len(current) > 256 {
		return notify.Invalid("currentPassword is incorrect")
	}
	user, err := s.logins.verify(ctx, a.Email, current, clientAddr)
	if e, ok := notify.AsError(err); ok && e.Code == notify.CodeUnauthorized {
		// 401 would read as an ended session.
		return notify.Invalid("currentPassword is incorrect")
	}
	if err != nil {
		return err
	}
	if user.ID != a.UserID {
		return notify.Invalid("currentPassword is incorrect")
	}
	hash, err := s.logins.hashPassword(ctx, next)
	if err != nil {
		return err
	}
	return s.Store.Update(ctx, func(tx notify.Tx) error {
		if err := tx.SetUserPassword(ctx, a.UserID, hash); err != nil {
			return err
		}
		_, err := tx.DeleteSessionsOfUser(ctx, a.UserID, a.TokenHash)
		return err
	})
}

// LogoutAll ends every session of the actor's user, this one included.
func (s *Service) LogoutAll(ctx context.Context, a *usecase.Actor) error {
	return s.Store.Update(ctx, func(tx notify.Tx) error {
		_, err := tx.DeleteSessionsOfUser(ctx, a.UserID, "")
		return err
	})
}
