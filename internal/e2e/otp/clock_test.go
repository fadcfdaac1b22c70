package otp_test

import (
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/notifyd/notifyd/internal/notifytest"
	"github.com/notifyd/notifyd/internal/otp"
)

func (b *bundle) resend(t *testing.T, id string) sendOut {
	t.Helper()
	return notifytest.Data[sendOut](t, notifytest.Signed(t, b.key, "POST", "/v1/otp/"+id+"/resend", nil), http.StatusOK)
}

func parseTime(t *testing.T, s string) time.Time {
	t.Helper()
	v, err := time.Parse(time.RFC3339, s)
	require.NoError(t, err)
	return v
}

// TestResendCooldownAndMaximum walks a session through its three resends:
// each waits out the 30 s cooldown, rotates the code, resets attempts and
// restarts the TTL; the fourth is refused.
func TestResendCooldownAndMaximum(t *testing.T) {
	t.Parallel()
	clock := &notifytest.Clock{}
	b := setupAt(t, clock)
	const to = "01031313131"
	s := b.send(t, map[string]any{"channel": "sms", "to": to, "brandName": "Acme"})
	code := b.code(t, to)
	resendPath := "/v1/otp/" + s.VerificationID + "/resend"

	clock.AdvanceTo(parseTime(t, s.ResendAvailableAt).Add(-10 * time.Second)) // margin for slow runs (-race)
	problem(t, notifytest.Signed(t, b.key, "POST", resendPath, nil), 429, "SVC-42900", "Resend cooldown active")
	require.Equal(t, verifyOut{Status: "failed", Reason: "invalid_code", AttemptsRemaining: 4}, b.verify(t, s.VerificationID, wrong(code)))

	for i := 1; i <= 3; i++ {
		clock.Advance(30 * time.Second)
		before := clock.Now()
		r := b.resend(t, s.VerificationID)
		require.Equal(t, s.VerificationID, r.VerificationID)
		require.Equal(t, "pending", r.Status)
		require.Equal(t, "code", r.Mode)
		require.Equal(t, "sms", r.Channel)
		exp, ra := parseTime(t, r.ExpiresAt), parseTime(t, r.ResendAvailableAt)
		require.WithinRange(t, exp, before.Add(179*time.Second), before.Add(190*time.Second), "TTL restarts")
		require.Equal(t, 150*time.Second, exp.Sub(ra), "cooldown restarts")
		g := b.get(t, s.VerificationID)
		require.Equal(t, i, g.ResendCount)
		require.Equal(t, 0, g.Attempts, "attempts reset to 0")
		// The resend goes out with the same brand.
		require.Contains(t, b.lastText(t, to), "[Acme]")
		next := b.code(t, to)
		if next != code { // a fresh 6-digit code equals the old one once in a million
			require.Equal(t, verifyOut{Status: "failed", Reason: "invalid_code", AttemptsRemaining: 4}, b.verify(t, s.VerificationID, code),
				"the previous code is invalid at once")
		}
		code = next
		// Within the new cooldown a resend is refused again (after the
		// third, the maximum is what refuses).
		if i < 3 {
			problem(t, notifytest.Signed(t, b.key, "POST", resendPath, nil), 429, "SVC-42900", "Resend cooldown active")
		}
	}
	problem(t, notifytest.Signed(t, b.key, "POST", resendPath, nil), 429, "SVC-42900", "Maximum resend count exceeded")
	clock.Advance(30 * time.Second)
	problem(t, notifytest.Signed(t, b.key, "POST", resendPath, nil), 429, "SVC-42900", "Maximum resend count exceeded")
	require.Equal(t, 3, b.get(t, s.VerificationID).ResendCount)

	v := b.verify(t, s.VerificationID, code)
	require.Equal(t, "verified", v.Status)
	_, err := otp.VerifyToken(otpSecret(t), v.VerificationToken, clock.Now())
	require.NoError(t, err)
}

