package api

import (
	"net/http"

	"github.com/notifyd/notifyd/internal/notify"
	"github.com/notifyd/notifyd/internal/verification"
)

// verificationAPI are the handlers of the verification room: OTP and its
// fraud guard.
type verificationAPI struct {
	*API
	room *verification.Service
}

// routes lists the OTP routes (issue 6) and the fraud guard's.
func (a verificationAPI) routes() []Route {
	const send, verify = "otp:send", "otp:verify"
	otp := []Route{
		{Method: "POST", Path: "/v1/otp", auth: authSigned, Scope: send, h: a.handleOTPSend},
		{Method: "POST", Path: "/v1/otp/{verificationId}/verify", auth: authSigned, Scope: verify, h: a.handleOTPVerify},
		{Method: "POST", Path: "/v1/otp/{verificationId}/resend", auth: authSigned, Scope: send, h: a.handleOTPResend},
		{Method: "GET", Path: "/v1/otp/{verificationId}", auth: authSigned, Scope: verify, h: a.handleOTPGet},
	}
	return append(otp, a.fraudGuardRoutes()...)
}

type otpSendBody struct {
	Channel                     string            `json:"channel"`
	To                          *string           `json:"to"`
	Mode                        string            `json:"mode"`
	Purpose                     string            `json:"purpose"`
	BrandName                   string            `json:"brandName"`
	RecipientName               string            `json:"recipientName"`
	TemplateCode                string            `json:"templateCode"`
	TemplateVariables           map[string]string `json:"templateVariables"`
	PreferredProviderAccountIDs []string          `json:"preferredProviderAccountIds"`
	ClientIP                    string            `json:"clientIp"` // the end user's address (OTP fraud guard)
}

func otpSendJSON(r *verification.OTPSendResult) map[string]any {
	return map[string]any{"verificationId": r.VerificationID, "status": r.Status, "mode": r.Mode, "channel": r.Channel,
		"expiresAt": Timestamp(r.ExpiresAt), "resendAvailableAt": Timestamp(r.ResendAvailableAt)}
}

func (a verificationAPI) handleOTPSend(c *call) error {
	var b otpSendBody
	if err := c.decode(&b); err != nil {
		return err
	}
	res, err := a.room.OTPSend(c.ctx, c.key, &verification.OTPSendInput{Channel: b.Channel, To: b.To, Mode: b.Mode, Purpose: b.Purpose,
		BrandName: b.BrandName, RecipientName: b.RecipientName, TemplateCode: b.TemplateCode, TemplateVariables: b.TemplateVariables,
		PreferredProviderAccountIDs: b.PreferredProviderAccountIDs, ClientIP: b.ClientIP})
	if err != nil {
		return a.fraudRefused(err)
	}
	return c.ok(http.StatusCreated, otpSendJSON(res))
}

func (a verificationAPI) handleOTPVerify(c *call) error {
	var b struct {
		Code *string `json:"code"`
	}
	if err := c.decode(&b); err != nil {
		return err
	}
	// A body without a code is a validation failure (400), not a wrong
	// code: it must not spend one of the session's attempts.
	if b.Code == nil || *b.Code == "" {
		return notify.Invalid("code is required")
	}
	res, err := a.room.OTPVerify(c.ctx, c.key.WorkspaceID, c.r.PathValue("verificationId"), *b.Code)
	if err != nil {
		return err
	}
	if res.Status == "verified" {
		return c.ok(http.StatusOK, map[string]any{"status": res.Status, "verificationToken": res.VerificationToken,
			"verifiedAt": TimestampPtr(res.VerifiedAt)})
	}
	return c.ok(http.StatusOK, map[string]any{"status": res.Status, "reason": res.Reason, "attemptsRemaining": res.AttemptsRemaining})
}

func (a verificationAPI) handleOTPResend(c *call) error {
	res, err := a.room.OTPResend(c.ctx, c.key, c.r.PathValue("verificationId"))
	if err != nil {
		return a.fraudRefused(err)
	}
	return c.ok(http.StatusOK, otpSendJSON(res))
}

func (a verificationAPI) handleOTPGet(c *call) error {
	v, err := a.room.OTPGet(c.ctx, c.key.WorkspaceID, c.r.PathValue("verificationId"))
	if err != nil {
		return err
	}
	s := v.Session
	out := map[string]any{"verificationId": s.ID, "status": s.Status, "channel": s.Channel, "mode": s.Mode, "purpose": s.Purpose,
		"recipientMasked": s.RecipientMasked, "attempts": s.Attempts, "resendCount": s.ResendCount,
		"expiresAt": Timestamp(s.ExpiresAt), "verifiedAt": TimestampPtr(s.VerifiedAt),
		"resendAvailableAt": Timestamp(s.ResendAvailableAt)}
	if v.VerificationToken != "" {
		out["verificationToken"] = v.VerificationToken
	}
	return c.ok(http.StatusOK, out)
}
