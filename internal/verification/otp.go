package verification

import (
	"context"
	"errors"
	"fmt"
	"html"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/notifyd/notifyd/internal/compose"
	"github.com/notifyd/notifyd/internal/mailcheck"
	"github.com/notifyd/notifyd/internal/notify"
	"github.com/notifyd/notifyd/internal/otp"
	"github.com/notifyd/notifyd/internal/usecase"
)

// OTPSendInput is the body of an OTP send.
type OTPSendInput struct {
	Channel                     string
	To                          *string
	Mode                        string
	Purpose                     string
	BrandName                   string
	RecipientName               string
	TemplateCode                string
	TemplateVariables           map[string]string
	PreferredProviderAccountIDs []string
	// ClientIP is the end user's address as the caller saw it (optional;
	// the OTP fraud guard's client-address rule counts it).
	ClientIP string
}

// OTPSendResult is the answer of send and resend.
type OTPSendResult struct {
	VerificationID    string
	Status            string
	Mode              string
	Channel           string
	ExpiresAt         time.Time
	ResendAvailableAt time.Time
}

// OTPVerifyResult is the answer of verify (always HTTP 200).
type OTPVerifyResult struct {
	Status            string // verified | failed
	VerificationToken string
	VerifiedAt        *time.Time
	Reason            string
	AttemptsRemaining int
}

// OTPView is the status lookup of a session.
type OTPView struct {
	Session           *notify.OTPSession
	VerificationToken string
}

// otpSend is what a send or resend needs for delivery, kept between
// the transactions.
type otpSend struct {
	req    *notify.Request // the message, secret included
	job    *notify.Job
	secret []string // plaintext code or link token, redacted before storage
}

func otpRateLimited() error {
	return notify.Errorf(notify.CodeTooManyRequests, "OTP send rate limit exceeded")
}

// countOTPSend increments the hourly and daily counters of a recipient in
// tx and refuses (rolling the increments back with the transaction) when
// either is over its limit.
func (s *Service) countOTPSend(ctx context.Context, tx notify.Tx, ws, recipient string, now time.Time) error {
	hs, _ := otp.HourWindow(now)
	ds, _ := otp.DayWindow(now)
	n, err := tx.IncrementOTPSendCount(ctx, ws, recipient, notify.OTPWindowHour, hs)
	if err != nil {
		return err
	}
	if n > s.policy.SendsPerHour {
		return otpRateLimited()
	}
	if n, err = tx.IncrementOTPSendCount(ctx, ws, recipient, notify.OTPWindowDay, ds); err != nil {
		return err
	}
	if n > s.policy.SendsPerDay {
		return otpRateLimited()
	}
	return nil
}

// otpPhoneRE is a phone number once spaces, parentheses, dots and hyphens
// are removed: digits with an optional leading '+'. Anything else (a name,
// an email address) is refused with 400 rather than handed to the vendor.
var otpPhoneRE = regexp.MustCompile(`^\+?[0-9]{4,20}$`)

