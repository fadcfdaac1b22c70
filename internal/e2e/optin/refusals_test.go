package optin_test

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/notifyd/notifyd/internal/newsletter"
	"github.com/notifyd/notifyd/internal/notify"
	"github.com/notifyd/notifyd/internal/notifytest"
	"github.com/notifyd/notifyd/internal/otp"
	"github.com/notifyd/notifyd/internal/secret"
	"github.com/notifyd/notifyd/internal/verification"
)

// TestOptInTokenRefusals: a link that cannot confirm answers an error page
// and changes nothing: forged, of another purpose or key, an unsubscribe
// token, expired, of a deleted or since unsubscribed subscriber. A
// confirmation token does not unsubscribe either.
func TestOptInTokenRefusals(t *testing.T) {
	t.Parallel()
	clock := &notifytest.Clock{}
	env := notifytest.StartDaemonAt(t, clock.Now)
	emailRoute(t, env, env.Owner)
	setOptIn(t, env.Owner, true)
	x := create(t, env.Owner, map[string]any{"channel": "email", "address": "forge@example.com"})
	_, token := confirmLink(t, waitMails(t, env, "forge@example.com", 1)[0])
	// Read from the store: the dashboard session does not outlive the
	// clock's jump over the link's lifetime.
	stored := func(id string) *notify.Subscriber {
		t.Helper()
		var s *notify.Subscriber
		ctx := context.Background()
		require.NoError(t, env.Daemon.DB.View(ctx, func(tx notify.Tx) (err error) {
			s, err = tx.FindSubscriber(ctx, env.Workspace, id)
			return err
		}))
		return s
	}
	unsubToken := stored(x.ID).UnsubscribeToken

	master, err := secret.ParseKey(env.Daemon.Config.SecretKey)
	require.NoError(t, err)
	now := clock.Now()
	claims := otp.Claims{VID: x.ID, WSID: env.Workspace, Purpose: newsletter.ConfirmPurpose, Channel: "email",
		IAT: now.Unix(), EXP: now.Add(time.Hour).Unix()}
	other := claims
	other.Purpose = "newsletter.unsubscribe"
	body, sig, _ := strings.Cut(token, ".")
	flipped := "0"
	if sig[0] == '0' {
		flipped = "1"
	}
	invalid := map[string]string{
		"empty":           "",
		"garbage":         "not-a-token",
		"forged":          body + "." + flipped + sig[1:],
		"other purpose":   otp.SignToken(secret.Derive(master, newsletter.OptInSigningLabel), other),
		"otp key":         otp.SignToken(secret.Derive(master, verification.SigningLabel), claims),
		"unsubscribe":     unsubToken,
		"too long":        token + strings.Repeat("a", newsletter.MaxConfirmToken),
		"other workspace": otp.SignToken(secret.Derive(master, newsletter.OptInSigningLabel), otp.Claims{VID: x.ID, WSID: "00000000-0000-7000-8000-000000000000", Purpose: newsletter.ConfirmPurpose, Channel: "email", IAT: now.Unix(), EXP: now.Add(time.Hour).Unix()}),
	}
	for name, tok := range invalid {
		want, title := http.StatusBadRequest, "Link invalid"
		if name == "other workspace" { // genuine signature, no such subscriber there
			want, title = http.StatusNotFound, "Subscription not found"
		}
		htmlPage(t, confirmGet(t, env, tok), want, title)
		p := confirmPost(t, env, tok)
		htmlPage(t, p, want, title)
		require.NotContains(t, p.Body, "<form", name)
	}
	// A correctly signed token of the right purpose works: the key is the
	// one derived from the master key.
	htmlPage(t, confirmGet(t, env, otp.SignToken(secret.Derive(master, newsletter.OptInSigningLabel), claims)), http.StatusOK,
		"Confirm your subscription")
	require.Equal(t, "pending", get(t, env.Owner, x.ID).ConsentStatus, "no refused token confirmed")

	// A confirmation token is no unsubscribe token.
	p := public(t, env, "GET", "/v1/newsletter/unsubscribe?token="+url.QueryEscape(token), "", nil)
	htmlPage(t, p, http.StatusOK, "Link invalid")
	htmlPage(t, public(t, env, "POST", "/v1/newsletter/unsubscribe", "application/x-www-form-urlencoded",
		[]byte(url.Values{"token": {token}}.Encode())), http.StatusBadRequest, "Bad request")
	r := public(t, env, "POST", "/v1/newsletter/unsubscribe/one-click", "application/json", []byte(`{"token":"`+token+`"}`))
	require.Equal(t, http.StatusBadRequest, r.Status, r.Body)
	require.Equal(t, "pending", get(t, env.Owner, x.ID).ConsentStatus)

	// Unsubscribed since: the link never undoes it.
	call(t, env.Owner, "PATCH", "/v1/newsletter/subscribers/"+x.ID, map[string]any{"consentStatus": "unsubscribed"}, http.StatusOK)
	htmlPage(t, confirmPost(t, env, token), http.StatusConflict, "Subscription cancelled")
	require.Equal(t, "unsubscribed", get(t, env.Owner, x.ID).ConsentStatus)

	// Deleted: 404.
	call(t, env.Owner, "DELETE", "/v1/newsletter/subscribers/"+x.ID, nil, http.StatusNoContent)
	htmlPage(t, confirmPost(t, env, token), http.StatusNotFound, "Subscription not found")
	n, _ := auditCount(t, env.Owner, "subscriber.confirm")
	require.Zero(t, n)

	// Expired: 410, still pending; a confirmed subscriber's expired link
	// still answers done.
	y := create(t, env.Owner, map[string]any{"channel": "email", "address": "late@example.com"})
	_, late := confirmLink(t, waitMails(t, env, "late@example.com", 1)[0])
	z := create(t, env.Owner, map[string]any{"channel": "email", "address": "early@example.com"})
	_, early := confirmLink(t, waitMails(t, env, "early@example.com", 1)[0])
	htmlPage(t, confirmPost(t, env, early), http.StatusOK, "Subscription confirmed")
	clock.Advance(newsletter.ConfirmationTTL + time.Minute)
	htmlPage(t, confirmGet(t, env, late), http.StatusGone, "Link expired")
	htmlPage(t, confirmPost(t, env, late), http.StatusGone, "Link expired")
	require.Equal(t, "pending", stored(y.ID).ConsentStatus)
	htmlPage(t, confirmPost(t, env, early), http.StatusOK, "Subscription confirmed")
	require.Equal(t, "subscribed", stored(z.ID).ConsentStatus)
}