// TestExpiry: after the 180 s TTL verify answers expired, the status
// lookup turns the session expired lazily, resend refuses, and link pages
// fail.
func TestExpiry(t *testing.T) {
	t.Parallel()
	clock := &notifytest.Clock{}
	b := setupAt(t, clock)

	// Status lookup first.
	a := b.send(t, map[string]any{"channel": "sms", "to": "01041414141"})
	clock.AdvanceTo(parseTime(t, a.ExpiresAt).Add(-10 * time.Second)) // margin for slow runs (-race)
	require.Equal(t, "pending", b.get(t, a.VerificationID).Status)
	clock.AdvanceTo(parseTime(t, a.ExpiresAt).Add(time.Millisecond)) // JSON times are truncated to ms
	require.Equal(t, "expired", b.get(t, a.VerificationID).Status, "expired at expiresAt, evaluated at lookup")
	require.Equal(t, verifyOut{Status: "failed", Reason: "expired"}, b.verify(t, a.VerificationID, b.code(t, "01041414141")))
	problem(t, notifytest.Signed(t, b.key, "POST", "/v1/otp/"+a.VerificationID+"/resend", nil), 400, "SVC-40000", "OTP has expired")
	require.Equal(t, "expired", b.get(t, a.VerificationID).Status)

	// Verify first (the correct code), then resend, then lookup.
	c := b.send(t, map[string]any{"channel": "sms", "to": "01042424242"})
	code := b.code(t, "01042424242")
	clock.Advance(181 * time.Second)
	require.Equal(t, verifyOut{Status: "failed", Reason: "expired"}, b.verify(t, c.VerificationID, code))
	problem(t, notifytest.Signed(t, b.key, "POST", "/v1/otp/"+c.VerificationID+"/resend", nil), 400, "SVC-40000", "OTP has expired")
	g := b.get(t, c.VerificationID)
	require.Equal(t, "expired", g.Status)
	require.Equal(t, 0, g.Attempts, "an expired verify uses no attempt")
	require.Empty(t, g.VerificationToken)

	// Resend first on a pending session past its expiry.
	d := b.send(t, map[string]any{"channel": "sms", "to": "01043434343"})
	clock.Advance(200 * time.Second)
	problem(t, notifytest.Signed(t, b.key, "POST", "/v1/otp/"+d.VerificationID+"/resend", nil), 400, "SVC-40000", "OTP has expired")
	require.Equal(t, "expired", b.get(t, d.VerificationID).Status)

	// Link mode: the page and the POST fail once expired.
	l := b.send(t, map[string]any{"channel": "sms", "to": "01044444444", "mode": "link"})
	m := linkRE.FindStringSubmatch(b.lastText(t, "01044444444"))
	require.NotNil(t, m)
	url := b.env.Daemon.URL() + "/v1/otp/link/" + m[1]
	clock.Advance(180 * time.Second)
	for _, method := range []string{"GET", "POST"} {
		req, err := http.NewRequest(method, url, nil)
		require.NoError(t, err)
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		resp.Body.Close()
		require.Equal(t, http.StatusNotFound, resp.StatusCode, method)
	}
	require.Equal(t, "expired", b.get(t, l.VerificationID).Status)
}

// TestVerifiedTokenExpiry: the token lives 300 s; a lookup signs a fresh one.
func TestVerifiedTokenExpiry(t *testing.T) {
	t.Parallel()
	clock := &notifytest.Clock{}
	b := setupAt(t, clock)
	s := b.send(t, map[string]any{"channel": "sms", "to": "01051515151"})
	v := b.verify(t, s.VerificationID, b.code(t, "01051515151"))
	require.Equal(t, "verified", v.Status)
	c0, err := otp.VerifyToken(otpSecret(t), v.VerificationToken, clock.Now())
	require.NoError(t, err)
	require.Equal(t, int64(300), c0.EXP-c0.IAT)
	_, err = otp.VerifyToken(otpSecret(t), v.VerificationToken, time.Unix(c0.EXP-1, 0))
	require.NoError(t, err)
	_, err = otp.VerifyToken(otpSecret(t), v.VerificationToken, time.Unix(c0.EXP, 0))
	require.ErrorIs(t, err, otp.ErrExpired)
	// A verified session never expires; its lookup re-signs.
	clock.Advance(400 * time.Second)
	g := b.get(t, s.VerificationID)
	require.Equal(t, "verified", g.Status)
	c, err := otp.VerifyToken(otpSecret(t), g.VerificationToken, clock.Now())
	require.NoError(t, err)
	require.InDelta(t, clock.Now().Unix(), c.IAT, 2)
}

