package verification

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"net/netip"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/notifyd/notifyd/internal/gate"
	"github.com/notifyd/notifyd/internal/notify"
	"github.com/notifyd/notifyd/internal/otp"
	"github.com/notifyd/notifyd/internal/usecase"
)

// The OTP fraud guard against SMS pumping (issue 21, item 6; docs/OTP.md
// "Fraud guard"; docs/DECISIONS.md). It applies to OTP sends and resends
// to phone numbers (sms, msgr_alimtalk) of a workspace whose guard is
// enabled; with none, or for email, OTP is exactly SPEC's.

// Bounds of the guard settings.
const (
	maxFraudPrefixDigits = 12
	maxFraudWindow       = 86400
	maxFraudSends        = 1_000_000
	maxFraudDailyBudget  = 10_000_000
	maxFraudCountries    = 300
	maxFraudDenied       = 300
	maxFraudDeniedDigits = 15 // E.164's longest number
)

// fraudAuditPerHour is how many refusals of one workspace per UTC hour
// get an audit entry; the metric counts every one. A pumping attack is
// what the guard refuses, so without a cap its refusals would fill the
// audit log (kept a year) at the attacker's rate.
const fraudAuditPerHour = 100

// OTPVelocityInput is one velocity rule of the guard settings. Digits is
// for the prefix rule only.
type OTPVelocityInput struct {
	Digits        *int
	WindowSeconds *int
	MaxSends      *int
}

// OTPFraudGuardInput is the body of PUT /v1/limits/otp-fraud-guard; it
// replaces the settings, and an absent rule is off.
type OTPFraudGuardInput struct {
	Enabled             *bool // absent: true
	DefaultCountryCode  *string
	AllowedCountryCodes []string // nil: every country
	DeniedPrefixes      []string // nil or empty: none
	PrefixVelocity      *OTPVelocityInput
	ClientVelocity      *OTPVelocityInput
	DailyBudget         *int
}

// OTPFraudGuard returns the workspace's guard settings; a workspace that
// never set any has the guard off (UpdatedAt zero).
func (s *Service) OTPFraudGuard(ctx context.Context, a *usecase.Actor) (*notify.OTPFraudGuard, error) {
	var g *notify.OTPFraudGuard
	err := s.Store.View(ctx, func(tx notify.Tx) error {
		var err error
		g, err = tx.FindOTPFraudGuard(ctx, a.WorkspaceID)
		if notify.IsNotFound(err) {
			g, err = &notify.OTPFraudGuard{WorkspaceID: a.WorkspaceID, DefaultCountryCode: otp.DefaultCountryCode}, nil
		}
		return err
	})
	return g, err
}

// PutOTPFraudGuard replaces the guard settings (audit
// otp.fraud_guard.update).
func (s *Service) PutOTPFraudGuard(ctx context.Context, a *usecase.Actor, in OTPFraudGuardInput) (*notify.OTPFraudGuard, error) {
	g, err := in.guard(a.WorkspaceID)
	if err != nil {
		return nil, err
	}
	g.UpdatedAt = s.Now()
	err = s.Store.Update(ctx, func(tx notify.Tx) error {
		if err := tx.PutOTPFraudGuard(ctx, g); err != nil {
			return err
		}
		return s.Audit(ctx, tx, a, a.WorkspaceID, "otp.fraud_guard.update", "workspace", a.WorkspaceID, fraudGuardPayload(g))
	})
	if err != nil {
		return nil, err
	}
	return g, nil
}

func fraudGuardPayload(g *notify.OTPFraudGuard) map[string]any {
	return map[string]any{"enabled": g.Enabled, "defaultCountryCode": g.DefaultCountryCode, "allowedCountryCodes": g.AllowedCountries,
		"deniedPrefixes": g.DeniedPrefixes, "prefixDigits": g.PrefixDigits, "prefixWindowSeconds": g.PrefixWindowSeconds,
		"prefixMaxSends": g.PrefixMaxSends, "clientWindowSeconds": g.ClientWindowSeconds, "clientMaxSends": g.ClientMaxSends,
		"dailyBudget": g.DailyBudget}
}

