package recipients_test

import (
	"bytes"
	"mime/multipart"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/notifyd/notifyd/client"
	"github.com/notifyd/notifyd/internal/notifytest"
)

type prefDoc struct {
	Channels   map[string]bool            `json:"channels"`
	Categories map[string]map[string]bool `json:"categories"`
}

type prefLink struct {
	URL       string `json:"url"`
	ExpiresAt string `json:"expiresAt"`
}

// signedPrefs reads a profile's preferences with a signed key (valid
// whatever the test clock says, unlike a 12-hour dashboard token).
func signedPrefs(t *testing.T, k *client.Client, id string) prefDoc {
	t.Helper()
	return notifytest.Data[struct {
		Preferences prefDoc `json:"preferences"`
	}](t, notifytest.Signed(t, k, "GET", "/v1/recipients/"+id+"/preferences", nil), http.StatusOK).Preferences
}

// mint asks for a profile's preference link with a signed key.
func mint(t *testing.T, k *client.Client, id string) prefLink {
	t.Helper()
	return notifytest.Data[prefLink](t, notifytest.Signed(t, k, "POST", "/v1/recipients/"+id+"/preference-link", nil), http.StatusOK)
}

// pagePath is the path and query of a link (the daemon's own URL cut).
func pagePath(t *testing.T, env *notifytest.Env, link string) string {
	t.Helper()
	require.True(t, strings.HasPrefix(link, env.Daemon.URL()+"/v1/preferences/page?token="), link)
	return strings.TrimPrefix(link, env.Daemon.URL())
}

func pageGet(t *testing.T, env *notifytest.Env, path string, status int) notifytest.Page {
	t.Helper()
	p := notifytest.Public(t, env.Daemon.URL(), "GET", path, "", nil)
	notifytest.RequireHTMLPage(t, p, status)
	return p
}

func pagePost(t *testing.T, env *notifytest.Env, path string, form url.Values, status int) notifytest.Page {
	t.Helper()
	p := notifytest.Public(t, env.Daemon.URL(), "POST", path, "application/x-www-form-urlencoded", []byte(form.Encode()))
	notifytest.RequireHTMLPage(t, p, status)
	return p
}

var nothing = prefDoc{Channels: map[string]bool{}, Categories: map[string]map[string]bool{}}

