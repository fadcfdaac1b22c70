package fraudguard_test

import (
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/notifyd/notifyd/internal/notifytest"
)

// The spellings of one number (issue 29, finding 4): every rule and count
// reads a number in one canonical form, whatever way it was written.

const detailDenied = "OTP destination number prefix not allowed"

// TestPrefixSpellings: a trunk 0 written after +82 counts under the same
// prefix as the national spelling, so it buys no more sends past the
// limit (it did: three more).
func TestPrefixSpellings(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.guard(t, map[string]any{"prefixVelocity": map[string]int{"digits": 4, "windowSeconds": 3600, "maxSends": 3}})
	b.clock.AdvanceTo(b.clock.Now().Truncate(time.Hour).Add(time.Hour + time.Minute))
	b.sent(t, "010-1234-0011", "")
	b.sent(t, "01012340012", "")
	b.sent(t, "+82 010 1234 0013", "")
	for _, to := range []string{"+82 010 1234 0014", "+82 0 10-1234-0015", "+82 10 1234 0016", "010 1234 0017"} {
		refused(t, b.send(t, to, ""), http.StatusTooManyRequests, "SVC-42900", detailPrefix)
	}
	require.Zero(t, b.messages("+8201012340014"), "nothing sent")
	require.Equal(t, 4.0, b.refusals(t, "prefix_velocity"))
	// The vendor gets the number as written (normalized), as before.
	require.Equal(t, 1, b.messages("+8201012340013"))
}

// TestAccessPrefixInNationalPart: while an allow-list (or a deny-list) is
// set, an international access prefix after the country code leads to an
// unknown country and is refused; it reached the vendor before.
func TestAccessPrefixInNationalPart(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.guard(t, map[string]any{"allowedCountryCodes": []string{"82", "1"}})
	for _, to := range []string{"+82 0044 7700900123", "+82 00 44 7700 900124", "+82 00700 44 7700900125", "+82 0 0044 7700900126",
		"+1 011 44 7700 900127", "+82 001 1 876 555 0100"} {
		refused(t, b.send(t, to, ""), http.StatusForbidden, "SVC-40300", detailCountry)
	}
	require.Zero(t, b.messages("+8200447700900123"), "nothing reached the vendor")
	require.Equal(t, 6.0, b.refusals(t, "country"))
	es := notifytest.Audit(t, b.env.Owner, "otp.fraud_guard.refuse")
	require.Len(t, es, 6)
	require.NotContains(t, es[len(es)-1].Payload, "countryCode", "the country is unknown")
	// Numbers of the allowed countries still pass, with or without trunk 0.
	b.sent(t, "+82 010 1234 5678", "")
	b.sent(t, "+82 44 123 4567", "")
	b.sent(t, "+1 415 555 0100", "")

	// A deny-list alone refuses unknown countries as well: they could be
	// in a denied range.
	b.guard(t, map[string]any{"deniedPrefixes": []string{"+1876"}})
	refused(t, b.send(t, "001-1-876-555-0101", ""), http.StatusForbidden, "SVC-40300", detailCountry)
	refused(t, b.send(t, "+82 0044 7700900123", ""), http.StatusForbidden, "SVC-40300", detailCountry)
	b.sent(t, "+44 7700 900123", "")
	// With neither list, such a number goes out as before.
	b.guard(t, map[string]any{"dailyBudget": 100})
	b.sent(t, "+82 0044 2079 4600", "")
	require.Equal(t, 1, b.messages("+82004420794600"))
}

