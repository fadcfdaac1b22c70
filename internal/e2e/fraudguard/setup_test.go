// Package fraudguard_test is the end-to-end suite of the OTP fraud guard
// against SMS pumping (issue 21, item 6; docs/OTP.md "Fraud guard"), on
// the backend of the run (PostgreSQL when NOTIFYD_TEST_DATABASE_URL is set).
package fraudguard_test

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/notifyd/notifyd/client"
	"github.com/notifyd/notifyd/internal/notifytest"
)

var ctx = context.Background()

const guardPath = "/v1/limits/otp-fraud-guard"

type bundle struct {
	env   *notifytest.Env
	key   *client.Client
	keyID string
	clock *notifytest.Clock
}

// setup starts a daemon on a test clock with an OTP API key and an SMS
// route to the simulator (the setup of internal/e2e/otp).
func setup(t *testing.T) *bundle {
	t.Helper()
	clock := &notifytest.Clock{}
	env := notifytest.StartDaemonAt(t, clock.Now)
	key, keyID := env.APIKey(t, "otp", "otp:send", "otp:verify")
	env.SimRoute(t, "sms", "vendorb_sms", nil)
	return &bundle{env: env, key: key, keyID: keyID, clock: clock}
}

// guard puts the settings as the owner and requires 200.
func (b *bundle) guard(t *testing.T, body map[string]any) guardOut {
	t.Helper()
	return notifytest.Decode[guardOut](t, notifytest.Dash(t, b.env.Owner, "PUT", guardPath, body), http.StatusOK)
}

type velocity struct {
	Digits        int `json:"digits"`
	WindowSeconds int `json:"windowSeconds"`
	MaxSends      int `json:"maxSends"`
}

type guardOut struct {
	Enabled             bool      `json:"enabled"`
	DefaultCountryCode  string    `json:"defaultCountryCode"`
	AllowedCountryCodes []string  `json:"allowedCountryCodes"`
	DeniedPrefixes      []string  `json:"deniedPrefixes"`
	PrefixVelocity      *velocity `json:"prefixVelocity"`
	ClientVelocity      *velocity `json:"clientVelocity"`
	DailyBudget         *int      `json:"dailyBudget"`
	UpdatedAt           *string   `json:"updatedAt"`
}

// send posts an OTP send and answers the response.
func (b *bundle) send(t *testing.T, to, clientIP string) *client.Response {
	t.Helper()
	body := map[string]any{"channel": "sms", "to": to}
	if clientIP != "" {
		body["clientIp"] = clientIP
	}
	return notifytest.Signed(t, b.key, "POST", "/v1/otp", body)
}

// sent requires a 201 and answers the verification id.
func (b *bundle) sent(t *testing.T, to, clientIP string) string {
	t.Helper()
	return notifytest.Data[struct {
		VerificationID string `json:"verificationId"`
	}](t, b.send(t, to, clientIP), http.StatusCreated).VerificationID
}

// refused requires the guard's problem answer.
func refused(t *testing.T, r *client.Response, status int, code, detail string) {
	t.Helper()
	p := notifytest.RequireProblem(t, r, status, code)
	require.Equal(t, "application/problem+json", r.Header.Get("Content-Type"))
	require.Equal(t, detail, p.Detail, string(r.Body))
	require.Equal(t, "/v1/otp", p.Instance)
}

const (
	detailCountry = "OTP destination country not allowed"
	detailPrefix  = "Too many OTP sends to this number prefix"
	detailClient  = "Too many OTP sends from this client address"
	detailBudget  = "Daily OTP budget exceeded"
)

// refusals is the metric of the guard's refusals of rule in this daemon.
func (b *bundle) refusals(t *testing.T, rule string) float64 {
	t.Helper()
	return notifytest.Counter(t, b.env.Daemon.Metrics.Registry, "notifyd_otp_fraud_guard_refusals_total", map[string]string{"rule": rule})
}

// messages counts what the simulator received for a number.
func (b *bundle) messages(to string) int { return len(b.env.Sim.Messages("vendorb_sms", to, 0)) }

// nextDay moves the clock to 01:00 UTC of the next day, past any daily
// window, with an hour of margin against real time passing.
func (b *bundle) nextDay() {
	b.clock.AdvanceTo(b.clock.Now().UTC().Truncate(24 * time.Hour).Add(25 * time.Hour))
}