func (s *Service) validateOTPSend(in *OTPSendInput) (notify.Channel, string, error) {
	switch in.Channel {
	case "":
		return "", "", notify.Invalid("channel is required")
	case string(notify.ChannelSMS), string(notify.ChannelAlimTalk), string(notify.ChannelEmail):
	default:
		return "", "", notify.Invalid("channel must be one of sms, msgr_alimtalk, email")
	}
	ch := notify.Channel(in.Channel)
	// SPEC's one detail string of OTP send validation; checked before the
	// other fields so that it is the answer whenever templateCode is
	// missing (a blank code is as missing as an absent one).
	if ch == notify.ChannelAlimTalk && strings.TrimSpace(in.TemplateCode) == "" {
		return "", "", notify.Invalid("templateCode is required for msgr_alimtalk channel")
	}
	if in.To == nil || strings.TrimSpace(*in.To) == "" {
		return "", "", notify.Invalid("to is required")
	}
	for _, c := range []struct {
		f, v string
		n    int
	}{{"to", *in.To, 320}, {"purpose", in.Purpose, 60}, {"brandName", in.BrandName, 20}, {"recipientName", in.RecipientName, 120},
		{"templateCode", in.TemplateCode, 120}} {
		if err := usecase.MaxLen(c.f, c.v, c.n); err != nil {
			return "", "", err
		}
	}
	// Checked before normalizing, which would drop a line break from to.
	for _, c := range []struct{ f, v string }{{"to", *in.To}, {"recipientName", in.RecipientName}, {"brandName", in.BrandName}, {"purpose", in.Purpose}} {
		if err := usecase.OneLine(c.f, c.v); err != nil {
			return "", "", err
		}
	}
	if err := compose.CheckVariables("templateVariables", in.TemplateVariables); err != nil {
		return "", "", err
	}
	switch in.Mode {
	case "":
		in.Mode = notify.OTPModeCode
	case notify.OTPModeCode, notify.OTPModeLink:
	default:
		return "", "", notify.Invalid("mode must be one of code, link")
	}
	if len(in.PreferredProviderAccountIDs) > 10 {
		return "", "", notify.Invalid("preferredProviderAccountIds must hold at most 10 ids")
	}
	for _, id := range in.PreferredProviderAccountIDs {
		if _, err := uuid.Parse(id); err != nil || len(id) != 36 {
			return "", "", notify.Invalid("preferredProviderAccountIds must hold UUIDs")
		}
	}
	rcpt := otp.Normalize(ch, *in.To)
	if rcpt == "" {
		return "", "", notify.Invalid("to is required")
	}
	if ch == notify.ChannelEmail {
		if _, err := mailcheck.Domain(rcpt); err != nil {
			return "", "", notify.Invalid("to must be an email address for channel email")
		}
	} else if !otpPhoneRE.MatchString(rcpt) {
		return "", "", notify.Invalid("to must be a phone number for channel %s", ch)
	}
	return ch, rcpt, nil
}

// OTPSend starts a verification session and delivers its code or link
// synchronously through routing and failover.
func (s *Service) OTPSend(ctx context.Context, key *notify.APIKey, in *OTPSendInput) (*OTPSendResult, error) {
	ch, rcpt, err := s.validateOTPSend(in)
	if err != nil {
		return nil, err
	}
	client, err := clientKey(in.ClientIP)
	if err != nil {
		return nil, err
	}
	now := s.Now()
	sess := &notify.OTPSession{ID: usecase.NewID(), WorkspaceID: key.WorkspaceID, Channel: ch, Mode: in.Mode, Purpose: in.Purpose,
		Recipient: rcpt, RecipientMasked: otp.Mask(ch, rcpt), Status: notify.OTPPending, CreatedAt: now}
	var snd *otpSend
	err = s.Store.Update(ctx, func(tx notify.Tx) error {
		guard, counted, err := newFraudCheck(ctx, tx, key.WorkspaceID, ch, rcpt, client)
		if err != nil {
			return err
		}
		if err := guard.country(); err != nil {
			return err
		}
		if err := s.countOTPSend(ctx, tx, key.WorkspaceID, counted, now); err != nil {
			return err
		}
		if snd, err = s.prepareOTP(ctx, tx, key, sess, in, now); err != nil {
			return err
		}
		if err := tx.CreateOTPSession(ctx, sess); err != nil {
			return err
		}
		return guard.count(ctx, tx, now)
	})
	if err != nil {
		s.recordFraudRefusal(ctx, key, err)
		return nil, err
	}
	if err := s.deliverOTP(ctx, sess, snd); err != nil {
		return nil, err
	}
	return otpResult(sess), nil
}

func otpResult(sess *notify.OTPSession) *OTPSendResult {
	return &OTPSendResult{VerificationID: sess.ID, Status: sess.Status, Mode: sess.Mode, Channel: string(sess.Channel),
		ExpiresAt: sess.ExpiresAt, ResendAvailableAt: sess.ResendAvailableAt}
}

