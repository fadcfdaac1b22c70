package testmode_test

import (
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/notifyd/notifyd/internal/notify"
	"github.com/notifyd/notifyd/internal/notifytest"
)

type keyJSON struct {
	ID    string `json:"id"`
	KeyID string `json:"keyId"`
	Test  *bool  `json:"test"`
}

type keyAnswer struct {
	APIKey keyJSON `json:"apiKey"`
	Key    string  `json:"key"`
}

// A test-mode key says so in its prefix and in every answer about it
// (create, list, update, rotate, suspend, resume, revoke); its mode
// cannot change; a live key says test: false.
func TestTestKeyInEveryAnswer(t *testing.T) {
	t.Parallel()
	e := notifytest.StartDaemon(t)
	call := func(method, path string, body any, status int) keyAnswer {
		t.Helper()
		return notifytest.Decode[keyAnswer](t, notifytest.DashboardCall(t, e.Owner, method, path, body, status), status)
	}
	created := call("POST", "/v1/api-keys", map[string]any{"name": "staging", "scopes": []string{"notifications:send"}, "test": true}, http.StatusCreated)
	require.True(t, strings.HasPrefix(created.APIKey.KeyID, notify.TestKeyPrefix), created.APIKey.KeyID)
	require.True(t, strings.HasPrefix(created.Key, created.APIKey.KeyID+"."))
	require.True(t, *created.APIKey.Test)
	live := call("POST", "/v1/api-keys", map[string]any{"name": "prod", "scopes": []string{"notifications:send"}}, http.StatusCreated)
	require.False(t, strings.HasPrefix(live.APIKey.KeyID, notify.TestKeyPrefix))
	require.NotNil(t, live.APIKey.Test)
	require.False(t, *live.APIKey.Test)

	id := created.APIKey.ID
	list := notifytest.Decode[struct {
		APIKeys []keyJSON `json:"apiKeys"`
	}](t, notifytest.Dash(t, e.Owner, "GET", "/v1/api-keys", nil), http.StatusOK)
	for _, k := range list.APIKeys {
		require.Equal(t, k.ID == id, *k.Test, k.KeyID)
	}
	require.True(t, *call("PATCH", "/v1/api-keys/"+id, map[string]any{"name": "staging 2"}, http.StatusOK).APIKey.Test)
	rotated := call("POST", "/v1/api-keys/"+id+"/rotate", nil, http.StatusOK)
	require.True(t, *rotated.APIKey.Test)
	require.Equal(t, created.APIKey.KeyID, rotated.APIKey.KeyID, "rotation keeps the key id and its prefix")
	for _, action := range []string{"suspend", "resume", "revoke"} {
		require.True(t, *call("POST", "/v1/api-keys/"+id+"/"+action, nil, http.StatusOK).APIKey.Test, action)
	}
	// The mode is fixed at create, either way.
	for _, kid := range []string{live.APIKey.ID, id} {
		p := notifytest.DashboardProblem(t, e.Owner, "PATCH", "/v1/api-keys/"+kid, map[string]any{"test": false}, http.StatusBadRequest)
		require.Contains(t, p.Detail, "test cannot change")
	}
	notifytest.DashboardProblem(t, e.Owner, "POST", "/v1/api-keys", map[string]any{"name": "x", "scopes": []string{"notifications:send"}, "test": "yes"}, http.StatusBadRequest)
	// The audit log records the mode of a created key.
	audit := notifytest.Dash(t, e.Owner, "GET", "/v1/audit-logs?action=api_key.create", nil)
	require.Contains(t, string(audit.Body), `"test":true`)
}

// The console creates test-mode keys and marks them, and marks test
// messages in the message list and view.
func TestConsoleTestMode(t *testing.T) {
	t.Parallel()
	e := notifytest.StartDaemon(t)
	c := e.ConsoleLogin(t, e.Email, e.Password)
	_, page := c.Get(t, "/api-keys")
	require.Contains(t, page, `id="k-test"`)
	resp, body := c.Post(t, "/api-keys", url.Values{"name": {"staging"}, "scopes": {"notifications:send", "notifications:read"}, "test": {"1"}})
	require.Equal(t, http.StatusOK, resp.StatusCode, body)
	tok := regexp.MustCompile(`<code id="key-token">([^<]+)</code>`).FindStringSubmatch(body)
	require.NotNil(t, tok)
	require.True(t, strings.HasPrefix(tok[1], notify.TestKeyPrefix), tok[1])
	require.Regexp(t, `nk_test_[0-9a-f]+ <span class="test-badge key-test">test mode</span>`, body)
	_, body = c.Post(t, "/api-keys", url.Values{"name": {"prod"}, "scopes": {"notifications:send"}})
	require.Equal(t, 1, strings.Count(body, `class="test-badge key-test"`), "only the test key is marked")

	sms := e.SimProvider(t, "vendora_sms", "sms", nil)
	notifytest.PutRoutes(t, e.Owner, notifytest.Route{Channel: "sms", ProviderAccountID: sms, Priority: 1})
	tk, _ := e.TestKey(t, "api", "notifications:send", "notifications:read")
	id := notifytest.Send(t, tk, notifytest.SMS("010-0000-0001", "hi")).RequestID
	require.Equal(t, "sent", notifytest.Wait(t, tk, id).Status)
	live := e.SendKey(t)
	liveID := notifytest.Send(t, live, notifytest.SMS("010-1234-5678", "hi")).RequestID
	require.Equal(t, "sent", notifytest.Wait(t, live, liveID).Status)

	// The dashboard's metrics tell test traffic apart within the totals.
	m := notifytest.Decode[struct {
		TotalRequests int `json:"totalRequests"`
		TestRequests  struct {
			Total    int            `json:"total"`
			ByStatus map[string]int `json:"byStatus"`
		} `json:"testRequests"`
	}](t, notifytest.Dash(t, e.Owner, "GET", "/v1/metrics", nil), http.StatusOK)
	require.Equal(t, 2, m.TotalRequests)
	require.Equal(t, 1, m.TestRequests.Total)
	require.Equal(t, 1, m.TestRequests.ByStatus["sent"])

	_, body = c.Get(t, "/messages/"+id)
	require.Contains(t, body, `id="test-badge"`)
	_, body = c.Get(t, "/messages/"+liveID)
	require.NotContains(t, body, `id="test-badge"`)
	_, body = c.Get(t, "/messages")
	require.Equal(t, 1, strings.Count(body, `<span class="test-badge">test</span>`), body)
	require.Contains(t, body, liveID)

	// Either kind of traffic alone, in the Dashboard API and the console.
	type item struct {
		RequestID string `json:"requestId"`
		Test      bool   `json:"test"`
	}
	for filter, want := range map[string]item{"true": {id, true}, "false": {liveID, false}} {
		list := notifytest.Decode[struct {
			Requests []item `json:"requests"`
		}](t, notifytest.Dash(t, e.Owner, "GET", "/v1/requests?test="+filter, nil), http.StatusOK)
		require.Equal(t, []item{want}, list.Requests, filter)
	}
	notifytest.DashboardProblem(t, e.Owner, "GET", "/v1/requests?test=maybe", nil, http.StatusBadRequest)
	_, body = c.Get(t, "/messages?test=true")
	require.Contains(t, body, id)
	require.NotContains(t, body, liveID)
	require.Contains(t, body, `<option value="true" selected>test only</option>`)
}
