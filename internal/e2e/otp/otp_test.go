package otp_test

import (
	"context"
	"io"
	"net/http"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/notifyd/notifyd/client"
	"github.com/notifyd/notifyd/internal/notify"
	"github.com/notifyd/notifyd/internal/notifytest"
	"github.com/notifyd/notifyd/internal/otp"
	"github.com/notifyd/notifyd/internal/secret"
	"github.com/notifyd/notifyd/internal/verification"
)

var ctx = context.Background()

type bundle struct {
	env         *notifytest.Env
	key         *client.Client
	smsProvider string
}

func setup(t *testing.T) *bundle {
	t.Helper()
	return setupAt(t, nil)
}

// setupAt starts a daemon on clock (nil: real time) whose API key client
// signs with the same clock.
func setupAt(t *testing.T, clock *notifytest.Clock, opts ...notifytest.Option) *bundle {
	t.Helper()
	var now func() time.Time
	if clock != nil {
		now = clock.Now
	}
	env := notifytest.StartDaemonAt(t, now, opts...)
	key, _ := env.APIKey(t, "otp", "otp:send", "otp:verify")
	return &bundle{env: env, key: key, smsProvider: env.SimRoute(t, "sms", "vendorb_sms", nil)}
}

type sendOut struct {
	VerificationID    string `json:"verificationId"`
	Status            string `json:"status"`
	Mode              string `json:"mode"`
	Channel           string `json:"channel"`
	ExpiresAt         string `json:"expiresAt"`
	ResendAvailableAt string `json:"resendAvailableAt"`
}

func (b *bundle) send(t *testing.T, body map[string]any) sendOut {
	t.Helper()
	return notifytest.Data[sendOut](t, notifytest.Signed(t, b.key, "POST", "/v1/otp", body), http.StatusCreated)
}

type verifyOut struct {
	Status            string  `json:"status"`
	VerificationToken string  `json:"verificationToken"`
	VerifiedAt        *string `json:"verifiedAt"`
	Reason            string  `json:"reason"`
	AttemptsRemaining int     `json:"attemptsRemaining"`
}

func (b *bundle) verify(t *testing.T, id, code string) verifyOut {
	t.Helper()
	r := notifytest.Signed(t, b.key, "POST", "/v1/otp/"+id+"/verify", map[string]any{"code": code})
	return notifytest.Data[verifyOut](t, r, http.StatusOK)
}

type getOut struct {
	VerificationID    string  `json:"verificationId"`
	Status            string  `json:"status"`
	Mode              string  `json:"mode"`
	RecipientMasked   string  `json:"recipientMasked"`
	Attempts          int     `json:"attempts"`
	ResendCount       int     `json:"resendCount"`
	VerifiedAt        *string `json:"verifiedAt"`
	VerificationToken string  `json:"verificationToken"`
}

func (b *bundle) get(t *testing.T, id string) getOut {
	t.Helper()
	return notifytest.Data[getOut](t, notifytest.Signed(t, b.key, "GET", "/v1/otp/"+id, nil), http.StatusOK)
}

// problem requires the problem answer status with code and detail.
func problem(t *testing.T, r *client.Response, status int, code, detail string) {
	t.Helper()
	require.Equal(t, detail, notifytest.RequireProblem(t, r, status, code).Detail, string(r.Body))
}

var codeRE = regexp.MustCompile(`code is (\d{6})`)
var linkRE = regexp.MustCompile(`/v1/otp/link/([A-Za-z0-9_-]+)`)

// lastText is the text of the newest simulator message to a number.
func (b *bundle) lastText(t *testing.T, to string) string {
	t.Helper()
	ms := b.env.Sim.Messages("vendorb_sms", to, 0)
	require.NotEmpty(t, ms)
	newest := ms[0]
	for _, m := range ms {
		if m.ReceivedAt.After(newest.ReceivedAt) {
			newest = m
		}
	}
	return newest.Text
}

