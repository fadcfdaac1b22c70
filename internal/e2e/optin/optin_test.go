package optin_test

import (
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/notifyd/notifyd/internal/newsletter"
	"github.com/notifyd/notifyd/internal/notifytest"
)

// TestOptInOffUnchanged: with the setting at its default (off), create and
// import behave as SPEC says: subscribed, no confirmation mail, SPEC's
// import answer.
func TestOptInOffUnchanged(t *testing.T) {
	t.Parallel()
	env := notifytest.StartDaemon(t)
	emailRoute(t, env, env.Owner)

	r := call(t, env.Owner, "GET", "/v1/newsletter/settings", nil, http.StatusOK)
	require.JSONEq(t, `{"settings":{"doubleOptIn":false,"updatedAt":null}}`, string(r.Body))

	s := create(t, env.Owner, map[string]any{"channel": "email", "address": "off@example.com"})
	require.Equal(t, "subscribed", s.ConsentStatus)
	require.NotNil(t, s.ConsentedAt)
	p := create(t, env.Owner, map[string]any{"channel": "email", "address": "asked@example.com", "consentStatus": "pending"})
	require.Equal(t, "pending", p.ConsentStatus, "pending as asked, and no mail")
	r = call(t, env.Owner, "POST", "/v1/newsletter/subscribers/import", map[string]any{
		"subscribers": []map[string]any{{"channel": "email", "address": "imp@example.com"}}}, http.StatusOK)
	require.JSONEq(t, `{"total":1,"created":1,"updated":0,"skipped":0}`, string(r.Body))
	require.Zero(t, requestCount(t, env, env.Workspace, newsletter.SourceOptIn), "no confirmation mail queued")

	// Turned on then off again: back to SPEC behaviour.
	setOptIn(t, env.Owner, true)
	setOptIn(t, env.Owner, false)
	require.Equal(t, "subscribed", create(t, env.Owner, map[string]any{"channel": "email", "address": "again@example.com"}).ConsentStatus)
	require.Zero(t, requestCount(t, env, env.Workspace, newsletter.SourceOptIn))
	n, _ := auditCount(t, env.Owner, "newsletter.settings.update")
	require.Equal(t, 2, n)
}

