package otp

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestParseDestination(t *testing.T) {
	t.Parallel()
	kr := func(n string) Destination { return Destination{"82", n, "+82" + n} }
	unknown := func(n, c string) Destination { return Destination{National: n, Canonical: c} }
	tests := []struct {
		in, def string
		want    Destination
		ok      bool
	}{
		{"01012345678", "82", kr("1012345678"), true},    // national, trunk 0 dropped
		{"+821012345678", "82", kr("1012345678"), true},  // the same number in E.164
		{"+8201012345678", "82", kr("1012345678"), true}, // and with the trunk 0 after the code (issue 29)
		{"1012345678", "82", kr("1012345678"), true},
		{"+8201012345678", "1", kr("1012345678"), true}, // '+' numbers ignore the default
		{"4155550100", "1", Destination{"1", "4155550100", "+14155550100"}, true},
		{"14155550100", "1", Destination{"1", "4155550100", "+14155550100"}, true}, // NANP trunk 1
		{"+114155550100", "82", Destination{"1", "4155550100", "+14155550100"}, true},
		{"+14155550100", "82", Destination{"1", "4155550100", "+14155550100"}, true},
		{"+79161234567", "82", Destination{"7", "9161234567", "+79161234567"}, true},
		{"+789161234567", "82", Destination{"7", "9161234567", "+79161234567"}, true}, // trunk 8 before 10 digits
		{"88121234567", "7", Destination{"7", "8121234567", "+78121234567"}, true},
		{"+78121234567", "82", Destination{"7", "8121234567", "+78121234567"}, true}, // 812 is an area code
		{"+442079460000", "82", Destination{"44", "2079460000", "+442079460000"}, true},
		{"+4402079460000", "82", Destination{"44", "2079460000", "+442079460000"}, true},
		{"0620123456", "36", Destination{"36", "20123456", "+3620123456"}, true},     // Hungary's trunk 06
		{"+39061234567", "82", Destination{"39", "061234567", "+39061234567"}, true}, // Italy keeps its 0
		{"061234567", "39", Destination{"39", "061234567", "+39061234567"}, true},
		{"+99200123456", "82", Destination{"992", "00123456", "+99200123456"}, true}, // Tajik mobiles begin 00
		{"+88212345678", "82", Destination{"882", "12345678", "+88212345678"}, true}, // international network
		{"+3706123456", "82", Destination{"370", "6123456", "+3706123456"}, true},
		{"+8091234567", "82", unknown("8091234567", "+8091234567"), false}, // 809 is not a calling code (80 neither)
		{"+", "82", unknown("", "+"), false},
		// An international access prefix: carrier and country unknown.
		{"0014155550100", "82", unknown("14155550100", "+820014155550100"), false},
		{"00821012345678", "82", unknown("821012345678", "+8200821012345678"), false},
		{"+8200447700900123", "82", unknown("447700900123", "+8200447700900123"), false}, // issue 29
		{"00447700900123", "82", unknown("447700900123", "+8200447700900123"), false},
		{"+82000447700900123", "82", unknown("0447700900123", "+82000447700900123"), false},
		{"+1011447700900123", "82", unknown("447700900123", "+1011447700900123"), false},
		{"011447700900123", "1", unknown("447700900123", "+1011447700900123"), false},
		{"+81010447700900123", "82", unknown("447700900123", "+81010447700900123"), false},
		{"+78107700900123", "82", unknown("7700900123", "+78107700900123"), false},
		{"+972014447700900", "82", unknown("447700900", "+972014447700900"), false},
		{"+6502044770090", "82", unknown("2044770090", "+6502044770090"), false},
	}
	for _, tc := range tests {
		got, ok := ParseDestination(tc.in, tc.def)
		require.Equal(t, tc.ok, ok, tc.in)
		require.Equal(t, tc.want, got, tc.in)
	}
}

// TestDialPlans: the plans name assigned codes, and no access prefix is
// the trunk prefix or its beginning (a number would be read as both).
func TestDialPlans(t *testing.T) {
	t.Parallel()
	for cc, p := range dialPlans {
		require.True(t, IsCallingCode(cc), cc)
		for _, a := range p.access {
			require.NotEmpty(t, a, cc)
			require.False(t, p.trunk != "" && strings.HasPrefix(p.trunk, a), "%s: %s begins the trunk %s", cc, a, p.trunk)
		}
	}
}

// TestCallingCodesPrefixFree: no code begins another, so a '+' number has
// one reading; the well-known ones are there.
func TestCallingCodesPrefixFree(t *testing.T) {
	t.Parallel()
	for a := range callingCodes {
		for b := range callingCodes {
			require.False(t, a != b && strings.HasPrefix(b, a), "%s begins %s", a, b)
		}
	}
	for _, cc := range []string{"1", "7", "44", "82", "86", "81", "855", "881", "998"} {
		require.True(t, IsCallingCode(cc), cc)
	}
	for _, cc := range []string{"", "0", "80", "999", "+82", "8a", "1234"} {
		require.False(t, IsCallingCode(cc), cc)
	}
	require.Greater(t, len(callingCodes), 200)
}
