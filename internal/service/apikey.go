package service

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
	"github.com/notifyd/notifyd/internal/usecase"
)

// APIKeyInput is the body of create and update.
type APIKeyInput struct {
	Name                 *string
	Scopes               *[]string
	AllowedTemplateCodes *[]string // nil pointer: unchanged; pointer to nil: every template
	SetTemplates         bool
}

// NewAPIKey is a created or rotated key with its secrets, shown once.
type NewAPIKey struct {
	Key        *notify.APIKey
	Token      string // <key_id>.<key_secret>
	HMACSecret string
}

func validateKeyInput(in APIKeyInput, create bool) error {
	if create && in.Name == nil {
		return notify.Invalid("name is required")
	}
	if in.Name != nil && (strings.TrimSpace(*in.Name) == "" || len([]rune(*in.Name)) > 120 || !usecase.Storable(*in.Name)) {
		return notify.Invalid("name must be 1 to 120 characters of text")
	}
	if create && in.Scopes == nil {
		return notify.Invalid("scopes is required")
	}
	if in.Scopes != nil {
		if len(*in.Scopes) == 0 {
			return notify.Invalid("scopes must hold at least one scope")
		}
		for _, sc := range *in.Scopes {
			ok := false
			for _, v := range notify.Scopes {
				ok = ok || v == sc
			}
			if !ok {
				return notify.Invalid("scopes must be among %s", strings.Join(notify.Scopes, ", "))
			}
		}
	}
	if in.AllowedTemplateCodes != nil && *in.AllowedTemplateCodes != nil {
		if len(*in.AllowedTemplateCodes) > 1000 {
			return notify.Invalid("allowedTemplateCodes must hold at most 1000 codes")
		}
		for _, c := range *in.AllowedTemplateCodes {
			if c == "" || len(c) > 120 || !usecase.Storable(c) {
				return notify.Invalid("allowedTemplateCodes entries must be 1 to 120 characters")
			}
		}
	}
	return nil
}

func (s *Service) mintSecrets(k *notify.APIKey) (token, hmacSecret string, err error) {
	keySecret := secret.RandomToken(32)
	hmacSecret = secret.RandomHex(32)
	enc, err := s.box.SealFor(notify.SealedAAD(notify.SealedAPIKeyHMAC, k.ID), []byte(hmacSecret))
	if err != nil {
		return "", "", err
	}
	k.SecretHash, k.HMACSecretEnc = secret.HashToken(keySecret), enc
	return k.KeyID + "." + keySecret, hmacSecret, nil
}

// CreateAPIKey issues a key (audit api_key.create).
func (s *Service) CreateAPIKey(ctx context.Context, a *usecase.Actor, in APIKeyInput) (*NewAPIKey, error) {
	if err := validateKeyInput(in, true); err != nil {
		return nil, err
	}
	now := s.Now()
	k := &notify.APIKey{ID: usecase.NewID(), WorkspaceID: a.WorkspaceID, KeyID: "nk_" + secret.RandomHex(12), Name: strings.TrimSpace(*in.Name),
		Scopes: usecase.Dedupe(*in.Scopes), Status: notify.APIKeyActive, CreatedAt: now, UpdatedAt: now}
	if in.AllowedTemplateCodes != nil {
		k.AllowedTemplateCodes = *in.AllowedTemplateCodes
	}
	token, hs, err := s.mintSecrets(k)
	if err != nil {
		return nil, err
	}
	err = s.Store.Update(ctx, func(tx notify.Tx) error {
		if err := tx.CreateAPIKey(ctx, k); err != nil {
			return err
		}
		return s.Audit(ctx, tx, a, a.WorkspaceID, "api_key.create", "api_key", k.ID, map[string]any{"name": k.Name, "scopes": k.Scopes})
	})
	if err != nil {
		return nil, err
	}
	return &NewAPIKey{Key: k, Token: token, HMACSecret: hs}, nil
}

// ListAPIKeys lists the workspace's keys (never their secrets).
func (s *Service) ListAPIKeys(ctx context.Context, a *usecase.Actor) ([]*notify.APIKey, error) {
	var out []*notify.APIKey
	err := s.Store.View(ctx, func(tx notify.Tx) (err error) {
		out, err = tx.FindAPIKeys(ctx, a.WorkspaceID)
		return err
	})
	return out, err
}

