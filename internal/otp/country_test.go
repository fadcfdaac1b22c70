package otp

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestParseDestination(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in, def string
		want    Destination
		ok      bool
	}{
		{"01012345678", "82", Destination{"82", "1012345678"}, true},   // national, trunk 0 dropped
		{"+821012345678", "82", Destination{"82", "1012345678"}, true}, // the same number in E.164
		{"1012345678", "82", Destination{"82", "1012345678"}, true},
		{"4155550100", "1", Destination{"1", "4155550100"}, true},
		{"+14155550100", "82", Destination{"1", "4155550100"}, true},
		{"+79161234567", "82", Destination{"7", "9161234567"}, true},
		{"+442079460000", "82", Destination{"44", "2079460000"}, true},
		{"+88212345678", "82", Destination{"882", "12345678"}, true}, // international network
		{"+3706123456", "82", Destination{"370", "6123456"}, true},
		{"+8091234567", "82", Destination{National: "8091234567"}, false}, // 809 is not a calling code (80 neither)
		{"+", "82", Destination{}, false},
		{"0014155550100", "82", Destination{National: "14155550100"}, false}, // carrier prefix: unknown
		{"00821012345678", "82", Destination{National: "821012345678"}, false},
	}
	for _, tc := range tests {
		got, ok := ParseDestination(tc.in, tc.def)
		require.Equal(t, tc.ok, ok, tc.in)
		require.Equal(t, tc.want, got, tc.in)
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
