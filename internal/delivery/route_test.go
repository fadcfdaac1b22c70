package delivery

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/notifyd/notifyd/internal/delivery/pacing"
	"github.com/notifyd/notifyd/internal/provider"
)

// TestProviderCall: the record built around a batch call's part is the
// bytes json.Marshal writes for the same record, HTML escapes included.
func TestProviderCall(t *testing.T) {
	t.Parallel()
	body := map[string]any{"to": "a@example.com", "html": "<p>Tom & Jerry</p>", "subject": "Grüße \u2028", "n": 3}
	part, err := json.Marshal(body)
	require.NoError(t, err)
	for _, batch := range []*provider.BatchPlace{nil, {Size: 100, Index: 7}} {
		res := provider.Result{Exchange: provider.Exchange{Method: "POST", URL: "https://api.example.com/emails/batch?a=<b>&c", Request: pacing.JSONPart(part)},
			Batch: batch}
		want, err := json.Marshal(batchCall(map[string]any{"method": "POST", "url": res.Exchange.URL, "body": json.RawMessage(part)}, res))
		require.NoError(t, err)
		require.Equal(t, string(want), string(providerCall(res)))
	}
}
