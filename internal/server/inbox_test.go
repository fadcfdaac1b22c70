package server_test

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// TestAccessLogRedactsRecipientTokens: a recipient token in the query
// string (an EventSource's, issue 33) reaches neither the access log nor
// the problem of its refusal.
func TestAccessLogRedactsRecipientTokens(t *testing.T) {
	f := newFront(t)
	token := "v1.eyJ3cyI6IngifQ." + randHex(16)
	require.Equal(t, 401, f.do(t, "GET", "/v1/inbox/counts?token="+token))
	require.Equal(t, 401, f.do(t, "GET", "/v1/inbox/messages?limit=5&token="+token))
	require.NotContains(t, f.logs.String(), token)
}