// UpdateAPIKey changes name, scopes or the template list (api_key.update).
func (s *Service) UpdateAPIKey(ctx context.Context, a *usecase.Actor, id string, in APIKeyInput) (*notify.APIKey, error) {
	if err := validateKeyInput(in, false); err != nil {
		return nil, err
	}
	return s.changeKey(ctx, a, id, "api_key.update", func(k *notify.APIKey) error {
		if k.Status == notify.APIKeyRevoked {
			return notify.Conflict("API key is revoked")
		}
		if in.Name != nil {
			k.Name = strings.TrimSpace(*in.Name)
		}
		if in.Scopes != nil {
			k.Scopes = usecase.Dedupe(*in.Scopes)
		}
		if in.AllowedTemplateCodes != nil {
			k.AllowedTemplateCodes = *in.AllowedTemplateCodes
		}
		return nil
	})
}

// SetAPIKeyStatus revokes (final), suspends or resumes a key.
func (s *Service) SetAPIKeyStatus(ctx context.Context, a *usecase.Actor, id, action string) (*notify.APIKey, error) {
	return s.changeKey(ctx, a, id, "api_key."+action, func(k *notify.APIKey) error {
		if k.Status == notify.APIKeyRevoked {
			return notify.Conflict("API key is revoked")
		}
		switch action {
		case "revoke":
			k.Status = notify.APIKeyRevoked
		case "suspend":
			k.Status = notify.APIKeySuspended
		case "resume":
			k.Status = notify.APIKeyActive
		}
		return nil
	})
}

// RotateAPIKey issues a new key secret and HMAC secret; the old ones stop
// working at once (api_key.rotate).
func (s *Service) RotateAPIKey(ctx context.Context, a *usecase.Actor, id string) (*NewAPIKey, error) {
	var token, hs string
	k, err := s.changeKey(ctx, a, id, "api_key.rotate", func(k *notify.APIKey) error {
		if k.Status == notify.APIKeyRevoked {
			return notify.Conflict("API key is revoked")
		}
		var err error
		token, hs, err = s.mintSecrets(k)
		return err
	})
	if err != nil {
		return nil, err
	}
	return &NewAPIKey{Key: k, Token: token, HMACSecret: hs}, nil
}

func (s *Service) changeKey(ctx context.Context, a *usecase.Actor, id, action string, change func(*notify.APIKey) error) (*notify.APIKey, error) {
	if !usecase.Storable(id) {
		return nil, notify.NotFound("API key")
	}
	var k *notify.APIKey
	err := s.Store.Update(ctx, func(tx notify.Tx) error {
		var err error
		if k, err = tx.FindAPIKey(ctx, a.WorkspaceID, id); err != nil {
			return usecase.NotFound(err, "API key")
		}
		if err := change(k); err != nil {
			return err
		}
		k.UpdatedAt = s.Now()
		if err := tx.UpdateAPIKey(ctx, k); err != nil {
			return err
		}
		s.keys.forget(k.KeyID)
		return s.Audit(ctx, tx, a, a.WorkspaceID, action, "api_key", k.ID, map[string]any{"name": k.Name, "status": k.Status})
	})
	return k, err
}

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
	detailInvalidKey       = "Invalid API key"
	detailTimestamp        = "Timestamp outside tolerance"
	detailReplay           = "Replay detected"
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
func (s *Service) VerifySignatureDeferred(ctx context.Context, r SignedRequest) (*notify.APIKey, *Nonce, error) {
	return s.verify(ctx, r, false)
}

// VerifySignatureCached is VerifySignatureDeferred with the key and its
// HMAC secret taken from a cache when present. Only the sends use it:
// their group commit confirms that the cached key is still the stored one
// (accept.go). A request the cached key refuses, or whose key lacks
// scope, is decided by the stored key instead: the key may have been
// rotated or rescoped by another process.
func (s *Service) VerifySignatureCached(ctx context.Context, r SignedRequest, scope string) (*notify.APIKey, *Nonce, error) {
	keyID, _, _ := strings.Cut(r.APIKey, ".")
	if ck := s.keys.get(keyID); ck != nil {
		k, n, err := s.check(ck, r, s.Now(), true)
		if err == nil && k.HasScope(scope) {
			return k, n, nil
		}
		if _, refused := notify.AsError(err); err != nil && !refused {
			return nil, nil, err // the body could not be read; the key is not in doubt
		}
		s.keys.forget(keyID)
	}
	return s.verify(ctx, r, true)
}

