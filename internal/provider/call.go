package provider

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/url"
	"regexp"
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
	// SecretURL marks URL as the account's configured URL (incoming
	// webhooks), whose path and query are the credential: the exchange
	// and every message show only its scheme and host.
	SecretURL bool
}

// Do performs c with client and returns the exchange, the raw answer body,
// and a classified error for transport failures and for the HTTP statuses
// SPEC normalizes (429 rate_limited, >=500 temporary_unavailable, 401/403
// unauthorized). Other statuses return a nil error: the adapter reads the
// body and classifies vendor codes itself (many vendors fail with 200).
func Do(ctx context.Context, client *http.Client, c Call) (Exchange, []byte, *Error) {
	ex := Exchange{Method: c.Method, URL: c.URL, Request: c.Logged}
	if c.SecretURL {
		ex.URL = RedactURL(c.URL)
	}
	ex, body, perr := do(ctx, client, c, ex)
	if perr != nil && c.SecretURL {
		perr.Message = RedactIn(perr.Message, c.URL)
	}
	return ex, body, perr
}

func do(ctx context.Context, client *http.Client, c Call, ex Exchange) (Exchange, []byte, *Error) {
	req, err := http.NewRequestWithContext(ctx, c.Method, c.URL, bytes.NewReader(c.Body))
	if err != nil {
		return ex, nil, Errorf(notify.FailureInvalidRequest, "build request: %s", ErrorText(err))
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
	msg := Snippet([]byte(body), 300)
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

// transportError classifies a failed call, in words fit for users
// (ErrorText).
func transportError(err error) *Error {
	if errors.Is(err, ErrBlockedTarget) {
		return Errorf(notify.FailureInvalidRequest, "%s", ErrorText(err))
	}
	return Errorf(notify.FailureTemporaryUnavailable, "%s", ErrorText(err))
}

// urlRE finds URLs in an error text; a quote, bracket or white space ends one.
var urlRE = regexp.MustCompile(`[a-zA-Z][a-zA-Z0-9+.-]*://[^\s"'<>]+`)

// ErrorText is the text of a transport error as attempts, test-sends and
// webhook delivery logs show it, which viewers and API keys read: every
// URL in it (a *url.Error quotes the whole URL, whose path or query is the
// credential of a webhook) is cut to its scheme and host, and a DNS error
// does not name the resolver it asked.
func ErrorText(err error) string {
	msg := err.Error()
	var de *net.DNSError
	if errors.As(err, &de) && de.Server != "" {
		msg = strings.ReplaceAll(msg, " on "+de.Server, "")
		// A network error of the lookup may name it again.
		msg = strings.ReplaceAll(msg, de.Server, "the resolver")
	}
	return urlRE.ReplaceAllStringFunc(msg, RedactURL)
}

// RedactIn replaces secretURL, and its path and query, wherever they occur
// in msg (a receiver's answer may echo them) by the redacted URL.
func RedactIn(msg, secretURL string) string {
	msg = strings.ReplaceAll(msg, secretURL, RedactURL(secretURL))
	u, err := url.Parse(secretURL)
	if err != nil {
		return msg
	}
	for _, part := range []string{u.EscapedPath(), u.Path, u.RawQuery} {
		if len(part) > 1 {
			msg = strings.ReplaceAll(msg, part, "…")
		}
	}
	return msg
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

// RedactURL hides the path and query of a URL (the credential of an
// incoming webhook) and keeps its scheme and host; Slack's and Discord's
// webhook URLs keep the fixed part that names the kind ("/services/…").
func RedactURL(s string) string {
	u, err := url.Parse(s)
	if err != nil || u.Host == "" {
		// Not a URL with a host: keep nothing after the scheme.
		if i := strings.Index(s, "://"); i >= 0 {
			return s[:i+3] + "…"
		}
		return "…"
	}
	out := u.Scheme + "://" + u.Host
	for _, marker := range []string{"/services/", "/api/webhooks/"} {
		if strings.HasPrefix(u.Path, marker) {
			return out + marker + "…"
		}
	}
	if (u.Path != "" && u.Path != "/") || u.RawQuery != "" || u.Fragment != "" {
		out += "/…"
	}
	return out
}