func (b *bundle) code(t *testing.T, to string) string {
	t.Helper()
	m := codeRE.FindStringSubmatch(b.lastText(t, to))
	require.NotNil(t, m, b.lastText(t, to))
	return m[1]
}

func otpSecret(t *testing.T) []byte {
	k, err := secret.ParseKey("0000000000000000000000000000000000000000000000000000000000000001")
	require.NoError(t, err)
	return secret.Derive(k, verification.SigningLabel)
}

func wrong(code string) string {
	if code == "000000" {
		return "000001"
	}
	return "000000"
}

func TestCodeFlow(t *testing.T) {
	t.Parallel()
	b := setup(t)
	s := b.send(t, map[string]any{"channel": "sms", "to": "010-1234-5678", "purpose": "login", "brandName": "Acme"})
	require.Equal(t, "pending", s.Status)
	require.Equal(t, "code", s.Mode)
	require.Equal(t, "sms", s.Channel)
	exp, err := time.Parse(time.RFC3339, s.ExpiresAt)
	require.NoError(t, err)
	ra, err := time.Parse(time.RFC3339, s.ResendAvailableAt)
	require.NoError(t, err)
	require.InDelta(t, 150, exp.Sub(ra).Seconds(), 1)
	require.Contains(t, b.lastText(t, "01012345678"), "[Acme]")
	code := b.code(t, "01012345678")

	v := b.verify(t, s.VerificationID, wrong(code))
	require.Equal(t, verifyOut{Status: "failed", Reason: "invalid_code", AttemptsRemaining: 4}, v)
	v = b.verify(t, s.VerificationID, code)
	require.Equal(t, "verified", v.Status)
	require.NotNil(t, v.VerifiedAt)
	c, err := otp.VerifyToken(otpSecret(t), v.VerificationToken, time.Now())
	require.NoError(t, err)
	require.Equal(t, s.VerificationID, c.VID)
	require.Equal(t, b.env.Workspace, c.WSID)
	require.Equal(t, "login", c.Purpose)
	require.Equal(t, "sms", c.Channel)
	require.Equal(t, "*******5678", c.Sub)
	require.Equal(t, int64(300), c.EXP-c.IAT)

	// Verified again: idempotent with a newly signed token.
	v2 := b.verify(t, s.VerificationID, "whatever")
	require.Equal(t, "verified", v2.Status)
	_, err = otp.VerifyToken(otpSecret(t), v2.VerificationToken, time.Now())
	require.NoError(t, err)

	g := b.get(t, s.VerificationID)
	require.Equal(t, "verified", g.Status)
	require.Equal(t, "*******5678", g.RecipientMasked)
	require.Equal(t, 2, g.Attempts)
	require.NotEmpty(t, g.VerificationToken)

	// Resend on a verified session.
	problem(t, notifytest.Signed(t, b.key, "POST", "/v1/otp/"+s.VerificationID+"/resend", nil), 400, "SVC-40000", "OTP is already verified")
}

func TestTooManyAttempts(t *testing.T) {
	t.Parallel()
	b := setup(t)
	s := b.send(t, map[string]any{"channel": "sms", "to": "01022223333"})
	code := b.code(t, "01022223333")
	for i := 1; i <= 4; i++ {
		require.Equal(t, verifyOut{Status: "failed", Reason: "invalid_code", AttemptsRemaining: 5 - i}, b.verify(t, s.VerificationID, wrong(code)))
	}
	require.Equal(t, verifyOut{Status: "failed", Reason: "too_many_attempts"}, b.verify(t, s.VerificationID, wrong(code)))
	for range 2 {
		require.Equal(t, verifyOut{Status: "failed", Reason: "too_many_attempts"}, b.verify(t, s.VerificationID, code))
	}
	require.Equal(t, "failed", b.get(t, s.VerificationID).Status)
}

