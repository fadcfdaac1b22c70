package e2e_test

import (
	"context"
	"net/http"
	"slices"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/notifyd/notifyd/client"
	"github.com/notifyd/notifyd/internal/notify"
	"github.com/notifyd/notifyd/internal/notifytest"
)

// invitationJSON is one entry of GET /v1/auth/invitations.
type invitationJSON struct {
	ID        string `json:"id"`
	Workspace struct {
		ID   string `json:"id"`
		Name string `json:"name"`
	} `json:"workspace"`
	Role      string `json:"role"`
	InvitedBy *struct {
		ID    string `json:"id"`
		Email string `json:"email"`
	} `json:"invitedBy"`
	CreatedAt string `json:"createdAt"`
	ExpiresAt string `json:"expiresAt"`
}

func invitations(t testing.TB, c *client.Client) []invitationJSON {
	t.Helper()
	r := do(t, c, "GET", "/v1/auth/invitations", nil)
	requireStatus(t, r, http.StatusOK)
	return decode[struct {
		Invitations []invitationJSON `json:"invitations"`
	}](t, r).Invitations
}

// jsonShape lists the key paths of a JSON body with each value's JSON type,
// sorted: two answers with the same shape give the same list.
func jsonShape(t testing.TB, r *client.Response) []string {
	t.Helper()
	var out []string
	var walk func(prefix string, v any)
	walk = func(prefix string, v any) {
		switch x := v.(type) {
		case map[string]any:
			for k, e := range x {
				walk(prefix+"."+k, e)
			}
		case string:
			out = append(out, prefix+":string")
		case nil:
			out = append(out, prefix+":null")
		default:
			out = append(out, prefix+":other")
		}
	}
	walk("", decode[map[string]any](t, r))
	sort.Strings(out)
	return out
}

func userID(t testing.TB, c *client.Client) string {
	t.Helper()
	return decode[meBody](t, do(t, c, "GET", "/v1/me", nil)).User.ID
}

