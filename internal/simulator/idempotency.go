package simulator

import (
	"crypto/sha256"
	"sync"
	"time"
)

// idempotency keeps Resend's Idempotency-Key answers (PROVIDERS.md
// "mailx_email": 1-256 chars, kept 24 h): a repeat of a request with the
// same key and the same body gets the first answer again and sends
// nothing; the same key with another body is a 409
// invalid_idempotent_request.
type idempotency struct {
	mu   sync.Mutex
	seen map[string]idemAnswer // by API key and Idempotency-Key
}

type idemAnswer struct {
	body [32]byte // hash of the request body
	id   string   // the email id answered
	at   time.Time
}

// idemTTL is how long Resend keeps a key.
const idemTTL = 24 * time.Hour

// maxIdemKeys bounds the keys kept.
const maxIdemKeys = 100_000

// lookup answers the email id of an earlier request with key and the same
// body (ok), or conflict when the key was used with another body.
func (m *idempotency) lookup(scope, key string, body []byte, now time.Time) (id string, ok, conflict bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	a, found := m.seen[scope+"\x00"+key]
	if !found || now.Sub(a.at) > idemTTL {
		return "", false, false
	}
	if a.body != sha256.Sum256(body) {
		return "", false, true
	}
	return a.id, true, false
}

// store keeps the answer of a request with key.
func (m *idempotency) store(scope, key string, body []byte, id string, now time.Time) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.seen == nil {
		m.seen = map[string]idemAnswer{}
	}
	if len(m.seen) >= maxIdemKeys {
		// A simulator that runs as long as its process (the daemon's test
		// mode) must not grow without end: expired keys go, and when that
		// is not enough, all of them (a simulator, not Resend).
		for k, a := range m.seen {
			if now.Sub(a.at) > idemTTL {
				delete(m.seen, k)
			}
		}
		if len(m.seen) >= maxIdemKeys {
			clear(m.seen)
		}
	}
	m.seen[scope+"\x00"+key] = idemAnswer{body: sha256.Sum256(body), id: id, at: now}
}
