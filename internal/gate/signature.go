package gate

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"strconv"
	"strings"
	"time"

	"github.com/notifyd/notifyd/internal/notify"
	"github.com/notifyd/notifyd/internal/secret"
)

// SignedRequest is what the signature check needs from an HTTP request.
type SignedRequest struct {
	APIKey    string
	Timestamp string
	Nonce     string
	Signature string
	Method    string
	Target    string // path plus ?query, as sent
	Body      []byte
	// ReadBody, when set and Body is nil, reads the body; it is called only
	// once every check but the signature's has passed, so a request with a
	// wrong key, timestamp, nonce or malformed signature is refused without
	// its body being read. Its errors are returned as they are.
	ReadBody func() ([]byte, error)
}

// Authentication failure details of API-DECISIONS section 3.
const (
	DetailInvalidKey       = "Invalid API key"
	detailTimestamp        = "Timestamp outside tolerance"
	DetailReplay           = "Replay detected"
	detailInvalidSignature = "Invalid signature"
	detailInvalidNonce     = "Invalid nonce"
)

// StringToSign builds the signed string of API-DECISIONS section 3.
func StringToSign(method, target, timestamp, nonce string, body []byte) string {
	sum := sha256.Sum256(body)
	return strings.ToUpper(method) + "\n" + target + "\n" + timestamp + "\n" + nonce + "\n" + hex.EncodeToString(sum[:])
}

// VerifySignatureDeferred authenticates a Notification API request: key,
// status, timestamp tolerance, signature (constant time). It returns the
// nonce for the caller to record in its use case's transaction: a nonce is
// recorded only for a correctly signed request, so nobody can burn another
// client's nonces.
func (g *Gate) VerifySignatureDeferred(ctx context.Context, r SignedRequest) (*notify.APIKey, *Nonce, error) {
	return g.verify(ctx, r, false)
}

// VerifySignatureCached is VerifySignatureDeferred with the key and its
// HMAC secret taken from a cache when present. Only the sends use it:
// their group commit confirms that the cached key is still the stored one
// (accept.go). A request the cached key refuses, or whose key lacks
// scope, is decided by the stored key instead: the key may have been
// rotated or rescoped by another process.
func (g *Gate) VerifySignatureCached(ctx context.Context, r SignedRequest, scope string) (*notify.APIKey, *Nonce, error) {
	keyID, _, _ := strings.Cut(r.APIKey, ".")
	if ck := g.keys.get(keyID); ck != nil {
		k, n, err := g.check(ck, r, g.Now(), true)
		if err == nil && k.HasScope(scope) {
			return k, n, nil
		}
		if _, refused := notify.AsError(err); err != nil && !refused {
			return nil, nil, err // the body could not be read; the key is not in doubt
		}
		g.keys.forget(keyID)
	}
	return g.verify(ctx, r, true)
}

func (g *Gate) verify(ctx context.Context, r SignedRequest, cache bool) (*notify.APIKey, *Nonce, error) {
	keyID, keySecret, ok := strings.Cut(r.APIKey, ".")
	if !ok || keyID == "" || keySecret == "" || len(r.APIKey) > 256 || !validKeyID(keyID) {
		return nil, nil, notify.Unauthorized(DetailInvalidKey)
	}
	var k *notify.APIKey
	err := g.Store.Lookup(ctx, func(tx notify.Tx) (err error) {
		k, err = tx.FindAPIKeyByKeyID(ctx, keyID)
		return err
	})
	if errors.Is(err, notify.ErrNotFound) {
		return nil, nil, notify.Unauthorized(DetailInvalidKey)
	}
	if err != nil {
		return nil, nil, err
	}
	hs, err := g.box.OpenFor(notify.SealedAAD(notify.SealedAPIKeyHMAC, k.ID), k.HMACSecretEnc)
	if err != nil {
		return nil, nil, err
	}
	ck := &cachedKey{key: k, hmac: hs}
	if cache && k.Status == notify.APIKeyActive {
		g.keys.put(ck)
	}
	return g.check(ck, r, g.Now(), cache)
}

// check verifies r against key ck: secret, status, timestamp, nonce
// format, signature (constant time).
func (g *Gate) check(ck *cachedKey, r SignedRequest, now time.Time, cached bool) (*notify.APIKey, *Nonce, error) {
	k := ck.key
	_, keySecret, ok := strings.Cut(r.APIKey, ".")
	if !ok || keySecret == "" || len(r.APIKey) > 256 {
		return nil, nil, notify.Unauthorized(DetailInvalidKey)
	}
	if !secret.Equal(secret.HashToken(keySecret), k.SecretHash) || k.Status != notify.APIKeyActive {
		return nil, nil, notify.Unauthorized(DetailInvalidKey)
	}
	ts, err := strconv.ParseInt(r.Timestamp, 10, 64)
	if err != nil || now.Sub(time.Unix(ts, 0)).Abs() > g.tol {
		return nil, nil, notify.Unauthorized(detailTimestamp)
	}
	if !validNonce(r.Nonce) {
		return nil, nil, notify.Unauthorized(detailInvalidNonce)
	}
	got, err := hex.DecodeString(strings.ToLower(r.Signature))
	if err != nil || len(got) != sha256.Size {
		return nil, nil, notify.Unauthorized(detailInvalidSignature)
	}
	if r.Body == nil && r.ReadBody != nil {
		if r.Body, err = r.ReadBody(); err != nil {
			return nil, nil, err
		}
	}
	mac := hmac.New(sha256.New, ck.hmac)
	mac.Write([]byte(StringToSign(r.Method, r.Target, r.Timestamp, r.Nonce, r.Body)))
	if !hmac.Equal(mac.Sum(nil), got) {
		return nil, nil, notify.Unauthorized(detailInvalidSignature)
	}
	return k, &Nonce{key: k, value: r.Nonce, at: now, expires: now.Add(2 * g.tol), req: r, cached: cached}, nil
}

