// Package categories_test runs categories and preferences (issue 32,
// item 3) end to end on the suite's backend (SQLite, or PostgreSQL when
// NOTIFYD_TEST_DATABASE_URL is set): both APIs, roles and scopes,
// validation, the audit log, erasure and isolation.
package categories_test

import (
	"context"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/notifyd/notifyd/client"
	"github.com/notifyd/notifyd/internal/notifytest"
)

type category struct {
	Key             string   `json:"key"`
	Name            string   `json:"name"`
	Description     *string  `json:"description"`
	Required        bool     `json:"required"`
	DefaultChannels []string `json:"defaultChannels"`
	Advertising     bool     `json:"advertising"`
	CreatedAt       string   `json:"createdAt"`
	UpdatedAt       string   `json:"updatedAt"`
}

type prefs struct {
	Channels   map[string]bool            `json:"channels"`
	Categories map[string]map[string]bool `json:"categories"`
}

func ptr(s string) *string { return &s }

func dash(t *testing.T, c *client.Client, method, path string, body any, status int) *client.Response {
	t.Helper()
	return notifytest.DashboardCall(t, c, method, path, body, status)
}

func create(t *testing.T, c *client.Client, body map[string]any) category {
	t.Helper()
	return notifytest.Field[category](t, dash(t, c, "POST", "/v1/categories", body, http.StatusCreated), "category")
}

func getPrefs(t *testing.T, c *client.Client, path string) prefs {
	t.Helper()
	return notifytest.Field[prefs](t, dash(t, c, "GET", path, nil, http.StatusOK), "preferences")
}

func putPrefs(t *testing.T, c *client.Client, path string, body any) prefs {
	t.Helper()
	return notifytest.Field[prefs](t, dash(t, c, "PUT", path, body, http.StatusOK), "preferences")
}

// problem requires a dashboard call's 400 and answers its detail.
func problem(t *testing.T, c *client.Client, method, path string, body any) string {
	t.Helper()
	return dash(t, c, method, path, body, http.StatusBadRequest).Problem().Detail
}

const channelList = "sms, msgr_alimtalk, email, push_mobile, chata_webhook, chatb_webhook, chata_bot, chatb_bot, inapp"

// TestCategoryLifecycle: create, read, list by key, 409 on a duplicate,
// patch (null clears), delete; each change audited with the member.
func TestCategoryLifecycle(t *testing.T) {
	t.Parallel()
	e := notifytest.StartDaemon(t)
	m := create(t, e.Owner, map[string]any{"key": "marketing", "name": " Marketing ", "description": "Offers",
		"defaultChannels": []string{"inapp", "push_mobile", "email", "email"}, "advertising": true})
	require.Equal(t, category{Key: "marketing", Name: "Marketing", Description: ptr("Offers"), DefaultChannels: []string{"email", "push_mobile", "inapp"},
		Advertising: true, CreatedAt: m.CreatedAt, UpdatedAt: m.UpdatedAt}, m, "channels once each, in SPEC's order")
	s := create(t, e.Owner, map[string]any{"key": "security", "name": "Security", "required": true})
	require.Equal(t, category{Key: "security", Name: "Security", Required: true, DefaultChannels: []string{},
		CreatedAt: s.CreatedAt, UpdatedAt: s.UpdatedAt}, s)
	require.Equal(t, m, notifytest.Field[category](t, dash(t, e.Owner, "GET", "/v1/categories/marketing", nil, 200), "category"))
	list := notifytest.Field[[]category](t, dash(t, e.Owner, "GET", "/v1/categories", nil, 200), "categories")
	require.Equal(t, []category{m, s}, list, "by key")

	p := dash(t, e.Owner, "POST", "/v1/categories", map[string]any{"key": "marketing", "name": "Again"}, http.StatusConflict).Problem()
	require.Equal(t, "A category with key marketing already exists", p.Detail)

	u := notifytest.Field[category](t, dash(t, e.Owner, "PATCH", "/v1/categories/marketing",
		map[string]any{"description": nil, "defaultChannels": nil, "name": "Promotions"}, 200), "category")
	require.Equal(t, category{Key: "marketing", Name: "Promotions", DefaultChannels: []string{}, Advertising: true,
		CreatedAt: m.CreatedAt, UpdatedAt: u.UpdatedAt}, u)
	require.Equal(t, "A category cannot be both required and advertising: advertising needs the recipient's consent",
		problem(t, e.Owner, "PATCH", "/v1/categories/marketing", map[string]any{"required": true}))
	dash(t, e.Owner, "PATCH", "/v1/categories/marketing", map[string]any{"required": true, "advertising": false}, 200)

	dash(t, e.Owner, "DELETE", "/v1/categories/marketing", nil, http.StatusNoContent)
	dash(t, e.Owner, "GET", "/v1/categories/marketing", nil, http.StatusNotFound)
	dash(t, e.Owner, "PATCH", "/v1/categories/marketing", map[string]any{"name": "x"}, http.StatusNotFound)
	dash(t, e.Owner, "DELETE", "/v1/categories/marketing", nil, http.StatusNotFound)
	// The key is free again.
	create(t, e.Owner, map[string]any{"key": "marketing", "name": "Marketing"})

	for action, fields := range map[string][]any{
		"category.create": {"name"},
		"category.update": {"required", "advertising"},
		"category.delete": nil,
	} {
		entries := notifytest.Audit(t, e.Owner, action)
		require.NotEmpty(t, entries, action)
		a := entries[0]
		require.Equal(t, "category", a.TargetType)
		require.Equal(t, "marketing", a.TargetID)
		require.NotNil(t, a.ActorUserID, "a member acted")
		if fields != nil {
			require.Equal(t, fields, a.Payload["fields"], action)
		}
	}
}

