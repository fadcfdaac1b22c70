package limits_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/notifyd/notifyd/client"
	"github.com/notifyd/notifyd/internal/notifytest"
)

type policy struct {
	ID                 string `json:"id"`
	APIKeyCredentialID string `json:"apiKeyCredentialId"`
	WindowSeconds      int    `json:"windowSeconds"`
	MaxRequests        int    `json:"maxRequests"`
	Enabled            bool   `json:"enabled"`
	UpdatedAt          string `json:"updatedAt"`
}

func TestRatePolicies(t *testing.T) {
	t.Parallel()
	b := setup(t)
	r := notifytest.Dash(t, b.env.Owner, "GET", "/v1/limits/rate", nil)
	require.Equal(t, http.StatusOK, r.Status, string(r.Body))
	require.JSONEq(t, `{"workspacePolicy":null,"apiKeyPolicies":[]}`, string(r.Body))

	ws := b.putWorkspacePolicy(t, map[string]any{"windowSeconds": 60, "maxRequests": 100})
	require.Equal(t, true, ws["enabled"])
	require.NotEmpty(t, ws["id"])
	require.NotEmpty(t, ws["updatedAt"])
	require.NotContains(t, ws, "apiKeyCredentialId")
	ws2 := b.putWorkspacePolicy(t, map[string]any{"windowSeconds": 30, "maxRequests": 50, "enabled": false})
	require.Equal(t, ws["id"], ws2["id"], "a PUT updates the one policy")
	b.putKeyPolicy(t, b.keyID, map[string]any{"windowSeconds": 10, "maxRequests": 5})

	var out struct {
		WorkspacePolicy *policy  `json:"workspacePolicy"`
		APIKeyPolicies  []policy `json:"apiKeyPolicies"`
	}
	r = notifytest.Dash(t, b.env.Owner, "GET", "/v1/limits/rate", nil)
	require.NoError(t, r.Decode(&out))
	require.NotNil(t, out.WorkspacePolicy)
	require.Equal(t, 30, out.WorkspacePolicy.WindowSeconds)
	require.Equal(t, 50, out.WorkspacePolicy.MaxRequests)
	require.False(t, out.WorkspacePolicy.Enabled)
	require.Len(t, out.APIKeyPolicies, 1)
	require.Equal(t, b.keyID, out.APIKeyPolicies[0].APIKeyCredentialID)
	require.Equal(t, 10, out.APIKeyPolicies[0].WindowSeconds)

	// Audit.
	r = notifytest.Dash(t, b.env.Owner, "GET", "/v1/audit-logs?targetType=workspace", nil)
	require.Contains(t, string(r.Body), "rate_limit.workspace.upsert")
	r = notifytest.Dash(t, b.env.Owner, "GET", "/v1/audit-logs?action=rate_limit.api_key.upsert", nil)
	require.Equal(t, http.StatusOK, r.Status, string(r.Body))
	require.Contains(t, string(r.Body), b.keyID)

	// Validation.
	for _, body := range []string{
		`{}`, `{"windowSeconds":60}`, `{"maxRequests":10}`, `{"windowSeconds":0,"maxRequests":10}`,
		`{"windowSeconds":3601,"maxRequests":10}`, `{"windowSeconds":60,"maxRequests":0}`,
		`{"windowSeconds":60,"maxRequests":1000001}`, `{"windowSeconds":"60","maxRequests":10}`,
		`{"windowSeconds":1.5,"maxRequests":10}`, `{"windowSeconds":60,"maxRequests":10,"enabled":null}`,
		`{"windowSeconds":60,"maxRequests":10,"extra":1}`, `{"windowSeconds":null,"maxRequests":10}`,
	} {
		for _, path := range []string{"/v1/limits/rate/workspace", "/v1/limits/rate/api-keys/" + b.keyID} {
			notifytest.RequireProblem(t, notifytest.Dash(t, b.env.Owner, "PUT", path, []byte(body)), http.StatusBadRequest, "SVC-40000")
		}
	}
	// The policy is disabled; a PUT without enabled enables it again.
	require.Equal(t, true, b.putWorkspacePolicy(t, map[string]any{"windowSeconds": 3600, "maxRequests": 1000000})["enabled"])
	b.putWorkspacePolicy(t, map[string]any{"windowSeconds": 1, "maxRequests": 1})

	// A key of another workspace, or unknown, is 404.
	other, _ := b.env.NewWorkspace(t, "Other", "other@example.com")
	_, otherKey, err := other.CreateAPIKey(ctx, "k", "notifications:send")
	require.NoError(t, err)
	notifytest.RequireProblem(t, notifytest.Dash(t, b.env.Owner, "PUT", "/v1/limits/rate/api-keys/"+otherKey, map[string]any{"windowSeconds": 60, "maxRequests": 1}), http.StatusNotFound, "SVC-40400")
	notifytest.RequireProblem(t, notifytest.Dash(t, b.env.Owner, "PUT", "/v1/limits/rate/api-keys/nope", map[string]any{"windowSeconds": 60, "maxRequests": 1}), http.StatusNotFound, "SVC-40400")
	r, err = other.Dashboard(ctx, "GET", "/v1/limits/rate", nil)
	require.NoError(t, err)
	require.JSONEq(t, `{"workspacePolicy":null,"apiKeyPolicies":[]}`, string(r.Body))
}

