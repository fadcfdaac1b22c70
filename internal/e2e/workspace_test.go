package e2e_test

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/notifyd/notifyd/client"
	"github.com/notifyd/notifyd/internal/accounts"
)

type workspaceBody struct {
	Workspace struct {
		ID        string `json:"id"`
		Name      string `json:"name"`
		CreatedAt string `json:"createdAt"`
		UpdatedAt string `json:"updatedAt"`
	} `json:"workspace"`
}

type memberJSON struct {
	UserID    string `json:"userId"`
	Email     string `json:"email"`
	Role      string `json:"role"`
	CreatedAt string `json:"createdAt"`
}

func TestWorkspace(t *testing.T) {
	t.Parallel()
	e := start(t)
	r := do(t, e.Owner, "GET", "/v1/workspace", nil)
	requireStatus(t, r, http.StatusOK)
	w := decode[workspaceBody](t, r)
	require.Equal(t, e.Workspace, w.Workspace.ID)
	require.Equal(t, "Test", w.Workspace.Name)
	require.NotEmpty(t, w.Workspace.CreatedAt)

	r = do(t, e.Owner, "PATCH", "/v1/workspace", map[string]string{"name": "  Renamed  "})
	requireStatus(t, r, http.StatusOK)
	w = decode[workspaceBody](t, r)
	require.Equal(t, "Renamed", w.Workspace.Name)
	require.Equal(t, "Renamed", decode[workspaceBody](t, do(t, e.Owner, "GET", "/v1/workspace", nil)).Workspace.Name)
	me := decode[meBody](t, do(t, e.Owner, "GET", "/v1/me", nil))
	require.Equal(t, "Renamed", me.Workspaces[0].Name)

	l := requireAudit(t, e.Owner, "workspace.updated", e.Workspace)
	require.Equal(t, "workspace", l.TargetType)
	require.Equal(t, "Renamed", l.Payload["name"])
	require.NotNil(t, l.ActorUserID)
	require.Equal(t, me.User.ID, *l.ActorUserID)

	// Validation: missing, empty, too long, wrong type, null.
	for _, body := range []string{`{}`, `{"name":""}`, `{"name":"   "}`, `{"name":"` + strings.Repeat("a", 121) + `"}`, `{"name":1}`, `{"name":null}`} {
		e.callProblem(t, e.Owner, "PATCH", "/v1/workspace", body, 400, "SVC-40000")
	}
	requireStatus(t, do(t, e.Owner, "PATCH", "/v1/workspace", map[string]string{"name": strings.Repeat("한", 120)}), http.StatusOK)
	require.Equal(t, 2, auditCount(t, e.Owner, "workspace.updated"))

	// An admin may rename; operator and viewer may not.
	_, admin := e.member(t, "admin")
	requireStatus(t, do(t, admin, "PATCH", "/v1/workspace", map[string]string{"name": "By admin"}), http.StatusOK)
	_, op := e.member(t, "operator")
	e.callProblem(t, op, "PATCH", "/v1/workspace", map[string]string{"name": "By operator"}, 403, "SVC-40300")
	require.Equal(t, "By admin", decode[workspaceBody](t, do(t, e.Owner, "GET", "/v1/workspace", nil)).Workspace.Name)
}

func members(t testing.TB, c *client.Client) map[string]memberJSON {
	t.Helper()
	r := do(t, c, "GET", "/v1/workspace/members", nil)
	requireStatus(t, r, http.StatusOK)
	out := map[string]memberJSON{}
	for _, m := range decode[struct {
		Members []memberJSON `json:"members"`
	}](t, r).Members {
		out[m.UserID] = m
	}
	return out
}

