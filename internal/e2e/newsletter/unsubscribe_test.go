package newsletter_test

import (
	"bytes"
	"context"
	"encoding/json"
	"mime/multipart"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/notifyd/notifyd/client"
	"github.com/notifyd/notifyd/internal/notify"
	"github.com/notifyd/notifyd/internal/notifytest"
	"github.com/notifyd/notifyd/internal/store/sqlstore"
)

type unsubPage struct {
	status int
	header http.Header
	body   string
}

// unsubReq sends a public request (no authentication).
func unsubReq(t *testing.T, env *notifytest.Env, method, path, contentType string, body []byte) unsubPage {
	t.Helper()
	p := notifytest.Public(t, env.Daemon.URL(), method, path, contentType, body)
	return unsubPage{status: p.Status, header: p.Header, body: p.Body}
}

// unsubRequireHTML checks the headers every public page carries.
func unsubRequireHTML(t *testing.T, p unsubPage, status int) {
	t.Helper()
	notifytest.RequireHTMLPage(t, notifytest.Page{Status: p.status, Header: p.header, Body: p.body}, status)
}

func unsubForm(t *testing.T, env *notifytest.Env, token string) unsubPage {
	t.Helper()
	return unsubReq(t, env, "POST", "/v1/newsletter/unsubscribe", "application/x-www-form-urlencoded",
		[]byte(url.Values{"token": {token}}.Encode()))
}

// unsubOneClick posts JSON and returns the status and, on 200, data.unsubscribed.
func unsubOneClick(t *testing.T, env *notifytest.Env, body string) (int, bool) {
	t.Helper()
	p := unsubReq(t, env, "POST", "/v1/newsletter/unsubscribe/one-click", "application/json", []byte(body))
	return unsubOneClickResult(t, p)
}

func unsubOneClickResult(t *testing.T, p unsubPage) (int, bool) {
	t.Helper()
	if p.status != http.StatusOK {
		require.Equal(t, "application/problem+json", p.header.Get("Content-Type"), p.body)
		var prob struct {
			Status int    `json:"status"`
			Code   string `json:"code"`
		}
		require.NoError(t, json.Unmarshal([]byte(p.body), &prob))
		require.Equal(t, p.status, prob.Status)
		return p.status, false
	}
	require.Equal(t, "application/json", p.header.Get("Content-Type"))
	var env struct {
		Data *struct {
			Unsubscribed *bool `json:"unsubscribed"`
		} `json:"data"`
		Meta struct {
			Timestamp string `json:"timestamp"`
		} `json:"meta"`
	}
	require.NoError(t, json.Unmarshal([]byte(p.body), &env), p.body)
	require.NotNil(t, env.Data, p.body)
	require.NotNil(t, env.Data.Unsubscribed, p.body)
	require.NotEmpty(t, env.Meta.Timestamp)
	return p.status, *env.Data.Unsubscribed
}

// unsubSuppression returns the reason of the address's suppression in ws,
// or "" when it is not suppressed.
func unsubSuppression(t *testing.T, env *notifytest.Env, ws, address string) string {
	t.Helper()
	ctx := context.Background()
	var reason string
	require.NoError(t, env.Daemon.DB.View(ctx, func(tx notify.Tx) error {
		c := tx.(interface{ Conn() sqlstore.Conn }).Conn()
		err := c.QueryRow(ctx, `SELECT reason FROM suppressions WHERE workspace_id = ? AND address = ?`, ws, address).Scan(&reason)
		if notify.IsNotFound(err) {
			return nil
		}
		return err
	}))
	return reason
}

func unsubToken(t *testing.T, env *notifytest.Env, ws, id string) string {
	t.Helper()
	return subStored(t, env, ws, id).UnsubscribeToken
}