// TestAddExistingUserInvites is issue 17 finding 4: an admin adding
// another tenant's user by email no longer makes them a member. The answer
// has the status and shape of a new member's; the user sees an invitation
// and becomes a member only by accepting it.
func TestAddExistingUserInvites(t *testing.T) {
	t.Parallel()
	e := start(t)
	other, otherWS := e.NewWorkspace(t, "Other", "other-owner@example.com")
	recordClient(other)
	ownerID := userID(t, e.Owner)
	otherOwnerID := userID(t, other)

	// Same request for an existing and a new address: same status, same shape.
	add := func(email, role, password string) *client.Response {
		body := map[string]string{"email": email, "role": role}
		if password != "" {
			body["password"] = password
		}
		return do(t, other, "POST", "/v1/workspace/members", body)
	}
	existing := add(" OWNER@example.com ", "admin", "attacker chosen 1")
	fresh := add("fresh-"+randHex(4)+"@example.com", "admin", "attacker chosen 1")
	requireStatus(t, existing, http.StatusCreated)
	requireStatus(t, fresh, http.StatusCreated)
	require.Equal(t, jsonShape(t, fresh), jsonShape(t, existing))
	m := decode[struct {
		Member memberJSON `json:"member"`
	}](t, existing).Member
	require.Equal(t, e.Email, m.Email)
	require.Equal(t, "admin", m.Role)
	require.NotEqual(t, ownerID, m.UserID, "the answer never carries another workspace's user id")
	handle := m.UserID
	// Without a password (issue 31, item 4): the same status and fields
	// again, for an existing and a new address, and as with a password; no
	// password is generated for anyone.
	existingBare := add(e.Email, "admin", "")
	freshBare := add("fresh-"+randHex(4)+"@example.com", "admin", "")
	requireStatus(t, existingBare, http.StatusCreated)
	requireStatus(t, freshBare, http.StatusCreated)
	require.Equal(t, jsonShape(t, fresh), jsonShape(t, existingBare))
	require.Equal(t, jsonShape(t, fresh), jsonShape(t, freshBare))
	for _, r := range []*client.Response{existing, fresh, existingBare, freshBare} {
		require.Equal(t, []string{"member"}, keys(decode[map[string]any](t, r)))
	}
	require.Equal(t, handle, decode[struct {
		Member memberJSON `json:"member"`
	}](t, existingBare).Member.UserID, "inviting again renews the offer, with its id")
	e.callProblem(t, e.anon(), "POST", "/v1/auth/login", map[string]string{"email": e.Email, "password": "attacker chosen 1"}, 401, "SVC-40100")

	// Nothing granted: not listed, not manageable, and the user's login
	// still selects their own (only) workspace.
	require.NotContains(t, members(t, other), ownerID)
	e.callProblem(t, other, "PATCH", "/v1/workspace/members/"+ownerID, map[string]string{"role": "viewer"}, 404, "SVC-40400")
	e.callProblem(t, other, "PATCH", "/v1/workspace/members/"+handle, map[string]string{"password": "attacker chosen 2"}, 404, "SVC-40400")
	_, lb := e.login(t, e.Email, e.Password, "")
	require.NotNil(t, lb.Workspace, "an invitation must not take the user's workspace away at login")
	require.Equal(t, e.Workspace, lb.Workspace.ID)
	e.callProblem(t, e.anon(), "POST", "/v1/auth/login",
		map[string]string{"email": e.Email, "password": e.Password, "workspaceId": otherWS}, 403, "SVC-40300")
	l := requireAudit(t, other, "member.invite", handle)
	require.Equal(t, "member", l.TargetType)
	require.Equal(t, "admin", l.Payload["role"])
	require.Equal(t, 2, auditCount(t, other, "member.add"), "only the new users were added")

	// The user sees the invitation (the renewed one: same id, newest role).
	invs := invitations(t, e.Owner)
	require.Len(t, invs, 1)
	inv := invs[0]
	require.Equal(t, handle, inv.ID, "the handle the workspace got is the invitation's id")
	require.Equal(t, otherWS, inv.Workspace.ID)
	require.Equal(t, "Other", inv.Workspace.Name)
	require.Equal(t, "admin", inv.Role)
	require.NotNil(t, inv.InvitedBy)
	require.Equal(t, otherOwnerID, inv.InvitedBy.ID)
	require.Equal(t, "other-owner@example.com", inv.InvitedBy.Email)
	exp, err := time.Parse("2006-01-02T15:04:05.000Z", inv.ExpiresAt)
	require.NoError(t, err)
	require.WithinDuration(t, time.Now().Add(7*24*time.Hour), exp, time.Minute)
	requireStatus(t, add(e.Email, "viewer", ""), http.StatusCreated)
	invs = invitations(t, e.Owner)
	require.Len(t, invs, 1)
	require.Equal(t, inv.ID, invs[0].ID)
	require.Equal(t, "viewer", invs[0].Role)

	// Only its user can answer it; the inviter's workspace cannot.
	_, stranger := e.member(t, "viewer")
	require.Empty(t, invitations(t, stranger))
	e.callProblem(t, stranger, "POST", "/v1/auth/invitations/"+inv.ID+"/accept", nil, 404, "SVC-40400")
	e.callProblem(t, stranger, "POST", "/v1/auth/invitations/"+inv.ID+"/decline", nil, 404, "SVC-40400")
	e.callProblem(t, other, "POST", "/v1/auth/invitations/"+inv.ID+"/accept", nil, 404, "SVC-40400")
	e.callProblem(t, e.Owner, "POST", "/v1/auth/invitations/"+inv.ID+"/accept", `{"x":1}`, 400, "SVC-40000")
	require.Len(t, invitations(t, e.Owner), 1)

	// Accepting makes the membership with the offered role.
	r := do(t, e.Owner, "POST", "/v1/auth/invitations/"+inv.ID+"/accept", nil)
	requireStatus(t, r, http.StatusOK)
	w := decode[struct {
		Workspace struct {
			ID, Name, Role string
		} `json:"workspace"`
	}](t, r).Workspace
	require.Equal(t, otherWS, w.ID)
	require.Equal(t, "Other", w.Name)
	require.Equal(t, "viewer", w.Role)
	require.Empty(t, invitations(t, e.Owner))
	e.callProblem(t, e.Owner, "POST", "/v1/auth/invitations/"+inv.ID+"/accept", nil, 404, "SVC-40400")
	require.Equal(t, "viewer", members(t, other)[ownerID].Role)
	l = requireAudit(t, other, "member.invite.accept", ownerID)
	require.Equal(t, ownerID, *l.ActorUserID)
	// The accepting session keeps its workspace.
	requireStatus(t, do(t, e.Owner, "GET", "/v1/workspace", nil), http.StatusOK)
	me := decode[meBody](t, do(t, e.Owner, "GET", "/v1/me", nil))
	require.Len(t, me.Workspaces, 2)
	// With several workspaces, login selects none unless workspaceId names one.
	_, lb = e.login(t, e.Email, e.Password, "")
	require.Nil(t, lb.Workspace)
	_, lb = e.login(t, e.Email, e.Password, otherWS)
	require.Equal(t, "viewer", lb.Workspace.Role)
}