func TestMembers(t *testing.T) {
	t.Parallel()
	e := start(t)
	me := decode[meBody](t, do(t, e.Owner, "GET", "/v1/me", nil))
	ownerID := me.User.ID

	ms := members(t, e.Owner)
	require.Len(t, ms, 1)
	require.Equal(t, "owner", ms[ownerID].Role)
	require.Equal(t, e.Email, ms[ownerID].Email)

	// A new user without a password gets none (issue 31, item 4): the
	// answer carries no password, the account cannot log in until an
	// admin sets its first password, once.
	r := do(t, e.Owner, "POST", "/v1/workspace/members", map[string]string{"email": "New.Admin@Example.com", "role": "admin"})
	requireStatus(t, r, http.StatusCreated)
	require.Equal(t, []string{"member"}, keys(decode[map[string]any](t, r)))
	created := decode[struct {
		Member memberJSON `json:"member"`
	}](t, r)
	require.Equal(t, "new.admin@example.com", created.Member.Email)
	require.Equal(t, "admin", created.Member.Role)
	adminID := created.Member.UserID
	e.callProblem(t, e.anon(), "POST", "/v1/auth/login", map[string]string{"email": "new.admin@example.com", "password": ""}, 401, "SVC-40100")
	e.callProblem(t, e.anon(), "POST", "/v1/auth/login", map[string]string{"email": "new.admin@example.com", "password": "anything at all"}, 401, "SVC-40100")
	e.callProblem(t, e.Owner, "PATCH", "/v1/workspace/members/"+adminID, map[string]string{"password": "short"}, 400, "SVC-40000")
	r = do(t, e.Owner, "PATCH", "/v1/workspace/members/"+adminID, map[string]string{"password": "first password 1"})
	requireStatus(t, r, http.StatusOK)
	require.Equal(t, "admin", decode[struct {
		Member memberJSON `json:"member"`
	}](t, r).Member.Role)
	requireAudit(t, e.Owner, "member.password", adminID)
	e.callProblem(t, e.Owner, "PATCH", "/v1/workspace/members/"+adminID, map[string]string{"password": "second password 2"}, 409, "SVC-40900")
	admin, lb := e.login(t, "new.admin@example.com", "first password 1", "")
	require.Equal(t, "admin", lb.Workspace.Role)
	l := requireAudit(t, e.Owner, "member.add", adminID)
	require.Equal(t, "member", l.TargetType)
	require.NotContains(t, string(do(t, e.Owner, "GET", "/v1/audit-logs", nil).Body), "first password 1")
	// A member who has a password is theirs to change.
	e.callProblem(t, e.Owner, "PATCH", "/v1/workspace/members/"+ownerID, map[string]string{"password": "taken over 1"}, 409, "SVC-40900")

	// Duplicate member: 409. Bad input: 400.
	e.callProblem(t, e.Owner, "POST", "/v1/workspace/members", map[string]string{"email": "new.admin@example.com", "role": "viewer"}, 409, "SVC-40900")
	for _, body := range []map[string]string{
		{"email": "not-an-email", "role": "viewer"},
		{"email": "", "role": "viewer"},
		{"email": "a@example.com", "role": "root"},
		{"email": "a@example.com", "role": ""},
		{"email": "a@example.com", "role": "viewer", "password": "short"},
		{"email": "Name <a@example.com>", "role": "viewer"},
	} {
		e.callProblem(t, e.Owner, "POST", "/v1/workspace/members", body, 400, "SVC-40000")
	}

	// Only an owner grants owner: the admin can add an operator but not an owner.
	e.callProblem(t, admin, "POST", "/v1/workspace/members", map[string]string{"email": "o2@example.com", "role": "owner"}, 403, "SVC-40300")
	opID, op := e.memberOf(t, admin, "operator")
	e.callProblem(t, admin, "PATCH", "/v1/workspace/members/"+opID, map[string]string{"role": "owner"}, 403, "SVC-40300")
	e.callProblem(t, admin, "PATCH", "/v1/workspace/members/"+ownerID, map[string]string{"role": "admin"}, 403, "SVC-40300")
	e.callProblem(t, admin, "DELETE", "/v1/workspace/members/"+ownerID, nil, 403, "SVC-40300")
	// Operators and viewers manage nothing but may list.
	e.callProblem(t, op, "POST", "/v1/workspace/members", map[string]string{"email": "v@example.com", "role": "viewer"}, 403, "SVC-40300")
	e.callProblem(t, op, "PATCH", "/v1/workspace/members/"+opID, map[string]string{"role": "admin"}, 403, "SVC-40300")
	e.callProblem(t, op, "DELETE", "/v1/workspace/members/"+adminID, nil, 403, "SVC-40300")
	require.Len(t, members(t, op), 3)

	// The admin changes the operator's role; the change applies to the live session.
	r = do(t, admin, "PATCH", "/v1/workspace/members/"+opID, map[string]string{"role": "viewer"})
	requireStatus(t, r, http.StatusOK)
	require.Equal(t, "viewer", decode[struct {
		Member memberJSON `json:"member"`
	}](t, r).Member.Role)
	e.callProblem(t, op, "POST", "/v1/providers", map[string]any{"providerKind": "chata_webhook", "displayName": "x"}, 403, "SVC-40300")
	requireAudit(t, e.Owner, "member.update", opID)
	e.callProblem(t, admin, "PATCH", "/v1/workspace/members/"+opID, map[string]string{"role": "god"}, 400, "SVC-40000")
	e.callProblem(t, admin, "PATCH", "/v1/workspace/members/"+opID, map[string]string{}, 400, "SVC-40000")

	// The last owner can be neither demoted nor removed (409).
	e.callProblem(t, e.Owner, "PATCH", "/v1/workspace/members/"+ownerID, map[string]string{"role": "admin"}, 409, "SVC-40900")
	e.callProblem(t, e.Owner, "DELETE", "/v1/workspace/members/"+ownerID, nil, 409, "SVC-40900")

	// An owner grants owner; then either owner may step down.
	requireStatus(t, do(t, e.Owner, "PATCH", "/v1/workspace/members/"+adminID, map[string]string{"role": "owner"}), http.StatusOK)
	require.Equal(t, "owner", members(t, e.Owner)[adminID].Role)
	requireStatus(t, do(t, admin, "PATCH", "/v1/workspace/members/"+ownerID, map[string]string{"role": "admin"}), http.StatusOK)
	e.callProblem(t, admin, "DELETE", "/v1/workspace/members/"+adminID, nil, 409, "SVC-40900") // last owner again
	// The former owner is an admin now and cannot touch the owner.
	e.callProblem(t, e.Owner, "DELETE", "/v1/workspace/members/"+adminID, nil, 403, "SVC-40300")

	// Removing a member: 204, audited, its session loses the workspace.
	r = do(t, admin, "DELETE", "/v1/workspace/members/"+opID, nil)
	requireStatus(t, r, http.StatusNoContent)
	requireAudit(t, e.Owner, "member.remove", opID)
	require.NotContains(t, members(t, e.Owner), opID)
	e.callProblem(t, op, "GET", "/v1/workspace/members", nil, 403, "SVC-40300")
	requireStatus(t, do(t, op, "GET", "/v1/me", nil), http.StatusOK)
	e.callProblem(t, admin, "DELETE", "/v1/workspace/members/"+opID, nil, 404, "SVC-40400")
	e.callProblem(t, admin, "PATCH", "/v1/workspace/members/"+opID, map[string]string{"role": "viewer"}, 404, "SVC-40400")
	e.callProblem(t, admin, "PATCH", "/v1/workspace/members/not-a-user", map[string]string{"role": "viewer"}, 404, "SVC-40400")

	// Members of another workspace are invisible.
	other, _ := e.NewWorkspace(t, "Other", "other@example.com")
	recordClient(other)
	otherMe := decode[meBody](t, do(t, other, "GET", "/v1/me", nil))
	require.NotContains(t, members(t, e.Owner), otherMe.User.ID)
	e.callProblem(t, e.Owner, "PATCH", "/v1/workspace/members/"+otherMe.User.ID, map[string]string{"role": "viewer"}, 404, "SVC-40400")
	e.callProblem(t, e.Owner, "DELETE", "/v1/workspace/members/"+otherMe.User.ID, nil, 404, "SVC-40400")
	require.Len(t, members(t, other), 1)
}