func TestUnsubscribePage(t *testing.T) {
	t.Parallel()
	env := notifytest.StartDaemon(t)
	s := subCreate(t, env.Owner, map[string]any{"channel": "email", "address": "reader@example.com"})
	token := unsubToken(t, env, env.Workspace, s.ID)

	p := unsubReq(t, env, "GET", "/v1/newsletter/unsubscribe?token="+token, "", nil)
	unsubRequireHTML(t, p, http.StatusOK)
	require.Contains(t, p.body, `<form method="post" action="/v1/newsletter/unsubscribe"`)
	require.Contains(t, p.body, `<input type="hidden" name="token" value="`+token+`">`)
	require.Equal(t, 1, strings.Count(p.body, "<button"), "one button")
	require.Contains(t, p.body, "re****@example.com", "the address is masked")
	require.NotContains(t, p.body, "reader@example.com")
	require.Equal(t, http.StatusOK, unsubReq(t, env, "HEAD", "/v1/newsletter/unsubscribe?token="+token, "", nil).status)

	// GET changes nothing.
	after := subGet(t, env.Owner, s.ID)
	require.Equal(t, s, after)
	require.Equal(t, "", unsubSuppression(t, env, env.Workspace, s.Address))

	for _, q := range []string{"", "?token=", "?token=" + strings.Repeat("a", 65), "?token=%21%21bad%21%21", "?token=%FF%00",
		"?token=" + strings.Repeat("A", 43), "?token=" + url.QueryEscape(`"><script>`)} {
		p := unsubReq(t, env, "GET", "/v1/newsletter/unsubscribe"+q, "", nil)
		unsubRequireHTML(t, p, http.StatusOK)
		require.Contains(t, p.body, "Link invalid", q)
		require.NotContains(t, p.body, "<form", q)
	}
}

func TestUnsubscribeForm(t *testing.T) {
	t.Parallel()
	env := notifytest.StartDaemon(t)
	s := subCreate(t, env.Owner, map[string]any{"channel": "email", "address": "reader@example.com", "name": "R"})
	token := unsubToken(t, env, env.Workspace, s.ID)

	p := unsubForm(t, env, token)
	unsubRequireHTML(t, p, http.StatusOK)
	require.Contains(t, p.body, "Unsubscribed")
	require.NotContains(t, p.body, "<form")
	u := subGet(t, env.Owner, s.ID)
	require.Equal(t, "unsubscribed", u.ConsentStatus)
	require.NotNil(t, u.UnsubscribedAt)
	require.Equal(t, s.ConsentedAt, u.ConsentedAt)
	require.Equal(t, "unsubscribe", unsubSuppression(t, env, env.Workspace, "reader@example.com"))

	// Again: same page, nothing changes.
	p = unsubForm(t, env, token)
	unsubRequireHTML(t, p, http.StatusOK)
	require.Contains(t, p.body, "Unsubscribed")
	require.Equal(t, u, subGet(t, env.Owner, s.ID))

	// The confirmation page now says it is done, without a form.
	p = unsubReq(t, env, "GET", "/v1/newsletter/unsubscribe?token="+token, "", nil)
	unsubRequireHTML(t, p, http.StatusOK)
	require.Contains(t, p.body, "Unsubscribed")
	require.NotContains(t, p.body, "<form")

	// Unknown or malformed tokens: 200 notice page.
	for _, tok := range []string{strings.Repeat("B", 43), "x", "!!!", strings.Repeat("é", 64)} {
		p = unsubForm(t, env, tok)
		unsubRequireHTML(t, p, http.StatusOK)
		require.Contains(t, p.body, "Link invalid", tok)
	}
	// Empty or over 64 characters: 400.
	for _, tok := range []string{"", strings.Repeat("a", 65)} {
		unsubRequireHTML(t, unsubForm(t, env, tok), http.StatusBadRequest)
	}
	unsubRequireHTML(t, unsubReq(t, env, "POST", "/v1/newsletter/unsubscribe", "application/x-www-form-urlencoded", nil), http.StatusBadRequest)
	unsubRequireHTML(t, unsubReq(t, env, "POST", "/v1/newsletter/unsubscribe?token="+token, "application/x-www-form-urlencoded", nil),
		http.StatusBadRequest) // the form takes the token from the body only

	// The dashboard may subscribe again: unsubscribedAt resets.
	r := subPatch(t, env.Owner, s.ID, map[string]any{"consentStatus": "subscribed"})
	require.Nil(t, r.UnsubscribedAt)
}

