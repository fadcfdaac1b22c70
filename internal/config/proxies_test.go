package config

import (
	"net/netip"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestTrustedProxies(t *testing.T) {
	t.Parallel()

	c, _, err := load(t, nil, map[string]string{"NOTIFYD_TRUSTED_PROXIES": " 10.0.0.0/8, 192.168.1.7 ,::1,fd00::/8,172.16.5.9/12"}, nil)
	require.NoError(t, err)
	require.Equal(t, []netip.Prefix{
		netip.MustParsePrefix("10.0.0.0/8"), netip.MustParsePrefix("192.168.1.7/32"), netip.MustParsePrefix("::1/128"),
		netip.MustParsePrefix("fd00::/8"), netip.MustParsePrefix("172.16.0.0/12"), // masked
	}, c.TrustedProxies)
	byFlag, _, err := load(t, []string{"--trusted-proxies=10.0.0.0/8"}, nil, nil)
	require.NoError(t, err)
	require.Equal(t, []netip.Prefix{netip.MustParsePrefix("10.0.0.0/8")}, byFlag.TrustedProxies)

	// None by default: X-Forwarded-For is never believed.
	def, _, err := load(t, nil, nil, nil)
	require.NoError(t, err)
	require.Empty(t, def.TrustedProxies)

	for _, bad := range []string{"10.0.0.0/33", "proxy.example.com", "10.0.0.1/8/8", "1.2.3"} {
		_, _, err := load(t, nil, map[string]string{"NOTIFYD_TRUSTED_PROXIES": bad}, nil)
		require.ErrorContains(t, err, "NOTIFYD_TRUSTED_PROXIES must be CIDRs or addresses", bad)
	}

	var found bool
	for _, o := range Options {
		if o.Env == "NOTIFYD_TRUSTED_PROXIES" {
			found = true
			require.Equal(t, "trusted-proxies", o.Flag)
			require.Equal(t, "none", o.Default)
		}
	}
	require.True(t, found)
}