// TestBootstrapEmailTaken is the `notifyd bootstrap` path: an existing
// email (in any case) is ErrEmailTaken and creates nothing.
func TestBootstrapEmailTaken(t *testing.T) {
	t.Parallel()
	e := start(t)
	ctx := context.Background()
	for _, email := range []string{e.Email, "  Owner@Example.COM "} {
		_, err := e.Daemon.Rooms.Accounts.Bootstrap(ctx, "Again", email, "")
		require.True(t, errors.Is(err, accounts.ErrEmailTaken), "%v", err)
	}
	me := decode[meBody](t, do(t, e.Owner, "GET", "/v1/me", nil))
	require.Len(t, me.Workspaces, 1)

	_, err := e.Daemon.Rooms.Accounts.Bootstrap(ctx, "Bad", "not an email", "")
	require.Error(t, err)
	_, err = e.Daemon.Rooms.Accounts.Bootstrap(ctx, "", "fresh@example.com", "")
	require.Error(t, err)
	res, err := e.Daemon.Rooms.Accounts.Bootstrap(ctx, "Fresh", "fresh@example.com", "")
	require.NoError(t, err)
	require.GreaterOrEqual(t, len(res.Password), 16)
	c, lb := e.login(t, "fresh@example.com", res.Password, "")
	require.Equal(t, res.WorkspaceID, lb.Workspace.ID)
	require.Equal(t, "owner", lb.Workspace.Role)
	requireStatus(t, do(t, c, "GET", "/v1/workspace", nil), http.StatusOK)
	requireStatus(t, do(t, e.withToken(res.AccessToken), "GET", "/v1/workspace", nil), http.StatusOK)
}

// TestConcurrentOwnerDemotion: two owners demoting each other at once
// never leave the workspace without an owner.
func TestConcurrentOwnerDemotion(t *testing.T) {
	t.Parallel()
	e := start(t)
	ownerID := decode[meBody](t, do(t, e.Owner, "GET", "/v1/me", nil)).User.ID
	for range 5 {
		id2, c2 := e.member(t, "owner")
		var wg sync.WaitGroup
		wg.Add(2)
		go func() {
			defer wg.Done()
			do(t, e.Owner, "PATCH", "/v1/workspace/members/"+id2, map[string]string{"role": "admin"})
		}()
		go func() {
			defer wg.Done()
			do(t, c2, "PATCH", "/v1/workspace/members/"+ownerID, map[string]string{"role": "admin"})
		}()
		wg.Wait()
		ms := members(t, c2)
		owners := 0
		for _, m := range ms {
			if m.Role == "owner" {
				owners++
			}
		}
		require.Equal(t, 1, owners)
		// Back to one owner (e.Owner) for the next round.
		if ms[ownerID].Role != "owner" {
			requireStatus(t, do(t, c2, "PATCH", "/v1/workspace/members/"+ownerID, map[string]string{"role": "owner"}), 200)
			requireStatus(t, do(t, e.Owner, "PATCH", "/v1/workspace/members/"+id2, map[string]string{"role": "admin"}), 200)
		}
		requireStatus(t, do(t, e.Owner, "DELETE", "/v1/workspace/members/"+id2, nil), 204)
	}
}