// deniedPrefix checks one prefix of the deny-list: '+' (optional), a
// calling code and the digits after it as an international number writes
// them, that is as otp.ParseDestination's canonical form (no trunk
// prefix, no international access prefix), so that it matches every
// spelling of the numbers it covers. Spaces, hyphens, dots and
// parentheses are dropped as in a number.
func deniedPrefix(v string) (string, error) {
	digits := strings.TrimPrefix(otp.NormalizePhone(v), "+")
	p := "+" + digits
	if d, ok := otp.ParseDestination(p, ""); !ok || d.Canonical != p || len(digits) > maxFraudDeniedDigits ||
		strings.ContainsFunc(digits, func(r rune) bool { return r < '0' || r > '9' }) {
		return "", notify.Invalid(`deniedPrefixes: %q must be a country calling code and the digits after it in international format, such as "+1876"`, v)
	}
	return p, nil
}

// callingCode checks one country calling code of the settings; a leading
// '+' is accepted and dropped.
func callingCode(field, v string) (string, error) {
	cc := strings.TrimPrefix(v, "+")
	if !otp.IsCallingCode(cc) {
		return "", notify.Invalid("%s: %q is not a country calling code", field, v)
	}
	return cc, nil
}

// between checks a required integer field against [lo, hi].
func between(field string, v *int, lo, hi int) (int, error) {
	if v == nil {
		return 0, notify.Invalid("%s is required", field)
	}
	if *v < lo || *v > hi {
		return 0, notify.Invalid("%s must be between %d and %d", field, lo, hi)
	}
	return *v, nil
}

func (in OTPFraudGuardInput) guard(ws string) (*notify.OTPFraudGuard, error) {
	g := &notify.OTPFraudGuard{WorkspaceID: ws, Enabled: in.Enabled == nil || *in.Enabled, DefaultCountryCode: otp.DefaultCountryCode}
	var err error
	if in.DefaultCountryCode != nil {
		if g.DefaultCountryCode, err = callingCode("defaultCountryCode", *in.DefaultCountryCode); err != nil {
			return nil, err
		}
	}
	if in.AllowedCountryCodes != nil {
		if len(in.AllowedCountryCodes) == 0 {
			return nil, notify.Invalid("allowedCountryCodes must hold at least one code, or be null for every country")
		}
		if len(in.AllowedCountryCodes) > maxFraudCountries {
			return nil, notify.Invalid("allowedCountryCodes must hold at most %d codes", maxFraudCountries)
		}
		g.AllowedCountries = make([]string, 0, len(in.AllowedCountryCodes))
		for _, v := range in.AllowedCountryCodes {
			cc, err := callingCode("allowedCountryCodes", v)
			if err != nil {
				return nil, err
			}
			g.AllowedCountries = append(g.AllowedCountries, cc)
		}
		slices.Sort(g.AllowedCountries)
		g.AllowedCountries = slices.Compact(g.AllowedCountries)
	}
	if len(in.DeniedPrefixes) > maxFraudDenied {
		return nil, notify.Invalid("deniedPrefixes must hold at most %d prefixes", maxFraudDenied)
	}
	for _, v := range in.DeniedPrefixes {
		p, err := deniedPrefix(v)
		if err != nil {
			return nil, err
		}
		g.DeniedPrefixes = append(g.DeniedPrefixes, p)
	}
	slices.Sort(g.DeniedPrefixes)
	g.DeniedPrefixes = slices.Compact(g.DeniedPrefixes)
	if p := in.PrefixVelocity; p != nil {
		if g.PrefixDigits, err = between("prefixVelocity.digits", p.Digits, 1, maxFraudPrefixDigits); err != nil {
			return nil, err
		}
		if g.PrefixWindowSeconds, err = between("prefixVelocity.windowSeconds", p.WindowSeconds, 1, maxFraudWindow); err != nil {
			return nil, err
		}
		if g.PrefixMaxSends, err = between("prefixVelocity.maxSends", p.MaxSends, 1, maxFraudSends); err != nil {
			return nil, err
		}
	}
	if c := in.ClientVelocity; c != nil {
		if c.Digits != nil {
			return nil, notify.Invalid("clientVelocity.digits is not a field of the client rule")
		}
		if g.ClientWindowSeconds, err = between("clientVelocity.windowSeconds", c.WindowSeconds, 1, maxFraudWindow); err != nil {
			return nil, err
		}
		if g.ClientMaxSends, err = between("clientVelocity.maxSends", c.MaxSends, 1, maxFraudSends); err != nil {
			return nil, err
		}
	}
	if in.DailyBudget != nil {
		if g.DailyBudget, err = between("dailyBudget", in.DailyBudget, 1, maxFraudDailyBudget); err != nil {
			return nil, err
		}
	}
	return g, nil
}