// prepareOTP rotates the session's secret (code or link), sets its times
// and stores the request and job of its delivery in tx. The stored request
// holds the message with the secret redacted.
func (s *Service) prepareOTP(ctx context.Context, tx notify.Tx, key *notify.APIKey, sess *notify.OTPSession, in *OTPSendInput, now time.Time) (*otpSend, error) {
	p := s.policy
	sess.Attempts, sess.UpdatedAt = 0, now
	sess.ExpiresAt, sess.ResendAvailableAt = now.Add(p.CodeTTL), now.Add(p.ResendCooldown)
	minutes := strconv.Itoa(int((p.CodeTTL + time.Minute - 1) / time.Minute))
	vars := map[string]string{}
	for k, v := range in.TemplateVariables {
		vars[k] = v
	}
	vars["brand"], vars["minutes"] = in.BrandName, minutes
	var plain string
	if sess.Mode == notify.OTPModeLink {
		tok, hash := otp.NewLinkToken()
		sess.LinkHash, sess.CodeHash = hash, ""
		plain = tok
		vars["link"] = s.baseURL + "/v1/otp/link/" + tok
		// code is a server key (SPEC): a caller's value must not pass for a
		// code in a link message.
		vars["code"] = ""
	} else {
		code, err := otp.GenerateCode(p.CodeLength)
		if err != nil {
			return nil, err
		}
		sess.CodeHash, sess.LinkHash = otp.HashCode(s.codeKey, sess.ID, code), ""
		plain = code
		vars["code"] = code
	}
	req := &notify.Request{ID: usecase.NewID(), WorkspaceID: sess.WorkspaceID, APIKeyID: key.ID, Source: notify.SourceOTP, Channel: sess.Channel,
		Status: notify.StatusProcessing, RecipientAddress: sess.Recipient, RecipientName: in.RecipientName, TemplateCode: in.TemplateCode,
		TemplateVariables: vars, PreferredProviderIDs: in.PreferredProviderAccountIDs, RequestedAt: now, UpdatedAt: now,
		Metadata: map[string]string{"otpVerificationId": sess.ID}, Test: key.Test}
	if in.TemplateCode != "" {
		t, v, err := compose.ResolveTemplate(ctx, tx, sess.WorkspaceID, key, in.TemplateCode, sess.Channel, "")
		if err != nil {
			return nil, err
		}
		layout, err := compose.VersionLayout(ctx, tx, sess.WorkspaceID, v)
		if err != nil {
			return nil, err
		}
		m, err := compose.Render(compose.Message{Title: v.Title, Text: v.Text, HTML: v.HTML}, layout, vars, "")
		if err != nil {
			return nil, err
		}
		req.Title, req.Text, req.HTML = m.Title, m.Text, m.HTML
		req.VendorTemplateID, req.SenderProfileKey = t.VendorTemplateID, t.SenderProfileKey
	} else {
		req.Title, req.Text, req.HTML = defaultOTPMessage(sess, vars)
	}
	for _, id := range in.PreferredProviderAccountIDs {
		if _, err := tx.FindProviderAccount(ctx, sess.WorkspaceID, id); err != nil {
			if notify.IsNotFound(err) {
				return nil, notify.Invalid("preferredProviderAccountIds: provider account %s does not belong to this workspace", id)
			}
			return nil, err
		}
	}
	sess.RequestID = req.ID
	job := &notify.Job{ID: usecase.NewID(), WorkspaceID: sess.WorkspaceID, RequestID: req.ID, Status: notify.JobProcessing,
		AttemptsMade: 1, MaxAttempts: 1, QueuedAt: now, StartedAt: &now}
	stored := *req
	stored.Title, stored.Text, stored.HTML = redact(req.Title, plain), redact(req.Text, plain), redact(req.HTML, plain)
	stored.TemplateVariables = map[string]string{}
	for k, v := range vars {
		stored.TemplateVariables[k] = redact(v, plain)
	}
	if err := tx.CreateDirectRequest(ctx, &stored, job); err != nil {
		return nil, err
	}
	return &otpSend{req: req, job: job, secret: []string{plain}}, nil
}