// TestSendLimitWindows: 5 sends per recipient per UTC hour and 10 per UTC
// day, resend included; the counters restart at the next hour and day.
func TestSendLimitWindows(t *testing.T) {
	t.Parallel()
	clock := &notifytest.Clock{}
	b := setupAt(t, clock)
	// Start at 00:05 UTC of a coming day, so the hours below stay in one day.
	day := time.Now().UTC().Truncate(24*time.Hour).AddDate(0, 0, 2)
	clock.AdvanceTo(day.Add(5 * time.Minute))
	const to = "010-6161-6161"
	limited := func() {
		t.Helper()
		problem(t, notifytest.Signed(t, b.key, "POST", "/v1/otp", map[string]any{"channel": "sms", "to": to}), 429, "SVC-42900", "OTP send rate limit exceeded")
	}
	first := b.send(t, map[string]any{"channel": "sms", "to": to})
	for range 3 {
		b.send(t, map[string]any{"channel": "sms", "to": to})
	}
	clock.Advance(31 * time.Second)
	b.resend(t, first.VerificationID) // the fifth send of the hour
	limited()
	clock.Advance(30 * time.Second)
	problem(t, notifytest.Signed(t, b.key, "POST", "/v1/otp/"+first.VerificationID+"/resend", nil), 429, "SVC-42900", "OTP send rate limit exceeded")

	clock.AdvanceTo(day.Add(time.Hour + time.Minute)) // next UTC hour
	for range 5 {
		b.send(t, map[string]any{"channel": "sms", "to": to})
	}
	limited()
	clock.AdvanceTo(day.Add(2*time.Hour + time.Minute))
	limited() // 10 today: the daily limit holds in a fresh hour
	b.send(t, map[string]any{"channel": "sms", "to": "01061616162"})

	clock.AdvanceTo(day.Add(24*time.Hour + time.Minute)) // next UTC day
	b.send(t, map[string]any{"channel": "sms", "to": to})
}

// TestCleanup: the periodic cleanup deletes sessions 24 h after their
// expiry, and counters of ended windows, so the limits start afresh.
func TestCleanup(t *testing.T) {
	t.Parallel()
	clock := &notifytest.Clock{}
	b := setupAt(t, clock)
	day := time.Now().UTC().Truncate(24*time.Hour).AddDate(0, 0, 2)
	clock.AdvanceTo(day.Add(10 * time.Hour))
	old := b.send(t, map[string]any{"channel": "sms", "to": "01081818181"})
	v := b.verify(t, old.VerificationID, b.code(t, "01081818181"))
	require.Equal(t, "verified", v.Status)
	var last sendOut
	for range 4 {
		last = b.send(t, map[string]any{"channel": "sms", "to": "01081818181"})
	}
	// Margins of tens of seconds: under -race on a busy machine the calls
	// take a while of real time, which the clock includes.
	clock.AdvanceTo(parseTime(t, old.ExpiresAt).Add(24*time.Hour - 30*time.Second))
	recent := b.send(t, map[string]any{"channel": "sms", "to": "01082828282"})

	sessions, counters, err := b.env.Daemon.Rooms.Verification.CleanupOTP(ctx)
	require.NoError(t, err)
	require.Equal(t, 0, sessions, "kept until 24 h after expiry")
	require.Equal(t, 1, counters, "yesterday's hourly counter; its daily one is kept a day longer")
	clock.AdvanceTo(parseTime(t, last.ExpiresAt).Add(24*time.Hour + time.Second))
	sessions, _, err = b.env.Daemon.Rooms.Verification.CleanupOTP(ctx)
	require.NoError(t, err)
	require.Equal(t, 5, sessions)
	problem(t, notifytest.Signed(t, b.key, "GET", "/v1/otp/"+old.VerificationID, nil), 404, "SVC-40400", "OTP verification not found")
	require.Equal(t, "pending", b.get(t, recent.VerificationID).Status)
}

// TestLinkResend: a resend in link mode sends a new link; the old one
// fails at once, the new one completes.
func TestLinkResend(t *testing.T) {
	t.Parallel()
	clock := &notifytest.Clock{}
	b := setupAt(t, clock)
	const to = "01071717171"
	s := b.send(t, map[string]any{"channel": "sms", "to": to, "mode": "link"})
	old := linkRE.FindStringSubmatch(b.lastText(t, to))[1]
	clock.Advance(30 * time.Second)
	r := b.resend(t, s.VerificationID)
	require.Equal(t, "link", r.Mode)
	fresh := linkRE.FindStringSubmatch(b.lastText(t, to))[1]
	require.NotEqual(t, old, fresh)
	status := func(method, tok string) int {
		req, err := http.NewRequest(method, b.env.Daemon.URL()+"/v1/otp/link/"+tok, nil)
		require.NoError(t, err)
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		resp.Body.Close()
		return resp.StatusCode
	}
	require.Equal(t, http.StatusNotFound, status("GET", old))
	require.Equal(t, http.StatusNotFound, status("POST", old))
	require.Equal(t, "pending", b.get(t, s.VerificationID).Status)
	require.Equal(t, http.StatusOK, status("GET", fresh))
	require.Equal(t, http.StatusOK, status("POST", fresh))
	require.Equal(t, "verified", b.get(t, s.VerificationID).Status)
	require.Equal(t, http.StatusOK, status("POST", fresh), "idempotent")
	require.Equal(t, http.StatusNotFound, status("POST", old))
}
