package console_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestConsoleSuppressions: an operator adds addresses (normalized, bad
// input shown with the form, escaped), the list is searched by address
// and paged; removing is the admin's, as in the API; a viewer sees the
// list without write controls and is refused a write; another
// workspace's address is not found.
func TestConsoleSuppressions(t *testing.T) {
	t.Parallel()
	f := setup(t)
	op := f.env.ConsoleMember(t, "operator")
	resp, body := op.Get(t, "/suppressions")
	require.Equal(t, http.StatusOK, resp.StatusCode)
	require.Contains(t, body, `id="no-suppressions"`)
	require.Contains(t, body, `id="add-suppression"`)

	resp, body = op.Post(t, "/suppressions", url.Values{"address": {"<script>x"}, "reason": {"manual"}})
	require.Equal(t, http.StatusBadRequest, resp.StatusCode)
	require.Contains(t, body, "address is not a valid email address")
	require.Contains(t, body, `value="&lt;script&gt;x"`)
	require.NotContains(t, body, "<script>x")
	resp, body = op.Post(t, "/suppressions", url.Values{"address": {"a@example.com"}, "reason": {"bogus"}})
	require.Equal(t, http.StatusBadRequest, resp.StatusCode)
	require.Contains(t, body, "reason must be one of")
	for _, a := range []string{" Alice@Example.com ", "bob@example.com", "carol@example.com"} {
		resp, _ = op.Post(t, "/suppressions", url.Values{"address": {a}, "reason": {"manual"}})
		require.Equal(t, http.StatusSeeOther, resp.StatusCode, a)
	}
	_, body = op.Get(t, "/suppressions")
	require.Contains(t, body, "carol@example.com is suppressed (manual).")
	require.Contains(t, body, `data-address="alice@example.com"`, "normalized")
	require.NotContains(t, body, `class="remove"`, "removing is the admin's")

	_, body = op.Get(t, "/suppressions?address=BOB@example.com")
	require.Contains(t, body, `data-address="bob@example.com"`)
	require.NotContains(t, body, `data-address="alice@example.com"`)
	_, body = op.Get(t, "/suppressions?address=nobody@example.com")
	require.Contains(t, body, `id="no-suppressions"`)
	resp, body = op.Get(t, "/suppressions?cursor=not-a-cursor")
	require.Equal(t, http.StatusBadRequest, resp.StatusCode)
	require.Contains(t, body, "cursor is not valid")

	viewer := f.env.ConsoleMember(t, "viewer")
	_, body = viewer.Get(t, "/suppressions")
	require.Contains(t, body, `data-address="bob@example.com"`)
	require.NotContains(t, body, `method="post" action="/suppressions`)
	resp, _ = viewer.Post(t, "/suppressions", url.Values{"address": {"v@example.com"}, "reason": {"manual"}})
	require.Equal(t, http.StatusForbidden, resp.StatusCode)
	resp, _ = op.Post(t, "/suppressions/bob@example.com/remove", nil)
	require.Equal(t, http.StatusForbidden, resp.StatusCode)

	f.env.NewWorkspace(t, "Other", "other@example.com")
	oc := f.env.ConsoleLogin(t, "other@example.com", "correct horse battery")
	_, body = oc.Get(t, "/suppressions")
	require.NotContains(t, body, "bob@example.com")
	resp, _ = oc.Post(t, "/suppressions/bob@example.com/remove", nil)
	require.Equal(t, http.StatusNotFound, resp.StatusCode, "another workspace's address")

	admin := f.env.ConsoleMember(t, "admin")
	_, body = admin.Get(t, "/suppressions")
	require.Contains(t, body, `action="/suppressions/bob@example.com/remove"`)
	resp, _ = admin.Post(t, "/suppressions/bob@example.com/remove", nil)
	require.Equal(t, http.StatusSeeOther, resp.StatusCode)
	_, body = admin.Get(t, "/suppressions")
	require.Contains(t, body, "bob@example.com is no longer suppressed.")
	require.NotContains(t, body, `data-address="bob@example.com"`)
	resp, _ = admin.Post(t, "/suppressions/bob@example.com/remove", nil)
	require.Equal(t, http.StatusNotFound, resp.StatusCode)
	r, err := f.env.Owner.Dashboard(ctx, "GET", "/v1/audit-logs?action=suppression.delete", nil)
	require.NoError(t, err)
	require.True(t, strings.Contains(string(r.Body), "bob@example.com"), string(r.Body))
}