// TestCategoryValidation: each field's rule, with the detail naming it.
func TestCategoryValidation(t *testing.T) {
	t.Parallel()
	e := notifytest.StartDaemon(t)
	keyRule := "key must be 1 to 64 characters of a-z, 0-9, _, . and -, starting with a letter or digit"
	for _, c := range []struct {
		body   map[string]any
		detail string
	}{
		{map[string]any{"name": "x"}, "key is required"},
		{map[string]any{"key": "ok"}, "name is required"},
		{map[string]any{"key": "Marketing", "name": "x"}, keyRule},
		{map[string]any{"key": "-x", "name": "x"}, keyRule},
		{map[string]any{"key": "a b", "name": "x"}, keyRule},
		{map[string]any{"key": strings.Repeat("a", 65), "name": "x"}, keyRule},
		{map[string]any{"key": "", "name": "x"}, keyRule},
		{map[string]any{"key": "ok", "name": "  "}, "name must not be empty"},
		{map[string]any{"key": "ok", "name": nil}, "name must be a string"},
		{map[string]any{"key": "ok", "name": strings.Repeat("n", 121)}, "name must be at most 120 characters"},
		{map[string]any{"key": "ok", "name": "a\nb"}, "name must not contain control characters"},
		{map[string]any{"key": "ok", "name": "x", "description": strings.Repeat("d", 1001)}, "description must be at most 1000 characters"},
		{map[string]any{"key": "ok", "name": "x", "defaultChannels": []string{"email", "fax"}}, "defaultChannels[1] must be one of " + channelList},
		{map[string]any{"key": "ok", "name": "x", "required": nil}, "required must be a boolean"},
		{map[string]any{"key": "ok", "name": "x", "advertising": "yes"}, "advertising must be a boolean"},
		{map[string]any{"key": "ok", "name": "x", "required": true, "advertising": true},
			"A category cannot be both required and advertising: advertising needs the recipient's consent"},
		{map[string]any{"key": "ok", "name": "x", "color": "red"}, "color is not an allowed field"},
	} {
		require.Equal(t, c.detail, problem(t, e.Owner, "POST", "/v1/categories", c.body), "%v", c.body)
	}
	require.Empty(t, notifytest.Field[[]category](t, dash(t, e.Owner, "GET", "/v1/categories", nil, 200), "categories"))
	create(t, e.Owner, map[string]any{"key": "a.b_c-1", "name": "x"})
	require.Equal(t, "key is not an allowed field", problem(t, e.Owner, "PATCH", "/v1/categories/a.b_c-1", map[string]any{"key": "z"}))
	// 400 before 404; a key no category can have is not found.
	require.Equal(t, "name must not be empty", problem(t, e.Owner, "PATCH", "/v1/categories/nope", map[string]any{"name": ""}))
	dash(t, e.Owner, "GET", "/v1/categories/UPPER", nil, http.StatusNotFound)
}

