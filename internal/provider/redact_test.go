package provider

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestRedactURL(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"https://hooks.slack.com/services/T0/B0/XYZ":       "https://hooks.slack.com/services/…",
		"https://discord.com/api/webhooks/1/tok?wait=true": "https://discord.com/api/webhooks/…",
		"https://chat.example.com/hooks/abc123":            "https://chat.example.com/…",
		"https://chat.example.com/x/services/abc":          "https://chat.example.com/…",
		"https://chat.example.com/?token=abc":              "https://chat.example.com/…",
		"https://chat.example.com/#abc":                    "https://chat.example.com/…",
		"https://user:pass@chat.example.com:8443/h":        "https://chat.example.com:8443/…",
		"https://chat.example.com":                         "https://chat.example.com",
		"https://chat.example.com/":                        "https://chat.example.com",
		"http://[::1]:1/hook?k=v":                          "http://[::1]:1/…",
		"weird://x y/z":                                    "weird://…",
	} {
		require.Equal(t, want, RedactURL(in), in)
	}
}

// TestErrorText (issue 17, finding 7): what users read of a transport
// error names no URL path or query and no resolver, wrapped or not.
func TestErrorText(t *testing.T) {
	t.Parallel()
	err := &url.Error{Op: "Post", URL: "https://chat.example.com/hooks/SECRET?token=TOKEN", Err: &net.OpError{Op: "dial", Net: "tcp",
		Err: &net.DNSError{Err: "no such host", Name: "chat.example.com", Server: "10.9.8.7:53", IsNotFound: true}}}
	const want = `Post "https://chat.example.com/…": dial tcp: lookup chat.example.com: no such host`
	require.Equal(t, want, ErrorText(err))
	require.Equal(t, "send: "+want, ErrorText(fmt.Errorf("send: %w", err)))
	err.Err.(*net.OpError).Err = &net.DNSError{Err: "read udp 10.0.0.5:41234->10.9.8.7:53: i/o timeout", Name: "chat.example.com",
		Server: "10.9.8.7:53", IsTimeout: true}
	require.NotContains(t, ErrorText(err), "10.9.8.7")
}

// TestDoSecretURL (issue 17, finding 7): a call to a configured webhook
// URL of any form shows only its scheme and host in the exchange and in
// the failure message, whether the transport failed or the receiver
// echoed the URL; a vendor API URL (not configured) is shown whole.
func TestDoSecretURL(t *testing.T) {
	t.Parallel()
	echo := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.WriteHeader(http.StatusBadGateway)
		_, _ = io.WriteString(w, "no route for "+r.URL.RequestURI()+" path="+r.URL.Path+" query="+r.URL.RawQuery)
	}))
	t.Cleanup(echo.Close)
	client := NewHTTPClient(HTTPOptions{AllowPrivate: true})
	ctx := context.Background()
	for _, target := range []string{echo.URL, "http://127.0.0.1:1"} {
		secret := target + "/hooks/PATHSECRET?token=QUERYSECRET"
		ex, _, perr := Do(ctx, client, Call{Method: http.MethodPost, URL: secret, SecretURL: true})
		require.NotNil(t, perr, target)
		require.Equal(t, target+"/…", ex.URL)
		for _, s := range []string{"PATHSECRET", "QUERYSECRET"} {
			require.NotContains(t, perr.Message, s, target)
		}
	}
	ex, _, perr := Do(ctx, client, Call{Method: http.MethodPost, URL: echo.URL + "/v1/send?x=1"})
	require.NotNil(t, perr)
	require.Equal(t, echo.URL+"/v1/send?x=1", ex.URL, "a vendor API URL is not a secret")
	require.True(t, strings.Contains(perr.Message, "/v1/send"), perr.Message)
}