func (s *Service) verify(ctx context.Context, r SignedRequest, cache bool) (*notify.APIKey, *Nonce, error) {
	keyID, keySecret, ok := strings.Cut(r.APIKey, ".")
	if !ok || keyID == "" || keySecret == "" || len(r.APIKey) > 256 || !validKeyID(keyID) {
		return nil, nil, notify.Unauthorized(detailInvalidKey)
	}
	var k *notify.APIKey
	err := s.Store.Lookup(ctx, func(tx notify.Tx) (err error) {
		k, err = tx.FindAPIKeyByKeyID(ctx, keyID)
		return err
	})
	if errors.Is(err, notify.ErrNotFound) {
		return nil, nil, notify.Unauthorized(detailInvalidKey)
	}
	if err != nil {
		return nil, nil, err
	}
	hs, err := s.box.OpenFor(notify.SealedAAD(notify.SealedAPIKeyHMAC, k.ID), k.HMACSecretEnc)
	if err != nil {
		return nil, nil, err
	}
	ck := &cachedKey{key: k, hmac: hs}
	if cache && k.Status == notify.APIKeyActive {
		s.keys.put(ck)
	}
	return s.check(ck, r, s.Now(), cache)
}

// check verifies r against key ck: secret, status, timestamp, nonce
// format, signature (constant time).
func (s *Service) check(ck *cachedKey, r SignedRequest, now time.Time, cached bool) (*notify.APIKey, *Nonce, error) {
	k := ck.key
	_, keySecret, ok := strings.Cut(r.APIKey, ".")
	if !ok || keySecret == "" || len(r.APIKey) > 256 {
		return nil, nil, notify.Unauthorized(detailInvalidKey)
	}
	if !secret.Equal(secret.HashToken(keySecret), k.SecretHash) || k.Status != notify.APIKeyActive {
		return nil, nil, notify.Unauthorized(detailInvalidKey)
	}
	ts, err := strconv.ParseInt(r.Timestamp, 10, 64)
	if err != nil || now.Sub(time.Unix(ts, 0)).Abs() > s.tol {
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
	return k, &Nonce{key: k, value: r.Nonce, at: now, expires: now.Add(2 * s.tol), req: r, cached: cached}, nil
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

// take hands n to a use case; it reports false when n is nil or another
// use case took it first.
func (n *Nonce) take() bool {
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
func (s *Service) VerifySignature(ctx context.Context, r SignedRequest) (*notify.APIKey, error) {
	k, n, err := s.VerifySignatureDeferred(ctx, r)
	if err != nil {
		return nil, err
	}
	if err := s.Store.Batch(ctx, func(tx notify.Tx) error { return s.recordNonce(ctx, tx, n) }); err != nil {
		return nil, err
	}
	return k, nil
}

// recordNonce stores n (kept twice the tolerance window); a nonce seen
// before is a replay.
func (s *Service) recordNonce(ctx context.Context, tx notify.Tx, n *Nonce) error {
	if n == nil {
		return nil
	}
	err := tx.UseNonce(ctx, n.key.KeyID, n.value, n.at, n.expires)
	if errors.Is(err, notify.ErrConflict) {
		return notify.Unauthorized(detailReplay)
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
func (s *Service) RefuseSigned(ctx context.Context, n *Nonce, err error) error {
	if !n.take() {
		return err
	}
	return s.refuseWithNonce(ctx, n, err)
}

// refuseWithNonce records n for a request refused before its transaction,
// so a replay of it still answers 401, then returns err.
func (s *Service) refuseWithNonce(ctx context.Context, n *Nonce, err error) error {
	if n == nil {
		return err
	}
	if nerr := s.Store.Batch(ctx, func(tx notify.Tx) error { return s.recordNonce(ctx, tx, n) }); nerr != nil {
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