// OTPFraudRefusal is an OTP send or resend the fraud guard refused. It
// unwraps to the problem the API answers (403 or 429); Rule is the
// metric's label.
type OTPFraudRefusal struct {
	Rule string
	err  *notify.Error
	// What the audit entry records.
	channel        notify.Channel
	masked         string
	countryCode    string
	verificationID string
}

func (r *OTPFraudRefusal) Error() string { return r.err.Error() }
func (r *OTPFraudRefusal) Unwrap() error { return r.err }

// fraudProblem is the problem of a rule, in the style of SPEC's OTP
// refusals.
func fraudProblem(rule string) *notify.Error {
	switch rule {
	case notify.FraudRuleCountry:
		return notify.Forbidden("OTP destination country not allowed")
	case notify.FraudRuleDeniedPrefix:
		return notify.Forbidden("OTP destination number prefix not allowed")
	case notify.FraudRulePrefixVelocity:
		return notify.Errorf(notify.CodeTooManyRequests, "Too many OTP sends to this number prefix")
	case notify.FraudRuleClientVelocity:
		return notify.Errorf(notify.CodeTooManyRequests, "Too many OTP sends from this client address")
	}
	return notify.Errorf(notify.CodeTooManyRequests, "Daily OTP budget exceeded")
}

// fraudCheck is the guard applied to one send; nil applies nothing.
type fraudCheck struct {
	g              *notify.OTPFraudGuard
	dest           otp.Destination
	destKnown      bool
	client         string // client address key; "" when the send named none
	channel        notify.Channel
	masked         string
	verificationID string
}

// newFraudCheck reads the workspace's guard in tx and answers the guard
// to apply (nil when it is off or the channel is email) and the key of
// SPEC's per-recipient counts: the normalized address for email, the
// canonical number for phone channels, read in the guard's
// defaultCountryCode even while the guard is disabled (82 without
// settings). One reading of the number serves every rule and count, so
// no spelling counts apart (issue 29, finding 4).
func newFraudCheck(ctx context.Context, tx notify.Tx, ws string, ch notify.Channel, rcpt, client string) (*fraudCheck, string, error) {
	if ch == notify.ChannelEmail {
		return nil, rcpt, nil
	}
	g, err := tx.FindOTPFraudGuard(ctx, ws)
	if notify.IsNotFound(err) {
		g, err = &notify.OTPFraudGuard{DefaultCountryCode: otp.DefaultCountryCode}, nil
	}
	if err != nil {
		return nil, "", err
	}
	f := &fraudCheck{g: g, client: client, channel: ch, masked: otp.Mask(ch, rcpt)}
	f.dest, f.destKnown = otp.ParseDestination(rcpt, g.DefaultCountryCode)
	if !g.Enabled {
		return nil, f.dest.Canonical, nil
	}
	return f, f.dest.Canonical, nil
}

func (f *fraudCheck) refuse(rule string) error {
	r := &OTPFraudRefusal{Rule: rule, err: fraudProblem(rule), channel: f.channel, masked: f.masked, verificationID: f.verificationID}
	if f.destKnown {
		r.countryCode = f.dest.CountryCode
	}
	return r
}

// country refuses a destination outside the allow-list or under a
// prefix of the deny-list, and one whose country cannot be told while
// there is either list (it could lead anywhere, denied ranges included).
func (f *fraudCheck) country() error {
	if f == nil || (f.g.AllowedCountries == nil && f.g.DeniedPrefixes == nil) {
		return nil
	}
	if !f.destKnown || (f.g.AllowedCountries != nil && !slices.Contains(f.g.AllowedCountries, f.dest.CountryCode)) {
		return f.refuse(notify.FraudRuleCountry)
	}
	for _, p := range f.g.DeniedPrefixes {
		if strings.HasPrefix(f.dest.Canonical, p) {
			return f.refuse(notify.FraudRuleDeniedPrefix)
		}
	}
	return nil
}

