package delivery

import (
	"context"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/notifyd/notifyd/internal/notify"
)

// TestPostWebhookInvalidURLRedacted: a URL the request cannot be built
// from is reported without its path and query, where tokens live (issue
// 17 finding 7).
func TestPostWebhookInvalidURLRedacted(t *testing.T) {
	t.Parallel()
	e := New(Options{})
	res := e.PostWebhook(context.Background(), notify.WebhookPost{URL: "https://hooks.example.com/t/SECRET-TOKEN?k=SECRET\x7f", Body: []byte("{}")})
	require.NotEmpty(t, res.Error)
	require.False(t, strings.Contains(res.Error, "SECRET"), res.Error)
	require.Contains(t, res.Error, "invalid url")
}