func TestUnsubscribeOneClick(t *testing.T) {
	t.Parallel()
	env := notifytest.StartDaemon(t)
	s := subCreate(t, env.Owner, map[string]any{"channel": "email", "address": "click@example.com"})
	token := unsubToken(t, env, env.Workspace, s.ID)

	st, ok := unsubOneClick(t, env, `{"token":"`+strings.Repeat("C", 43)+`"}`)
	require.Equal(t, http.StatusOK, st)
	require.False(t, ok, "well-formed unknown token")
	st, ok = unsubOneClick(t, env, `{"token":"no such token!"}`)
	require.Equal(t, http.StatusOK, st)
	require.False(t, ok)
	require.Equal(t, "subscribed", subGet(t, env.Owner, s.ID).ConsentStatus)

	st, ok = unsubOneClick(t, env, `{"token":"`+token+`"}`)
	require.Equal(t, http.StatusOK, st)
	require.True(t, ok)
	u := subGet(t, env.Owner, s.ID)
	require.Equal(t, "unsubscribed", u.ConsentStatus)
	require.NotNil(t, u.UnsubscribedAt)
	require.Equal(t, "unsubscribe", unsubSuppression(t, env, env.Workspace, "click@example.com"))
	st, ok = unsubOneClick(t, env, `{"token":"`+token+`"}`)
	require.Equal(t, http.StatusOK, st)
	require.True(t, ok, "idempotent")
	require.Equal(t, u, subGet(t, env.Owner, s.ID), "the repeat changes nothing")

	for _, body := range []string{`{"token":""}`, `{"token":"` + strings.Repeat("a", 65) + `"}`, `{}`, `{"token":null}`,
		`{"token":5}`, `{"token":"` + token + `","extra":1}`, ``, `not json`} {
		st, _ := unsubOneClick(t, env, body)
		require.Equal(t, http.StatusBadRequest, st, body)
	}
	// 64 characters is still well-formed.
	st, ok = unsubOneClick(t, env, `{"token":"`+strings.Repeat("a", 64)+`"}`)
	require.Equal(t, http.StatusOK, st)
	require.False(t, ok)
}

func TestUnsubscribeRFC8058(t *testing.T) {
	t.Parallel()
	env := notifytest.StartDaemon(t)
	s := subCreate(t, env.Owner, map[string]any{"channel": "email", "address": "mailbox@example.com"})
	token := unsubToken(t, env, env.Workspace, s.ID)
	post := func(query, contentType, body string) (int, bool) {
		t.Helper()
		return unsubOneClickResult(t, unsubReq(t, env, "POST", "/v1/newsletter/unsubscribe/one-click"+query, contentType, []byte(body)))
	}
	const form = "application/x-www-form-urlencoded"

	st, ok := post("?token="+strings.Repeat("D", 43), form, "List-Unsubscribe=One-Click")
	require.Equal(t, http.StatusOK, st)
	require.False(t, ok)
	for _, c := range [][3]string{
		{"?token=" + token, form, ""},
		{"?token=" + token, form, "List-Unsubscribe=Yes"},
		{"", form, "List-Unsubscribe=One-Click"},
		{"?token=", form, "List-Unsubscribe=One-Click"},
		{"?token=" + strings.Repeat("a", 65), form, "List-Unsubscribe=One-Click"},
	} {
		st, _ := post(c[0], c[1], c[2])
		require.Equal(t, http.StatusBadRequest, st, c)
	}
	require.Equal(t, "subscribed", subGet(t, env.Owner, s.ID).ConsentStatus, "refused posts changed nothing")

	st, ok = post("?token="+token, form, "List-Unsubscribe=One-Click")
	require.Equal(t, http.StatusOK, st)
	require.True(t, ok)
	require.Equal(t, "unsubscribed", subGet(t, env.Owner, s.ID).ConsentStatus)
	require.Equal(t, "unsubscribe", unsubSuppression(t, env, env.Workspace, "mailbox@example.com"))

	// A token in the form body instead of the URL is accepted too.
	s3 := subCreate(t, env.Owner, map[string]any{"channel": "email", "address": "inbody@example.com"})
	st, ok = post("", form, "List-Unsubscribe=One-Click&token="+unsubToken(t, env, env.Workspace, s3.ID))
	require.Equal(t, http.StatusOK, st)
	require.True(t, ok)
	require.Equal(t, "unsubscribed", subGet(t, env.Owner, s3.ID).ConsentStatus)

	// multipart/form-data, which RFC 8058 prefers, is accepted too.
	s2 := subCreate(t, env.Owner, map[string]any{"channel": "email", "address": "multi@example.com"})
	var buf bytes.Buffer
	mw := multipart.NewWriter(&buf)
	require.NoError(t, mw.WriteField("List-Unsubscribe", "One-Click"))
	require.NoError(t, mw.Close())
	st, ok = post("?token="+unsubToken(t, env, env.Workspace, s2.ID), mw.FormDataContentType(), buf.String())
	require.Equal(t, http.StatusOK, st)
	require.True(t, ok)
	require.Equal(t, "unsubscribed", subGet(t, env.Owner, s2.ID).ConsentStatus)
}