func counterHash(v string) string {
	h := sha256.Sum256([]byte(v))
	return hex.EncodeToString(h[:16])
}

// count adds the send to the prefix, client and daily counters in tx and
// refuses when one goes over its limit; the caller's transaction then
// rolls every increment back, so a refused send counts nowhere (as
// SPEC's request limits). Rows are locked in that fixed order, so
// concurrent sends cannot deadlock on them.
func (f *fraudCheck) count(ctx context.Context, tx notify.Tx, now time.Time) error {
	if f == nil {
		return nil
	}
	g := f.g
	var ws []notify.OTPFraudWindow
	var rules []string
	var limits []int
	add := func(rule, scope, value string, windowSeconds, limit int) {
		key, start := gate.RateWindow(scope, windowSeconds, now)
		ws = append(ws, notify.OTPFraudWindow{Key: key + ":" + counterHash(value), Start: start,
			End: start.Add(time.Duration(windowSeconds) * time.Second)})
		rules, limits = append(rules, rule), append(limits, limit)
	}
	if g.PrefixMaxSends > 0 {
		prefix := f.dest.National[:min(g.PrefixDigits, len(f.dest.National))]
		add(notify.FraudRulePrefixVelocity, "p"+strconv.Itoa(g.PrefixDigits), f.dest.CountryCode+":"+prefix, g.PrefixWindowSeconds, g.PrefixMaxSends)
	}
	if g.ClientMaxSends > 0 && f.client != "" {
		add(notify.FraudRuleClientVelocity, "c", f.client, g.ClientWindowSeconds, g.ClientMaxSends)
	}
	if g.DailyBudget > 0 {
		start, end := otp.DayWindow(now)
		ws = append(ws, notify.OTPFraudWindow{Key: "b", Start: start, End: end})
		rules, limits = append(rules, notify.FraudRuleDailyBudget), append(limits, g.DailyBudget)
	}
	ns, err := tx.AddOTPFraudCounts(ctx, g.WorkspaceID, ws)
	if err != nil {
		return err
	}
	for i, n := range ns {
		if n > limits[i] {
			return f.refuse(rules[i])
		}
	}
	return nil
}

// clientKey is the counter key of an end user's address: an IPv4 address
// as is, an IPv6 address by its /64 (one subscriber's usual assignment,
// so rotating within it does not dodge the limit). "" is no address; a
// malformed one is a 400.
func clientKey(ip string) (string, error) {
	if ip == "" {
		return "", nil
	}
	addr, err := netip.ParseAddr(ip)
	if err != nil || addr.Zone() != "" {
		return "", notify.Invalid("clientIp must be an IPv4 or IPv6 address")
	}
	addr = addr.Unmap()
	if addr.Is4() {
		return addr.String(), nil
	}
	return netip.PrefixFrom(addr, 64).Masked().String(), nil
}

// recordFraudRefusal writes the audit entry of a refusal (in its own
// transaction: the send's was rolled back), at most fraudAuditPerHour per
// workspace and UTC hour; best effort.
func (s *Service) recordFraudRefusal(ctx context.Context, key *notify.APIKey, err error) {
	var r *OTPFraudRefusal
	if !errors.As(err, &r) {
		return
	}
	now := s.Now()
	start, end := otp.HourWindow(now)
	payload := map[string]any{"rule": r.Rule, "channel": string(r.channel), "recipientMasked": r.masked}
	if r.countryCode != "" {
		payload["countryCode"] = r.countryCode
	}
	if r.verificationID != "" {
		payload["verificationId"] = r.verificationID
	}
	werr := s.Store.Update(ctx, func(tx notify.Tx) error {
		n, err := tx.AddOTPFraudCounts(ctx, key.WorkspaceID, []notify.OTPFraudWindow{{Key: "audit", Start: start, End: end}})
		if err != nil || n[0] > fraudAuditPerHour {
			return err
		}
		return s.Audit(ctx, tx, nil, key.WorkspaceID, "otp.fraud_guard.refuse", "api_key", key.ID, payload)
	})
	if werr != nil {
		s.Log.WarnContext(ctx, "otp fraud guard refusal not audited", "rule", r.Rule, "err", werr)
	}
}
