// Package recipients_test runs the recipient profiles (issue 32, item 1)
// end to end on the suite's backend (SQLite, or PostgreSQL when
// NOTIFYD_TEST_DATABASE_URL is set): both APIs, roles and scopes,
// validation, erasure, isolation, paging and the bulk upsert.
package recipients_test

import (
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/notifyd/notifyd/client"
	"github.com/notifyd/notifyd/internal/notifytest"
)

type profile struct {
	ExternalID  string            `json:"externalId"`
	Name        *string           `json:"name"`
	Phone       *string           `json:"phone"`
	Email       *string           `json:"email"`
	PushTokens  []string          `json:"pushTokens"`
	ChatTargets map[string]string `json:"chatTargets"`
	TimeZone    *string           `json:"timeZone"`
	Locale      *string           `json:"locale"`
	Attributes  map[string]string `json:"attributes"`
	CreatedAt   string            `json:"createdAt"`
	UpdatedAt   string            `json:"updatedAt"`
}

type page struct {
	Recipients []profile `json:"recipients"`
	Cursor     *string   `json:"cursor"`
	HasNext    bool      `json:"hasNext"`
}

type bulkResult struct {
	Total   int `json:"total"`
	Created int `json:"created"`
	Updated int `json:"updated"`
}

func ptr(s string) *string { return &s }

func dash(t *testing.T, c *client.Client, method, path string, body any, status int) *client.Response {
	t.Helper()
	return notifytest.DashboardCall(t, c, method, path, body, status)
}

func put(t *testing.T, c *client.Client, id string, body any, status int) profile {
	t.Helper()
	return notifytest.Field[profile](t, dash(t, c, "PUT", "/v1/recipients/"+id, body, status), "recipient")
}

func get(t *testing.T, c *client.Client, id string) profile {
	t.Helper()
	return notifytest.Field[profile](t, dash(t, c, "GET", "/v1/recipients/"+id, nil, http.StatusOK), "recipient")
}

// problem requires a 400 of the dashboard call and answers its detail.
func problem(t *testing.T, c *client.Client, method, path string, body any) string {
	t.Helper()
	return dash(t, c, method, path, body, http.StatusBadRequest).Problem().Detail
}

var full = map[string]any{
	"name": "Kim Minji", "phone": "010-1234-5678", "email": " Minji@Example.COM ", "pushTokens": []string{"tok-a", "tok-b", "tok-a"},
	"chatTargets": map[string]string{"chata_bot": "C0123"}, "timeZone": "Asia/Seoul", "locale": "ko-kr",
	"attributes": map[string]string{"plan": "pro", "이름": "민지"},
}

