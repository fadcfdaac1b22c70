package console_test

import (
	"encoding/json"
	"net/http"
	"net/url"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/notifyd/notifyd/internal/notifytest"
)

// badTextDetail is the service's answer to text PostgreSQL cannot store.
const badTextDetail = " must be valid UTF-8 text without NUL characters"

// TestConsoleImportRefusesBadText (issue 29, finding 8): a CSV row holding
// a NUL byte or invalid UTF-8 in any column (address, name, attribute
// value, attribute name) is skipped and counted like any invalid row,
// never stored, on both backends (PostgreSQL would refuse it: a 500); a
// consent source that is not text refuses the whole import with a 400
// naming it, as does such a search of the list.
func TestConsoleImportRefusesBadText(t *testing.T) {
	t.Parallel()
	env := notifytest.StartDaemon(t)
	c := env.ConsoleLogin(t, env.Email, env.Password)

	csv := "email,name,plan\n" +
		"ok@example.com,Ok,pro\n" +
		"nul-attr@example.com,Nul,a\x00b\n" +
		"bad-attr@example.com,Bad,\xc3\x28\n" +
		"bad-name@example.com,\xff\xfe,pro\n" +
		"nul-name@example.com,a\x00b,pro\n" +
		"nul\x00addr@example.com,Addr,pro\n" +
		"bad\xffaddr@example.com,Addr,pro\n"
	resp, body := c.PostFile(t, "/newsletter/subscribers/import", nil, "file", "list.csv", []byte(csv))
	require.Equal(t, http.StatusOK, resp.StatusCode, body)
	for id, n := range map[string]string{"import-total": "7", "import-created": "1", "import-updated": "0", "import-skipped": "6"} {
		require.Contains(t, body, `id="`+id+`">`+n+`<`, id)
	}
	// An attribute name that is not text spoils every row under it.
	resp, body = c.PostFile(t, "/newsletter/subscribers/import", nil, "file", "keys.csv",
		[]byte("email,pl\xffan,ci\x00ty\nkey@example.com,pro,Seoul\n"))
	require.Equal(t, http.StatusOK, resp.StatusCode, body)
	for id, n := range map[string]string{"import-total": "1", "import-created": "0", "import-skipped": "1"} {
		require.Contains(t, body, `id="`+id+`">`+n+`<`, id)
	}
	for _, source := range []string{"desk\x00", "desk\xff"} {
		resp, body = c.PostFile(t, "/newsletter/subscribers/import", url.Values{"consentSource": {source}}, "file", "list.csv",
			[]byte("email\nsource@example.com\n"))
		require.Equal(t, http.StatusBadRequest, resp.StatusCode, body)
		require.Contains(t, body, "consentSource"+badTextDetail)
	}

	for _, q := range []string{"%00", "%FF"} {
		resp, body = c.Get(t, "/newsletter/subscribers?search="+q)
		require.Equal(t, http.StatusBadRequest, resp.StatusCode, "search %s: %s", q, body)
		require.Contains(t, body, "search"+badTextDetail)
	}

	require.Equal(t, []string{"ok@example.com"}, listed(t, env, "/v1/newsletter/subscribers", "subscribers", "address"),
		"only the valid row is stored")
}

// listed answers one field of every item of a dashboard list.
func listed(t *testing.T, env *notifytest.Env, path, list, field string) []string {
	t.Helper()
	var out map[string]json.RawMessage
	require.NoError(t, notifytest.DashboardCall(t, env.Owner, "GET", path, nil, http.StatusOK).Decode(&out))
	var items []map[string]any
	require.NoError(t, json.Unmarshal(out[list], &items))
	vs := make([]string, len(items))
	for i, it := range items {
		vs[i], _ = it[field].(string)
	}
	return vs
}

// badField is a form field set to text the service refuses, and the
// field its detail names.
type badField struct{ field, value, detail string }

// refuseEach posts valid with each bad field in turn to every path and
// requires the 400 naming the field.
func refuseEach(t *testing.T, c *notifytest.Console, valid url.Values, bad []badField, paths ...string) {
	t.Helper()
	for _, tc := range bad {
		form := url.Values{}
		for k, v := range valid {
			form[k] = v
		}
		form.Set(tc.field, tc.value)
		for _, path := range paths {
			resp, body := c.Post(t, path, form)
			require.Equal(t, http.StatusBadRequest, resp.StatusCode, "%s %s %q: %s", path, tc.field, tc.value, body)
			require.Contains(t, body, tc.detail+badTextDetail, "%s %s %q", path, tc.field, tc.value)
		}
	}
}

// TestConsoleFormsRefuseBadText (issue 29, finding 8): the newsletter's
// other console forms (subscriber edit, campaign create and edit) refuse a
// NUL byte or invalid UTF-8 in any text field with the service's 400
// naming the field, and change nothing, on both backends.
func TestConsoleFormsRefuseBadText(t *testing.T) {
	t.Parallel()
	env := newsletterEnv(t)
	c := env.ConsoleLogin(t, env.Email, env.Password)
	resp, body := c.PostFile(t, "/newsletter/subscribers/import", nil, "file", "list.csv", []byte("email,name,plan\nann@example.com,Ann,pro\n"))
	require.Equal(t, http.StatusOK, resp.StatusCode, body)
	ann := subscriberID(t, env, "ann@example.com")

	edit := url.Values{"name": {"Ann"}, "consentStatus": {"subscribed"}, "consentSource": {"desk"}, "attributes": {"plan=pro"}}
	refuseEach(t, c, edit, []badField{
		{"name", "An\xffn", "name"},
		{"consentSource", "de\x00sk", "consentSource"},
		{"consentSource", "de\xffsk", "consentSource"},
		{"attributes", "plan=a\x00b", "attributes.plan"},
		{"attributes", "plan=a\xffb", "attributes.plan"},
		{"attributes", "pl\xffan=pro", "attributes key"},
	}, "/newsletter/subscribers/"+ann)
	_, body = c.Get(t, "/newsletter/subscribers/"+ann)
	require.Contains(t, body, "plan=pro", "the refused edits changed nothing")

	draft := url.Values{"name": {"Spring"}, "subject": {"Spring news"}, "contentText": {"Hello."}, "contentHtml": {"<p>Hello.</p>"},
		"audience": {"plan=pro"}, "isAdvertisement": {"1"}, "includeUnsubscribe": {"1"}}
	id := createCampaign(t, c, "Draft", "plan=pro")
	refuseEach(t, c, draft, []badField{
		{"name", "Spr\x00ing", "name"},
		{"name", "Spr\xffing", "name"},
		{"subject", "News \xff", "subject"},
		{"contentText", "Hel\x00lo.", "contentText"},
		{"contentText", "Hel\xfflo.", "contentText"},
		{"contentHtml", "<p>Hel\x00lo.</p>", "contentHtml"},
		{"contentHtml", "<p>Hel\xfflo.</p>", "contentHtml"},
		{"audience", "plan=pr\x00o", "audienceFilter"},
		{"audience", "pl\x00an=pro", "audienceFilter"},
	}, "/newsletter/campaigns", "/newsletter/campaigns/"+id)
	require.Equal(t, []string{"Draft"}, listed(t, env, "/v1/newsletter/campaigns", "campaigns", "name"),
		"no refused draft was created, and the refused edits changed nothing")
}