func TestUnsubscribeIsolationAndSuppression(t *testing.T) {
	t.Parallel()
	env := notifytest.StartDaemon(t)
	other, otherWS := env.NewWorkspace(t, "Other", "other-owner@example.com")
	mine := subCreate(t, env.Owner, map[string]any{"channel": "email", "address": "shared@example.com"})
	theirs := subCreate(t, other, map[string]any{"channel": "email", "address": "shared@example.com"})

	st, ok := unsubOneClick(t, env, `{"token":"`+unsubToken(t, env, otherWS, theirs.ID)+`"}`)
	require.Equal(t, http.StatusOK, st)
	require.True(t, ok)
	require.Equal(t, "unsubscribed", subGet(t, other, theirs.ID).ConsentStatus)
	require.Equal(t, "unsubscribe", unsubSuppression(t, env, otherWS, "shared@example.com"))
	require.Equal(t, "subscribed", subGet(t, env.Owner, mine.ID).ConsentStatus, "the other workspace's subscriber is untouched")
	require.Equal(t, "", unsubSuppression(t, env, env.Workspace, "shared@example.com"), "and not suppressed")

	// An address suppressed for another reason keeps that reason.
	ctx := context.Background()
	require.NoError(t, env.Daemon.DB.Update(ctx, func(tx notify.Tx) error {
		return tx.PutSuppression(ctx, env.Workspace, "shared@example.com", "hard_bounce", env.Daemon.Rooms.Newsletter.Now())
	}))
	p := unsubForm(t, env, unsubToken(t, env, env.Workspace, mine.ID))
	unsubRequireHTML(t, p, http.StatusOK)
	require.Equal(t, "unsubscribed", subGet(t, env.Owner, mine.ID).ConsentStatus)
	require.Equal(t, "hard_bounce", unsubSuppression(t, env, env.Workspace, "shared@example.com"))

	// The unsubscribe is audited with no actor.
	r := subDo(t, other, "GET", "/v1/audit-logs?action=subscriber.unsubscribe", nil, http.StatusOK)
	var logs struct {
		Logs []struct {
			ActorUserID *string `json:"actorUserId"`
			TargetID    string  `json:"targetId"`
		} `json:"logs"`
	}
	require.NoError(t, r.Decode(&logs))
	require.Len(t, logs.Logs, 1)
	require.Nil(t, logs.Logs[0].ActorUserID)
	require.Equal(t, theirs.ID, logs.Logs[0].TargetID)
}

// TestResubscribeLiftsUnsubscribe: a subscriber who unsubscribed and is
// then subscribed again (an update, or a new create after a delete) is
// targeted and mailed again: SPEC's audience rule excludes only
// addresses suppressed for a permanent bounce or complaint, so the
// unsubscribe entry the unsubscribe added is lifted by the renewed
// consent. Other reasons stay and keep excluding the address.
func TestResubscribeLiftsUnsubscribe(t *testing.T) {
	t.Parallel()
	env := notifytest.StartDaemon(t)
	campEmailRoute(t, env)
	o := env.Owner
	audience := func(id string) int {
		t.Helper()
		r := subDo(t, o, "GET", "/v1/newsletter/campaigns/"+id+"/audience", nil, http.StatusOK)
		var out struct {
			AudienceSize int `json:"audienceSize"`
		}
		require.NoError(t, r.Decode(&out))
		return out.AudienceSize
	}
	unsub := func(id string) {
		t.Helper()
		st, ok := unsubOneClick(t, env, `{"token":"`+unsubToken(t, env, env.Workspace, id)+`"}`)
		require.Equal(t, http.StatusOK, st)
		require.True(t, ok)
	}
	byUpdate := subCreate(t, o, map[string]any{"channel": "email", "address": "update@example.com"})
	byImport := subCreate(t, o, map[string]any{"channel": "email", "address": "import@example.com"})
	byCreate := subCreate(t, o, map[string]any{"channel": "email", "address": "create@example.com"})
	bounced := subCreate(t, o, map[string]any{"channel": "email", "address": "bounced@example.com"})
	c := campCreate(t, o, map[string]any{"name": "n", "channel": "email", "subject": "s", "contentText": "t"})
	require.Equal(t, 4, audience(c.ID))

	for _, x := range []subJSON{byUpdate, byImport, byCreate, bounced} {
		unsub(x.ID)
		require.Equal(t, "unsubscribe", unsubSuppression(t, env, env.Workspace, x.Address))
	}
	require.Equal(t, 0, audience(c.ID))
	// A later hard bounce takes over one address's entry.
	subDo(t, o, "POST", "/v1/suppressions", map[string]any{"address": bounced.Address, "reason": "hard_bounce"}, http.StatusCreated)

	subPatch(t, o, byUpdate.ID, map[string]any{"consentStatus": "subscribed"})
	require.Equal(t, "", unsubSuppression(t, env, env.Workspace, byUpdate.Address), "renewed consent lifts the unsubscribe entry")
	require.Equal(t, 1, audience(c.ID))
	// An import (of an old list, maybe) does not undo the unsubscribe.
	subImport(t, o, map[string]any{"subscribers": []any{map[string]any{"channel": "email", "address": byImport.Address}}})
	require.Equal(t, "unsubscribe", unsubSuppression(t, env, env.Workspace, byImport.Address))
	require.Equal(t, 1, audience(c.ID))
	subDo(t, o, "DELETE", "/v1/newsletter/subscribers/"+byCreate.ID, nil, http.StatusNoContent)
	subCreate(t, o, map[string]any{"channel": "email", "address": byCreate.Address})
	require.Equal(t, "", unsubSuppression(t, env, env.Workspace, byCreate.Address))
	require.Equal(t, 2, audience(c.ID))
	subPatch(t, o, bounced.ID, map[string]any{"consentStatus": "subscribed"})
	require.Equal(t, "hard_bounce", unsubSuppression(t, env, env.Workspace, bounced.Address), "a bounce stays")
	require.Equal(t, 2, audience(c.ID), "a bounced address is not targeted")

	// The two get the campaign.
	campSendIt(t, o, c.ID, nil)
	x := campWait(t, o, c.ID, 20*time.Second, func(x campJSON) bool { return x.Status == "sent" })
	require.Equal(t, 2, x.DeliveryStats["sent"])
	campRequireUnique(t, env, 2)
}