func TestConcurrentAttempts(t *testing.T) {
	t.Parallel()
	b := setup(t)
	s := b.send(t, map[string]any{"channel": "sms", "to": "01044445555"})
	code := b.code(t, "01044445555")
	var wg sync.WaitGroup
	var mu sync.Mutex
	invalid := 0
	for range 10 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r, err := b.key.Signed(ctx, "POST", "/v1/otp/"+s.VerificationID+"/verify", map[string]any{"code": wrong(code)})
			if err != nil || r.Status != http.StatusOK {
				return
			}
			var out verifyOut
			if r.Data(&out) == nil && out.Reason == "invalid_code" {
				mu.Lock()
				invalid++
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	require.LessOrEqual(t, invalid, 4)
	require.Equal(t, verifyOut{Status: "failed", Reason: "too_many_attempts"}, b.verify(t, s.VerificationID, code))
}

func TestResendAndLimits(t *testing.T) {
	t.Parallel()
	b := setup(t)
	s := b.send(t, map[string]any{"channel": "sms", "to": "010-7777-8888"})
	problem(t, notifytest.Signed(t, b.key, "POST", "/v1/otp/"+s.VerificationID+"/resend", nil), 429, "SVC-42900", "Resend cooldown active")
	problem(t, notifytest.Signed(t, b.key, "POST", "/v1/otp/00000000-0000-7000-8000-000000000000/resend", nil), 404, "SVC-40400",
		"OTP verification not found or expired")
	// Four more sends to the same recipient (written differently) fill the hour.
	for range 4 {
		b.send(t, map[string]any{"channel": "sms", "to": "01077778888"})
	}
	problem(t, notifytest.Signed(t, b.key, "POST", "/v1/otp", map[string]any{"channel": "sms", "to": "(010) 7777.8888"}), 429, "SVC-42900",
		"OTP send rate limit exceeded")
	// Another recipient is not limited.
	b.send(t, map[string]any{"channel": "sms", "to": "01077778889"})
}

func TestValidation(t *testing.T) {
	t.Parallel()
	b := setup(t)
	problem(t, notifytest.Signed(t, b.key, "POST", "/v1/otp", map[string]any{"channel": "msgr_alimtalk", "to": "01012345678"}), 400, "SVC-40000",
		"templateCode is required for msgr_alimtalk channel")
	r := notifytest.Signed(t, b.key, "POST", "/v1/otp", map[string]any{"channel": "msgr_alimtalk", "to": "01012345678", "templateCode": "missing"})
	require.Equal(t, 400, r.Status, string(r.Body))
	r = notifytest.Signed(t, b.key, "POST", "/v1/otp", map[string]any{"channel": "fax", "to": "01012345678"})
	require.Equal(t, 400, r.Status, string(r.Body))
	r = notifytest.Signed(t, b.key, "POST", "/v1/otp", map[string]any{"channel": "sms", "to": "01012345678", "purpose": strings.Repeat("p", 61)})
	require.Equal(t, 400, r.Status, string(r.Body))
	r = notifytest.Signed(t, b.key, "POST", "/v1/otp", map[string]any{"channel": "sms", "to": "01012345678", "bogus": 1})
	require.Equal(t, 400, r.Status, string(r.Body))
	// No email route: synchronous delivery failure, 502; the session is failed.
	r = notifytest.Signed(t, b.key, "POST", "/v1/otp", map[string]any{"channel": "email", "to": " AbcDef@Example.com "})
	require.Equal(t, 502, r.Status, string(r.Body))
	require.Equal(t, "SVC-50200", r.Problem().Code)
}

func TestLinkMode(t *testing.T) {
	t.Parallel()
	b := setup(t)
	s := b.send(t, map[string]any{"channel": "sms", "to": "01055556666", "mode": "link"})
	require.Equal(t, "link", s.Mode)
	m := linkRE.FindStringSubmatch(b.lastText(t, "01055556666"))
	require.NotNil(t, m, b.lastText(t, "01055556666"))
	url := b.env.Daemon.URL() + "/v1/otp/link/" + m[1]

	page := func(method, url string) (int, http.Header, string) {
		req, err := http.NewRequest(method, url, nil)
		require.NoError(t, err)
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		defer resp.Body.Close()
		body, err := io.ReadAll(resp.Body)
		require.NoError(t, err)
		return resp.StatusCode, resp.Header, string(body)
	}
	st, h, body := page("GET", url)
	require.Equal(t, 200, st)
	require.Equal(t, "text/html; charset=utf-8", h.Get("Content-Type"))
	require.Equal(t, "no-store", h.Get("Cache-Control"))
	require.Equal(t, "no-referrer", h.Get("Referrer-Policy"))
	require.Contains(t, h.Get("Content-Security-Policy"), "default-src 'none'")
	require.Contains(t, body, `method="post"`)
	require.NotContains(t, body, "<script")
	page("GET", url)
	require.Equal(t, "pending", b.get(t, s.VerificationID).Status, "GET never verifies")

	require.Equal(t, verifyOut{Status: "failed", Reason: "not_code_mode"}, b.verify(t, s.VerificationID, "123456"))

	st, _, body = page("POST", url)
	require.Equal(t, 200, st)
	require.Contains(t, body, "Verified")
	require.NotContains(t, strings.ToLower(body), "token", "the token is never shown to the browser")
	g := b.get(t, s.VerificationID)
	require.Equal(t, "verified", g.Status)
	c, err := otp.VerifyToken(otpSecret(t), g.VerificationToken, time.Now())
	require.NoError(t, err)
	require.Equal(t, s.VerificationID, c.VID)
	// POST again is idempotent.
	st, _, _ = page("POST", url)
	require.Equal(t, 200, st)
	// Unknown token: failure page.
	st, _, body = page("GET", b.env.Daemon.URL()+"/v1/otp/link/nope")
	require.Equal(t, 404, st)
	require.Contains(t, body, "invalid or has expired")
	st, _, _ = page("POST", b.env.Daemon.URL()+"/v1/otp/link/nope")
	require.Equal(t, 404, st)
}

func TestIsolation(t *testing.T) {
	t.Parallel()
	b := setup(t)
	s := b.send(t, map[string]any{"channel": "sms", "to": "01099990000"})
	other, _ := b.env.NewWorkspace(t, "Other", "other@example.com")
	key2, _, err := other.CreateAPIKey(ctx, "k", "otp:send", "otp:verify")
	require.NoError(t, err)
	b2 := &bundle{env: b.env, key: key2}
	problem(t, notifytest.Signed(t, b2.key, "GET", "/v1/otp/"+s.VerificationID, nil), 404, "SVC-40400", "OTP verification not found")
	problem(t, notifytest.Signed(t, b2.key, "POST", "/v1/otp/"+s.VerificationID+"/resend", nil), 404, "SVC-40400", "OTP verification not found or expired")
	require.Equal(t, verifyOut{Status: "failed", Reason: "expired"}, b2.verify(t, s.VerificationID, "123456"))
	problem(t, notifytest.Signed(t, b.key, "GET", "/v1/otp/not-a-uuid", nil), 404, "SVC-40400", "OTP verification not found")
	require.Equal(t, 0, b.get(t, s.VerificationID).Attempts)
}

func TestMasking(t *testing.T) {
	t.Parallel()
	require.Equal(t, "*******5678", otp.Mask("sms", otp.Normalize("sms", "010-1234-5678")))
	require.Equal(t, "ab****@example.com", otp.Mask("email", otp.Normalize("email", " AbcDef@Example.com ")))
}

// TestDefaultTexts pins the built-in messages: brand, code or link and the
// minutes left; email has a subject, a text and an HTML part.
func TestDefaultTexts(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.emailRoute(t)

	b.send(t, map[string]any{"channel": "sms", "to": "01012120000", "brandName": "Acme"})
	code := b.code(t, "01012120000")
	require.Equal(t, "[Acme] Your verification code is "+code+" (valid for 3 minutes)", b.lastText(t, "01012120000"))
	b.send(t, map[string]any{"channel": "sms", "to": "01012120001"})
	require.Equal(t, "Your verification code is "+b.code(t, "01012120001")+" (valid for 3 minutes)", b.lastText(t, "01012120001"),
		"no brand: no brackets")

	b.send(t, map[string]any{"channel": "email", "to": "mail.code@example.com", "brandName": "Acme <&>"})
	m := b.simMail(t, "mail.code@example.com")
	require.Equal(t, "[Acme <&>] Verification", m.Subject)
	mc := codeRE.FindStringSubmatch(m.Text)
	require.NotNil(t, mc, m.Text)
	require.Equal(t, "[Acme <&>] Your verification code is "+mc[1]+" (valid for 3 minutes)", m.Text)
	require.Contains(t, m.HTML, "<strong>"+mc[1]+"</strong>")
	require.Contains(t, m.HTML, "[Acme &lt;&amp;&gt;]", "the brand is escaped in HTML")
	require.Contains(t, m.HTML, "valid for 3 minutes")

	b.send(t, map[string]any{"channel": "email", "to": "mail.link@example.com", "mode": "link"})
	m = b.simMail(t, "mail.link@example.com")
	require.Equal(t, "Verification", m.Subject)
	require.Regexp(t, `^Open this link to verify: http://\S+/v1/otp/link/[A-Za-z0-9_-]{43} \(valid for 3 minutes\)$`, m.Text)
	require.Contains(t, m.HTML, `<a href="http://`)
	require.Contains(t, m.HTML, "valid for 3 minutes")
}

// TestAlimtalkVariables: a messenger OTP goes through the approved
// template; code, brand and minutes (and link in link mode) are filled by
// the server over the caller's values.
func TestAlimtalkVariables(t *testing.T) {
	t.Parallel()
	b := setup(t)
	own := b.env.Owner
	msgr := b.env.SimRoute(t, "msgr_alimtalk", "vendorb_msgr", nil)
	var tp struct {
		Template struct {
			ID string `json:"id"`
		} `json:"template"`
	}
	for _, c := range []struct{ code, text string }{
		{"otp", "[{{brand}}] 인증번호 {{code}} ({{minutes}}분) {{extra}}"},
		{"otplink", "[{{brand}}] {{link}} ({{minutes}}분)"},
	} {
		r, err := own.Dashboard(ctx, "POST", "/v1/templates", map[string]any{"code": c.code, "channel": "msgr_alimtalk", "name": c.code,
			"providerAccountId": msgr, "vendorTemplateId": "TP-" + c.code, "senderProfileKey": "PF-1"})
		require.NoError(t, err)
		require.Equal(t, http.StatusCreated, r.Status, string(r.Body))
		require.NoError(t, r.Decode(&tp))
		id := tp.Template.ID
		for _, step := range []struct {
			method, path string
			body         any
		}{
			{"POST", "/v1/templates/" + id + "/versions", map[string]any{"text": c.text}},
			{"POST", "/v1/templates/" + id + "/versions/1/publish", nil},
		} {
			r, err = own.Dashboard(ctx, step.method, step.path, step.body)
			require.NoError(t, err)
			require.Less(t, r.Status, 300, string(r.Body))
		}
		// Not yet approved: 400, nothing sent.
		problemStatus := notifytest.Signed(t, b.key, "POST", "/v1/otp", map[string]any{"channel": "msgr_alimtalk", "to": "01013130000", "templateCode": c.code})
		require.Equal(t, http.StatusBadRequest, problemStatus.Status, string(problemStatus.Body))
		r, err = own.Dashboard(ctx, "PUT", "/v1/templates/"+id+"/review-status", map[string]any{"reviewStatus": "APPROVED"})
		require.NoError(t, err)
		require.Equal(t, http.StatusOK, r.Status, string(r.Body))
	}
	require.Empty(t, b.env.Sim.Messages("vendorb_msgr", "", 0))

	b.send(t, map[string]any{"channel": "msgr_alimtalk", "to": "010-1313-0000", "templateCode": "otp", "brandName": "Acme",
		"templateVariables": map[string]string{"code": "999999", "brand": "Evil", "minutes": "60", "extra": "x"}})
	ms := b.env.Sim.Messages("vendorb_msgr", "01013130000", 0)
	require.Len(t, ms, 1)
	m := ms[0]
	code := m.Headers["variables.#{code}"]
	require.Regexp(t, `^\d{6}$`, code)
	require.NotEqual(t, "999999", code)
	require.Equal(t, "Acme", m.Headers["variables.#{brand}"])
	require.Equal(t, "3", m.Headers["variables.#{minutes}"])
	require.Equal(t, "x", m.Headers["variables.#{extra}"])
	require.Equal(t, "TP-otp", m.Headers["templateId"])
	require.Equal(t, "[Acme] 인증번호 "+code+" (3분) x", m.Text)

	s := b.send(t, map[string]any{"channel": "msgr_alimtalk", "to": "01013130001", "templateCode": "otplink", "mode": "link",
		"templateVariables": map[string]string{"link": "https://evil.example/", "code": "999999"}})
	ms = b.env.Sim.Messages("vendorb_msgr", "01013130001", 0)
	require.Len(t, ms, 1)
	link := ms[0].Headers["variables.#{link}"]
	require.Regexp(t, `^http://\S+/v1/otp/link/[A-Za-z0-9_-]{43}$`, link)
	require.Equal(t, "link", s.Mode)
	require.Equal(t, "", ms[0].Headers["variables.#{code}"], "no caller code in a link message")
}

// session reads a session straight from the store, to see what is kept.
func (b *bundle) session(t *testing.T, id string) *notify.OTPSession {
	t.Helper()
	var s *notify.OTPSession
	require.NoError(t, b.env.Daemon.DB.View(ctx, func(tx notify.Tx) error {
		var err error
		s, err = tx.FindOTPSession(ctx, b.env.Workspace, id)
		return err
	}))
	return s
}

func (b *bundle) request(t *testing.T, id string) *notify.Request {
	t.Helper()
	var r *notify.Request
	require.NoError(t, b.env.Daemon.DB.View(ctx, func(tx notify.Tx) error {
		var err error
		r, err = tx.FindRequest(ctx, b.env.Workspace, id)
		return err
	}))
	return r
}

// TestStoredSecrets: the code is kept only as a session-bound HMAC (gone
// after success), the link token only as its SHA-256; the recorded request
// holds neither.
func TestStoredSecrets(t *testing.T) {
	t.Parallel()
	b := setup(t)
	s := b.send(t, map[string]any{"channel": "sms", "to": "01020202020", "brandName": "Acme"})
	code := b.code(t, "01020202020")
	sess := b.session(t, s.VerificationID)
	require.Len(t, sess.CodeHash, 64)
	require.NotContains(t, sess.CodeHash, code)
	require.Empty(t, sess.LinkHash)
	req := b.request(t, sess.RequestID)
	require.Equal(t, s.VerificationID, req.Metadata["otpVerificationId"])
	require.Equal(t, "[Acme] Your verification code is [redacted] (valid for 3 minutes)", req.Text)
	require.Equal(t, "[redacted]", req.TemplateVariables["code"])
	require.Equal(t, "verified", b.verify(t, s.VerificationID, code).Status)
	require.Empty(t, b.session(t, s.VerificationID).CodeHash, "code hash removed on success")

	l := b.send(t, map[string]any{"channel": "sms", "to": "01020202021", "mode": "link"})
	tok := linkRE.FindStringSubmatch(b.lastText(t, "01020202021"))[1]
	sess = b.session(t, l.VerificationID)
	require.Equal(t, otp.HashLinkToken(tok), sess.LinkHash)
	require.Empty(t, sess.CodeHash)
	req = b.request(t, sess.RequestID)
	require.NotContains(t, req.Text, tok)
	require.NotContains(t, req.TemplateVariables["link"], tok)
}

// TestSyncDeliveryFailure: when every route fails the send answers 502
// with the reason, and the session is failed with no secret kept.
func TestSyncDeliveryFailure(t *testing.T) {
	t.Parallel()
	b := setup(t)
	resp, err := http.Post(b.env.SimURL+"/_sim/faults", "application/json", strings.NewReader(`{"kind":"vendorb_sms","status":400}`))
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusCreated, resp.StatusCode)
	r := notifytest.Signed(t, b.key, "POST", "/v1/otp", map[string]any{"channel": "sms", "to": "01030303030"})
	require.Equal(t, http.StatusBadGateway, r.Status, string(r.Body))
	require.Equal(t, "SVC-50200", r.Problem().Code)
	require.NotEmpty(t, r.Problem().Detail)

	a, err := b.env.Owner.Dashboard(ctx, "GET", "/v1/attempts", nil)
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, a.Status, string(a.Body))
	var attempts struct {
		Attempts []struct {
			NotificationRequestID string `json:"notificationRequestId"`
			Status                string `json:"status"`
		} `json:"attempts"`
	}
	require.NoError(t, a.Decode(&attempts))
	require.Len(t, attempts.Attempts, 1)
	require.Equal(t, "failure", attempts.Attempts[0].Status)
	req := b.request(t, attempts.Attempts[0].NotificationRequestID)
	require.Equal(t, "failed", string(req.Status))
	sess := b.session(t, req.Metadata["otpVerificationId"])
	require.Equal(t, "failed", sess.Status)
	require.Empty(t, sess.CodeHash)
	// A failed session cannot be verified or resent: a new send is required.
	require.Equal(t, verifyOut{Status: "failed", Reason: "expired"}, b.verify(t, sess.ID, "123456"))
	problem(t, notifytest.Signed(t, b.key, "POST", "/v1/otp/"+sess.ID+"/resend", nil), 404, "SVC-40400", "OTP verification not found or expired")
	require.Equal(t, "failed", b.get(t, sess.ID).Status)
	b.send(t, map[string]any{"channel": "sms", "to": "01030303030"})
}

