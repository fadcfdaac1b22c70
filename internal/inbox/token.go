package inbox

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"strings"
	"time"

	"github.com/notifyd/notifyd/internal/notify"
	"github.com/notifyd/notifyd/internal/usecase"
)

// Recipient tokens (issue 33, item 2; docs/DECISIONS.md "Recipient
// tokens"). A token names one profile of one workspace and when it
// expires, signed with the workspace's inbox secret:
//
//	"v1." + base64url(payload) + "." + base64url(HMAC-SHA256(secret, "v1." + base64url(payload)))
//
// where payload is the JSON object {"ws": workspace id, "sub": external
// id, "exp": Unix seconds} and the HMAC key is the secret's text. The
// application's backend mints one with the signed API, or offline with
// the secret (README "In-app inbox"). A token is refused after exp, when
// exp lies further ahead than MaxTokenTTL (a token is short-lived even
// when minted offline), and once the secret rotated.

// Token lifetimes.
const (
	DefaultTokenTTL = time.Hour
	MaxTokenTTL     = 24 * time.Hour
)

// secretPrefix marks an inbox secret.
const secretPrefix = "nis_"

// tokenPayload is a token's signed content.
type tokenPayload struct {
	WS  string `json:"ws"`
	Sub string `json:"sub"`
	Exp int64  `json:"exp"`
}

// Sign makes the token of p with secret (the room's minting, and tests').
func Sign(secret, workspaceID, externalID string, exp time.Time) string {
	b, _ := json.Marshal(tokenPayload{WS: workspaceID, Sub: externalID, Exp: exp.Unix()})
	head := "v1." + base64.RawURLEncoding.EncodeToString(b)
	return head + "." + mac(secret, head)
}

func mac(secret, head string) string {
	h := hmac.New(sha256.New, []byte(secret))
	h.Write([]byte(head))
	return base64.RawURLEncoding.EncodeToString(h.Sum(nil))
}

// IsRecipientToken reports whether token has the form of a recipient
// token (whatever its signature), to tell it from a credential of
// another kind.
func IsRecipientToken(token string) bool { return strings.HasPrefix(token, "v1.") }

// errToken is every refusal of a token: which check failed is not told
// (nor the token echoed).
var errToken = notify.Unauthorized("Invalid or expired recipient token")

// parse reads a token's payload without checking its signature.
func parse(token string) (tokenPayload, string, string, error) {
	var p tokenPayload
	parts := strings.Split(token, ".")
	if len(token) > 2048 || len(parts) != 3 || parts[0] != "v1" {
		return p, "", "", errToken
	}
	b, err := base64.RawURLEncoding.DecodeString(parts[1])
	if err != nil || json.Unmarshal(b, &p) != nil || p.WS == "" || notify.CheckExternalID("sub", p.Sub) != nil {
		return p, "", "", errToken
	}
	return p, parts[0] + "." + parts[1], parts[2], nil
}

// Access is what an authenticated recipient token grants: the reader,
// and the browser origins its workspace allows.
type Access struct {
	Reader  Reader
	Origins []string
}

// Authenticate checks token against its workspace's current secret and
// the clock.
func (s *Service) Authenticate(ctx context.Context, token string) (Access, error) {
	p, head, sig, err := parse(token)
	if err != nil {
		return Access{}, err
	}
	now := s.Now()
	exp := time.Unix(p.Exp, 0)
	if !now.Before(exp) || exp.Sub(now) > MaxTokenTTL+time.Minute {
		return Access{}, errToken
	}
	if !usecase.IsUUID(p.WS) {
		return Access{}, errToken
	}
	var set *notify.InboxSettings
	err = s.Store.Lookup(ctx, func(tx notify.Tx) (err error) {
		set, err = tx.FindInboxSettings(ctx, p.WS)
		return err
	})
	if errors.Is(err, notify.ErrNotFound) {
		return Access{}, errToken
	}
	if err != nil {
		return Access{}, err
	}
	secret, err := s.openSecret(set)
	if err != nil {
		return Access{}, err
	}
	if secret == "" || !hmac.Equal([]byte(sig), []byte(mac(secret, head))) {
		return Access{}, errToken
	}
	return Access{Reader: Reader{WorkspaceID: p.WS, RecipientID: p.Sub}, Origins: set.AllowedOrigins}, nil
}

