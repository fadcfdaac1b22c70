package provider

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/notifyd/notifyd/internal/notify"
)

// maxResponseBody caps how much of a vendor answer is read and kept.
const maxResponseBody = 1 << 20

// Call is one outbound vendor request.
type Call struct {
	Method string
	URL    string
	Header http.Header
	Body   []byte
	// Logged is what the attempt history shows as the request: the body
	// with secrets removed. Adapters must never put credentials here.
	Logged any
}

// Do performs c with client and returns the exchange, the raw answer body,
// and a classified error for transport failures and for the HTTP statuses
// SPEC normalizes (429 rate_limited, >=500 temporary_unavailable, 401/403
// unauthorized). Other statuses return a nil error: the adapter reads the
// body and classifies vendor codes itself (many vendors fail with 200).
func Do(ctx context.Context, client *http.Client, c Call) (Exchange, []byte, *Error) {
	ex := Exchange{Method: c.Method, URL: redactURL(c.URL), Request: c.Logged}
	req, err := http.NewRequestWithContext(ctx, c.Method, c.URL, bytes.NewReader(c.Body))
	if err != nil {
		return ex, nil, Errorf(notify.FailureInvalidRequest, "build request: %v", err)
	}
	for k, vs := range c.Header {
		req.Header[k] = vs
	}
	start := time.Now()
	resp, err := client.Do(req)
	if err != nil {
		return ex, nil, transportError(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxResponseBody))
	ex.Response = &Response{
		HTTPStatus: resp.StatusCode,
		DurationMs: time.Since(start).Milliseconds(),
		Headers:    flattenHeader(resp.Header),
		Body:       string(body),
	}
	if err != nil {
		return ex, body, transportError(err)
	}
	return ex, body, StatusError(resp.StatusCode, resp.Header, string(body))
}

// StatusError applies SPEC's HTTP status normalization; nil for other statuses.
func StatusError(status int, h http.Header, body string) *Error {
	msg := strings.TrimSpace(body)
	if len(msg) > 300 {
		msg = msg[:300]
	}
	switch {
	case status == http.StatusTooManyRequests:
		e := Errorf(notify.FailureRateLimited, "HTTP 429: %s", msg)
		e.RetryAfter = parseRetryAfter(h.Get("Retry-After"))
		return e
	case status >= 500:
		return Errorf(notify.FailureTemporaryUnavailable, "HTTP %d: %s", status, msg)
	case status == http.StatusUnauthorized || status == http.StatusForbidden:
		return Errorf(notify.FailureUnauthorized, "HTTP %d: %s", status, msg)
	}
	return nil
}

// ErrBlockedTarget is returned by the SSRF guard's dialer; Do classifies it
// as invalid_request (API-DECISIONS section 1).
var ErrBlockedTarget = errors.New("target address is not allowed")

// transportError classifies a failed call. A *url.Error quotes the full
// URL, which for webhook kinds is the credential, so it is redacted first.
func transportError(err error) *Error {
	var ue *url.Error
	if errors.As(err, &ue) {
		c := *ue
		c.URL = redactURL(ue.URL)
		err = &c
	}
	if errors.Is(err, ErrBlockedTarget) {
		return Errorf(notify.FailureInvalidRequest, "%v", err)
	}
	return Errorf(notify.FailureTemporaryUnavailable, "%v", err)
}

func parseRetryAfter(v string) time.Duration {
	if v == "" {
		return 0
	}
	if d, err := time.ParseDuration(strings.TrimSpace(v) + "s"); err == nil {
		return d
	}
	return 0
}

func flattenHeader(h http.Header) map[string]string {
	out := make(map[string]string, len(h))
	for k, vs := range h {
		out[k] = strings.Join(vs, ", ")
	}
	return out
}

// redactURL hides the secret parts of webhook URLs (the path is the
// credential for Slack and Discord webhooks) while keeping the host.
func redactURL(u string) string {
	for _, marker := range []string{"/services/", "/api/webhooks/"} {
		if i := strings.Index(u, marker); i >= 0 {
			return u[:i+len(marker)] + "…"
		}
	}
	return u
}
