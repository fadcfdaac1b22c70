package config

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestRetention: 30 days and a year by default; days, Go durations and 0
// (keep forever) are read; a bare number (seconds elsewhere) or less than
// a day is refused, since it would purge what was just sent.
func TestRetention(t *testing.T) {
	t.Parallel()

	def := Default()
	require.Equal(t, 30*24*time.Hour, def.Retention)
	require.Equal(t, 365*24*time.Hour, def.AuditRetention)
	byEnv := map[string]Option{}
	for _, o := range Options {
		byEnv[o.Env] = o
	}
	require.Equal(t, "30d", byEnv["NOTIFYD_RETENTION"].Default)
	require.Equal(t, "365d", byEnv["NOTIFYD_AUDIT_RETENTION"].Default)

	for v, want := range map[string]time.Duration{"0": 0, "1d": 24 * time.Hour, "45d": 45 * 24 * time.Hour, "36h": 36 * time.Hour} {
		c, _, err := load(t, nil, map[string]string{"NOTIFYD_RETENTION": v, "NOTIFYD_AUDIT_RETENTION": v}, nil)
		require.NoError(t, err, v)
		require.Equal(t, want, c.Retention, v)
		require.Equal(t, want, c.AuditRetention, v)
	}
	c, _, err := load(t, []string{"--retention=36h"}, nil, nil)
	require.NoError(t, err)
	require.Equal(t, "36h0m0s", c.Redacted()["NOTIFYD_RETENTION"], "printed back as read")
	for _, bad := range []string{"30", "12h", "-1d", "xd", "1w"} {
		_, _, err := load(t, nil, map[string]string{"NOTIFYD_RETENTION": bad}, nil)
		require.ErrorContains(t, err, "NOTIFYD_RETENTION", bad)
	}
}
