package dispatch_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/notifyd/notifyd/internal/dispatch"
)

// kind is a provider kind's id and batching defaults.
type kind struct {
	id  string
	def dispatch.BatchConfig
}

func TestBatchConfigFor(t *testing.T) {
	sms := kind{"vendora_sms", dispatch.BatchConfig{CallsPerSecond: 2, Window: 800 * time.Millisecond, MaxSize: 500}}
	ses := kind{"maily_email", dispatch.BatchConfig{MaxSize: 1}}
	defaults := dispatch.BatchConfig{CallsPerSecond: 2, Window: 800 * time.Millisecond, MaxSize: 500}
	c, notes := dispatch.BatchConfigFor(sms.id, sms.def, nil)
	require.Empty(t, notes)
	require.Equal(t, defaults, c)
	c, notes = dispatch.BatchConfigFor(sms.id, sms.def, map[string]string{"dispatch_max_requests_per_second": "0",
		"dispatch_batch_window_ms": "50", "dispatch_max_batch_size": "7"})
	require.Empty(t, notes)
	require.Equal(t, dispatch.BatchConfig{CallsPerSecond: 0, Window: 50 * time.Millisecond, MaxSize: 7}, c)
	c, notes = dispatch.BatchConfigFor(sms.id, sms.def, map[string]string{"dispatch_max_requests_per_second": " 0.5 "})
	require.Empty(t, notes)
	require.Equal(t, 0.5, c.CallsPerSecond)
	// Not validated at registration (SPEC): a bad value keeps the default.
	for _, bad := range []map[string]string{
		{"dispatch_max_requests_per_second": "-1"}, {"dispatch_max_requests_per_second": "fast"},
		{"dispatch_max_requests_per_second": "NaN"},
		{"dispatch_batch_window_ms": "-5"}, {"dispatch_batch_window_ms": "1.5"}, {"dispatch_batch_window_ms": "soon"},
		{"dispatch_max_batch_size": "0"}, {"dispatch_max_batch_size": ""}, {"dispatch_max_batch_size": "-99999999999999999999"},
	} {
		c, notes := dispatch.BatchConfigFor(sms.id, sms.def, bad)
		require.Equal(t, defaults, c, "%v", bad)
		require.Len(t, notes, 1, "%v", bad)
		require.Contains(t, notes[0], "ignored")
	}
	// Beyond a bound: the bound.
	c, notes = dispatch.BatchConfigFor(sms.id, sms.def, map[string]string{"dispatch_max_requests_per_second": "1e9",
		"dispatch_batch_window_ms": "60001", "dispatch_max_batch_size": "99999999999999999999"})
	require.Len(t, notes, 3)
	require.Equal(t, dispatch.BatchConfig{CallsPerSecond: dispatch.MaxRequestsPerSecond,
		Window: dispatch.MaxBatchWindowMs * time.Millisecond, MaxSize: dispatch.MaxBatchSizeLimit}, c)
	c, notes = dispatch.BatchConfigFor(ses.id, ses.def, map[string]string{"dispatch_max_batch_size": "1", "dispatch_max_requests_per_second": "14"})
	require.Empty(t, notes)
	require.Equal(t, dispatch.BatchConfig{CallsPerSecond: 14, MaxSize: 1}, c)
	c, notes = dispatch.BatchConfigFor(ses.id, ses.def, map[string]string{"dispatch_max_batch_size": "10"})
	require.Equal(t, []string{"configJson.dispatch_max_batch_size ignored: maily_email sends per message and has no batch API"}, notes)
	require.Equal(t, 1, c.MaxSize)
}

// Each message's attempt keeps its own part of a shared batch call, not
// the whole call.
