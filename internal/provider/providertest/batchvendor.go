package providertest

import (
	"encoding/json"
	"fmt"
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/notifyd/notifyd/internal/provider"
)

// BatchVendor is a fake mail vendor with a one-message path and a batch
// path that takes a JSON array of messages, for the tests of how Send
// splits a batch over the vendor's limit.
type BatchVendor struct {
	*Fake
	single string
}

// NewBatchVendor starts a BatchVendor, closed after the test: a call to
// the path single is answered with one, any other call with batch(n) for
// its n messages, both as JSON.
func NewBatchVendor(t testing.TB, single, one string, batch func(n int) string) *BatchVendor {
	t.Helper()
	h := map[string]string{"Content-Type": "application/json"}
	f := NewFake(t, func(_ int, r Request) Reply {
		if r.Path == single {
			return Reply{Status: http.StatusOK, Header: h, Body: one}
		}
		var items []json.RawMessage
		if err := json.Unmarshal(r.Body, &items); err != nil {
			return Reply{Status: http.StatusBadRequest, Body: err.Error()}
		}
		return Reply{Status: http.StatusOK, Header: h, Body: batch(len(items))}
	})
	return &BatchVendor{Fake: f, single: single}
}

// Calls lists the requests received, oldest first, as path:messages.
func (v *BatchVendor) Calls(t testing.TB) []string {
	t.Helper()
	var out []string
	for _, r := range v.Received() {
		if r.Path == v.single {
			out = append(out, r.Path+":1")
			continue
		}
		var items []json.RawMessage
		require.NoError(t, json.Unmarshal(r.Body, &items))
		out = append(out, fmt.Sprintf("%s:%d", r.Path, len(items)))
	}
	return out
}

// MailMessages is n MailMessages, to user0@example.com and on.
func MailMessages(n int) []provider.Message {
	msgs := make([]provider.Message, n)
	for i := range msgs {
		msgs[i] = MailMessage(fmt.Sprintf("user%d@example.com", i))
	}
	return msgs
}
