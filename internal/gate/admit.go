package gate

import (
	"context"
	"errors"
	"slices"
	"time"

	"github.com/notifyd/notifyd/internal/notify"
)

// ErrStaleKey: the API key a send was verified with changed since it was
// cached (rotated, suspended, revoked, rescoped). Nothing of the call was
// written; the caller verifies it again against the stored key
// (Reverify).
var ErrStaleKey = errors.New("API key changed since it was cached")

// Call is one signed call of a send batch as the gate sees it: its key,
// its nonce, and the refusal it gets (nil: admitted).
type Call struct {
	Key   *notify.APIKey
	Nonce *Nonce
	Err   error
}

// Admission is a send batch's passage through the gate inside the
// batch's own transaction, so an accepted send costs one transaction.
type Admission struct {
	g     *Gate
	calls []*Call
	adm   *admission
	lock  bool
	now   time.Time
	touch []*notify.APIKey
}

// Admit confirms the cached keys of calls (ErrStaleKey), records their
// nonces in one statement (a replay answers 401) and applies the request
// limits in order (429); each call's Err says what it got. lock reads
// the limit counters under their locks (after ErrRateRace, or for a lone
// retried call). The caller sets Err of the calls it refuses itself, then
// calls Finish last in the same transaction and Committed after the
// commit.
func (g *Gate) Admit(ctx context.Context, tx notify.Tx, calls []*Call, now time.Time, lock bool) (*Admission, error) {
	if err := confirmKeys(ctx, tx, calls); err != nil {
		return nil, err
	}
	if err := useNonces(ctx, tx, calls, now); err != nil {
		return nil, err
	}
	keys := make([]*notify.APIKey, len(calls))
	for i, c := range calls {
		if c.Err == nil {
			keys[i] = c.Key
		}
	}
	adm, err := g.planAdmission(ctx, tx, keys, now)
	if err != nil {
		return nil, err
	}
	if err := adm.read(ctx, tx, lock); err != nil {
		return nil, err
	}
	for i, c := range calls {
		if c.Err == nil {
			c.Err = adm.admit(i)
		}
	}
	return &Admission{g: g, calls: calls, adm: adm, lock: lock, now: now}, nil
}

// Finish writes the last use of the admitted calls' keys (at most once a
// minute each) and the counters the batch grew. Last in the transaction,
// so a counter row is locked from here to the commit only; ErrRateRace
// when another process admitted requests meanwhile (run the batch again
// with lock).
func (a *Admission) Finish(ctx context.Context, tx notify.Tx) error {
	a.touch = a.g.toTouch(a.calls, a.now)
	for _, k := range a.touch {
		if err := tx.TouchAPIKey(ctx, k.ID, a.now); err != nil {
			return err
		}
	}
	return a.adm.write(ctx, tx, a.lock)
}

// Committed remembers the keys whose last use the committed batch wrote.
func (a *Admission) Committed() {
	a.g.touchMu.Lock()
	defer a.g.touchMu.Unlock()
	for _, k := range a.touch {
		a.g.touched[k.ID] = a.now
	}
}

// toTouch lists the keys of admitted calls whose last use was written
// more than a minute ago.
func (g *Gate) toTouch(calls []*Call, now time.Time) []*notify.APIKey {
	g.touchMu.Lock()
	defer g.touchMu.Unlock()
	var out []*notify.APIKey
	for _, c := range calls {
		if c.Err != nil || slices.ContainsFunc(out, func(k *notify.APIKey) bool { return k.ID == c.Key.ID }) {
			continue
		}
		last, ok := g.touched[c.Key.ID]
		if !ok && c.Key.LastUsedAt != nil {
			last, ok = *c.Key.LastUsedAt, true
		}
		if !ok || now.Sub(last) > time.Minute {
			out = append(out, c.Key)
		}
	}
	return out
}

// confirmKeys reads each cached API key of calls once and marks the calls
// whose key changed since it was cached (ErrStaleKey).
func confirmKeys(ctx context.Context, tx notify.Tx, calls []*Call) error {
	stored := map[string]*notify.APIKey{}
	for _, c := range calls {
		if c.Nonce == nil || !c.Nonce.cached {
			continue
		}
		k, ok := stored[c.Key.ID]
		if !ok {
			var err error
			k, err = tx.FindAPIKey(ctx, c.Key.WorkspaceID, c.Key.ID)
			if notify.IsNotFound(err) {
				k, err = nil, nil
			}
			if err != nil {
				return err
			}
			stored[c.Key.ID] = k
		}
		if k == nil || !sameKey(k, c.Key) {
			c.Err = ErrStaleKey
		}
	}
	return nil
}

// useNonces records the nonces of the calls still in play in one
// statement; a nonce seen before (or twice in the batch) is a replay.
func useNonces(ctx context.Context, tx notify.Tx, calls []*Call, now time.Time) error {
	var uses []notify.NonceUse
	var owners []*Call
	seen := map[[2]string]bool{}
	for _, c := range calls {
		if c.Err != nil || c.Nonce == nil {
			continue
		}
		id := [2]string{c.Nonce.key.KeyID, c.Nonce.value}
		if seen[id] {
			c.Err = notify.Unauthorized(DetailReplay)
			continue
		}
		seen[id] = true
		uses = append(uses, notify.NonceUse{KeyID: id[0], Nonce: id[1], ExpiresAt: c.Nonce.expires})
		owners = append(owners, c)
	}
	if len(uses) == 0 {
		return nil
	}
	fresh, err := tx.UseNonces(ctx, uses, now)
	if err != nil {
		return err
	}
	for i, c := range owners {
		if !fresh[i] {
			c.Err = notify.Unauthorized(DetailReplay)
		}
	}
	return nil
}