// TestPreferences: a recipient's document, its checks, full replace, and
// its fate when its category or its profile goes.
func TestPreferences(t *testing.T) {
	t.Parallel()
	e := notifytest.StartDaemon(t)
	create(t, e.Owner, map[string]any{"key": "marketing", "name": "Marketing", "advertising": true})
	create(t, e.Owner, map[string]any{"key": "security", "name": "Security", "required": true})
	dash(t, e.Owner, "PUT", "/v1/recipients/user-42", map[string]any{"email": "u42@example.com"}, http.StatusCreated)
	const path = "/v1/recipients/user-42/preferences"
	empty := prefs{Channels: map[string]bool{}, Categories: map[string]map[string]bool{}}
	require.Equal(t, empty, getPrefs(t, e.Owner, path))

	doc := prefs{Channels: map[string]bool{"sms": false, "email": true},
		Categories: map[string]map[string]bool{"marketing": {"sms": true, "push_mobile": false}, "security": {"email": false}}}
	require.Equal(t, doc, putPrefs(t, e.Owner, path, doc))
	require.Equal(t, doc, getPrefs(t, e.Owner, path))

	// Full replace: what the put leaves out is no choice; an empty
	// category is dropped; absent maps are empty.
	next := putPrefs(t, e.Owner, path, map[string]any{"categories": map[string]any{"marketing": map[string]bool{"email": false}, "security": map[string]bool{}}})
	want := prefs{Channels: map[string]bool{}, Categories: map[string]map[string]bool{"marketing": {"email": false}}}
	require.Equal(t, want, next)
	require.Equal(t, want, getPrefs(t, e.Owner, path))

	for _, c := range []struct {
		body   any
		detail string
	}{
		{map[string]any{"channels": map[string]bool{"fax": true}}, `channels: "fax" is not a channel (one of ` + channelList + `)`},
		{map[string]any{"categories": map[string]any{"marketing": map[string]bool{"SMS": true}}},
			`categories.marketing: "SMS" is not a channel (one of ` + channelList + `)`},
		{map[string]any{"categories": map[string]any{"promo": map[string]bool{"sms": true}}}, `categories: "promo" is not a category of this workspace`},
		{map[string]any{"categories": map[string]any{"Promo!": map[string]bool{"sms": true}}}, `categories: "Promo!" is not a category of this workspace`},
		{map[string]any{"channels": map[string]any{"sms": "off"}}, "channels values must be booleans"},
		{map[string]any{"categories": map[string]any{"marketing": map[string]any{"sms": 0}}}, "categories must be an object of category keys to objects of channels to booleans"},
		{map[string]any{"categories": map[string]any{"marketing": true}}, "categories must be an object of category keys to objects of channels to booleans"},
		{map[string]any{"categories": []string{"marketing"}}, "categories must be an object of category keys to objects of channels to booleans"},
		{map[string]any{"channels": "sms"}, "channels must be an object"},
		{map[string]any{"channels": map[string]any{"sms": nil}}, "channels values must be booleans"},
		{map[string]any{"categories": map[string]any{"marketing": map[string]any{"sms": nil}}},
			"categories must be an object of category keys to objects of channels to booleans"},
		{map[string]any{"categories": map[string]any{"marketing": nil}}, "categories must be an object of category keys to objects of channels to booleans"},
		{map[string]any{"channel": map[string]bool{}}, "channel is not an allowed field"},
	} {
		require.Equal(t, c.detail, problem(t, e.Owner, "PUT", path, c.body), "%v", c.body)
	}
	require.Equal(t, want, getPrefs(t, e.Owner, path), "a refused put changed nothing")
	// A channel that is none is 400 before the profile is looked up; an
	// unknown category needs the workspace's list, after it.
	require.Equal(t, `channels: "fax" is not a channel (one of `+channelList+`)`,
		problem(t, e.Owner, "PUT", "/v1/recipients/nobody/preferences", map[string]any{"channels": map[string]bool{"fax": true}}))
	dash(t, e.Owner, "PUT", "/v1/recipients/nobody/preferences", map[string]any{"categories": map[string]any{"promo": map[string]bool{}}}, http.StatusNotFound)
	require.Equal(t, `categories: "promo" is not a category of this workspace`,
		problem(t, e.Owner, "PUT", path, map[string]any{"categories": map[string]any{"promo": map[string]bool{}}}), "an unknown key with no channel too")
	dash(t, e.Owner, "GET", "/v1/recipients/nobody/preferences", nil, http.StatusNotFound)

	a := notifytest.Audit(t, e.Owner, "preference.replace")
	require.Len(t, a, 2)
	require.Equal(t, "recipient", a[0].TargetType)
	require.Equal(t, "user-42", a[0].TargetID)
	require.NotNil(t, a[0].ActorUserID)
	require.Equal(t, map[string]any{"channels": map[string]any{}, "categories": map[string]any{"marketing": map[string]any{"email": false}}},
		a[0].Payload, "the audit entry holds the document written")

	// A category's removal takes its choices along.
	putPrefs(t, e.Owner, path, doc)
	dash(t, e.Owner, "DELETE", "/v1/categories/marketing", nil, http.StatusNoContent)
	require.Equal(t, prefs{Channels: doc.Channels, Categories: map[string]map[string]bool{"security": {"email": false}}}, getPrefs(t, e.Owner, path))
	create(t, e.Owner, map[string]any{"key": "marketing", "name": "Marketing again"})
	require.NotContains(t, getPrefs(t, e.Owner, path).Categories, "marketing", "a new category of the key starts with no choices")

	// Erasure takes the preferences: a new profile of the id has none.
	dash(t, e.Owner, "DELETE", "/v1/recipients/user-42", nil, http.StatusNoContent)
	dash(t, e.Owner, "GET", path, nil, http.StatusNotFound)
	dash(t, e.Owner, "PUT", path, doc, http.StatusNotFound)
	dash(t, e.Owner, "PUT", "/v1/recipients/user-42", map[string]any{}, http.StatusCreated)
	require.Equal(t, empty, getPrefs(t, e.Owner, path))
}