// TestScopes: send and resend need otp:send; verify and lookup otp:verify.
func TestScopes(t *testing.T) {
	t.Parallel()
	b := setup(t)
	s := b.send(t, map[string]any{"channel": "sms", "to": "01014141414"})
	sendOnly, _, err := b.env.Owner.CreateAPIKey(ctx, "send", "otp:send")
	require.NoError(t, err)
	verifyOnly, _, err := b.env.Owner.CreateAPIKey(ctx, "verify", "otp:verify")
	require.NoError(t, err)
	for _, c := range []struct {
		key          *client.Client
		method, path string
		body         any
	}{
		{sendOnly, "POST", "/v1/otp/" + s.VerificationID + "/verify", map[string]any{"code": "123456"}},
		{sendOnly, "GET", "/v1/otp/" + s.VerificationID, nil},
		{verifyOnly, "POST", "/v1/otp", map[string]any{"channel": "sms", "to": "01014141415"}},
		{verifyOnly, "POST", "/v1/otp/" + s.VerificationID + "/resend", nil},
	} {
		r, err := c.key.Signed(ctx, c.method, c.path, c.body)
		require.NoError(t, err)
		require.Equal(t, http.StatusForbidden, r.Status, c.path)
	}
	require.Equal(t, 0, b.get(t, s.VerificationID).Attempts, "a refused verify uses no attempt")
	r, err := verifyOnly.Signed(ctx, "GET", "/v1/otp/"+s.VerificationID, nil)
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, r.Status)
}

