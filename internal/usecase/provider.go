package usecase

import (
	"encoding/json"
	"fmt"

	"github.com/notifyd/notifyd/internal/notify"
	"github.com/notifyd/notifyd/internal/secret"
)

// Email provider kinds whose vendors report bounces and complaints and
// whose sending identities the use cases manage.
const (
	KindResend   = "mailx_email" // Resend: Svix-signed webhooks
	KindSES      = "maily_email" // Amazon SES: events through an SNS topic
	KindPostmark = "mailz_email" // Postmark: bounce and spam-complaint webhooks
)

// SealProviderConfig encrypts a provider account's configJson, bound to
// the account's id.
func SealProviderConfig(box *secret.Box, accountID string, cfg map[string]string) (string, error) {
	if cfg == nil {
		cfg = map[string]string{}
	}
	b, err := json.Marshal(cfg)
	if err != nil {
		return "", err
	}
	return box.SealFor(notify.SealedAAD(notify.SealedProviderConfig, accountID), b)
}

// OpenProviderConfig decrypts a provider account's configJson.
func OpenProviderConfig(box *secret.Box, p *notify.ProviderAccount) (map[string]string, error) {
	b, err := box.OpenFor(notify.SealedAAD(notify.SealedProviderConfig, p.ID), p.ConfigEnc)
	if err != nil {
		return nil, fmt.Errorf("open provider config: %w", err)
	}
	var cfg map[string]string
	if err := json.Unmarshal(b, &cfg); err != nil {
		return nil, err
	}
	return cfg, nil
}