func (s *Service) openSecret(set *notify.InboxSettings) (string, error) {
	if set.SecretSealed == "" {
		return "", nil
	}
	b, err := s.box.OpenFor(notify.SealedAAD(notify.SealedInboxSecret, set.WorkspaceID), set.SecretSealed)
	return string(b), err
}

// newSecret is a fresh secret and its sealed text.
func (s *Service) newSecret(ws string) (string, string, error) {
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		return "", "", err
	}
	secret := secretPrefix + base64.RawURLEncoding.EncodeToString(b)
	sealed, err := s.box.SealFor(notify.SealedAAD(notify.SealedInboxSecret, ws), []byte(secret))
	return secret, sealed, err
}

// MintToken makes a token for the workspace's profile externalID, valid
// for ttl (0: DefaultTokenTTL; at most MaxTokenTTL). The workspace's
// first token creates its secret. Minting is not audited: an
// application mints on every page its users load.
func (s *Service) MintToken(ctx context.Context, c usecase.Caller, externalID string, ttl time.Duration) (string, time.Time, error) {
	if ttl == 0 {
		ttl = DefaultTokenTTL
	}
	if ttl < time.Minute || ttl > MaxTokenTTL {
		return "", time.Time{}, notify.Invalid("ttlSeconds must be between 60 and %d", int(MaxTokenTTL/time.Second))
	}
	if notify.CheckExternalID("externalId", externalID) != nil {
		return "", time.Time{}, notify.NotFound("Recipient")
	}
	ws, now := c.Workspace(), s.Now()
	var secret string
	err := s.Store.Update(ctx, func(tx notify.Tx) error {
		if _, err := tx.FindRecipient(ctx, ws, externalID); err != nil {
			return usecase.NotFound(err, "Recipient")
		}
		set, err := s.lockSettings(ctx, tx, ws)
		if err != nil {
			return err
		}
		if secret, err = s.openSecret(set); err != nil || secret != "" {
			return err
		}
		if secret, set.SecretSealed, err = s.newSecret(ws); err != nil {
			return err
		}
		set.UpdatedAt = now
		return tx.PutInboxSettings(ctx, set)
	})
	if err != nil {
		return "", time.Time{}, err
	}
	exp := now.Add(ttl).Truncate(time.Second)
	return Sign(secret, ws, externalID, exp), exp, nil
}

// lockSettings reads the workspace's settings (blank ones when it has
// none) holding the workspace's lock, so two first mints or a mint and a
// rotation never make two secrets.
func (s *Service) lockSettings(ctx context.Context, tx notify.Tx, ws string) (*notify.InboxSettings, error) {
	if err := tx.LockWorkspace(ctx, ws); err != nil {
		return nil, err
	}
	set, err := tx.FindInboxSettings(ctx, ws)
	if errors.Is(err, notify.ErrNotFound) {
		return &notify.InboxSettings{WorkspaceID: ws, AllowedOrigins: []string{}}, nil
	}
	return set, err
}

// RotateSecret replaces the workspace's secret and answers the new one,
// shown once: every token signed with the old one is refused from the
// commit on (audit inbox.secret_rotate).
func (s *Service) RotateSecret(ctx context.Context, a *usecase.Actor) (string, error) {
	var secret string
	err := s.Store.Update(ctx, func(tx notify.Tx) error {
		set, err := s.lockSettings(ctx, tx, a.WorkspaceID)
		if err != nil {
			return err
		}
		if secret, set.SecretSealed, err = s.newSecret(a.WorkspaceID); err != nil {
			return err
		}
		set.UpdatedAt = s.Now()
		if err := tx.PutInboxSettings(ctx, set); err != nil {
			return err
		}
		return s.Audit(ctx, tx, a, a.WorkspaceID, "inbox.secret_rotate", "workspace", a.WorkspaceID, nil)
	})
	return secret, err
}
