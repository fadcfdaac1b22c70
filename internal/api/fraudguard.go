package api

import (
	"errors"
	"net/http"

	"github.com/notifyd/notifyd/internal/notify"
	"github.com/notifyd/notifyd/internal/verification"
)

// fraudGuardRoutes lists the OTP fraud guard settings (issue 21, item 6;
// docs/OTP.md "Fraud guard"). Dashboard routes under /v1/limits: SPEC
// gives /v1/otp... to the Notification API.
func (a verificationAPI) fraudGuardRoutes() []Route {
	return []Route{
		{Method: "GET", Path: "/v1/limits/otp-fraud-guard", auth: authDashboard, Roles: notify.RolesAll, h: a.handleFraudGuardGet},
		{Method: "PUT", Path: "/v1/limits/otp-fraud-guard", auth: authDashboard, Roles: notify.RolesAdmin, h: a.handleFraudGuardPut},
	}
}

type velocityJSON struct {
	Digits        *int `json:"digits,omitempty"`
	WindowSeconds *int `json:"windowSeconds"`
	MaxSends      *int `json:"maxSends"`
}

type clientVelocityJSON struct {
	WindowSeconds *int `json:"windowSeconds"`
	MaxSends      *int `json:"maxSends"`
}

type fraudGuardJSON struct {
	Enabled             bool                `json:"enabled"`
	DefaultCountryCode  string              `json:"defaultCountryCode"`
	AllowedCountryCodes []string            `json:"allowedCountryCodes"`
	DeniedPrefixes      []string            `json:"deniedPrefixes"`
	PrefixVelocity      *velocityJSON       `json:"prefixVelocity"`
	ClientVelocity      *clientVelocityJSON `json:"clientVelocity"`
	DailyBudget         *int                `json:"dailyBudget"`
	UpdatedAt           *string             `json:"updatedAt"`
}

func fraudGuardBody(g *notify.OTPFraudGuard) fraudGuardJSON {
	// The deny-list has no "every" to tell from empty: always a list.
	out := fraudGuardJSON{Enabled: g.Enabled, DefaultCountryCode: g.DefaultCountryCode, AllowedCountryCodes: g.AllowedCountries,
		DeniedPrefixes: g.DeniedPrefixes}
	if out.DeniedPrefixes == nil {
		out.DeniedPrefixes = []string{}
	}
	if g.PrefixMaxSends > 0 {
		out.PrefixVelocity = &velocityJSON{Digits: &g.PrefixDigits, WindowSeconds: &g.PrefixWindowSeconds, MaxSends: &g.PrefixMaxSends}
	}
	if g.ClientMaxSends > 0 {
		out.ClientVelocity = &clientVelocityJSON{WindowSeconds: &g.ClientWindowSeconds, MaxSends: &g.ClientMaxSends}
	}
	if g.DailyBudget > 0 {
		out.DailyBudget = &g.DailyBudget
	}
	if !g.UpdatedAt.IsZero() {
		out.UpdatedAt = TimestampPtr(&g.UpdatedAt)
	}
	return out
}

func (a verificationAPI) handleFraudGuardGet(c *call) error {
	g, err := a.room.OTPFraudGuard(c.ctx, c.actor)
	if err != nil {
		return err
	}
	return c.ok(http.StatusOK, fraudGuardBody(g))
}

func (a verificationAPI) handleFraudGuardPut(c *call) error {
	var b struct {
		Enabled             Optional[bool]      `json:"enabled"`
		DefaultCountryCode  *string             `json:"defaultCountryCode"`
		AllowedCountryCodes []string            `json:"allowedCountryCodes"`
		DeniedPrefixes      []string            `json:"deniedPrefixes"`
		PrefixVelocity      *velocityJSON       `json:"prefixVelocity"`
		ClientVelocity      *clientVelocityJSON `json:"clientVelocity"`
		DailyBudget         *int                `json:"dailyBudget"`
	}
	if err := c.decode(&b); err != nil {
		return err
	}
	in := verification.OTPFraudGuardInput{DefaultCountryCode: b.DefaultCountryCode, AllowedCountryCodes: b.AllowedCountryCodes,
		DeniedPrefixes: b.DeniedPrefixes, DailyBudget: b.DailyBudget}
	if b.Enabled.Set {
		if b.Enabled.Null {
			return notify.Invalid("enabled must be a boolean")
		}
		in.Enabled = &b.Enabled.Value
	}
	if p := b.PrefixVelocity; p != nil {
		in.PrefixVelocity = &verification.OTPVelocityInput{Digits: p.Digits, WindowSeconds: p.WindowSeconds, MaxSends: p.MaxSends}
	}
	if v := b.ClientVelocity; v != nil {
		in.ClientVelocity = &verification.OTPVelocityInput{WindowSeconds: v.WindowSeconds, MaxSends: v.MaxSends}
	}
	g, err := a.room.PutOTPFraudGuard(c.ctx, c.actor, in)
	if err != nil {
		return err
	}
	return c.ok(http.StatusOK, fraudGuardBody(g))
}

// fraudRefused counts an OTP send the fraud guard refused in the metric
// (by rule) and returns err for the answer.
func (a verificationAPI) fraudRefused(err error) error {
	var r *verification.OTPFraudRefusal
	if errors.As(err, &r) {
		a.limits.OTPFraudRefused(r.Rule)
	}
	return err
}
