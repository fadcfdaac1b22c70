package delivery

import (
	"context"
	"sync"
	"time"

	"github.com/notifyd/notifyd/internal/notify"
	"github.com/notifyd/notifyd/internal/provider"
)

// Quota looks up a provider account's balance through its adapter, when
// the adapter has a balance API, with a 60-second cache per account. It
// answers nil when there is no balance to show (no balance API, a
// configuration that does not build, a failed lookup).
func (e *Engine) Quota(ctx context.Context, p *notify.ProviderAccount) *notify.Quota {
	if q, ok := e.quotas.get(p.ID, e.now()); ok {
		return q
	}
	k, ok := e.kinds[p.ProviderKind]
	if !ok {
		return nil
	}
	cfg, err := e.openConfig(p)
	if err != nil {
		return nil
	}
	prov, err := k.New(cfg, e.deps)
	if err != nil {
		return nil
	}
	qc, ok := prov.(provider.QuotaChecker)
	if !ok {
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	q, err := qc.Quota(ctx)
	var out *notify.Quota
	if err == nil {
		out = &q
	} else {
		e.log.WarnContext(ctx, "quota lookup failed", "provider", p.ID, "kind", p.ProviderKind, "err", err)
	}
	e.quotas.put(p.ID, out, e.now())
	return out
}

// ForgetQuota drops the cached balance of a provider account (its
// configuration changed).
func (e *Engine) ForgetQuota(accountID string) { e.quotas.forget(accountID) }

const quotaTTL = 60 * time.Second

type quotaCache struct {
	mu sync.Mutex
	m  map[string]quotaEntry
}

type quotaEntry struct {
	q  *notify.Quota
	at time.Time
}

func newQuotaCache() *quotaCache { return &quotaCache{m: map[string]quotaEntry{}} }

func (c *quotaCache) get(id string, now time.Time) (*notify.Quota, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.m[id]
	if !ok || now.Sub(e.at) >= quotaTTL {
		return nil, false
	}
	return e.q, true
}

func (c *quotaCache) put(id string, q *notify.Quota, now time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.m[id] = quotaEntry{q: q, at: now}
}

func (c *quotaCache) forget(id string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.m, id)
}