// TestRecipientFormat: `to` is a phone number for sms and msgr_alimtalk and
// an email address for email (SPEC "Send" body: "phone or email"); anything
// else is a 400 before any provider is called, not a 502 from the vendor.
func TestRecipientFormat(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.emailRoute(t)
	for _, c := range []struct{ channel, to, detail string }{
		{"sms", "hello", "to must be a phone number for channel sms"},
		{"sms", "010-1234-567x", "to must be a phone number for channel sms"},
		{"sms", "user@example.com", "to must be a phone number for channel sms"},
		{"sms", "+", "to must be a phone number for channel sms"},
		{"email", "a@", "to must be an email address for channel email"},
		{"email", "@example.com", "to must be an email address for channel email"},
		{"email", "user@localhost", "to must be an email address for channel email"},
		{"email", "Bob <bob@example.com>", "to must be an email address for channel email"},
		{"email", "01012345678", "to must be an email address for channel email"},
		// Normalizing would drop a line break: it is refused first.
		{"sms", "010\r\n12345678", "to must not contain control characters"},
		{"email", "a@example.com\r\nBcc: b@example.com", "to must not contain control characters"},
	} {
		problem(t, notifytest.Signed(t, b.key, "POST", "/v1/otp", map[string]any{"channel": c.channel, "to": c.to}), 400, "SVC-40000", c.detail)
	}
	require.Empty(t, b.env.Sim.Messages("vendorb_sms", "", 0), "nothing reached the vendor")
	// Written with separators or a country code, a number is accepted.
	b.send(t, map[string]any{"channel": "sms", "to": "+82 (10) 1234.5678"})
	b.send(t, map[string]any{"channel": "email", "to": " First.Last+otp@Example.co.kr "})
}