// TestPreferencePage: the link minted by the API opens a page whose GET
// changes nothing and whose POST does (audited as the recipient on the
// page); a forged token, another recipient's and another workspace's
// change nothing of this one; an expired link and one of an erased
// profile are refused.
func TestPreferencePage(t *testing.T) {
	t.Parallel()
	env, _, clock := windowSetup(t, time.Now())
	rk, _ := env.APIKey(t, "recipients", "recipients:read", "recipients:write")
	put(t, env.Owner, "u-7", map[string]any{"email": "seven@example.com"}, http.StatusCreated)

	l := mint(t, rk, "u-42")
	exp, err := time.Parse(time.RFC3339, l.ExpiresAt)
	require.NoError(t, err)
	require.WithinDuration(t, clock.Now().Add(30*24*time.Hour), exp, 2*time.Second)
	path := pagePath(t, env, l.URL)
	// The dashboard mints too (operator and up).
	dl := notifytest.Field[string](t, dash(t, env.Owner, "POST", "/v1/recipients/u-42/preference-link", nil, http.StatusOK), "url")
	pagePath(t, env, dl)
	dash(t, env.Owner, "POST", "/v1/recipients/nobody/preference-link", nil, http.StatusNotFound)

	// GET (and HEAD, and a POST that is no form of the page) renders only.
	p := pageGet(t, env, path, http.StatusOK)
	require.Contains(t, p.Body, `name="marketing:sms" aria-label="Marketing by SMS" checked>`)
	require.Contains(t, p.Body, `name="marketing:email" aria-label="Marketing by Email" checked>`)
	require.Contains(t, p.Body, `name="security:sms" aria-label="Security by SMS" checked disabled>`, "required: shown, not switchable")
	require.NotContains(t, p.Body, "push_mobile", "only channels with routes")
	require.Equal(t, http.StatusOK, notifytest.Public(t, env.Daemon.URL(), "HEAD", path, "", nil).Status)
	pagePost(t, env, path, url.Values{"marketing:email": {"on"}}, http.StatusOK)
	require.Equal(t, nothing, signedPrefs(t, rk, "u-42"), "GET changes nothing")
	require.Empty(t, notifytest.Audit(t, env.Owner, "preference.replace"))

	// POST saves: marketing by SMS off; the required box is ignored.
	p = pagePost(t, env, path, url.Values{"save": {"1"}, "marketing:email": {"on"}, "security:email": {"on"}}, http.StatusOK)
	require.Contains(t, p.Body, "Your preferences are saved.")
	require.Contains(t, p.Body, `name="marketing:sms" aria-label="Marketing by SMS">`)
	want := prefDoc{Channels: map[string]bool{}, Categories: map[string]map[string]bool{"marketing": {"sms": false}}}
	require.Equal(t, want, signedPrefs(t, rk, "u-42"))
	entries := notifytest.Audit(t, env.Owner, "preference.replace")
	require.Len(t, entries, 1)
	require.Nil(t, entries[0].ActorUserID, "the recipient acted, no member")
	require.Equal(t, "u-42", entries[0].TargetID)
	require.Equal(t, "preference_page", entries[0].Payload["via"])
	require.NotContains(t, entries[0].Payload, "apiKeyId")
	// The same form again writes nothing.
	pagePost(t, env, path, url.Values{"save": {"1"}, "marketing:email": {"on"}}, http.StatusOK)
	require.Len(t, notifytest.Audit(t, env.Owner, "preference.replace"), 1)

	// Another recipient's link changes that recipient only.
	p7 := pagePath(t, env, mint(t, rk, "u-7").URL)
	pagePost(t, env, p7, url.Values{"save": {"1"}}, http.StatusOK)
	require.Equal(t, want, signedPrefs(t, rk, "u-42"))
	require.Equal(t, prefDoc{Channels: map[string]bool{}, Categories: map[string]map[string]bool{
		"marketing": {"sms": false, "email": false}}}, signedPrefs(t, rk, "u-7"))

	// Another workspace's link, for a profile of the same external id,
	// changes that workspace's profile only.
	other, _ := env.NewWorkspace(t, "Other", "other-page@example.com")
	dash(t, other, "PUT", "/v1/recipients/u-42", map[string]any{"email": "x@example.com"}, http.StatusCreated)
	dash(t, other, "POST", "/v1/categories", map[string]any{"key": "marketing", "name": "Marketing"}, http.StatusCreated)
	ol := notifytest.Field[string](t, dash(t, other, "POST", "/v1/recipients/u-42/preference-link", nil, http.StatusOK), "url")
	pagePost(t, env, pagePath(t, env, ol), url.Values{"save": {"1"}}, http.StatusOK) // no routes there: nothing to choose
	require.Equal(t, want, signedPrefs(t, rk, "u-42"))

	// A forged or garbled token: 400, nothing changes.
	token, _ := url.QueryUnescape(strings.TrimPrefix(path, "/v1/preferences/page?token="))
	body, sig, _ := strings.Cut(token, ".")
	forged := "/v1/preferences/page?token=" + url.QueryEscape(body+"x."+sig)
	pageGet(t, env, forged, http.StatusBadRequest)
	pagePost(t, env, forged, url.Values{"save": {"1"}}, http.StatusBadRequest)
	pageGet(t, env, "/v1/preferences/page", http.StatusBadRequest)
	require.Equal(t, want, signedPrefs(t, rk, "u-42"))

	// Erased and made again: the old link names another profile now.
	put(t, env.Owner, "u-7", map[string]any{"email": "seven@example.com"}, http.StatusOK)
	dash(t, env.Owner, "DELETE", "/v1/recipients/u-7", nil, http.StatusNoContent)
	put(t, env.Owner, "u-7", map[string]any{"email": "seven@example.com"}, http.StatusCreated)
	pageGet(t, env, p7, http.StatusNotFound)
	pagePost(t, env, p7, url.Values{"save": {"1"}}, http.StatusNotFound)
	require.Equal(t, nothing, signedPrefs(t, rk, "u-7"))

	// Expired after 30 days: refused, nothing changes.
	clock.Advance(30*24*time.Hour + time.Second)
	pageGet(t, env, path, http.StatusGone)
	pagePost(t, env, path, url.Values{"save": {"1"}}, http.StatusGone)
	require.Equal(t, want, signedPrefs(t, rk, "u-42"))
}