func redact(s, secret string) string {
	if secret == "" {
		return s
	}
	return strings.ReplaceAll(s, secret, "[redacted]")
}

// defaultOTPMessage is the built-in text: brand, code or link, minutes.
func defaultOTPMessage(sess *notify.OTPSession, vars map[string]string) (title, text, htmlBody string) {
	brand := ""
	if vars["brand"] != "" {
		brand = "[" + vars["brand"] + "] "
	}
	if sess.Mode == notify.OTPModeLink {
		text = fmt.Sprintf("%sOpen this link to verify: %s (valid for %s minutes)", brand, vars["link"], vars["minutes"])
	} else {
		text = fmt.Sprintf("%sYour verification code is %s (valid for %s minutes)", brand, vars["code"], vars["minutes"])
	}
	if sess.Channel == notify.ChannelEmail {
		title = brand + "Verification"
		if sess.Mode == notify.OTPModeLink {
			l := html.EscapeString(vars["link"])
			htmlBody = fmt.Sprintf(`<p>%sOpen this link to verify:</p><p><a href="%s">%s</a></p><p>The link is valid for %s minutes.</p>`,
				html.EscapeString(brand), l, l, html.EscapeString(vars["minutes"]))
		} else {
			htmlBody = fmt.Sprintf(`<p>%sYour verification code is</p><p><strong>%s</strong></p><p>The code is valid for %s minutes.</p>`,
				html.EscapeString(brand), html.EscapeString(vars["code"]), html.EscapeString(vars["minutes"]))
		}
	}
	return title, text, htmlBody
}

// deliverOTP sends through the routes, records the attempts and the
// request's final state, and on failure marks the session failed and
// answers 502.
func (s *Service) deliverOTP(ctx context.Context, sess *notify.OTPSession, snd *otpSend) error {
	out := s.engine.SendNow(ctx, notify.DirectSend{Request: snd.req, Job: snd.job, Secrets: snd.secret})
	err := s.Store.Update(ctx, func(tx notify.Tx) error {
		if err := out.Record(ctx, tx); err != nil {
			return err
		}
		if out.Succeeded() {
			return nil
		}
		prev := sess.Status
		failed := *sess
		failed.Status, failed.CodeHash, failed.LinkHash, failed.UpdatedAt = notify.OTPFailed, "", "", s.Now()
		if _, err := tx.UpdateOTPSession(ctx, &failed, prev, sess.ResendCount); err != nil {
			return err
		}
		*sess = failed
		return nil
	})
	if err != nil {
		return err
	}
	if !out.Succeeded() {
		code, msg := out.Failure()
		return notify.Errorf(notify.CodeProviderFailed, "OTP delivery failed: %s: %s", code, msg)
	}
	return nil
}

