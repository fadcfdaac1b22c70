package bounces_test

import (
	"net/http"
	"net/url"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/notifyd/notifyd/internal/notifytest"
)

// Suppression list CRUD: validation, normalization, paging, roles and
// workspace isolation (API-DECISIONS section 4).
func TestSuppressionCRUD(t *testing.T) {
	t.Parallel()
	b := setup(t)

	r := notifytest.Dash(t, b.env.Owner, "POST", "/v1/suppressions", map[string]any{"address": "  Alice@Example.COM ", "reason": "manual"})
	require.Equal(t, http.StatusCreated, r.Status, string(r.Body))
	var created struct {
		Suppression suppressionOut `json:"suppression"`
	}
	require.NoError(t, r.Decode(&created))
	require.Equal(t, "alice@example.com", created.Suppression.Address)
	require.Equal(t, "manual", created.Suppression.Reason)
	require.NotEmpty(t, created.Suppression.CreatedAt)

	for _, body := range []any{
		map[string]any{"address": "not-an-address", "reason": "manual"},
		map[string]any{"address": "Bob <bob@example.com>", "reason": "manual"},
		map[string]any{"address": "", "reason": "manual"},
		map[string]any{"address": "a@example.com", "reason": "bounced"},
		map[string]any{"address": "a@example.com"},
		map[string]any{"reason": "manual"},
		map[string]any{"address": "a@example.com", "reason": "manual", "extra": 1},
		map[string]any{"address": 5, "reason": "manual"},
		"[]",
	} {
		notifytest.RequireProblem(t, notifytest.Dash(t, b.env.Owner, "POST", "/v1/suppressions", body), http.StatusBadRequest, "SVC-40000")
	}
	for _, reason := range []string{"unsubscribe", "hard_bounce", "complaint"} {
		r := notifytest.Dash(t, b.env.Owner, "POST", "/v1/suppressions", map[string]any{"address": reason + "@example.com", "reason": reason})
		require.Equal(t, http.StatusCreated, r.Status, string(r.Body))
	}
	// Upsert: the same address again takes the new reason.
	r = notifytest.Dash(t, b.env.Owner, "POST", "/v1/suppressions", map[string]any{"address": "ALICE@example.com", "reason": "complaint"})
	require.Equal(t, http.StatusCreated, r.Status, string(r.Body))
	require.Equal(t, "complaint", b.reasonOf(t, "alice@example.com"))

	all := b.list(t, b.env.Owner, "")
	require.Len(t, all.Suppressions, 4)
	require.False(t, all.HasNext)
	require.Nil(t, all.Cursor)
	// Paging with limit and cursor walks every entry once.
	seen := map[string]bool{}
	q := "?limit=3"
	for {
		page := b.list(t, b.env.Owner, q)
		for _, s := range page.Suppressions {
			require.False(t, seen[s.Address])
			seen[s.Address] = true
		}
		if !page.HasNext {
			break
		}
		q = "?limit=3&cursor=" + url.QueryEscape(*page.Cursor)
	}
	require.Len(t, seen, 4)
	require.Len(t, b.list(t, b.env.Owner, "?address="+url.QueryEscape(" Alice@Example.com")).Suppressions, 1)
	require.Empty(t, b.list(t, b.env.Owner, "?address=nobody@example.com").Suppressions)
	for _, q := range []string{"?limit=0", "?limit=201", "?limit=x", "?cursor=bm90LWEtY3Vyc29y"} {
		notifytest.RequireProblem(t, notifytest.Dash(t, b.env.Owner, "GET", "/v1/suppressions"+q, nil), http.StatusBadRequest, "SVC-40000")
	}

	// Workspace isolation.
	other, _ := b.env.NewWorkspace(t, "Other", "other@example.com")
	require.Empty(t, b.list(t, other, "").Suppressions)
	notifytest.RequireProblem(t, notifytest.Dash(t, other, "DELETE", "/v1/suppressions/alice@example.com", nil), http.StatusNotFound, "SVC-40400")
	require.Equal(t, "complaint", b.reasonOf(t, "alice@example.com"))

	// Roles: viewer reads only; operator adds but does not delete.
	viewer := b.env.Member(t, "viewer")
	operator := b.env.Member(t, "operator")
	require.Len(t, b.list(t, viewer, "").Suppressions, 4)
	notifytest.RequireProblem(t, notifytest.Dash(t, viewer, "POST", "/v1/suppressions", map[string]any{"address": "v@example.com", "reason": "manual"}), http.StatusForbidden, "SVC-40300")
	r = notifytest.Dash(t, operator, "POST", "/v1/suppressions", map[string]any{"address": "op@example.com", "reason": "manual"})
	require.Equal(t, http.StatusCreated, r.Status, string(r.Body))
	notifytest.RequireProblem(t, notifytest.Dash(t, operator, "DELETE", "/v1/suppressions/op@example.com", nil), http.StatusForbidden, "SVC-40300")
	notifytest.RequireProblem(t, notifytest.Dash(t, viewer, "DELETE", "/v1/suppressions/op@example.com", nil), http.StatusForbidden, "SVC-40300")

	// Delete: 204, then 404; the address is matched case-insensitively.
	r = notifytest.Dash(t, b.env.Owner, "DELETE", "/v1/suppressions/"+url.PathEscape("Alice@Example.com"), nil)
	require.Equal(t, http.StatusNoContent, r.Status, string(r.Body))
	notifytest.RequireProblem(t, notifytest.Dash(t, b.env.Owner, "DELETE", "/v1/suppressions/alice@example.com", nil), http.StatusNotFound, "SVC-40400")
	require.Equal(t, "", b.reasonOf(t, "alice@example.com"))

	require.NotEmpty(t, b.auditActions(t, "suppression.create"))
	del := b.auditActions(t, "suppression.delete")
	require.Len(t, del, 1)
	require.Equal(t, "alice@example.com", del[0]["targetId"])
}

// A manually suppressed address is refused before any provider attempt.
func TestSuppressedAddressIsNotSent(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.provider(t, "mailz_email")
	r := notifytest.Dash(t, b.env.Owner, "POST", "/v1/suppressions", map[string]any{"address": "Blocked@Example.com", "reason": "manual"})
	require.Equal(t, http.StatusCreated, r.Status, string(r.Body))
	out := notifytest.Wait(t, b.key, b.send(t, "blocked@EXAMPLE.com"))
	require.Equal(t, "failed", out.Status)
	require.Equal(t, "invalid_request", *out.FinalErrorCode)
	require.Equal(t, "recipient address is on the suppression list", *out.FinalErrorMessage)
	require.Empty(t, out.Attempts)
	require.Empty(t, b.env.Sim.Messages("mailz_email", "", 0))

	// Removed from the list, the address is sent to again.
	r = notifytest.Dash(t, b.env.Owner, "DELETE", "/v1/suppressions/blocked@example.com", nil)
	require.Equal(t, http.StatusNoContent, r.Status)
	require.Equal(t, "sent", notifytest.Wait(t, b.key, b.send(t, "blocked@example.com")).Status)
}