// TestDefaultPreferences: the workspace default, its checks, its roles
// and its audit entry.
func TestDefaultPreferences(t *testing.T) {
	t.Parallel()
	e := notifytest.StartDaemon(t)
	const path = "/v1/preferences/default"
	create(t, e.Owner, map[string]any{"key": "marketing", "name": "Marketing"})
	require.Equal(t, prefs{Channels: map[string]bool{}, Categories: map[string]map[string]bool{}}, getPrefs(t, e.Owner, path))
	doc := prefs{Channels: map[string]bool{"push_mobile": false}, Categories: map[string]map[string]bool{"marketing": {"sms": false}}}
	admin, operator, viewer := e.Member(t, "admin"), e.Member(t, "operator"), e.Member(t, "viewer")
	require.Equal(t, doc, putPrefs(t, admin, path, doc))
	require.Equal(t, doc, getPrefs(t, viewer, path))
	dash(t, operator, "PUT", path, map[string]any{}, http.StatusForbidden)
	dash(t, viewer, "PUT", path, map[string]any{}, http.StatusForbidden)
	require.Equal(t, `categories: "promo" is not a category of this workspace`,
		problem(t, e.Owner, "PUT", path, map[string]any{"categories": map[string]any{"promo": map[string]bool{"sms": true}}}))
	require.Equal(t, doc, getPrefs(t, e.Owner, path))

	a := notifytest.Audit(t, e.Owner, "preference.default.replace")
	require.Len(t, a, 1)
	require.Equal(t, "workspace", a[0].TargetType)
	require.NotEmpty(t, a[0].TargetID)
	require.NotNil(t, a[0].ActorUserID)

	// A recipient's preferences and the default are apart.
	dash(t, e.Owner, "PUT", "/v1/recipients/u1", map[string]any{}, http.StatusCreated)
	require.Empty(t, getPrefs(t, e.Owner, "/v1/recipients/u1/preferences").Channels)
	putPrefs(t, e.Owner, "/v1/recipients/u1/preferences", map[string]any{"channels": map[string]bool{"sms": true}})
	require.Equal(t, doc, getPrefs(t, e.Owner, path))
}