// OTPResend rotates the session's code or link and delivers it again.
func (s *Service) OTPResend(ctx context.Context, key *notify.APIKey, id string) (*OTPSendResult, error) {
	notFoundErr := notify.Errorf(notify.CodeNotFound, "OTP verification not found or expired")
	if !usecase.IsUUID(id) {
		return nil, notFoundErr
	}
	now := s.Now()
	var sess *notify.OTPSession
	var snd *otpSend
	var lazyExpire bool
	err := s.Store.Update(ctx, func(tx notify.Tx) error {
		var err error
		if sess, err = tx.FindOTPSession(ctx, key.WorkspaceID, id); err != nil {
			if notify.IsNotFound(err) {
				return notFoundErr
			}
			return err
		}
		switch {
		case sess.Status == notify.OTPVerified:
			return notify.Invalid("OTP is already verified")
		case sess.Status == notify.OTPExpired || (sess.Status == notify.OTPPending && !now.Before(sess.ExpiresAt)):
			lazyExpire = sess.Status == notify.OTPPending
			return notify.Invalid("OTP has expired")
		case sess.Status != notify.OTPPending:
			return notFoundErr
		case sess.ResendCount >= s.policy.MaxResends:
			return notify.Errorf(notify.CodeTooManyRequests, "Maximum resend count exceeded")
		case now.Before(sess.ResendAvailableAt):
			return notify.Errorf(notify.CodeTooManyRequests, "Resend cooldown active")
		}
		guard, counted, err := newFraudCheck(ctx, tx, key.WorkspaceID, sess.Channel, sess.Recipient, "")
		if err != nil {
			return err
		}
		if guard != nil {
			guard.verificationID = sess.ID
		}
		if err := guard.country(); err != nil {
			return err
		}
		if err := s.countOTPSend(ctx, tx, key.WorkspaceID, counted, now); err != nil {
			return err
		}
		in, err := s.resendInput(ctx, tx, sess)
		if err != nil {
			return err
		}
		prevResends := sess.ResendCount
		sess.ResendCount++
		if snd, err = s.prepareOTP(ctx, tx, key, sess, in, now); err != nil {
			return err
		}
		ok, err := tx.UpdateOTPSession(ctx, sess, notify.OTPPending, prevResends)
		if err != nil {
			return err
		}
		if !ok {
			return notify.Errorf(notify.CodeTooManyRequests, "Resend cooldown active")
		}
		return guard.count(ctx, tx, now)
	})
	if lazyExpire {
		s.expireOTP(ctx, sess)
	}
	if err != nil {
		s.recordFraudRefusal(ctx, key, err)
		return nil, err
	}
	if err := s.deliverOTP(ctx, sess, snd); err != nil {
		return nil, err
	}
	return otpResult(sess), nil
}

// resendInput rebuilds the send input of a session from its last request.
func (s *Service) resendInput(ctx context.Context, tx notify.Tx, sess *notify.OTPSession) (*OTPSendInput, error) {
	in := &OTPSendInput{Channel: string(sess.Channel), Mode: sess.Mode, Purpose: sess.Purpose}
	if sess.RequestID == "" {
		return in, nil
	}
	r, err := tx.FindRequest(ctx, sess.WorkspaceID, sess.RequestID)
	if notify.IsNotFound(err) {
		return in, nil
	}
	if err != nil {
		return nil, err
	}
	in.RecipientName, in.TemplateCode, in.PreferredProviderAccountIDs = r.RecipientName, r.TemplateCode, r.PreferredProviderIDs
	in.BrandName = r.TemplateVariables["brand"]
	in.TemplateVariables = map[string]string{}
	for k, v := range r.TemplateVariables {
		if k != "code" && k != "link" && k != "brand" && k != "minutes" {
			in.TemplateVariables[k] = v
		}
	}
	return in, nil
}

// expireOTP records the lazy expiry of a pending session (best effort).
func (s *Service) expireOTP(ctx context.Context, sess *notify.OTPSession) {
	if sess == nil || sess.Status != notify.OTPPending {
		return
	}
	exp := *sess
	exp.Status, exp.CodeHash, exp.UpdatedAt = notify.OTPExpired, "", s.Now()
	err := s.Store.Update(ctx, func(tx notify.Tx) error {
		_, err := tx.UpdateOTPSession(ctx, &exp, notify.OTPPending, sess.ResendCount)
		return err
	})
	if err != nil {
		s.Log.WarnContext(ctx, "otp expiry not recorded", "verificationId", sess.ID, "err", err)
		return
	}
	*sess = exp
}

// signOTP issues a verification token for a verified session.
func (s *Service) signOTP(sess *notify.OTPSession, now time.Time) string {
	return otp.SignToken(s.secret, otp.Claims{VID: sess.ID, WSID: sess.WorkspaceID, Purpose: sess.Purpose, Channel: string(sess.Channel),
		Sub: sess.RecipientMasked, IAT: now.Unix(), EXP: now.Add(s.policy.TokenTTL).Unix()})
}

func otpFail(reason string, remaining int) *OTPVerifyResult {
	return &OTPVerifyResult{Status: "failed", Reason: reason, AttemptsRemaining: remaining}
}