// TestInvitationDeclineRevokeExpire: a declined, taken back or expired
// invitation grants nothing and can no longer be accepted.
func TestInvitationDeclineRevokeExpire(t *testing.T) {
	t.Parallel()
	clock := &notifytest.Clock{}
	e := &env{Env: notifytest.StartDaemonAt(t, clock.Now), t: t}
	e.Owner.HTTP.Transport = transport
	other, otherWS := e.NewWorkspace(t, "Other", "other-owner@example.com")
	recordClient(other)
	ownerID := userID(t, e.Owner)
	invite := func(role string) invitationJSON {
		t.Helper()
		requireStatus(t, do(t, other, "POST", "/v1/workspace/members", map[string]string{"email": e.Email, "role": role}), http.StatusCreated)
		invs := invitations(t, e.Owner)
		require.Len(t, invs, 1)
		return invs[0]
	}

	// Decline.
	inv := invite("admin")
	r := do(t, e.Owner, "POST", "/v1/auth/invitations/"+inv.ID+"/decline", nil)
	requireStatus(t, r, http.StatusNoContent)
	require.Empty(t, invitations(t, e.Owner))
	e.callProblem(t, e.Owner, "POST", "/v1/auth/invitations/"+inv.ID+"/accept", nil, 404, "SVC-40400")
	require.NotContains(t, members(t, other), ownerID)
	requireAudit(t, other, "member.invite.decline", inv.ID)

	// Taken back by the inviting workspace (DELETE on the id it answered,
	// the invitation's; the account's id is not a handle).
	inv = invite("operator")
	e.callProblem(t, other, "DELETE", "/v1/workspace/members/"+ownerID, nil, 404, "SVC-40400")
	requireStatus(t, do(t, other, "DELETE", "/v1/workspace/members/"+inv.ID, nil), http.StatusNoContent)
	requireAudit(t, other, "member.invite.revoke", inv.ID)
	require.Empty(t, invitations(t, e.Owner))
	e.callProblem(t, e.Owner, "POST", "/v1/auth/invitations/"+inv.ID+"/accept", nil, 404, "SVC-40400")
	e.callProblem(t, other, "DELETE", "/v1/workspace/members/"+inv.ID, nil, 404, "SVC-40400")

	// Only an owner offers owner.
	_, admin := e.memberOf(t, other, "admin")
	e.callProblem(t, admin, "POST", "/v1/workspace/members", map[string]string{"email": e.Email, "role": "owner"}, 403, "SVC-40300")
	require.Empty(t, invitations(t, e.Owner))

	// Expired after 7 days: no longer listed nor accepted.
	inv = invite("viewer")
	clock.Advance(7*24*time.Hour + time.Minute)
	c, _ := e.login(t, e.Email, e.Password, "") // sessions expired too
	require.Empty(t, invitations(t, c))
	r = do(t, c, "POST", "/v1/auth/invitations/"+inv.ID+"/accept", nil) // callProblem checks the timestamp against the real clock
	requireStatus(t, r, http.StatusNotFound)
	require.Equal(t, "SVC-40400", decode[problem](t, r).Code)
	o, _ := e.login(t, "other-owner@example.com", "correct horse battery", otherWS)
	require.NotContains(t, members(t, o), ownerID)

	// The periodic cleanup deletes it.
	ctx := context.Background()
	stored := func() int {
		var n int
		require.NoError(t, e.Daemon.DB.View(ctx, func(tx notify.Tx) error {
			all, err := tx.FindInvitationsOfUser(ctx, ownerID, time.Time{}) // expired ones too
			n = len(all)
			return err
		}))
		return n
	}
	// The daemon's own periodic cleanup runs once at start; on a loaded
	// machine it may run only now, after the clock moved, and delete the
	// invitation itself: either way only Cleanup deletes it.
	require.LessOrEqual(t, stored(), 1)
	_, _, err := e.Daemon.Rooms.Accounts.Cleanup(ctx)
	require.NoError(t, err)
	require.Zero(t, stored())
}