type dispatchLimit struct {
	ID            string  `json:"id"`
	Scope         string  `json:"scope"`
	TargetID      *string `json:"targetId"`
	RatePerSecond int     `json:"ratePerSecond"`
	Enabled       bool    `json:"enabled"`
	CreatedAt     string  `json:"createdAt"`
	UpdatedAt     string  `json:"updatedAt"`
}

func (b *bundle) putDispatch(t *testing.T, body map[string]any) dispatchLimit {
	t.Helper()
	r := notifytest.Dash(t, b.env.Owner, "PUT", "/v1/limits/dispatch", body)
	require.Equal(t, http.StatusOK, r.Status, string(r.Body))
	var out struct {
		Limit dispatchLimit `json:"limit"`
	}
	require.NoError(t, r.Decode(&out))
	return out.Limit
}

func (b *bundle) listDispatch(t *testing.T) []dispatchLimit {
	t.Helper()
	r := notifytest.Dash(t, b.env.Owner, "GET", "/v1/limits/dispatch", nil)
	require.Equal(t, http.StatusOK, r.Status, string(r.Body))
	var out struct {
		Limits []dispatchLimit `json:"limits"`
	}
	require.NoError(t, r.Decode(&out))
	require.NotNil(t, out.Limits)
	return out.Limits
}