// TestCategoryRoles: every role reads; operator and up create and change
// categories and recipients' preferences; admin and up delete categories
// and write the workspace default.
func TestCategoryRoles(t *testing.T) {
	t.Parallel()
	e := notifytest.StartDaemon(t)
	create(t, e.Owner, map[string]any{"key": "news", "name": "News"})
	dash(t, e.Owner, "PUT", "/v1/recipients/u1", map[string]any{}, http.StatusCreated)
	viewer, operator, admin := e.Member(t, "viewer"), e.Member(t, "operator"), e.Member(t, "admin")
	for _, p := range []string{"/v1/categories", "/v1/categories/news", "/v1/recipients/u1/preferences", "/v1/preferences/default"} {
		dash(t, viewer, "GET", p, nil, http.StatusOK)
	}
	for _, c := range []struct {
		method, path string
		body         any
	}{
		{"POST", "/v1/categories", map[string]any{"key": "x", "name": "x"}},
		{"PATCH", "/v1/categories/news", map[string]any{"name": "x"}},
		{"DELETE", "/v1/categories/news", nil},
		{"PUT", "/v1/recipients/u1/preferences", map[string]any{}},
		{"PUT", "/v1/preferences/default", map[string]any{}},
	} {
		dash(t, viewer, c.method, c.path, c.body, http.StatusForbidden)
	}
	create(t, operator, map[string]any{"key": "ops", "name": "Ops"})
	dash(t, operator, "PATCH", "/v1/categories/news", map[string]any{"name": "News!"}, http.StatusOK)
	putPrefs(t, operator, "/v1/recipients/u1/preferences", map[string]any{"channels": map[string]bool{"sms": false}})
	dash(t, operator, "DELETE", "/v1/categories/ops", nil, http.StatusForbidden)
	dash(t, admin, "DELETE", "/v1/categories/ops", nil, http.StatusNoContent)
}