// Nonce is a verified request's nonce, recorded in the transaction of the
// use case it authorizes so an accepted send costs one transaction.
type Nonce struct {
	key         *notify.APIKey
	value       string
	at, expires time.Time
	// req is the request it came with, verified again when its key was
	// cached and turns out to have changed.
	req    SignedRequest
	cached bool
	// taken: a use case (or a refusal) has it; it records the nonce in its
	// own transaction, and the request must not be refused again.
	taken bool
}

// Take hands n to a use case; it reports false when n is nil or another
// use case took it first.
func (n *Nonce) Take() bool {
	if n == nil || n.taken {
		return false
	}
	n.taken = true
	return true
}

// Pending reports whether n was deferred and no use case has taken it: a
// request failing now must still record it (RefuseSend) so a replay
// answers 401.
func (n *Nonce) Pending() bool { return n != nil && !n.taken }

// VerifySignature authenticates a request and records its nonce.
func (g *Gate) VerifySignature(ctx context.Context, r SignedRequest) (*notify.APIKey, error) {
	k, n, err := g.VerifySignatureDeferred(ctx, r)
	if err != nil {
		return nil, err
	}
	if err := g.Store.Batch(ctx, func(tx notify.Tx) error { return g.RecordNonce(ctx, tx, n) }); err != nil {
		return nil, err
	}
	return k, nil
}

// RecordNonce stores n (kept twice the tolerance window); a nonce seen
// before is a replay.
func (g *Gate) RecordNonce(ctx context.Context, tx notify.Tx, n *Nonce) error {
	if n == nil {
		return nil
	}
	err := tx.UseNonce(ctx, n.key.KeyID, n.value, n.at, n.expires)
	if errors.Is(err, notify.ErrConflict) {
		return notify.Unauthorized(DetailReplay)
	}
	if err != nil {
		return err
	}
	if n.key.LastUsedAt == nil || n.at.Sub(*n.key.LastUsedAt) > time.Minute {
		return tx.TouchAPIKey(ctx, n.key.ID, n.at)
	}
	return nil
}

// RefuseSigned answers err for a signed request refused before its use
// case ran, recording its deferred nonce first so a replay answers 401.
func (g *Gate) RefuseSigned(ctx context.Context, n *Nonce, err error) error {
	if !n.Take() {
		return err
	}
	return g.RefuseWithNonce(ctx, n, err)
}

// RefuseWithNonce records n for a request refused before its transaction,
// so a replay of it still answers 401, then returns err.
func (g *Gate) RefuseWithNonce(ctx context.Context, n *Nonce, err error) error {
	if n == nil {
		return err
	}
	if nerr := g.Store.Batch(ctx, func(tx notify.Tx) error { return g.RecordNonce(ctx, tx, n) }); nerr != nil {
		return nerr
	}
	return err
}

// validKeyID: key ids are "nk_" plus hex; anything outside letters, digits,
// '_' and '-' cannot exist and is refused before the lookup (PostgreSQL
// refuses invalid UTF-8 parameters, which a header may carry).
func validKeyID(id string) bool {
	if len(id) > 64 {
		return false
	}
	for i := 0; i < len(id); i++ {
		c := id[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '_' || c == '-') {
			return false
		}
	}
	return true
}

// validNonce: 1 to 128 printable ASCII characters.
func validNonce(n string) bool {
	if len(n) < 1 || len(n) > 128 {
		return false
	}
	for i := 0; i < len(n); i++ {
		if n[i] < 0x21 || n[i] > 0x7e {
			return false
		}
	}
	return true
}

// RequireScope answers 403 when k lacks scope.
func RequireScope(k *notify.APIKey, scope string) error {
	if !k.HasScope(scope) {
		return notify.Forbidden("API key missing required scope: %s", scope)
	}
	return nil
}

// Reverify verifies again, against the stored key, the request a nonce
// came with, once its cached key turned out to have changed
// (ErrStaleKey): the cached entry is dropped first.
func (g *Gate) Reverify(ctx context.Context, n *Nonce) (*notify.APIKey, *Nonce, error) {
	g.keys.forget(n.key.KeyID)
	return g.verify(ctx, n.req, true)
}
