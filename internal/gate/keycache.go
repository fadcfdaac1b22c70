package gate

import (
	"slices"
	"sync"

	"github.com/notifyd/notifyd/internal/notify"
)

// keyCache keeps the API keys of signed sends with their opened HMAC
// secrets, so that the hot path neither reads the key nor decrypts its
// secret on every request. An entry may be stale (the key was rotated,
// suspended or revoked, here or by another process): the send group
// commit reads each key it uses once per batch and refuses a call whose
// cached key differs from the stored one (errStaleKey), which is then
// verified again against the stored key. A change made through this
// process also drops the entry at once.
type keyCache struct {
	mu sync.RWMutex
	m  map[string]*cachedKey // by key id (nk_…)
}

type cachedKey struct {
	key  *notify.APIKey
	hmac []byte
}

// maxCachedKeys bounds the cache; only keys that exist are cached, so
// this is a ceiling on memory, not a working limit.
const maxCachedKeys = 10000

func newKeyCache() *keyCache { return &keyCache{m: map[string]*cachedKey{}} }

func (c *keyCache) get(keyID string) *cachedKey {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.m[keyID]
}

func (c *keyCache) put(k *cachedKey) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.m) >= maxCachedKeys {
		clear(c.m)
	}
	c.m[k.key.KeyID] = k
}

func (c *keyCache) forget(keyID string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.m, keyID)
}

// sameKey reports whether a stored key still authorizes what the cached
// one did: same secrets, status, scopes and template list.
func sameKey(stored, cached *notify.APIKey) bool {
	return stored.KeyID == cached.KeyID && stored.WorkspaceID == cached.WorkspaceID && stored.Status == cached.Status &&
		stored.SecretHash == cached.SecretHash && stored.HMACSecretEnc == cached.HMACSecretEnc &&
		slices.Equal(stored.Scopes, cached.Scopes) && slices.Equal(stored.AllowedTemplateCodes, cached.AllowedTemplateCodes) &&
		(stored.AllowedTemplateCodes == nil) == (cached.AllowedTemplateCodes == nil)
}