// OTPVerify checks a code. Failures are results, not errors. The attempt
// is taken with one conditional UPDATE, so concurrent verifies never use
// more than the maximum.
func (s *Service) OTPVerify(ctx context.Context, ws, id, code string) (*OTPVerifyResult, error) {
	if !usecase.IsUUID(id) {
		return otpFail("expired", 0), nil
	}
	now := s.Now()
	max := s.policy.MaxAttempts
	var res *OTPVerifyResult
	var expire *notify.OTPSession
	err := s.Store.Update(ctx, func(tx notify.Tx) error {
		took, err := tx.UseOTPAttempt(ctx, ws, id, max, now)
		if err != nil {
			return err
		}
		sess, err := tx.FindOTPSession(ctx, ws, id)
		if notify.IsNotFound(err) {
			res = otpFail("expired", 0)
			return nil
		}
		if err != nil {
			return err
		}
		if !took {
			switch {
			case sess.Mode != notify.OTPModeCode:
				res = otpFail("not_code_mode", 0)
			case sess.Status == notify.OTPVerified:
				res = &OTPVerifyResult{Status: notify.OTPVerified, VerificationToken: s.signOTP(sess, now), VerifiedAt: sess.VerifiedAt}
			case sess.Status == notify.OTPFailed && sess.Attempts >= max:
				res = otpFail("too_many_attempts", 0)
			case sess.Status == notify.OTPPending && !now.Before(sess.ExpiresAt):
				expire = sess
				res = otpFail("expired", 0)
			case sess.Status == notify.OTPPending && sess.Attempts >= max:
				f := *sess
				f.Status, f.CodeHash, f.UpdatedAt = notify.OTPFailed, "", now
				if _, err := tx.UpdateOTPSession(ctx, &f, notify.OTPPending, sess.ResendCount); err != nil {
					return err
				}
				res = otpFail("too_many_attempts", 0)
			default:
				res = otpFail("expired", 0)
			}
			return nil
		}
		if otp.CheckCode(s.codeKey, sess.ID, code, sess.CodeHash) {
			v := *sess
			v.Status, v.CodeHash, v.VerifiedAt, v.UpdatedAt = notify.OTPVerified, "", &now, now
			ok, err := tx.UpdateOTPSession(ctx, &v, notify.OTPPending, sess.ResendCount)
			if err != nil {
				return err
			}
			if !ok {
				return errors.New("otp: session changed during verify")
			}
			res = &OTPVerifyResult{Status: notify.OTPVerified, VerificationToken: s.signOTP(&v, now), VerifiedAt: &now}
			return nil
		}
		if sess.Attempts >= max {
			f := *sess
			f.Status, f.CodeHash, f.UpdatedAt = notify.OTPFailed, "", now
			if _, err := tx.UpdateOTPSession(ctx, &f, notify.OTPPending, sess.ResendCount); err != nil {
				return err
			}
			res = otpFail("too_many_attempts", 0)
			return nil
		}
		res = otpFail("invalid_code", max-sess.Attempts)
		return nil
	})
	if err != nil {
		return nil, err
	}
	if expire != nil {
		s.expireOTP(ctx, expire)
	}
	return res, nil
}

// OTPGet is the status lookup, with lazy expiry.
func (s *Service) OTPGet(ctx context.Context, ws, id string) (*OTPView, error) {
	notFoundErr := notify.Errorf(notify.CodeNotFound, "OTP verification not found")
	if !usecase.IsUUID(id) {
		return nil, notFoundErr
	}
	var sess *notify.OTPSession
	err := s.Store.View(ctx, func(tx notify.Tx) error {
		var err error
		sess, err = tx.FindOTPSession(ctx, ws, id)
		return err
	})
	if notify.IsNotFound(err) {
		return nil, notFoundErr
	}
	if err != nil {
		return nil, err
	}
	now := s.Now()
	if sess.Status == notify.OTPPending && !now.Before(sess.ExpiresAt) {
		s.expireOTP(ctx, sess)
		sess.Status = notify.OTPExpired
	}
	v := &OTPView{Session: sess}
	if sess.Status == notify.OTPVerified {
		v.VerificationToken = s.signOTP(sess, now)
	}
	return v, nil
}

// OTPLinkState is what a link page shows.
type OTPLinkState int

