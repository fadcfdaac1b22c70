package recipients_test

import (
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/notifyd/notifyd/internal/notifytest"
)

type dryRun struct {
	explanation
	DryRun           bool    `json:"dryRun"`
	StartChannel     string  `json:"startChannel"`
	RecipientAddress string  `json:"recipientAddress"`
	Suppressed       bool    `json:"suppressed"`
	FinalErrorMsg    *string `json:"finalErrorMessage"`
	Routes           []struct {
		ProviderAccountID string  `json:"providerAccountId"`
		ProviderKind      string  `json:"providerKind"`
		Priority          int     `json:"priority"`
		Breaker           string  `json:"breaker"`
		OpenedUntil       *string `json:"openedUntil"`
	} `json:"routes"`
}

// TestDryRun: "dryRun": true answers what the send would do (address,
// preference rule, the channel it starts on, the route order with each
// circuit) and creates nothing: no request, no job, no message, and its
// idempotency key stays free.
func TestDryRun(t *testing.T) {
	t.Parallel()
	env, key := prefSetup(t)
	dry := func(body map[string]any) dryRun {
		t.Helper()
		body["dryRun"] = true
		return notifytest.Data[dryRun](t, notifytest.Signed(t, key, "POST", "/v1/notifications", body), http.StatusOK)
	}

	blocked := dry(withCategory(byID("sms", "u-42", "sale"), "marketing"))
	require.True(t, blocked.DryRun)
	require.Equal(t, "canceled", blocked.Status)
	require.Equal(t, "preference_opt_out", *blocked.FinalErrorCode)
	require.Equal(t, "01012345678", blocked.RecipientAddress)
	require.Equal(t, []string{"acceptance/address/resolved", "acceptance/preference/blocked"}, steps(blocked.explanation))
	require.Empty(t, blocked.Routes, "it would not be dispatched")

	body := withCategory(byID("sms", "u-42", "sale"), "marketing")
	body["channelFallback"] = []any{map[string]any{"channel": "email"}}
	body["idempotencyKey"] = "dry-1"
	chain := dry(body)
	require.Equal(t, "queued", chain.Status)
	require.Equal(t, "email", chain.StartChannel, "sms is off: the chain would start at email")
	require.Len(t, chain.Routes, 1)
	require.Equal(t, "mailz_email", chain.Routes[0].ProviderKind)
	require.Equal(t, "CLOSED", chain.Routes[0].Breaker)
	require.False(t, chain.Suppressed)

	// Refused as the send would be.
	bad := withCategory(byID("sms", "nobody", "x"), "marketing")
	bad["dryRun"] = true
	require.Equal(t, "recipient.id: no recipient profile nobody in this workspace", sendProblem(t, key, bad))

	// Nothing was created, and the key is free for the real send.
	var list struct {
		Requests []any `json:"requests"`
	}
	require.NoError(t, dash(t, env.Owner, "GET", "/v1/requests", nil, http.StatusOK).Decode(&list))
	require.Empty(t, list.Requests)
	delete(body, "dryRun")
	real := notifytest.Send(t, key, body)
	require.False(t, real.Deduplicated)
	require.Equal(t, "sent", notifytest.Wait(t, key, real.RequestID).Status)
}