// TestOptInResendAndAccess: resend of the confirmation mail (cooldown,
// only for pending), the roles of the new routes, another workspace's
// subscriber, and invalid bodies.
func TestOptInResendAndAccess(t *testing.T) {
	t.Parallel()
	clock := &notifytest.Clock{}
	env := notifytest.StartDaemonAt(t, clock.Now)
	emailRoute(t, env, env.Owner)
	viewer, operator, admin := env.Member(t, "viewer"), env.Member(t, "operator"), env.Member(t, "admin")

	// Roles: everyone reads the settings; owner and admin change them.
	call(t, viewer, "GET", "/v1/newsletter/settings", nil, http.StatusOK)
	call(t, operator, "PATCH", "/v1/newsletter/settings", map[string]any{"doubleOptIn": true}, http.StatusForbidden)
	call(t, viewer, "PATCH", "/v1/newsletter/settings", map[string]any{"doubleOptIn": true}, http.StatusForbidden)
	setOptIn(t, admin, true)

	x := create(t, operator, map[string]any{"channel": "email", "address": "slow@example.com"})
	require.Equal(t, "pending", x.ConsentStatus)
	waitMails(t, env, "slow@example.com", 1)
	path := "/v1/newsletter/subscribers/" + x.ID + "/resend-confirmation"

	call(t, viewer, "POST", path, nil, http.StatusForbidden)
	r := call(t, env.Owner, "POST", path, nil, http.StatusTooManyRequests)
	require.Equal(t, "Confirmation resend cooldown active", r.Problem().Detail)
	require.NotEmpty(t, r.Header.Get("Retry-After"))
	clock.Advance(newsletter.ConfirmationResendCooldown + time.Second)
	out := notifytest.Decode[struct {
		SubscriberID string `json:"subscriberId"`
		RequestID    string `json:"requestId"`
		SentAt       string `json:"sentAt"`
		Sends        int    `json:"sends"`
	}](t, notifytest.Dash(t, operator, "POST", path, nil), http.StatusAccepted)
	require.Equal(t, x.ID, out.SubscriberID)
	require.Equal(t, 2, out.Sends)
	require.NotEmpty(t, out.RequestID)
	ms := waitMails(t, env, "slow@example.com", 2)
	_, first := confirmLink(t, ms[0])
	_, second := confirmLink(t, ms[1])
	require.NotEqual(t, first, second)
	n, actors := auditCount(t, env.Owner, "subscriber.resend_confirmation")
	require.Equal(t, 1, n)
	require.NotNil(t, actors[0])

	// The resent link confirms; then resend is refused (not pending).
	htmlPage(t, confirmPost(t, env, second), http.StatusOK, "Subscription confirmed")
	clock.Advance(newsletter.ConfirmationResendCooldown + time.Second)
	r = call(t, operator, "POST", path, nil, http.StatusConflict)
	require.Equal(t, "Subscriber is not pending confirmation", r.Problem().Detail)
	// The earlier link answers done too.
	htmlPage(t, confirmPost(t, env, first), http.StatusOK, "Subscription confirmed")

	// A subscriber created pending with the setting off gets its first
	// mail by resend.
	setOptIn(t, env.Owner, false)
	p := create(t, env.Owner, map[string]any{"channel": "email", "address": "manual@example.com", "consentStatus": "pending"})
	// Two resends at once: one mail, the other is within the cooldown.
	statuses := make(chan int, 2)
	for range 2 {
		go func() {
			r, err := env.Owner.Dashboard(context.Background(), "POST", "/v1/newsletter/subscribers/"+p.ID+"/resend-confirmation", nil)
			if err != nil {
				statuses <- 0
				return
			}
			statuses <- r.Status
		}()
	}
	got := []int{<-statuses, <-statuses}
	require.ElementsMatch(t, []int{http.StatusAccepted, http.StatusTooManyRequests}, got)
	_, tok := confirmLink(t, waitMails(t, env, "manual@example.com", 1)[0])
	htmlPage(t, confirmPost(t, env, tok), http.StatusOK, "Subscription confirmed")

	// Another workspace: its subscriber is 404 here, its settings its own.
	other, _ := env.NewWorkspace(t, "Other", "other-owner@example.com")
	call(t, other, "GET", "/v1/newsletter/settings", nil, http.StatusOK)
	require.JSONEq(t, `{"settings":{"doubleOptIn":false,"updatedAt":null}}`,
		string(call(t, other, "GET", "/v1/newsletter/settings", nil, http.StatusOK).Body))
	setOptIn(t, other, true)
	o := create(t, other, map[string]any{"channel": "email", "address": "theirs@example.com"})
	require.Equal(t, "pending", o.ConsentStatus)
	clock.Advance(newsletter.ConfirmationResendCooldown + time.Second)
	call(t, env.Owner, "POST", "/v1/newsletter/subscribers/"+o.ID+"/resend-confirmation", nil, http.StatusNotFound)
	call(t, env.Owner, "POST", "/v1/newsletter/subscribers/no-such-id/resend-confirmation", nil, http.StatusNotFound)
	r = call(t, env.Owner, "GET", "/v1/newsletter/settings", nil, http.StatusOK)
	require.Contains(t, string(r.Body), `"doubleOptIn":false`, "the other workspace's setting is its own")

	// Invalid bodies: 400 problem+json.
	for _, b := range []string{`{}`, `{"doubleOptIn":"yes"}`, `{"doubleOptIn":null}`, `{"doubleOptIn":true,"x":1}`, `[]`, `not json`} {
		call(t, env.Owner, "PATCH", "/v1/newsletter/settings", b, http.StatusBadRequest)
	}
	call(t, env.Owner, "POST", "/v1/newsletter/subscribers", `{"channel":"email","address":"a@example.com","confirmed":"yes"}`, http.StatusBadRequest)
	call(t, env.Owner, "POST", "/v1/newsletter/subscribers/import",
		`{"confirmed":1,"subscribers":[{"channel":"email","address":"a@example.com"}]}`, http.StatusBadRequest)
	call(t, env.Owner, "POST", "/v1/newsletter/subscribers/"+p.ID+"/resend-confirmation", `{"x":1}`, http.StatusBadRequest)
}

// TestOptInTokenOneSpelling is issue 29 finding 10: a confirmation token
// has one spelling. Its signature upper-cased is an invalid link that
// confirms nothing; the token as mailed still confirms.
func TestOptInTokenOneSpelling(t *testing.T) {
	t.Parallel()
	env := notifytest.StartDaemon(t)
	emailRoute(t, env, env.Owner)
	setOptIn(t, env.Owner, true)
	x := create(t, env.Owner, map[string]any{"channel": "email", "address": "case@example.com"})
	_, token := confirmLink(t, waitMails(t, env, "case@example.com", 1)[0])
	body, sig, _ := strings.Cut(token, ".")
	upper := body + "." + strings.ToUpper(sig)
	require.NotEqual(t, token, upper, "the signature has letters")

	htmlPage(t, confirmGet(t, env, upper), http.StatusBadRequest, "Link invalid")
	htmlPage(t, confirmPost(t, env, upper), http.StatusBadRequest, "Link invalid")
	require.Equal(t, "pending", get(t, env.Owner, x.ID).ConsentStatus)
	htmlPage(t, confirmPost(t, env, token), http.StatusOK, "Subscription confirmed")
	require.Equal(t, "subscribed", get(t, env.Owner, x.ID).ConsentStatus)
}