// TestUnsubscribeDuringUpdate: an update of a subscriber while an
// unsubscribe of it commits keeps the unsubscribe; it used to write back
// the consent status it had read (on PostgreSQL), losing the unsubscribe.
func TestUnsubscribeDuringUpdate(t *testing.T) {
	t.Parallel()
	env := notifytest.StartDaemon(t)
	s := subCreate(t, env.Owner, map[string]any{"channel": "email", "address": "race@example.com"})
	ctx := context.Background()
	// An unsubscribe-like transaction holds the subscriber's row.
	locked, proceed, done := make(chan struct{}), make(chan struct{}), make(chan error, 1)
	go func() {
		done <- env.Daemon.DB.Update(ctx, func(tx notify.Tx) error {
			x, err := tx.FindSubscriber(ctx, env.Workspace, s.ID)
			if err != nil {
				return err
			}
			now := time.Now()
			x.ConsentStatus, x.UnsubscribedAt, x.UpdatedAt = "unsubscribed", &now, now
			if err := tx.UpdateSubscriber(ctx, x); err != nil {
				return err
			}
			close(locked)
			<-proceed
			return nil
		})
	}()
	<-locked
	patched := make(chan *client.Response, 1)
	go func() {
		r, err := env.Owner.Dashboard(ctx, "PATCH", "/v1/newsletter/subscribers/"+s.ID, map[string]any{"name": "Renamed"})
		if err != nil {
			r = &client.Response{Body: []byte(err.Error())}
		}
		patched <- r
	}()
	time.Sleep(500 * time.Millisecond) // the update reaches the subscriber's lock
	close(proceed)
	require.NoError(t, <-done)
	r := <-patched
	require.Equal(t, http.StatusOK, r.Status, string(r.Body))
	x := subGet(t, env.Owner, s.ID)
	require.Equal(t, "Renamed", x.Name)
	require.Equal(t, "unsubscribed", x.ConsentStatus, "the unsubscribe is kept")
	require.NotNil(t, x.UnsubscribedAt)
}

// TestUnsubscribeOneClickGET: a mail client without RFC 8058 support opens
// the List-Unsubscribe URL in a browser; it gets the confirmation page,
// and the GET changes nothing.
func TestUnsubscribeOneClickGET(t *testing.T) {
	t.Parallel()
	env := notifytest.StartDaemon(t)
	s := subCreate(t, env.Owner, map[string]any{"channel": "email", "address": "browser@example.com"})
	token := unsubToken(t, env, env.Workspace, s.ID)
	p := unsubReq(t, env, "GET", "/v1/newsletter/unsubscribe/one-click?token="+token, "", nil)
	unsubRequireHTML(t, p, http.StatusOK)
	require.Contains(t, p.body, `<form method="post" action="/v1/newsletter/unsubscribe"`)
	require.Contains(t, p.body, `<input type="hidden" name="token" value="`+token+`">`)
	require.Equal(t, s, subGet(t, env.Owner, s.ID), "GET changes nothing")
	p = unsubReq(t, env, "GET", "/v1/newsletter/unsubscribe/one-click?token=nope", "", nil)
	unsubRequireHTML(t, p, http.StatusOK)
	require.Contains(t, p.body, "Link invalid")
}
