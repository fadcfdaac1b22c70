package otp_test

import (
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// OTP sends are synchronous: a dispatch limit counts them but never
// delays them (the caller waits for the answer).
func TestDispatchLimitNeverDelaysOTP(t *testing.T) {
	t.Parallel()
	b := setup(t)
	r, err := b.env.Owner.Dashboard(ctx, "PUT", "/v1/limits/dispatch", map[string]any{"scope": "workspace", "ratePerSecond": 1})
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, r.Status, string(r.Body))
	start := time.Now()
	for i := range 4 {
		s := b.send(t, map[string]any{"channel": "sms", "to": fmt.Sprintf("010-1234-000%d", i), "purpose": "login"})
		require.Equal(t, "pending", s.Status)
	}
	require.Less(t, time.Since(start), 2500*time.Millisecond, "OTP sends under a 1/s limit did not wait 3 s")
}