// TestLeaveWorkspace: a member leaves on their own; the last owner cannot.
func TestLeaveWorkspace(t *testing.T) {
	t.Parallel()
	e := start(t)
	opID, op := e.member(t, "operator")

	// A body is refused and changes nothing.
	e.callProblem(t, op, "POST", "/v1/workspace/leave", `{"x":1}`, 400, "SVC-40000")
	require.Contains(t, members(t, e.Owner), opID)

	requireStatus(t, do(t, op, "POST", "/v1/workspace/leave", nil), http.StatusNoContent)
	require.NotContains(t, members(t, e.Owner), opID)
	l := requireAudit(t, e.Owner, "member.leave", opID)
	require.Equal(t, opID, *l.ActorUserID)
	require.Equal(t, "operator", l.Payload["role"])
	// The session stays, with no workspace.
	e.callProblem(t, op, "GET", "/v1/workspace/members", nil, 403, "SVC-40300")
	e.callProblem(t, op, "POST", "/v1/workspace/leave", nil, 403, "SVC-40300")
	require.Empty(t, decode[meBody](t, do(t, op, "GET", "/v1/me", nil)).Workspaces)

	// The last owner cannot leave; with a second owner, one of them can.
	p := e.callProblem(t, e.Owner, "POST", "/v1/workspace/leave", nil, 409, "SVC-40900")
	require.Contains(t, p.Detail, "last owner")
	owner2ID, owner2 := e.member(t, "owner")
	requireStatus(t, do(t, owner2, "POST", "/v1/workspace/leave", nil), http.StatusNoContent)
	require.NotContains(t, members(t, e.Owner), owner2ID)
	e.callProblem(t, e.Owner, "POST", "/v1/workspace/leave", nil, 409, "SVC-40900")
	require.Equal(t, "owner", members(t, e.Owner)[userID(t, e.Owner)].Role)

	// Coming back takes an invitation, answered from a session with no
	// workspace.
	requireStatus(t, do(t, e.Owner, "POST", "/v1/workspace/members", map[string]string{"email": decode[meBody](t, do(t, op, "GET", "/v1/me", nil)).User.Email, "role": "viewer"}), http.StatusCreated)
	require.NotContains(t, members(t, e.Owner), opID)
	invs := invitations(t, op)
	require.Len(t, invs, 1)
	requireStatus(t, do(t, op, "POST", "/v1/auth/invitations/"+invs[0].ID+"/accept", nil), http.StatusOK)
	require.Equal(t, "viewer", members(t, e.Owner)[opID].Role)
	ws := decode[meBody](t, do(t, op, "GET", "/v1/me", nil)).Workspaces
	require.Len(t, ws, 1)
	require.Equal(t, e.Workspace, ws[0].ID)
	require.Equal(t, "viewer", ws[0].Role)
}

// TestMembershipRaces: two accepts of one invitation make one membership
// (the other is 404), and two owners leaving at once leave one owner.
func TestMembershipRaces(t *testing.T) {
	t.Parallel()
	e := start(t)
	other, _ := e.NewWorkspace(t, "Other", "other-owner@example.com")
	recordClient(other)
	ownerID := userID(t, e.Owner)
	twice := func(path string, c1, c2 *client.Client) []int {
		t.Helper()
		statuses := make([]int, 2)
		var wg sync.WaitGroup
		for i, c := range []*client.Client{c1, c2} {
			wg.Go(func() { statuses[i] = do(t, c, "POST", path, nil).Status })
		}
		wg.Wait()
		slices.Sort(statuses)
		return statuses
	}
	for round := 1; round <= 3; round++ {
		requireStatus(t, do(t, other, "POST", "/v1/workspace/members", map[string]string{"email": e.Email, "role": "viewer"}), http.StatusCreated)
		inv := invitations(t, e.Owner)[0]
		require.Equal(t, []int{http.StatusOK, http.StatusNotFound}, twice("/v1/auth/invitations/"+inv.ID+"/accept", e.Owner, e.Owner))
		require.Equal(t, round, auditCount(t, other, "member.invite.accept"))
		require.Equal(t, "viewer", members(t, other)[ownerID].Role)
		requireStatus(t, do(t, other, "DELETE", "/v1/workspace/members/"+ownerID, nil), http.StatusNoContent)
	}
	owner := e.Owner
	for range 3 {
		_, owner2 := e.memberOf(t, owner, "owner")
		require.Equal(t, []int{http.StatusNoContent, http.StatusConflict}, twice("/v1/workspace/leave", owner, owner2))
		if do(t, owner, "GET", "/v1/workspace/members", nil).Status == http.StatusForbidden {
			owner = owner2 // the first one left
		}
		owners := 0
		for _, m := range members(t, owner) {
			if m.Role == "owner" {
				owners++
			}
		}
		require.Equal(t, 1, owners)
	}
}