// TestDenyList: a prefix of the deny-list is refused in every spelling,
// inside allowed countries; the setting is validated, answered and
// audited.
func TestDenyList(t *testing.T) {
	t.Parallel()
	b := setup(t)
	out := b.guard(t, map[string]any{"allowedCountryCodes": []string{"1", "44", "82"},
		"deniedPrefixes": []string{"+1 876", "447624", "+44 (7624)", "+881"}})
	require.Equal(t, []string{"+1876", "+447624", "+881"}, out.DeniedPrefixes, "normalized, sorted, duplicates merged")
	var got guardOut
	require.NoError(t, notifytest.Dash(t, b.env.Owner, "GET", guardPath, nil).Decode(&got))
	require.Equal(t, out, got)
	es := notifytest.Audit(t, b.env.Owner, "otp.fraud_guard.update")
	require.Equal(t, []any{"+1876", "+447624", "+881"}, es[0].Payload["deniedPrefixes"])

	for _, to := range []string{"+1 876 555 0100", "+1 1 876 555 0101", "+44 7624 123456", "+44 07624 123457", "+44 (0) 7624 123458"} {
		refused(t, b.send(t, to, ""), http.StatusForbidden, "SVC-40300", detailDenied)
	}
	require.Zero(t, b.messages("+18765550100"), "nothing sent")
	require.Equal(t, 5.0, b.refusals(t, "denied_prefix"))
	es = notifytest.Audit(t, b.env.Owner, "otp.fraud_guard.refuse")
	require.Len(t, es, 5)
	require.Equal(t, map[string]any{"rule": "denied_prefix", "channel": "sms", "recipientMasked": "********0100", "countryCode": "1"}, es[4].Payload)
	// Neighbours pass; the allow-list still applies first.
	b.sent(t, "+1 415 555 0100", "")
	b.sent(t, "+44 7700 900123", "")
	b.sent(t, "010-1234-5678", "")
	refused(t, b.send(t, "+881 2345 6789", ""), http.StatusForbidden, "SVC-40300", detailCountry)

	// Bad lists are 400 and change nothing.
	long := make([]string, 301)
	for i := range long {
		long[i] = "+1876"
	}
	bad := map[string]string{
		`{"deniedPrefixes":["+44 07624"]}`:              `deniedPrefixes: "+44 07624" must be a country calling code and the digits after it in international format, such as "+1876"`,
		`{"deniedPrefixes":["+8"]}`:                     `deniedPrefixes: "+8" must be a country calling code and the digits after it in international format, such as "+1876"`,
		`{"deniedPrefixes":["JM"]}`:                     `deniedPrefixes: "JM" must be a country calling code and the digits after it in international format, such as "+1876"`,
		`{"deniedPrefixes":["+82 0044"]}`:               `deniedPrefixes: "+82 0044" must be a country calling code and the digits after it in international format, such as "+1876"`,
		`{"deniedPrefixes":["+1876+"]}`:                 `deniedPrefixes: "+1876+" must be a country calling code and the digits after it in international format, such as "+1876"`,
		`{"deniedPrefixes":["+1234567890123456"]}`:      `deniedPrefixes: "+1234567890123456" must be a country calling code and the digits after it in international format, such as "+1876"`,
		`{"deniedPrefixes":"+1876"}`:                    "",
		`{"deniedPrefixes":["+1876"],"zzUnknown":true}`: "",
	}
	for body, detail := range bad {
		requireBad(t, b, []byte(body), detail)
	}
	requireBad(t, b, map[string]any{"deniedPrefixes": long}, "deniedPrefixes must hold at most 300 prefixes")
	require.NoError(t, notifytest.Dash(t, b.env.Owner, "GET", guardPath, nil).Decode(&got))
	require.Equal(t, out, got, "refused bodies changed nothing")

	// An empty list is none.
	out = b.guard(t, map[string]any{"deniedPrefixes": []string{}})
	require.Equal(t, []string{}, out.DeniedPrefixes)
	b.sent(t, "+1 876 555 0102", "")
}

func requireBad(t *testing.T, b *bundle, body any, detail string) {
	t.Helper()
	r := notifytest.Dash(t, b.env.Owner, "PUT", guardPath, body)
	require.Equal(t, http.StatusBadRequest, r.Status, "%v: %s", body, r.Body)
	p := r.Problem()
	require.Equal(t, "SVC-40000", p.Code)
	if detail != "" {
		require.Equal(t, detail, p.Detail)
	}
}

// TestRecipientSpellings: SPEC's per-recipient limit (5 an hour) counts
// one number however it is written, sends and resends alike, with the
// guard off; a workspace's defaultCountryCode decides national numbers.
func TestRecipientSpellings(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.clock.AdvanceTo(b.clock.Now().Truncate(time.Hour).Add(time.Hour + time.Minute))
	id := b.sent(t, "010-1234-5678", "")
	b.sent(t, "+82 10 1234 5678", "")
	b.sent(t, "+82 010 1234 5678", "")
	b.sent(t, "(010) 1234.5678", "")
	b.clock.Advance(31 * time.Second)
	r, err := b.key.Signed(ctx, "POST", "/v1/otp/"+id+"/resend", nil)
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, r.Status, "the fifth: %s", r.Body)
	for _, to := range []string{"01012345678", "+821012345678", "+82 0 10 1234 5678"} {
		r := b.send(t, to, "")
		require.Equal(t, http.StatusTooManyRequests, r.Status, "%s: %s", to, r.Body)
		require.Equal(t, "OTP send rate limit exceeded", r.Problem().Detail)
	}
	// What the vendor got is the number as written, normalized.
	require.Equal(t, 3, b.messages("01012345678"), "two sends and a resend")
	require.Equal(t, 1, b.messages("+8201012345678"))
	require.Equal(t, 1, b.messages("+821012345678"))

	// In a workspace whose numbers are American, national spellings are
	// country 1 (trunk 1 dropped), the guard disabled or not.
	b.guard(t, map[string]any{"enabled": false, "defaultCountryCode": "1"})
	for i, to := range []string{"415-555-0100", "1 (415) 555-0100", "+1 415 555 0100", "+1 1 415 555 0100", "4155550100"} {
		require.Equal(t, http.StatusCreated, b.send(t, to, "").Status, "send %d", i+1)
	}
	r = b.send(t, "+14155550100", "")
	require.Equal(t, http.StatusTooManyRequests, r.Status, string(r.Body))
	require.Equal(t, "OTP send rate limit exceeded", r.Problem().Detail)
}