// TestRecipientLifecycle: a put creates (201) then replaces (200, absent
// fields emptied); a patch changes what it names, null clears; a delete
// erases the profile from every answer; each change is audited without
// the profile's addresses.
func TestRecipientLifecycle(t *testing.T) {
	t.Parallel()
	e := notifytest.StartDaemon(t)
	p := put(t, e.Owner, "user-42", full, http.StatusCreated)
	require.Equal(t, profile{ExternalID: "user-42", Name: ptr("Kim Minji"), Phone: ptr("01012345678"), Email: ptr("minji@example.com"),
		PushTokens: []string{"tok-a", "tok-b"}, ChatTargets: map[string]string{"chata_bot": "C0123"}, TimeZone: ptr("Asia/Seoul"),
		Locale: ptr("ko-KR"), Attributes: map[string]string{"plan": "pro", "이름": "민지"}, CreatedAt: p.CreatedAt, UpdatedAt: p.UpdatedAt}, p)
	require.Equal(t, p, get(t, e.Owner, "user-42"))

	// Replace: what the put leaves out is emptied; createdAt stays.
	r := put(t, e.Owner, "user-42", map[string]any{"email": "other@example.com", "name": nil}, http.StatusOK)
	require.Equal(t, profile{ExternalID: "user-42", Email: ptr("other@example.com"), PushTokens: []string{}, ChatTargets: map[string]string{},
		Attributes: map[string]string{}, CreatedAt: p.CreatedAt, UpdatedAt: r.UpdatedAt}, r)

	// Patch: named fields change, null clears, the rest stays.
	put(t, e.Owner, "user-42", full, http.StatusOK)
	r = notifytest.Field[profile](t, dash(t, e.Owner, "PATCH", "/v1/recipients/user-42",
		map[string]any{"phone": "+82 10 9999 0000", "email": nil, "attributes": map[string]string{"tier": "gold"}}, http.StatusOK), "recipient")
	require.Equal(t, ptr("+821099990000"), r.Phone)
	require.Nil(t, r.Email)
	require.Equal(t, map[string]string{"tier": "gold"}, r.Attributes, "a map given replaces the stored one")
	require.Equal(t, ptr("Kim Minji"), r.Name)
	require.Equal(t, []string{"tok-a", "tok-b"}, r.PushTokens)
	require.Equal(t, r, get(t, e.Owner, "user-42"))

	// Erasure.
	dash(t, e.Owner, "DELETE", "/v1/recipients/user-42", nil, http.StatusNoContent)
	for _, c := range []struct {
		method string
		body   any
	}{{"GET", nil}, {"PATCH", map[string]any{"name": "x"}}, {"DELETE", nil}} {
		dash(t, e.Owner, c.method, "/v1/recipients/user-42", c.body, http.StatusNotFound)
	}
	for _, q := range []string{"", "?q=user-42", "?q=minji", "?q=9999"} {
		l := notifytest.Decode[page](t, dash(t, e.Owner, "GET", "/v1/recipients"+q, nil, http.StatusOK), http.StatusOK)
		require.Empty(t, l.Recipients, q)
	}

	owner := e.Owner
	for action, fields := range map[string][]any{
		"recipient.create":  {"name", "phone", "email", "pushTokens", "chatTargets", "timeZone", "locale", "attributes"},
		"recipient.replace": nil,
		"recipient.update":  {"phone", "email", "attributes"},
		"recipient.delete":  nil,
	} {
		entries := notifytest.Audit(t, owner, action)
		require.NotEmpty(t, entries, action)
		a := entries[0]
		require.Equal(t, "recipient", a.TargetType)
		require.Equal(t, "user-42", a.TargetID)
		require.NotNil(t, a.ActorUserID, "a member acted")
		if fields != nil {
			require.Equal(t, fields, a.Payload["fields"], action)
		}
		require.NotContains(t, fmt.Sprint(a.Payload), "example.com", "the audit log holds no address")
		require.NotContains(t, fmt.Sprint(a.Payload), "0101234", "the audit log holds no address")
	}
	require.Len(t, notifytest.Audit(t, owner, "recipient.replace"), 2)
}