func TestDispatchLimits(t *testing.T) {
	t.Parallel()
	b := setup(t)
	require.Empty(t, b.listDispatch(t))

	w := b.putDispatch(t, map[string]any{"scope": "workspace", "ratePerSecond": 10})
	require.Equal(t, "workspace", w.Scope)
	require.Nil(t, w.TargetID)
	require.True(t, w.Enabled)
	require.NotEmpty(t, w.ID)
	require.NotEmpty(t, w.CreatedAt)
	p := b.putDispatch(t, map[string]any{"scope": "provider", "targetId": "prov-1", "ratePerSecond": 5, "enabled": false})
	require.Equal(t, "prov-1", *p.TargetID)
	require.False(t, p.Enabled)
	k := b.putDispatch(t, map[string]any{"scope": "apiKey", "targetId": b.keyID, "ratePerSecond": 1000000})

	// Upsert by (scope, targetId) keeps the id and createdAt.
	w2 := b.putDispatch(t, map[string]any{"scope": "workspace", "ratePerSecond": 20, "enabled": false})
	require.Equal(t, w.ID, w2.ID)
	require.Equal(t, w.CreatedAt, w2.CreatedAt)
	require.Equal(t, 20, w2.RatePerSecond)
	ls := b.listDispatch(t)
	require.Len(t, ls, 3)
	require.Equal(t, []string{w.ID, p.ID, k.ID}, []string{ls[0].ID, ls[1].ID, ls[2].ID})
	require.Equal(t, w2, ls[0])
	// A PUT without enabled enables a disabled limit again.
	w3 := b.putDispatch(t, map[string]any{"scope": "workspace", "ratePerSecond": 20})
	require.Equal(t, w.ID, w3.ID)
	require.True(t, w3.Enabled)

	// Validation.
	for _, body := range []string{
		`{}`, `{"scope":"workspace"}`, `{"ratePerSecond":1}`, `{"scope":"global","ratePerSecond":1}`,
		`{"scope":"workspace","targetId":"x","ratePerSecond":1}`, `{"scope":"provider","ratePerSecond":1}`,
		`{"scope":"provider","targetId":"","ratePerSecond":1}`, `{"scope":"apiKey","targetId":null,"ratePerSecond":1}`,
		`{"scope":"provider","targetId":"` + strings.Repeat("x", 65) + `","ratePerSecond":1}`,
		`{"scope":"workspace","ratePerSecond":0}`, `{"scope":"workspace","ratePerSecond":1000001}`,
		`{"scope":"workspace","ratePerSecond":"1"}`, `{"scope":"workspace","ratePerSecond":1,"enabled":null}`,
		`{"scope":"workspace","ratePerSecond":1,"x":1}`,
	} {
		notifytest.RequireProblem(t, notifytest.Dash(t, b.env.Owner, "PUT", "/v1/limits/dispatch", []byte(body)), http.StatusBadRequest, "SVC-40000")
	}
	b.putDispatch(t, map[string]any{"scope": "provider", "targetId": strings.Repeat("x", 64), "ratePerSecond": 1})

	// Delete: 204, then 404; another workspace's limit is 404.
	other, _ := b.env.NewWorkspace(t, "Other", "other@example.com")
	r, err := other.Dashboard(ctx, "DELETE", "/v1/limits/dispatch/"+p.ID, nil)
	require.NoError(t, err)
	notifytest.RequireProblem(t, r, http.StatusNotFound, "SVC-40400")
	r = notifytest.Dash(t, b.env.Owner, "DELETE", "/v1/limits/dispatch/"+p.ID, nil)
	require.Equal(t, http.StatusNoContent, r.Status, string(r.Body))
	notifytest.RequireProblem(t, notifytest.Dash(t, b.env.Owner, "DELETE", "/v1/limits/dispatch/"+p.ID, nil), http.StatusNotFound, "SVC-40400")
	require.Len(t, b.listDispatch(t), 3)
	r, err = other.Dashboard(ctx, "GET", "/v1/limits/dispatch", nil)
	require.NoError(t, err)
	require.JSONEq(t, `{"limits":[]}`, string(r.Body))
}

type auditLog struct {
	ActorUserID *string        `json:"actorUserId"`
	Action      string         `json:"action"`
	TargetType  string         `json:"targetType"`
	TargetID    string         `json:"targetId"`
	Payload     map[string]any `json:"payload"`
}

func (b *bundle) auditLogs(t *testing.T, action string) []auditLog {
	t.Helper()
	r := notifytest.Dash(t, b.env.Owner, "GET", "/v1/audit-logs?limit=200&action="+action, nil)
	require.Equal(t, http.StatusOK, r.Status, string(r.Body))
	var out struct {
		Logs []auditLog `json:"logs"`
	}
	require.NoError(t, r.Decode(&out))
	return out.Logs
}

