package redact_test

import (
	"net/url"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/notifyd/notifyd/internal/redact"
)

func TestPath(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"/v1/otp/link/abc":                       "/v1/otp/link/[redacted]",
		"/v1/otp/link/":                          "/v1/otp/link/",
		"/v1/newsletter/unsubscribe/abc":         "/v1/newsletter/unsubscribe/[redacted]",
		"/v1/newsletter/unsubscribe/one-click":   "/v1/newsletter/unsubscribe/one-click",
		"/v1/hooks/hk_secret":                    "/v1/hooks/[redacted]",
		"/v1/hooks/hk_secret/backups":            "/v1/hooks/[redacted]/backups",
		"/v1/hooks/notify/hk_secret":             "/v1/hooks/notify/[redacted]",
		"/t/c/AQFj_token":                        "/t/c/[redacted]",
		"/t/o/AQFv_token":                        "/t/o/[redacted]",
		"/v1/hooks/notify":                       "/v1/hooks/notify",
		"/v1/hooks/":                             "/v1/hooks/",
		"/v1/inbound-hooks/0190-id/rotate-token": "/v1/inbound-hooks/0190-id/rotate-token",
		"/v1/templates":                          "/v1/templates",
	} {
		require.Equal(t, want, redact.Path(in), in)
	}
}

func TestQuery(t *testing.T) {
	t.Parallel()
	require.Equal(t, "", redact.Query(""))
	require.Equal(t, "limit=5&cursor=x", redact.Query("limit=5&cursor=x"), "kept as given")
	require.Equal(t, "category=c&token=[redacted]", redact.Query("token=secret&category=c"))
	require.Equal(t, "[redacted]", redact.Query("token=%zz"))
	u, err := url.Parse("/v1/hooks/hk_x?token=s&a=1")
	require.NoError(t, err)
	require.Equal(t, "/v1/hooks/[redacted]?a=1&token=[redacted]", redact.Target(u))
}
