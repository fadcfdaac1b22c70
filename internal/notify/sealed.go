package notify

import "context"

// Kinds of sealed values: the columns holding a secret sealed with the
// master key (secret.Box), each bound to its row by the service.
const (
	SealedProviderConfig        = "provider_config"         // provider account's configJson
	SealedAPIKeyHMAC            = "api_key_hmac_secret"     // API key's HMAC secret
	SealedWebhookSecret         = "webhook_secret"          // webhook's signing secret
	SealedWebhookPreviousSecret = "webhook_previous_secret" // webhook's secret before a rotation
	SealedInboxSecret           = "inbox_secret"            // workspace's recipient-token secret (issue 33)
)

// SealedValue is one stored sealed secret: its kind, the id of its row
// and the sealed text ("v1.<key id>.<data>").
type SealedValue struct {
	Kind  string
	ID    string
	Value string
}

// SealedTx holds the store verbs of master key checks and rotation.
type SealedTx interface {
	// SealedKeyIDs lists the distinct ids of the keys that sealed the
	// stored secrets.
	SealedKeyIDs(ctx context.Context) ([]string, error)
	// FindSealedValues lists every stored secret not sealed with key id
	// keep.
	FindSealedValues(ctx context.Context, keep string) ([]SealedValue, error)
	// UpdateSealedValue replaces v's stored text by sealed; ErrNotFound
	// when the row is gone or its text is no longer v.Value.
	UpdateSealedValue(ctx context.Context, v SealedValue, sealed string) error
}

// SealedAAD is what a sealed value of kind in row id is bound to (the aad
// given to secret.Box.SealFor and OpenFor): a value copied into another
// row, or another column kind, does not open. One function, so the rooms
// that seal, the engine that opens and the rekey that moves them agree.
func SealedAAD(kind, id string) string {
	switch kind {
	case SealedProviderConfig:
		return "provider:" + id
	case SealedAPIKeyHMAC:
		return "apikey:" + id
	case SealedWebhookSecret, SealedWebhookPreviousSecret:
		return "webhook:" + id
	case SealedInboxSecret:
		return "inbox:" + id
	}
	return ""
}