// TestRecipientValidation: every field is checked as a send checks it,
// with the detail naming the field.
func TestRecipientValidation(t *testing.T) {
	t.Parallel()
	e := notifytest.StartDaemon(t)
	long := strings.Repeat("a", 201)
	for _, c := range []struct {
		id     string
		body   any
		detail string
	}{
		{"u1", map[string]any{"phone": "call me"}, "phone must be a phone number for channel sms"},
		{"u1", map[string]any{"email": "not-an-address"}, "email must be an email address for channel email"},
		{"u1", map[string]any{"email": strings.Repeat("a", 310) + "@example.com"}, "email must be at most 320 characters"},
		{"u1", map[string]any{"pushTokens": []string{"ok", "has space"}}, "pushTokens[1] must be a device token for channel push_mobile"},
		{"u1", map[string]any{"pushTokens": []string{""}}, "pushTokens[0] must not be empty"},
		{"u1", map[string]any{"pushTokens": []any{1}}, "pushTokens items must be strings"},
		{"u1", map[string]any{"pushTokens": []string{"1", "2", "3", "4", "5", "6", "7", "8", "9", "10", "11"}}, "pushTokens must hold at most 10 tokens"},
		{"u1", map[string]any{"chatTargets": map[string]string{"chata_webhook": "x"}}, "chatTargets keys must be chata_bot or chatb_bot"},
		{"u1", map[string]any{"chatTargets": map[string]string{"chatb_bot": "a\nb"}}, "chatTargets.chatb_bot must not contain control characters"},
		{"u1", map[string]any{"timeZone": "Mars/Olympus"}, "timeZone must be an IANA time zone such as Asia/Seoul or America/New_York"},
		{"u1", map[string]any{"timeZone": "Local"}, "timeZone must be an IANA time zone such as Asia/Seoul or America/New_York"},
		{"u1", map[string]any{"locale": "korean!"}, "locale must be a BCP 47 language tag such as ko, ko-KR or zh-Hant-TW"},
		{"u1", map[string]any{"name": strings.Repeat("n", 121)}, "name must be at most 120 characters"},
		{"u1", map[string]any{"name": "a\r\nBcc: x"}, "name must not contain control characters"},
		{"u1", map[string]any{"attributes": map[string]any{"a": 1}}, "attributes values must be strings"},
		{"u1", map[string]any{"attributes": map[string]string{"": "x"}}, "attributes keys must not be empty"},
		{"u1", map[string]any{"attributes": map[string]string{"k": strings.Repeat("v", 2001)}}, "attributes.k must be at most 2000 characters"},
		{"u1", map[string]any{"externalId": "u1"}, "externalId is not an allowed field"},
		{"u1", map[string]any{"nickname": "x"}, "nickname is not an allowed field"},
		{long, map[string]any{}, `externalId must be 1 to 200 printable ASCII characters without space, /, ?, #, % or \`},
		{"a%20b", map[string]any{}, `externalId must be 1 to 200 printable ASCII characters without space, /, ?, #, % or \`},
		{"%C3%A9", map[string]any{}, `externalId must be 1 to 200 printable ASCII characters without space, /, ?, #, % or \`},
	} {
		require.Equal(t, c.detail, problem(t, e.Owner, "PUT", "/v1/recipients/"+c.id, c.body), "%s %v", c.id, c.body)
		if c.id == "u1" && !strings.Contains(c.detail, "allowed field") {
			// A patch checks the same way, before it looks the profile up.
			require.Equal(t, c.detail, problem(t, e.Owner, "PATCH", "/v1/recipients/u1", c.body), "%v", c.body)
		}
	}
	dash(t, e.Owner, "GET", "/v1/recipients/u1", nil, http.StatusNotFound) // nothing was written
	// Ids no profile can have are not found on reads.
	dash(t, e.Owner, "GET", "/v1/recipients/"+long, nil, http.StatusNotFound)
	dash(t, e.Owner, "DELETE", "/v1/recipients/a%20b", nil, http.StatusNotFound)
	// What apps use as ids is accepted as is, and is case-sensitive.
	for _, id := range []string{"auth0|5f7c8ec7c33c6c004bbafe82", "user@example.com", "42", "a.b_c-d~e:f+g=h"} {
		require.Equal(t, id, put(t, e.Owner, url.PathEscape(id), map[string]any{}, http.StatusCreated).ExternalID)
	}
	dash(t, e.Owner, "GET", "/v1/recipients/USER@example.com", nil, http.StatusNotFound)
	for _, q := range []string{"limit=0", "limit=201", "cursor=nope", "q=" + strings.Repeat("q", 321)} {
		problem(t, e.Owner, "GET", "/v1/recipients?"+q, nil)
	}
}

// TestRecipientIsolation: a profile of another workspace answers 404 to
// every call and shows in no list; the same external id is a profile of
// each workspace's own.
func TestRecipientIsolation(t *testing.T) {
	t.Parallel()
	e := notifytest.StartDaemon(t)
	other, _ := e.NewWorkspace(t, "Other", "other@example.com")
	put(t, other, "user-7", map[string]any{"email": "seven@example.com"}, http.StatusCreated)
	dash(t, e.Owner, "GET", "/v1/recipients/user-7", nil, http.StatusNotFound)
	dash(t, e.Owner, "PATCH", "/v1/recipients/user-7", map[string]any{"name": "x"}, http.StatusNotFound)
	dash(t, e.Owner, "DELETE", "/v1/recipients/user-7", nil, http.StatusNotFound)
	require.Empty(t, notifytest.Decode[page](t, dash(t, e.Owner, "GET", "/v1/recipients?q=seven", nil, http.StatusOK), http.StatusOK).Recipients)
	k, _ := e.APIKey(t, "rw", "recipients:read", "recipients:write")
	require.Equal(t, http.StatusNotFound, notifytest.Signed(t, k, "GET", "/v1/recipients/user-7", nil).Status)
	require.Equal(t, http.StatusNotFound, notifytest.Signed(t, k, "DELETE", "/v1/recipients/user-7", nil).Status)
	// The owner's own user-7 is another profile; the other stays as it was.
	put(t, e.Owner, "user-7", map[string]any{"name": "mine"}, http.StatusCreated)
	require.Equal(t, ptr("seven@example.com"), get(t, other, "user-7").Email)
}

// TestRecipientRoles: every role reads; operator and up write; admin and
// up erase (subscribers' roles).
func TestRecipientRoles(t *testing.T) {
	t.Parallel()
	e := notifytest.StartDaemon(t)
	put(t, e.Owner, "u1", map[string]any{"name": "one"}, http.StatusCreated)
	viewer, operator := e.Member(t, "viewer"), e.Member(t, "operator")
	dash(t, viewer, "GET", "/v1/recipients/u1", nil, http.StatusOK)
	dash(t, viewer, "GET", "/v1/recipients", nil, http.StatusOK)
	for _, c := range []struct {
		method, path string
		body         any
	}{
		{"PUT", "/v1/recipients/u2", map[string]any{}}, {"PATCH", "/v1/recipients/u1", map[string]any{"name": "x"}},
		{"DELETE", "/v1/recipients/u1", nil}, {"POST", "/v1/recipients/bulk", map[string]any{"items": []any{map[string]any{"externalId": "u3"}}}},
	} {
		dash(t, viewer, c.method, c.path, c.body, http.StatusForbidden)
	}
	require.Equal(t, ptr("one"), get(t, e.Owner, "u1").Name, "the viewer changed nothing")
	put(t, operator, "u2", map[string]any{}, http.StatusCreated)
	dash(t, operator, "PATCH", "/v1/recipients/u1", map[string]any{"name": "x"}, http.StatusOK)
	dash(t, operator, "DELETE", "/v1/recipients/u2", nil, http.StatusForbidden)
	dash(t, e.Member(t, "admin"), "DELETE", "/v1/recipients/u2", nil, http.StatusNoContent)
}

// TestRecipientSigned: the Notification API answers in its envelope with
// recipients:read and recipients:write, and refuses a key without them;
// the audit log names the key.
func TestRecipientSigned(t *testing.T) {
	t.Parallel()
	e := notifytest.StartDaemon(t)
	rw, keyID := e.APIKey(t, "rw", "recipients:read", "recipients:write")
	r := notifytest.Signed(t, rw, "PUT", "/v1/recipients/app-1", map[string]any{"email": "a@example.com", "locale": "en"})
	p := notifytest.Data[map[string]profile](t, r, http.StatusCreated)["recipient"]
	require.Contains(t, string(r.Body), `"meta":{"timestamp":`, "enveloped")
	require.Equal(t, ptr("a@example.com"), p.Email)
	r = notifytest.Signed(t, rw, "GET", "/v1/recipients/app-1", nil)
	require.Equal(t, p, notifytest.Data[map[string]profile](t, r, http.StatusOK)["recipient"])
	r = notifytest.Signed(t, rw, "GET", "/v1/recipients?q=app", nil)
	l := notifytest.Data[page](t, r, http.StatusOK)
	require.Len(t, l.Recipients, 1)
	r = notifytest.Signed(t, rw, "POST", "/v1/recipients/bulk", map[string]any{"items": []any{map[string]any{"externalId": "app-2"}}})
	require.Equal(t, bulkResult{Total: 1, Created: 1}, notifytest.Data[bulkResult](t, r, http.StatusOK))
	require.Equal(t, http.StatusNoContent, notifytest.Signed(t, rw, "DELETE", "/v1/recipients/app-2", nil).Status)
	// The dashboard sees what the key wrote, bare.
	require.Equal(t, p, get(t, e.Owner, "app-1"))
	a := notifytest.Audit(t, e.Owner, "recipient.create")[0]
	require.Nil(t, a.ActorUserID, "an API key acted")
	require.Equal(t, keyID, a.Payload["apiKeyId"])

	send := e.SendKey(t)
	p403 := notifytest.RequireProblem(t, notifytest.Signed(t, send, "GET", "/v1/recipients/app-1", nil), http.StatusForbidden, "SVC-40300")
	require.Equal(t, "API key missing required scope: recipients:read", p403.Detail)
	ro, _ := e.APIKey(t, "ro", "recipients:read")
	require.Equal(t, http.StatusOK, notifytest.Signed(t, ro, "GET", "/v1/recipients/app-1", nil).Status)
	for _, c := range []struct {
		method, path string
		body         any
	}{
		{"PUT", "/v1/recipients/app-3", map[string]any{}}, {"PATCH", "/v1/recipients/app-1", map[string]any{"name": "x"}},
		{"DELETE", "/v1/recipients/app-1", nil}, {"POST", "/v1/recipients/bulk", map[string]any{"items": []any{map[string]any{"externalId": "x"}}}},
	} {
		p := notifytest.RequireProblem(t, notifytest.Signed(t, ro, c.method, c.path, c.body), http.StatusForbidden, "SVC-40300")
		require.Equal(t, "API key missing required scope: recipients:write", p.Detail, c.method+" "+c.path)
	}
	dash(t, e.Owner, "GET", "/v1/recipients/app-3", nil, http.StatusNotFound)
	// Neither credential: 401.
	notifytest.RequireProblem(t, notifytest.Dash(t, client.New(e.Daemon.URL()), "GET", "/v1/recipients", nil), http.StatusUnauthorized, "SVC-40100")
}

// TestRecipientListAndBulk: the bulk upsert's limits and all-or-nothing
// checks, its counts, and cursor pages over more than one page, with and
// without a search.
func TestRecipientListAndBulk(t *testing.T) {
	t.Parallel()
	e := notifytest.StartDaemon(t)
	items := func(n int, from int) []map[string]any {
		out := make([]map[string]any, n)
		for i := range out {
			out[i] = map[string]any{"externalId": fmt.Sprintf("u-%04d", from+i), "phone": fmt.Sprintf("010-5555-%04d", from+i),
				"name": fmt.Sprintf("Person %d", from+i)}
		}
		return out
	}
	bulk := func(body any, status int) *client.Response {
		return dash(t, e.Owner, "POST", "/v1/recipients/bulk", body, status)
	}
	require.Equal(t, "items must hold 1 to 1000 profiles", bulk(map[string]any{"items": items(1001, 0)}, 400).Problem().Detail)
	require.Equal(t, "items must hold 1 to 1000 profiles", bulk(map[string]any{"items": []any{}}, 400).Problem().Detail)
	require.Equal(t, "items is required", bulk(map[string]any{}, 400).Problem().Detail)
	bad := items(5, 0)
	bad[3]["email"] = "nope"
	require.Equal(t, "items[3].email must be an email address for channel email", bulk(map[string]any{"items": bad}, 400).Problem().Detail)
	bad = items(5, 0)
	bad[4]["externalId"] = "u-0001"
	require.Equal(t, "items[4].externalId repeats items[1].externalId", bulk(map[string]any{"items": bad}, 400).Problem().Detail)
	bad = items(3, 0)
	delete(bad[2], "externalId")
	require.Equal(t, "items[2].externalId is required", bulk(map[string]any{"items": bad}, 400).Problem().Detail)
	bad = items(3, 0)
	bad[1]["name"] = 7
	require.Equal(t, "items[1]: name must be a string", bulk(map[string]any{"items": bad}, 400).Problem().Detail)
	require.Empty(t, notifytest.Decode[page](t, dash(t, e.Owner, "GET", "/v1/recipients", nil, 200), 200).Recipients,
		"a refused call writes nothing")

	res := notifytest.Decode[bulkResult](t, bulk(map[string]any{"items": items(1000, 0)}, 200), 200)
	require.Equal(t, bulkResult{Total: 1000, Created: 1000}, res)
	res = notifytest.Decode[bulkResult](t, bulk(map[string]any{"items": items(20, 990)}, 200), 200)
	require.Equal(t, bulkResult{Total: 20, Created: 10, Updated: 10}, res)
	require.Equal(t, ptr("01055550995"), get(t, e.Owner, "u-0995").Phone)
	a := notifytest.Audit(t, e.Owner, "recipient.bulk_upsert")[0]
	require.Equal(t, map[string]any{"total": 20.0, "created": 10.0, "updated": 10.0}, a.Payload)

	// Every profile once, over pages of 200.
	seen := map[string]bool{}
	pages := 0
	for cursor := ""; ; {
		pages++
		l := notifytest.Decode[page](t, dash(t, e.Owner, "GET", "/v1/recipients?limit=200&cursor="+url.QueryEscape(cursor), nil, 200), 200)
		for _, p := range l.Recipients {
			require.False(t, seen[p.ExternalID], "%s twice", p.ExternalID)
			seen[p.ExternalID] = true
		}
		if !l.HasNext {
			require.Nil(t, l.Cursor)
			break
		}
		cursor = *l.Cursor
	}
	require.Len(t, seen, 1010)
	require.Equal(t, 6, pages, "1,010 profiles are six pages of 200")

	// A search pages the same way: "Person 10" matches Person 10, 100 to
	// 109 and 1000 to 1009 (21 profiles), five pages of 5.
	var found []string
	for cursor := ""; ; {
		l := notifytest.Decode[page](t, dash(t, e.Owner, "GET", "/v1/recipients?q=person+10&limit=5&cursor="+url.QueryEscape(cursor), nil, 200), 200)
		for _, p := range l.Recipients {
			found = append(found, p.ExternalID)
		}
		if !l.HasNext {
			break
		}
		cursor = *l.Cursor
	}
	require.Len(t, found, 21)
	require.Contains(t, found, "u-0010")
	// Phone and external id are searched too.
	l := notifytest.Decode[page](t, dash(t, e.Owner, "GET", "/v1/recipients?q=55550042", nil, 200), 200)
	require.Len(t, l.Recipients, 1)
	require.Equal(t, "u-0042", l.Recipients[0].ExternalID)
	l = notifytest.Decode[page](t, dash(t, e.Owner, "GET", "/v1/recipients?q=u-100", nil, 200), 200)
	require.Len(t, l.Recipients, 10, "u-1000 to u-1009")
}
