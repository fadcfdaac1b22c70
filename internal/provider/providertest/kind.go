package providertest

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/notifyd/notifyd/internal/notify"
	"github.com/notifyd/notifyd/internal/provider"
)

// KindWant is what a provider kind's registry entry must say: every field
// of provider.Kind, the constructors as whether they are set.
type KindWant struct {
	ID       string
	Channel  notify.Channel
	Required []string
	// Optional lists the optional keys; nil and empty both mean none.
	Optional []string
	Batch    provider.BatchDefaults
	// Identities says whether the kind has a sender-identity API.
	Identities bool
}

// RequireKind fails the test unless kind k is exactly want and has a
// constructor. A key list that is nil or empty means no keys, so a pin
// does not depend on how the adapter spells "none".
func RequireKind(t testing.TB, k provider.Kind, want KindWant) {
	t.Helper()
	require.Equal(t, want.ID, k.ID)
	require.Equal(t, want.Channel, k.Channel, k.ID)
	require.Equal(t, keys(want.Required), keys(k.Required), "%s required keys", k.ID)
	require.Equal(t, keys(want.Optional), keys(k.Optional), "%s optional keys", k.ID)
	require.Equal(t, want.Batch, k.Batch, "%s batch defaults", k.ID)
	require.NotNil(t, k.New, "%s constructor", k.ID)
	require.Equal(t, want.Identities, k.Identities != nil, "%s identity API", k.ID)
}

// keys folds an empty key list to nil.
func keys(s []string) []string {
	if len(s) == 0 {
		return nil
	}
	return s
}

// RequireInvalidConfigs checks RequireInvalid for each of cfgs: kind k
// refuses every one with invalid_request.
func RequireInvalidConfigs(t testing.TB, k provider.Kind, cfgs ...provider.Config) {
	t.Helper()
	for _, cfg := range cfgs {
		RequireInvalid(t, k, cfg)
	}
}