// TestOptInConfirmFlow: with the setting on, a new subscriber is pending,
// gets a confirmation mail through the email route, is in no campaign's
// audience (preview, detail, fan-out), and the link confirms it: GET shows
// a button and changes nothing, POST confirms, again (also two at once) is
// harmless.
func TestOptInConfirmFlow(t *testing.T) {
	t.Parallel()
	env := notifytest.StartDaemon(t)
	emailRoute(t, env, env.Owner)
	setOptIn(t, env.Owner, true)

	x := create(t, env.Owner, map[string]any{"channel": "email", "address": "Reader@Example.com", "name": "Reader"})
	require.Equal(t, "pending", x.ConsentStatus)
	require.Nil(t, x.ConsentedAt)
	sub := create(t, env.Owner, map[string]any{"channel": "email", "address": "known@example.com", "confirmed": true})
	require.Equal(t, "subscribed", sub.ConsentStatus, "confirmed: true skips double opt-in")
	require.Equal(t, 1, requestCount(t, env, env.Workspace, newsletter.SourceOptIn), "one mail, for the unconfirmed one")

	m := waitMails(t, env, "reader@example.com", 1)[0]
	path, token := confirmLink(t, m)
	require.Contains(t, m.Text, "Test", "the mail names the workspace")

	// A pending subscriber is not in a campaign's audience: preview,
	// detail and the fan-out.
	camp := notifytest.Decode[struct {
		Campaign struct {
			ID string `json:"id"`
		} `json:"campaign"`
	}](t, notifytest.Dash(t, env.Owner, "POST", "/v1/newsletter/campaigns", map[string]any{"name": "Weekly", "channel": "email",
		"subject": "News", "contentText": "Hello"}), http.StatusCreated)
	require.Equal(t, 1, audienceSize(t, env.Owner, camp.Campaign.ID))
	sent := notifytest.Decode[struct {
		AudienceSize int `json:"audienceSize"`
	}](t, notifytest.Dash(t, env.Owner, "POST", "/v1/newsletter/campaigns/"+camp.Campaign.ID+"/send", nil), http.StatusOK)
	require.Equal(t, 1, sent.AudienceSize)
	waitMails(t, env, "known@example.com", 1)
	deadline := time.Now().Add(30 * time.Second)
	for {
		d := notifytest.Decode[struct {
			Campaign struct {
				Status          string `json:"status"`
				TotalRecipients int    `json:"totalRecipients"`
			} `json:"campaign"`
		}](t, notifytest.Dash(t, env.Owner, "GET", "/v1/newsletter/campaigns/"+camp.Campaign.ID, nil), http.StatusOK).Campaign
		if d.Status == "sent" {
			require.Equal(t, 1, d.TotalRecipients)
			break
		}
		require.True(t, time.Now().Before(deadline), "campaign not sent in 30 s: %+v", d)
		time.Sleep(50 * time.Millisecond)
	}
	require.Len(t, env.Sim.Messages(mailKind, "reader@example.com", 0), 1, "the pending subscriber got only the confirmation mail")

	// GET (and HEAD) show the button and change nothing.
	p := public(t, env, "GET", path, "", nil)
	htmlPage(t, p, http.StatusOK, "Confirm your subscription")
	require.Contains(t, p.Body, `<form method="post" action="/v1/newsletter/confirm"`)
	require.Contains(t, p.Body, `<input type="hidden" name="token" value="`+token+`">`)
	require.Contains(t, p.Body, "re****@example.com", "the address is masked")
	require.NotContains(t, p.Body, "reader@example.com")
	require.Equal(t, http.StatusOK, public(t, env, "HEAD", path, "", nil).Status)
	require.Equal(t, "pending", get(t, env.Owner, x.ID).ConsentStatus)

	// POST confirms.
	p = confirmPost(t, env, token)
	htmlPage(t, p, http.StatusOK, "Subscription confirmed")
	require.NotContains(t, p.Body, "<form")
	got := get(t, env.Owner, x.ID)
	require.Equal(t, "subscribed", got.ConsentStatus)
	require.NotNil(t, got.ConsentedAt)
	require.Equal(t, 2, audienceSize(t, env.Owner, camp.Campaign.ID))

	// Again: the same page, nothing changes; GET now shows the done page.
	htmlPage(t, confirmPost(t, env, token), http.StatusOK, "Subscription confirmed")
	require.Equal(t, got, get(t, env.Owner, x.ID))
	p = confirmGet(t, env, token)
	htmlPage(t, p, http.StatusOK, "Subscription confirmed")
	require.NotContains(t, p.Body, "<form")

	// Two confirmations at once: both answer the success page, one
	// confirms.
	y := create(t, env.Owner, map[string]any{"channel": "email", "address": "race@example.com"})
	require.Equal(t, "pending", y.ConsentStatus)
	_, ytoken := confirmLink(t, waitMails(t, env, "race@example.com", 1)[0])
	const n = 4
	pages := make([]page, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			pages[i] = confirmPost(t, env, ytoken)
		}()
	}
	wg.Wait()
	for _, p := range pages {
		htmlPage(t, p, http.StatusOK, "Subscription confirmed")
		require.Equal(t, pages[0].Body, p.Body)
	}
	require.Equal(t, "subscribed", get(t, env.Owner, y.ID).ConsentStatus)
	count, actors := auditCount(t, env.Owner, "subscriber.confirm")
	require.Equal(t, 2, count, "one confirmation each for x and y")
	for _, a := range actors {
		require.Nil(t, a, "the subscriber's own action: no dashboard actor")
	}
	require.Equal(t, 3, audienceSize(t, env.Owner, camp.Campaign.ID))
}