// TestCategorySigned: the reads and a recipient's preferences answer on
// the Notification API in its envelope with recipients:read and
// recipients:write; the audit log names the key; writes of categories and
// of the default are the dashboard's.
func TestCategorySigned(t *testing.T) {
	t.Parallel()
	e := notifytest.StartDaemon(t)
	create(t, e.Owner, map[string]any{"key": "marketing", "name": "Marketing", "defaultChannels": []string{"email"}})
	dash(t, e.Owner, "PUT", "/v1/recipients/app-1", map[string]any{}, http.StatusCreated)
	rw, keyID := e.APIKey(t, "rw", "recipients:read", "recipients:write")

	r := notifytest.Signed(t, rw, "GET", "/v1/categories", nil)
	require.Contains(t, string(r.Body), `"meta":{"timestamp":`, "enveloped")
	cs := notifytest.Data[map[string][]category](t, r, http.StatusOK)["categories"]
	require.Len(t, cs, 1)
	c := notifytest.Data[map[string]category](t, notifytest.Signed(t, rw, "GET", "/v1/categories/marketing", nil), http.StatusOK)["category"]
	require.Equal(t, []string{"email"}, c.DefaultChannels)

	doc := prefs{Channels: map[string]bool{"sms": false}, Categories: map[string]map[string]bool{"marketing": {"email": true}}}
	r = notifytest.Signed(t, rw, "PUT", "/v1/recipients/app-1/preferences", doc)
	require.Equal(t, doc, notifytest.Data[map[string]prefs](t, r, http.StatusOK)["preferences"])
	r = notifytest.Signed(t, rw, "GET", "/v1/recipients/app-1/preferences", nil)
	require.Equal(t, doc, notifytest.Data[map[string]prefs](t, r, http.StatusOK)["preferences"])
	require.Equal(t, doc, getPrefs(t, e.Owner, "/v1/recipients/app-1/preferences"), "the dashboard sees what the key wrote")
	r = notifytest.Signed(t, rw, "GET", "/v1/preferences/default", nil)
	require.Empty(t, notifytest.Data[map[string]prefs](t, r, http.StatusOK)["preferences"].Channels)
	a := notifytest.Audit(t, e.Owner, "preference.replace")[0]
	require.Nil(t, a.ActorUserID, "an API key acted")
	require.Equal(t, keyID, a.Payload["apiKeyId"])

	// Scopes.
	send := e.SendKey(t)
	p := notifytest.RequireProblem(t, notifytest.Signed(t, send, "GET", "/v1/categories", nil), http.StatusForbidden, "SVC-40300")
	require.Equal(t, "API key missing required scope: recipients:read", p.Detail)
	ro, _ := e.APIKey(t, "ro", "recipients:read")
	require.Equal(t, http.StatusOK, notifytest.Signed(t, ro, "GET", "/v1/recipients/app-1/preferences", nil).Status)
	p = notifytest.RequireProblem(t, notifytest.Signed(t, ro, "PUT", "/v1/recipients/app-1/preferences", map[string]any{}), http.StatusForbidden, "SVC-40300")
	require.Equal(t, "API key missing required scope: recipients:write", p.Detail)
	// Dashboard-only writes refuse a signed call, whatever its scopes.
	for _, c := range []struct {
		method, path string
		body         any
	}{
		{"POST", "/v1/categories", map[string]any{"key": "x", "name": "x"}}, {"PATCH", "/v1/categories/marketing", map[string]any{"name": "x"}},
		{"DELETE", "/v1/categories/marketing", nil}, {"PUT", "/v1/preferences/default", map[string]any{}},
	} {
		require.Equal(t, http.StatusUnauthorized, notifytest.Signed(t, rw, c.method, c.path, c.body).Status, c.method+" "+c.path)
	}
	require.Equal(t, "Marketing", c.Name)
	require.Len(t, notifytest.Field[[]category](t, dash(t, e.Owner, "GET", "/v1/categories", nil, 200), "categories"), 1)
	notifytest.RequireProblem(t, notifytest.Dash(t, client.New(e.Daemon.URL()), "GET", "/v1/categories", nil), http.StatusUnauthorized, "SVC-40100")
}

