package recipients_test

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/notifyd/notifyd/client"
	"github.com/notifyd/notifyd/internal/notifytest"
)

type consent struct {
	Kind       string `json:"kind"`
	GivenAt    string `json:"givenAt"`
	Source     string `json:"source"`
	RecordedBy string `json:"recordedBy"`
}

func consents(t *testing.T, r *client.Response) []consent {
	t.Helper()
	return notifytest.Field[[]consent](t, r, "consents")
}

// TestRecipientConsent: the night-advertising consent is recorded with
// when, where from and who; given again it is replaced; withdrawn it is
// gone; erasure takes it with the profile; every change is audited; roles,
// scopes and workspaces are kept apart.
func TestRecipientConsent(t *testing.T) {
	t.Parallel()
	e := notifytest.StartDaemon(t)
	put(t, e.Owner, "u-1", map[string]any{"phone": "010-1111-2222"}, http.StatusCreated)
	path := "/v1/recipients/u-1/consents/night-advertising"

	before := time.Now().Add(-time.Second)
	c := notifytest.Field[consent](t, dash(t, e.Owner, "PUT", path, map[string]any{"source": "signup form v2"}, http.StatusOK), "consent")
	require.Equal(t, "night-advertising", c.Kind)
	require.Equal(t, "signup form v2", c.Source)
	require.Equal(t, "member", c.RecordedBy)
	given, err := time.Parse(time.RFC3339Nano, c.GivenAt)
	require.NoError(t, err)
	require.True(t, given.After(before))
	require.Equal(t, []consent{c}, consents(t, dash(t, e.Owner, "GET", "/v1/recipients/u-1/consents", nil, http.StatusOK)))

	// Through the signed API: recorded by the API, replacing the first.
	rw, keyID := e.APIKey(t, "rw", "recipients:read", "recipients:write")
	r := notifytest.Signed(t, rw, "PUT", path, map[string]any{"source": "call centre"})
	c2 := notifytest.Data[map[string]consent](t, r, http.StatusOK)["consent"]
	require.Equal(t, "api", c2.RecordedBy)
	list := consents(t, dash(t, e.Owner, "GET", "/v1/recipients/u-1/consents", nil, http.StatusOK))
	require.Equal(t, []consent{c2}, list)
	a := notifytest.Audit(t, e.Owner, "recipient.consent_given")
	require.Len(t, a, 2)
	require.Equal(t, keyID, a[0].Payload["apiKeyId"])
	require.Equal(t, "call centre", a[0].Payload["source"])
	require.Equal(t, "night_advertising", a[0].Payload["kind"])

	// Refusals.
	require.Equal(t, "source must be at most 200 characters",
		problem(t, e.Owner, "PUT", path, map[string]any{"source": strings.Repeat("s", 201)}))
	dash(t, e.Owner, "PUT", "/v1/recipients/u-1/consents/daytime", nil, http.StatusNotFound)
	dash(t, e.Owner, "PUT", "/v1/recipients/nobody/consents/night-advertising", nil, http.StatusNotFound)
	other, _ := e.NewWorkspace(t, "Other", "other-consent@example.com")
	dash(t, other, "GET", "/v1/recipients/u-1/consents", nil, http.StatusNotFound)
	dash(t, other, "DELETE", path, nil, http.StatusNotFound)
	viewer := e.Member(t, "viewer")
	dash(t, viewer, "GET", "/v1/recipients/u-1/consents", nil, http.StatusOK)
	dash(t, viewer, "PUT", path, nil, http.StatusForbidden)
	dash(t, viewer, "DELETE", path, nil, http.StatusForbidden)

	// Withdrawal, then erasure of a profile holding a consent.
	dash(t, e.Owner, "DELETE", path, nil, http.StatusNoContent)
	dash(t, e.Owner, "DELETE", path, nil, http.StatusNotFound)
	require.Empty(t, consents(t, dash(t, e.Owner, "GET", "/v1/recipients/u-1/consents", nil, http.StatusOK)))
	require.Len(t, notifytest.Audit(t, e.Owner, "recipient.consent_withdrawn"), 1)
	dash(t, e.Owner, "PUT", path, nil, http.StatusOK)
	dash(t, e.Owner, "DELETE", "/v1/recipients/u-1", nil, http.StatusNoContent)
	put(t, e.Owner, "u-1", map[string]any{"phone": "010-1111-2222"}, http.StatusCreated)
	require.Empty(t, consents(t, dash(t, e.Owner, "GET", "/v1/recipients/u-1/consents", nil, http.StatusOK)),
		"a profile made again under the same id has no consent of the erased one")
}