// Dispatch-limit changes are audited like rate-limit policy changes
// (docs/DECISIONS.md): dispatch_limit.upsert and dispatch_limit.delete,
// target the limit; refused changes leave no entry.
func TestDispatchLimitAudit(t *testing.T) {
	t.Parallel()
	b := setup(t)
	w := b.putDispatch(t, map[string]any{"scope": "workspace", "ratePerSecond": 10})
	k := b.putDispatch(t, map[string]any{"scope": "apiKey", "targetId": b.keyID, "ratePerSecond": 5, "enabled": false})
	b.putDispatch(t, map[string]any{"scope": "workspace", "ratePerSecond": 20})
	notifytest.RequireProblem(t, notifytest.Dash(t, b.env.Owner, "PUT", "/v1/limits/dispatch", map[string]any{"scope": "workspace", "ratePerSecond": 0}), http.StatusBadRequest, "SVC-40000")

	logs := b.auditLogs(t, "dispatch_limit.upsert")
	require.Len(t, logs, 3, "one entry per stored change")
	for _, l := range logs {
		require.NotNil(t, l.ActorUserID)
		require.Equal(t, "dispatch_limit", l.TargetType)
	}
	require.Equal(t, w.ID, logs[0].TargetID, "newest first: the update of the workspace limit")
	require.Equal(t, map[string]any{"scope": "workspace", "targetId": nil, "ratePerSecond": 20.0, "enabled": true}, logs[0].Payload)
	require.Equal(t, k.ID, logs[1].TargetID)
	require.Equal(t, map[string]any{"scope": "apiKey", "targetId": b.keyID, "ratePerSecond": 5.0, "enabled": false}, logs[1].Payload)

	notifytest.RequireProblem(t, notifytest.Dash(t, b.env.Owner, "DELETE", "/v1/limits/dispatch/"+uuid.NewString(), nil), http.StatusNotFound, "SVC-40400")
	require.Empty(t, b.auditLogs(t, "dispatch_limit.delete"))
	r := notifytest.Dash(t, b.env.Owner, "DELETE", "/v1/limits/dispatch/"+k.ID, nil)
	require.Equal(t, http.StatusNoContent, r.Status, string(r.Body))
	logs = b.auditLogs(t, "dispatch_limit.delete")
	require.Len(t, logs, 1)
	require.Equal(t, "dispatch_limit", logs[0].TargetType)
	require.Equal(t, k.ID, logs[0].TargetID)
	require.Equal(t, map[string]any{"scope": "apiKey", "targetId": b.keyID}, logs[0].Payload)
}

// member adds a member with role to the owner's workspace and returns a
// logged-in client.
// Roles (SPEC "Dispatch limits", "Request rate-limit policies"): every
// role reads; only owner and admin write. Refused writes change nothing.
func TestLimitRoles(t *testing.T) {
	t.Parallel()
	b := setup(t)
	l := b.putDispatch(t, map[string]any{"scope": "workspace", "ratePerSecond": 10})
	dispatchBody := map[string]any{"scope": "workspace", "ratePerSecond": 20}
	rateBody := map[string]any{"windowSeconds": 60, "maxRequests": 5}
	for _, role := range []string{"viewer", "operator", "admin"} {
		c := b.env.Member(t, role)
		call := func(method, path string, body any) *client.Response {
			r, err := c.Dashboard(ctx, method, path, body)
			require.NoError(t, err)
			return r
		}
		for _, path := range []string{"/v1/limits/dispatch", "/v1/limits/rate"} {
			require.Equal(t, http.StatusOK, call("GET", path, nil).Status, "%s GET %s", role, path)
		}
		writes := []struct {
			method, path string
			body         any
			ok           int
		}{
			{"PUT", "/v1/limits/dispatch", dispatchBody, http.StatusOK},
			{"PUT", "/v1/limits/rate/workspace", rateBody, http.StatusOK},
			{"PUT", "/v1/limits/rate/api-keys/" + b.keyID, rateBody, http.StatusOK},
			{"DELETE", "/v1/limits/dispatch/" + l.ID, nil, http.StatusNoContent},
		}
		for _, w := range writes {
			r := call(w.method, w.path, w.body)
			if role == "admin" {
				require.Equal(t, w.ok, r.Status, "%s %s %s: %s", role, w.method, w.path, r.Body)
				continue
			}
			notifytest.RequireProblem(t, r, http.StatusForbidden, "SVC-40300")
		}
		if role != "admin" {
			require.Equal(t, []dispatchLimit{l}, b.listDispatch(t), "a refused write changes nothing")
			r := notifytest.Dash(t, b.env.Owner, "GET", "/v1/limits/rate", nil)
			require.JSONEq(t, `{"workspacePolicy":null,"apiKeyPolicies":[]}`, string(r.Body))
		}
	}
	require.Empty(t, b.listDispatch(t), "the admin deleted the limit")
}
