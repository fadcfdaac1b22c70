package console_test

import (
	"encoding/json"
	"net/http"
	"net/url"
	"regexp"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestConsoleLimits: an admin sets the workspace and an API key's
// request rate policy and creates, changes and deletes a dispatch limit
// (as the API stores them, audited); bad input shows the form's problem;
// a viewer sees the limits without write controls and is refused a
// write; another workspace's limit and key are 404.
func TestConsoleLimits(t *testing.T) {
	t.Parallel()
	f := setup(t)
	c := f.env.ConsoleMember(t, "admin")
	resp, body := c.Get(t, "/limits")
	require.Equal(t, http.StatusOK, resp.StatusCode)
	require.Contains(t, body, `id="no-dispatch-limits"`)

	resp, body = c.Post(t, "/limits/rate/workspace", url.Values{"windowSeconds": {"0"}, "maxRequests": {"5"}})
	require.Equal(t, http.StatusBadRequest, resp.StatusCode)
	require.Contains(t, body, "windowSeconds must be between 1 and 3600")
	resp, body = c.Post(t, "/limits/rate/workspace", url.Values{"windowSeconds": {"x"}, "maxRequests": {"5"}})
	require.Equal(t, http.StatusBadRequest, resp.StatusCode)
	require.Contains(t, body, "windowSeconds must be an integer")
	resp, _ = c.Post(t, "/limits/rate/workspace", url.Values{"windowSeconds": {"60"}, "maxRequests": {"500"}, "enabled": {"true"}})
	require.Equal(t, http.StatusSeeOther, resp.StatusCode)

	r, err := f.env.Owner.Dashboard(ctx, "GET", "/v1/api-keys", nil)
	require.NoError(t, err)
	var keys struct {
		APIKeys []struct {
			ID string `json:"id"`
		} `json:"apiKeys"`
	}
	require.NoError(t, json.Unmarshal(r.Body, &keys))
	require.NotEmpty(t, keys.APIKeys, string(r.Body))
	keyID := keys.APIKeys[0].ID
	// Unchecked "enabled" stores a disabled policy.
	resp, _ = c.Post(t, "/limits/rate/api-keys", url.Values{"apiKeyCredentialId": {keyID}, "windowSeconds": {"10"}, "maxRequests": {"7"}})
	require.Equal(t, http.StatusSeeOther, resp.StatusCode)

	resp, body = c.Post(t, "/limits/dispatch", url.Values{"scope": {"provider"}, "targetId": {""}, "ratePerSecond": {"5"}})
	require.Equal(t, http.StatusBadRequest, resp.StatusCode)
	require.Contains(t, body, "targetId is required for scope provider")
	resp, _ = c.Post(t, "/limits/dispatch", url.Values{"scope": {"workspace"}, "ratePerSecond": {"40"}, "enabled": {"true"}})
	require.Equal(t, http.StatusSeeOther, resp.StatusCode)
	resp, _ = c.Post(t, "/limits/dispatch", url.Values{"scope": {"workspace"}, "ratePerSecond": {"25"}, "enabled": {"true"}})
	require.Equal(t, http.StatusSeeOther, resp.StatusCode)

	r, err = f.env.Owner.Dashboard(ctx, "GET", "/v1/limits/rate", nil)
	require.NoError(t, err)
	require.Contains(t, string(r.Body), `"windowSeconds":60,"maxRequests":500,"enabled":true`)
	require.Contains(t, string(r.Body), `"apiKeyCredentialId":"`+keyID+`","windowSeconds":10,"maxRequests":7,"enabled":false`)
	r, err = f.env.Owner.Dashboard(ctx, "GET", "/v1/limits/dispatch", nil)
	require.NoError(t, err)
	var lim struct {
		Limits []struct {
			ID            string `json:"id"`
			RatePerSecond int    `json:"ratePerSecond"`
		} `json:"limits"`
	}
	require.NoError(t, json.Unmarshal(r.Body, &lim))
	require.Len(t, lim.Limits, 1, "the same scope and target is changed, not added")
	require.Equal(t, 25, lim.Limits[0].RatePerSecond)
	limitID := lim.Limits[0].ID

	resp, body = c.Get(t, "/limits")
	require.Equal(t, http.StatusOK, resp.StatusCode)
	require.Regexp(t, `id="rate-workspace"><td>the workspace</td><td>60</td><td>500</td><td>yes</td>`, body)
	require.Regexp(t, `data-api-key="`+keyID+`"><td>API key console \(`, body)
	require.Contains(t, body, `data-limit-id="`+limitID+`"><td>workspace</td><td class="mono"></td><td>25</td>`)

	viewer := f.env.ConsoleMember(t, "viewer")
	resp, body = viewer.Get(t, "/limits")
	require.Equal(t, http.StatusOK, resp.StatusCode)
	require.Contains(t, body, `data-limit-id="`+limitID+`"`)
	require.False(t, regexp.MustCompile(`method="post" action="/limits`).MatchString(body), "a viewer sees no write form")
	resp, _ = viewer.Post(t, "/limits/dispatch/"+limitID+"/delete", nil)
	require.Equal(t, http.StatusForbidden, resp.StatusCode)
	resp, _ = viewer.Post(t, "/limits/rate/workspace", url.Values{"windowSeconds": {"1"}, "maxRequests": {"1"}})
	require.Equal(t, http.StatusForbidden, resp.StatusCode)

	f.env.NewWorkspace(t, "Other", "other@example.com")
	oc := f.env.ConsoleLogin(t, "other@example.com", "correct horse battery")
	resp, _ = oc.Post(t, "/limits/dispatch/"+limitID+"/delete", nil)
	require.Equal(t, http.StatusNotFound, resp.StatusCode, "another workspace's limit")
	resp, _ = oc.Post(t, "/limits/rate/api-keys", url.Values{"apiKeyCredentialId": {keyID}, "windowSeconds": {"10"}, "maxRequests": {"7"}})
	require.Equal(t, http.StatusNotFound, resp.StatusCode, "another workspace's API key")

	resp, _ = c.Post(t, "/limits/dispatch/"+limitID+"/delete", nil)
	require.Equal(t, http.StatusSeeOther, resp.StatusCode)
	_, body = c.Get(t, "/limits")
	require.Contains(t, body, "Dispatch limit deleted.")
	require.Contains(t, body, `id="no-dispatch-limits"`)
	r, err = f.env.Owner.Dashboard(ctx, "GET", "/v1/audit-logs?action=dispatch_limit.delete", nil)
	require.NoError(t, err)
	require.Contains(t, string(r.Body), limitID)
}