// TestOptInImport: rows marked confirmed skip the mail; unmarked rows
// become pending with a mail, except a subscriber already subscribed
// (never demoted) or already pending (not mailed again).
func TestOptInImport(t *testing.T) {
	t.Parallel()
	env := notifytest.StartDaemon(t)
	emailRoute(t, env, env.Owner)
	old := create(t, env.Owner, map[string]any{"channel": "email", "address": "old@example.com"})
	wait := create(t, env.Owner, map[string]any{"channel": "email", "address": "wait@example.com", "consentStatus": "pending"})
	setOptIn(t, env.Owner, true)

	r := call(t, env.Owner, "POST", "/v1/newsletter/subscribers/import", map[string]any{"subscribers": []map[string]any{
		{"channel": "email", "address": "yes@example.com", "confirmed": true},
		{"channel": "email", "address": "new@example.com"},
		{"channel": "email", "address": "no@example.com", "confirmed": false},
		{"channel": "email", "address": "old@example.com", "name": "Old"},
		{"channel": "email", "address": "wait@example.com"},
		{"channel": "email", "address": "bad@example.com", "confirmed": "yes"}, // not a boolean: skipped
	}}, http.StatusOK)
	require.JSONEq(t, `{"total":6,"created":3,"updated":2,"skipped":1,"confirmationsSent":2}`, string(r.Body))

	status := func(addr string) string {
		t.Helper()
		var out struct {
			Subscribers []subscriber `json:"subscribers"`
		}
		require.NoError(t, call(t, env.Owner, "GET", "/v1/newsletter/subscribers?search="+addr, nil, http.StatusOK).Decode(&out))
		require.Len(t, out.Subscribers, 1, addr)
		return out.Subscribers[0].ConsentStatus
	}
	require.Equal(t, "subscribed", status("yes@example.com"))
	require.Equal(t, "pending", status("new@example.com"))
	require.Equal(t, "pending", status("no@example.com"))
	require.Equal(t, "subscribed", get(t, env.Owner, old.ID).ConsentStatus, "a confirmed subscriber is never demoted")
	require.Equal(t, "pending", get(t, env.Owner, wait.ID).ConsentStatus)
	_, token := confirmLink(t, waitMails(t, env, "new@example.com", 1)[0])
	waitMails(t, env, "no@example.com", 1)
	require.Equal(t, 2, requestCount(t, env, env.Workspace, newsletter.SourceOptIn), "no mail for yes, old, wait")

	// The list-level mark, overridden by an item; unsubscribed stays
	// unsubscribed without a mail.
	r = call(t, env.Owner, "POST", "/v1/newsletter/subscribers/import", map[string]any{"confirmed": true, "subscribers": []map[string]any{
		{"channel": "email", "address": "list1@example.com"},
		{"channel": "email", "address": "list2@example.com", "confirmed": false},
	}}, http.StatusOK)
	require.JSONEq(t, `{"total":2,"created":2,"updated":0,"skipped":0,"confirmationsSent":1}`, string(r.Body))
	require.Equal(t, "subscribed", status("list1@example.com"))
	require.Equal(t, "pending", status("list2@example.com"))
	r = call(t, env.Owner, "POST", "/v1/newsletter/subscribers/import", map[string]any{"consentStatus": "unsubscribed",
		"subscribers": []map[string]any{{"channel": "email", "address": "gone@example.com"}}}, http.StatusOK)
	require.JSONEq(t, `{"total":1,"created":1,"updated":0,"skipped":0}`, string(r.Body))
	require.Equal(t, "unsubscribed", status("gone@example.com"))
	require.Equal(t, 3, requestCount(t, env, env.Workspace, newsletter.SourceOptIn))

	// An imported pending subscriber confirms like a created one.
	htmlPage(t, confirmPost(t, env, token), http.StatusOK, "Subscription confirmed")
	require.Equal(t, "subscribed", status("new@example.com"))
	n, _ := auditCount(t, env.Owner, "subscriber.import")
	require.Equal(t, 3, n)
	require.True(t, strings.Contains(string(call(t, env.Owner, "GET", "/v1/audit-logs?action=subscriber.import", nil, http.StatusOK).Body),
		`"confirmationsSent":2`))
}