// TestPreferenceLinkInMail: a send by id puts {{preferencesUrl}} in the
// content; category mail to an email address carries List-Unsubscribe
// with the link naming the category, and the RFC 8058 one-click POST to
// it turns the category off on email (and nothing else); a required
// category's mail carries no such header.
func TestPreferenceLinkInMail(t *testing.T) {
	t.Parallel()
	env, key, _ := windowSetup(t, time.Now())
	rk, _ := env.APIKey(t, "recipients", "recipients:read")
	mail := func(text, category string) map[string]any {
		b := byID("email", "u-42", text)
		if category != "" {
			b["category"] = category
		}
		return b
	}
	sent := func(body map[string]any) string {
		a := notifytest.Send(t, key, body)
		require.Equal(t, "sent", notifytest.Wait(t, key, a.RequestID).Status)
		ms := env.Sim.Messages("mailz_email", "", 0)
		for _, m := range ms {
			if strings.Contains(m.Text, body["content"].(map[string]any)["text"].(string)[:10]) {
				return m.Headers["List-Unsubscribe"] + "\n" + m.Headers["List-Unsubscribe-Post"] + "\n" + m.Text
			}
		}
		t.Fatalf("no mail for %v in %d", body, len(ms))
		return ""
	}

	got := sent(mail("Plain mail. Manage: {{preferencesUrl}}", ""))
	parts := strings.SplitN(got, "\n", 3)
	require.Equal(t, []string{"", ""}, parts[:2], "no category, no header")
	link := strings.TrimPrefix(parts[2], "Plain mail. Manage: ")
	pageGet(t, env, pagePath(t, env, link), http.StatusOK)

	got = sent(mail("Sale today, only for you", "marketing"))
	parts = strings.SplitN(got, "\n", 3)
	require.Equal(t, "List-Unsubscribe=One-Click", parts[1])
	require.True(t, strings.HasPrefix(parts[0], "<"+env.Daemon.URL()+"/v1/preferences/page?token=") &&
		strings.HasSuffix(parts[0], "&category=marketing>"), parts[0])
	oneClick := strings.TrimSuffix(strings.TrimPrefix(parts[0], "<"+env.Daemon.URL()), ">")
	// A mail client opening it changes nothing; the one-click POST does.
	pageGet(t, env, oneClick, http.StatusOK)
	require.Equal(t, nothing, signedPrefs(t, rk, "u-42"))
	// RFC 8058's preferred form: multipart/form-data.
	var mp bytes.Buffer
	w := multipart.NewWriter(&mp)
	require.NoError(t, w.WriteField("List-Unsubscribe", "One-Click"))
	require.NoError(t, w.Close())
	notifytest.RequireHTMLPage(t, notifytest.Public(t, env.Daemon.URL(), "POST", oneClick, w.FormDataContentType(), mp.Bytes()), http.StatusOK)
	require.Equal(t, prefDoc{Channels: map[string]bool{}, Categories: map[string]map[string]bool{"marketing": {"email": false}}},
		signedPrefs(t, rk, "u-42"))
	pagePost(t, env, oneClick, url.Values{"List-Unsubscribe": {"One-Click"}}, http.StatusOK) // again: the same
	require.Len(t, notifytest.Audit(t, env.Owner, "preference.replace"), 1)
	a := notifytest.Send(t, key, mail("Another sale", "marketing"))
	require.Equal(t, "canceled", a.Status, "opted out of marketing by email")

	got = sent(mail("Security notice: new login", "security"))
	require.True(t, strings.HasPrefix(got, "\n\n"), "required: no List-Unsubscribe")
	// A one-click for the required category changes nothing.
	pagePost(t, env, strings.Replace(oneClick, "category=marketing", "category=security", 1),
		url.Values{"List-Unsubscribe": {"One-Click"}}, http.StatusOK)
	require.Equal(t, prefDoc{Channels: map[string]bool{}, Categories: map[string]map[string]bool{"marketing": {"email": false}}},
		signedPrefs(t, rk, "u-42"))
}

// TestPreferencePageInApp: inapp takes no route, so the page shows it
// once the workspace uses the inbox (a recipient token was minted), and
// a box left unticked there is saved like any other.
func TestPreferencePageInApp(t *testing.T) {
	t.Parallel()
	env, _, _ := windowSetup(t, time.Now())
	rk, _ := env.APIKey(t, "recipients", "recipients:read", "recipients:write")
	path := pagePath(t, env, mint(t, rk, "u-42").URL)
	require.NotContains(t, pageGet(t, env, path, http.StatusOK).Body, "marketing:inapp", "no inbox yet")

	notifytest.Data[map[string]any](t, notifytest.Signed(t, rk, "POST", "/v1/recipients/u-42/inbox-token", nil), http.StatusOK)
	p := pageGet(t, env, path, http.StatusOK)
	require.Contains(t, p.Body, `name="marketing:inapp" aria-label="Marketing by In the app" checked>`)
	pagePost(t, env, path, url.Values{"save": {"1"}, "marketing:sms": {"on"}, "marketing:email": {"on"}}, http.StatusOK)
	require.Equal(t, prefDoc{Channels: map[string]bool{}, Categories: map[string]map[string]bool{"marketing": {"inapp": false}}},
		signedPrefs(t, rk, "u-42"))
}
