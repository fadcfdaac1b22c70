package notify

import (
	"context"
	"time"
)

// OTP fraud guard rules: the label of a refusal in the metric, the audit
// entry and the problem detail (docs/OTP.md "Fraud guard").
const (
	FraudRuleCountry        = "country"
	FraudRulePrefixVelocity = "prefix_velocity"
	FraudRuleClientVelocity = "client_velocity"
	FraudRuleDailyBudget    = "daily_budget"
	FraudRuleDeniedPrefix   = "denied_prefix"
)

// OTPFraudGuard is a workspace's guard against SMS pumping on OTP sends to
// phone numbers (issue 21, item 6). A zero limit is off.
type OTPFraudGuard struct {
	WorkspaceID        string
	Enabled            bool
	DefaultCountryCode string   // country of a national-format number
	AllowedCountries   []string // calling codes; nil: every country
	// DeniedPrefixes are number prefixes in international format
	// ("+1876"), refused even where the allow-list passes their country;
	// nil: none.
	DeniedPrefixes []string
	// Velocity per number prefix: the first PrefixDigits digits after the
	// country code, at most PrefixMaxSends per PrefixWindowSeconds.
	PrefixDigits        int
	PrefixWindowSeconds int
	PrefixMaxSends      int
	// Velocity per end-user client address.
	ClientWindowSeconds int
	ClientMaxSends      int
	// DailyBudget is the most OTP sends to phone numbers per UTC day.
	DailyBudget int
	UpdatedAt   time.Time
}

// OTPFraudWindow is one counter of the guard: Key within the workspace,
// the fixed window [Start, End).
type OTPFraudWindow struct {
	Key        string
	Start, End time.Time
}

// OTPFraudGuardTx holds the store verbs of the OTP fraud guard.
type OTPFraudGuardTx interface {
	// FindOTPFraudGuard is ErrNotFound when the workspace has none.
	FindOTPFraudGuard(ctx context.Context, workspaceID string) (*OTPFraudGuard, error)
	// PutOTPFraudGuard replaces the workspace's guard.
	PutOTPFraudGuard(ctx context.Context, g *OTPFraudGuard) error
	// AddOTPFraudCounts adds one to each counter in one statement (rows
	// locked in the order given, until the transaction ends) and returns
	// the new counts in that order. Windows (key and start) must be
	// distinct.
	AddOTPFraudCounts(ctx context.Context, workspaceID string, ws []OTPFraudWindow) ([]int, error)
	// DeleteOTPFraudCountersEndedBefore deletes counters of windows that
	// ended before t, of every workspace, and returns how many.
	DeleteOTPFraudCountersEndedBefore(ctx context.Context, t time.Time) (int, error)
}