// TestCategoryIsolation: another workspace's categories and recipients
// answer 404 (or, as a preference's category, 400) to every call; the
// same key is each workspace's own.
func TestCategoryIsolation(t *testing.T) {
	t.Parallel()
	e := notifytest.StartDaemon(t)
	other, _ := e.NewWorkspace(t, "Other", "other@example.com")
	create(t, other, map[string]any{"key": "promo", "name": "Theirs"})
	dash(t, other, "PUT", "/v1/recipients/user-7", map[string]any{}, http.StatusCreated)
	putPrefs(t, other, "/v1/recipients/user-7/preferences", map[string]any{"categories": map[string]any{"promo": map[string]bool{"sms": false}}})
	putPrefs(t, other, "/v1/preferences/default", map[string]any{"channels": map[string]bool{"email": false}})

	dash(t, e.Owner, "GET", "/v1/categories/promo", nil, http.StatusNotFound)
	dash(t, e.Owner, "PATCH", "/v1/categories/promo", map[string]any{"name": "x"}, http.StatusNotFound)
	dash(t, e.Owner, "DELETE", "/v1/categories/promo", nil, http.StatusNotFound)
	require.Empty(t, notifytest.Field[[]category](t, dash(t, e.Owner, "GET", "/v1/categories", nil, 200), "categories"))
	dash(t, e.Owner, "GET", "/v1/recipients/user-7/preferences", nil, http.StatusNotFound)
	dash(t, e.Owner, "PUT", "/v1/recipients/user-7/preferences", map[string]any{}, http.StatusNotFound)
	require.Empty(t, getPrefs(t, e.Owner, "/v1/preferences/default").Channels)
	dash(t, e.Owner, "PUT", "/v1/recipients/mine", map[string]any{}, http.StatusCreated)
	require.Equal(t, `categories: "promo" is not a category of this workspace`, problem(t, e.Owner, "PUT", "/v1/recipients/mine/preferences",
		map[string]any{"categories": map[string]any{"promo": map[string]bool{"sms": false}}}))
	k, _ := e.APIKey(t, "rw", "recipients:read", "recipients:write")
	require.Equal(t, http.StatusNotFound, notifytest.Signed(t, k, "GET", "/v1/categories/promo", nil).Status)
	require.Equal(t, http.StatusNotFound, notifytest.Signed(t, k, "GET", "/v1/recipients/user-7/preferences", nil).Status)
	require.Equal(t, http.StatusNotFound, notifytest.Signed(t, k, "PUT", "/v1/recipients/user-7/preferences", map[string]any{}).Status)

	// The owner's own promo is another category; the other's stays.
	create(t, e.Owner, map[string]any{"key": "promo", "name": "Mine"})
	require.Equal(t, "Theirs", notifytest.Field[category](t, dash(t, other, "GET", "/v1/categories/promo", nil, 200), "category").Name)
	require.Equal(t, map[string]map[string]bool{"promo": {"sms": false}}, getPrefs(t, other, "/v1/recipients/user-7/preferences").Categories)
	require.Equal(t, map[string]bool{"email": false}, getPrefs(t, other, "/v1/preferences/default").Channels)
}

// TestCategoryLimit: a workspace holds at most 100 categories (409).
func TestCategoryLimit(t *testing.T) {
	t.Parallel()
	e := notifytest.StartDaemon(t)
	for i := range 100 {
		create(t, e.Owner, map[string]any{"key": "c" + strings.Repeat("x", i%10) + string(rune('a'+i/10)) + string(rune('a'+i%10)), "name": "x"})
	}
	p := dash(t, e.Owner, "POST", "/v1/categories", map[string]any{"key": "one-more", "name": "x"}, http.StatusConflict).Problem()
	require.Equal(t, "A workspace holds at most 100 categories", p.Detail)
}

// TestPreferencesConcurrent: puts of one person's preferences (and of
// the default) at once all succeed, one after the other: the last
// written is whole, not a mix (each put is a delete and an insert under
// the profile's or the workspace's lock).
func TestPreferencesConcurrent(t *testing.T) {
	t.Parallel()
	e := notifytest.StartDaemon(t)
	create(t, e.Owner, map[string]any{"key": "news", "name": "News"})
	dash(t, e.Owner, "PUT", "/v1/recipients/u1", map[string]any{}, http.StatusCreated)
	docs := make([]prefs, 8)
	for i := range docs {
		ch := []string{"sms", "email", "push_mobile", "msgr_alimtalk"}[i%4]
		docs[i] = prefs{Channels: map[string]bool{ch: i%2 == 0}, Categories: map[string]map[string]bool{"news": {ch: i%3 == 0}}}
	}
	for _, path := range []string{"/v1/recipients/u1/preferences", "/v1/preferences/default"} {
		var wg sync.WaitGroup
		for _, d := range docs {
			wg.Add(1)
			go func() {
				defer wg.Done()
				r, err := e.Owner.Dashboard(context.Background(), "PUT", path, d)
				if assert.NoError(t, err) { // not require: this is not the test's goroutine
					assert.Equal(t, http.StatusOK, r.Status, string(r.Body))
				}
			}()
		}
		wg.Wait()
		require.Contains(t, docs, getPrefs(t, e.Owner, path), path)
	}
}