// Link page states.
const (
	OTPLinkInvalid  OTPLinkState = iota // unknown, expired, failed or rotated
	OTPLinkPending                      // can be completed
	OTPLinkVerified                     // already verified
)

// OTPLinkLanding reports the state of a link token without changing
// anything (GET must never verify).
func (s *Service) OTPLinkLanding(ctx context.Context, token string) (OTPLinkState, error) {
	sess, err := s.findLink(ctx, token)
	if err != nil || sess == nil {
		return OTPLinkInvalid, err
	}
	return s.linkState(sess), nil
}

func (s *Service) linkState(sess *notify.OTPSession) OTPLinkState {
	switch {
	case sess.Status == notify.OTPVerified:
		return OTPLinkVerified
	case sess.Status == notify.OTPPending && s.Now().Before(sess.ExpiresAt):
		return OTPLinkPending
	}
	return OTPLinkInvalid
}

func (s *Service) findLink(ctx context.Context, token string) (*notify.OTPSession, error) {
	if token == "" || len(token) > 128 {
		return nil, nil
	}
	var sess *notify.OTPSession
	err := s.Store.View(ctx, func(tx notify.Tx) error {
		var err error
		sess, err = tx.FindOTPSessionByLink(ctx, otp.HashLinkToken(token))
		return err
	})
	if notify.IsNotFound(err) {
		return nil, nil
	}
	if err != nil || sess.Mode != notify.OTPModeLink {
		return nil, err
	}
	return sess, nil
}

// OTPLinkComplete completes a link verification (idempotent for a
// verified session). The verification token is not returned: the
// customer's backend fetches it through the status lookup.
func (s *Service) OTPLinkComplete(ctx context.Context, token string) (OTPLinkState, error) {
	if token == "" || len(token) > 128 {
		return OTPLinkInvalid, nil
	}
	now := s.Now()
	state := OTPLinkInvalid
	err := s.Store.Update(ctx, func(tx notify.Tx) error {
		sess, err := tx.FindOTPSessionByLink(ctx, otp.HashLinkToken(token))
		if notify.IsNotFound(err) {
			return nil
		}
		if err != nil || sess.Mode != notify.OTPModeLink {
			return err
		}
		state = s.linkState(sess)
		if state != OTPLinkPending {
			return nil
		}
		v := *sess
		v.Status, v.VerifiedAt, v.UpdatedAt = notify.OTPVerified, &now, now
		ok, err := tx.UpdateOTPSession(ctx, &v, notify.OTPPending, sess.ResendCount)
		if err != nil {
			return err
		}
		if ok {
			state = OTPLinkVerified
		} else {
			state = OTPLinkInvalid
		}
		return nil
	})
	return state, err
}

// OTPRetention is how long a session is kept after its expiry: long enough
// for the customer backend's status lookup (pattern B) after the last
// moment anyone could verify, short enough that recipients' addresses do
// not pile up.
const OTPRetention = 24 * time.Hour

// CleanupOTP deletes sessions expired more than OTPRetention ago and the
// send counters of ended windows (the hour and the UTC day before the
// current ones are kept: they are the only ones a send can still touch,
// give or take clock skew between processes).
func (s *Service) CleanupOTP(ctx context.Context) (sessions, counters int, err error) {
	now := s.Now()
	hs, _ := otp.HourWindow(now.Add(-time.Hour))
	ds, _ := otp.DayWindow(now.Add(-24 * time.Hour))
	err = s.Store.Update(ctx, func(tx notify.Tx) error {
		if sessions, err = tx.DeleteOTPSessionsExpiredBefore(ctx, now.Add(-OTPRetention)); err != nil {
			return err
		}
		if counters, err = tx.DeleteOTPSendCountersBefore(ctx, hs, ds); err != nil {
			return err
		}
		// Fraud guard counters an hour after their window ended (clock
		// skew between processes, as above).
		guard, err := tx.DeleteOTPFraudCountersEndedBefore(ctx, now.Add(-time.Hour))
		counters += guard
		return err
	})
	return sessions, counters, err
}
