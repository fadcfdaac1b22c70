package e2e_test

import (
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestWorkspaceIsolation: a second workspace can neither see nor change the
// first one's API keys, providers, routes, members or audit entries.
func TestWorkspaceIsolation(t *testing.T) {
	t.Parallel()
	e := start(t)
	ownerMe := decode[meBody](t, do(t, e.Owner, "GET", "/v1/me", nil))
	key := createKey(t, e.Owner, map[string]any{"name": "first", "scopes": []string{"notifications:send"}})
	prov := e.createProvider(t, e.Owner, "mailx_email", "first")
	putRoutes(t, e.Owner, route{"channel": "email", "providerAccountId": prov, "priority": 1})
	memberID, _ := e.member(t, "operator")
	requireStatus(t, do(t, e.Owner, "PATCH", "/v1/workspace", map[string]string{"name": "First"}), http.StatusOK)
	firstAudit := audit(t, e.Owner, "limit=200").Logs
	require.NotEmpty(t, firstAudit)

	other, otherWS := e.NewWorkspace(t, "Second", "second@example.com")
	recordClient(other)
	// The second owner, even an admin added to the second workspace.
	_, otherAdmin := e.memberOf(t, other, "admin")
	for _, c := range []struct {
		name string
		do   func(method, path string, body any) (int, []byte)
	}{
		{"owner", func(m, p string, b any) (int, []byte) { r := do(t, other, m, p, b); return r.Status, r.Body }},
		{"admin", func(m, p string, b any) (int, []byte) { r := do(t, otherAdmin, m, p, b); return r.Status, r.Body }},
	} {
		t.Run(c.name, func(t *testing.T) {
			status, body := c.do("GET", "/v1/api-keys", nil)
			require.Equal(t, 200, status)
			require.NotContains(t, string(body), key.APIKey.ID)
			require.NotContains(t, string(body), key.APIKey.KeyID)
			for _, rq := range []struct{ method, path string }{
				{"PATCH", "/v1/api-keys/" + key.APIKey.ID},
				{"POST", "/v1/api-keys/" + key.APIKey.ID + "/rotate"},
				{"POST", "/v1/api-keys/" + key.APIKey.ID + "/suspend"},
				{"POST", "/v1/api-keys/" + key.APIKey.ID + "/resume"},
				{"POST", "/v1/api-keys/" + key.APIKey.ID + "/revoke"},
				{"GET", "/v1/providers/" + prov},
				{"PATCH", "/v1/providers/" + prov},
				{"PATCH", "/v1/workspace/members/" + memberID},
				{"DELETE", "/v1/workspace/members/" + memberID},
				{"PATCH", "/v1/workspace/members/" + ownerMe.User.ID},
				{"DELETE", "/v1/workspace/members/" + ownerMe.User.ID},
			} {
				var b any
				switch rq.method {
				case "PATCH":
					b = map[string]any{}
					if rq.path[:11] == "/v1/workspa" {
						b = map[string]any{"role": "viewer"}
					}
				}
				status, body := c.do(rq.method, rq.path, b)
				require.Equal(t, 404, status, "%s %s: %s", rq.method, rq.path, body)
			}
			status, body = c.do("GET", "/v1/providers", nil)
			require.Equal(t, 200, status)
			require.NotContains(t, string(body), prov)
			status, body = c.do("GET", "/v1/routes", nil)
			require.Equal(t, 200, status)
			require.NotContains(t, string(body), prov)
			status, body = c.do("GET", "/v1/workspace/members", nil)
			require.Equal(t, 200, status)
			require.NotContains(t, string(body), memberID)
			require.NotContains(t, string(body), ownerMe.User.ID)
			require.NotContains(t, string(body), e.Email)
			status, body = c.do("GET", "/v1/workspace", nil)
			require.Equal(t, 200, status)
			require.Contains(t, string(body), otherWS)
			require.NotContains(t, string(body), e.Workspace)
			for _, q := range []string{"limit=200", "action=api_key.create", "action=provider.create", "targetType=route",
				"action=workspace.updated", "action=member.add"} {
				status, body = c.do("GET", "/v1/audit-logs?"+q, nil)
				require.Equal(t, 200, status)
				for _, l := range firstAudit {
					require.NotContains(t, string(body), l.ID, q)
				}
				require.NotContains(t, string(body), e.Workspace)
				require.NotContains(t, string(body), key.APIKey.ID)
				require.NotContains(t, string(body), prov)
			}
			// A route naming the first workspace's provider is refused.
			status, body = c.do("PUT", "/v1/routes", map[string]any{"routes": []route{{"channel": "email", "providerAccountId": prov, "priority": 1}}})
			require.Equal(t, 400, status, "%s", body)
		})
	}

	// Nothing of the first workspace changed.
	keys, _ := listKeys(t, e.Owner)
	require.Equal(t, key.APIKey, keys[key.APIKey.ID])
	_, err := verify(t, e, key.Key, key.HMACSecret, "GET", "/x", nil)
	require.NoError(t, err)
	ps := listProviders(t, e.Owner)
	require.Len(t, ps, 1)
	require.Equal(t, "first", ps[0].DisplayName)
	require.Len(t, getRoutes(t, e.Owner), 1)
	ms := members(t, e.Owner)
	require.Len(t, ms, 2)
	require.Equal(t, "operator", ms[memberID].Role)
	require.Equal(t, firstAudit, audit(t, e.Owner, "limit=200").Logs)
}