// TestTemplateCodeRequired: a msgr_alimtalk send without a templateCode
// (absent, empty or blank) answers SPEC's detail, also when other fields
// are missing too.
func TestTemplateCodeRequired(t *testing.T) {
	t.Parallel()
	b := setup(t)
	const detail = "templateCode is required for msgr_alimtalk channel"
	for _, body := range []map[string]any{
		{"channel": "msgr_alimtalk", "to": "01012345678"},
		{"channel": "msgr_alimtalk", "to": "01012345678", "templateCode": ""},
		{"channel": "msgr_alimtalk", "to": "01012345678", "templateCode": "   "},
		{"channel": "msgr_alimtalk", "to": "01012345678", "mode": "link"},
		{"channel": "msgr_alimtalk"},
	} {
		problem(t, notifytest.Signed(t, b.key, "POST", "/v1/otp", body), 400, "SVC-40000", detail)
	}
}

// TestVerifyNeedsCode: a verify body without a code (absent, null or
// empty) is a body validation failure, 400 SVC-40000, and spends no
// attempt; a wrong code is still a 200 result.
func TestVerifyNeedsCode(t *testing.T) {
	t.Parallel()
	b := setup(t)
	s := b.send(t, map[string]any{"channel": "sms", "to": "01015151515"})
	for _, body := range []any{map[string]any{}, map[string]any{"code": nil}, map[string]any{"code": ""}} {
		problem(t, notifytest.Signed(t, b.key, "POST", "/v1/otp/"+s.VerificationID+"/verify", body), 400, "SVC-40000", "code is required")
	}
	require.Equal(t, 0, b.get(t, s.VerificationID).Attempts, "no attempt spent")
	code := b.code(t, "01015151515")
	require.Equal(t, verifyOut{Status: "failed", Reason: "invalid_code", AttemptsRemaining: 4}, b.verify(t, s.VerificationID, wrong(code)))
	require.Equal(t, "verified", b.verify(t, s.VerificationID, code).Status)
}
