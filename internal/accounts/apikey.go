package accounts

import (
	"context"
	"strings"

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
	// Test asks for a test-mode key at create (issue 36); a key's mode
	// never changes afterwards (its key id says it).
	Test bool
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
	prefix := "nk_"
	if in.Test {
		prefix = notify.TestKeyPrefix
	}
	k := &notify.APIKey{ID: usecase.NewID(), WorkspaceID: a.WorkspaceID, KeyID: prefix + secret.RandomHex(12), Name: strings.TrimSpace(*in.Name),
		Scopes: usecase.Dedupe(*in.Scopes), Status: notify.APIKeyActive, CreatedAt: now, UpdatedAt: now, Test: in.Test}
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
		return s.Audit(ctx, tx, a, a.WorkspaceID, "api_key.create", "api_key", k.ID, map[string]any{"name": k.Name, "scopes": k.Scopes, "test": k.Test})
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
		return s.Audit(ctx, tx, a, a.WorkspaceID, action, "api_key", k.ID, map[string]any{"name": k.Name, "status": k.Status})
	})
	if k != nil && s.keys != nil {
		// Once the transaction ended, whatever its outcome (a commit whose
		// answer was lost may have changed the key; forgetting costs one
		// read): the signed API stops using what it cached of the key.
		s.keys.ForgetKey(k.KeyID)
	}
	return k, err
}
