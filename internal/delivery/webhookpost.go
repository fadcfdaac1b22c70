package delivery

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/notifyd/notifyd/internal/notify"
	"github.com/notifyd/notifyd/internal/provider"
)

// DefaultWebhookTimeout bounds one webhook try when Options.WebhookTimeout
// is zero.
const DefaultWebhookTimeout = 10 * time.Second

// webhookPoster makes the HTTP tries of webhook deliveries.
type webhookPoster struct {
	client  *http.Client
	timeout time.Duration
}

// newWebhookPoster builds the SSRF-guarded client of webhook tries
// (allowPrivate turns the guard off), which follows no redirect.
func newWebhookPoster(allowPrivate bool, timeout time.Duration) *webhookPoster {
	if timeout <= 0 {
		timeout = DefaultWebhookTimeout
	}
	c := *provider.NewHTTPClient(provider.HTTPOptions{AllowPrivate: allowPrivate, Timeout: timeout})
	// A redirect is not followed: the client would turn the POST into a
	// GET without the body, and a 2xx from that must not count as
	// delivered. The 3xx is logged and retried like any non-2xx.
	c.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	return &webhookPoster{client: &c, timeout: timeout}
}

// responseExcerptMax is how much of a receiver's answer the log keeps.
const responseExcerptMax = 1024

// PostWebhook makes one HTTP try of a webhook delivery: it posts p.Body
// to p.URL with the Standard Webhooks headers, within the webhook
// timeout, and reports the receiver's answer.
func (e *Engine) PostWebhook(ctx context.Context, p notify.WebhookPost) (out notify.WebhookPostResult) {
	w := e.webhooks
	cctx, cancel := context.WithTimeout(ctx, w.timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(cctx, http.MethodPost, p.URL, bytes.NewReader(p.Body))
	if err != nil {
		// The parse error quotes the whole URL, whose path may be a token.
		return notify.WebhookPostResult{Error: "invalid url " + provider.RedactURL(p.URL)}
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", "notifyd-webhooks")
	req.Header.Set("webhook-id", p.ID)
	req.Header.Set("webhook-timestamp", strconv.FormatInt(p.Timestamp, 10))
	req.Header.Set("webhook-signature", p.Signature)
	if e.tracer.On() {
		span := e.startWebhook(ctx, req, p)
		defer func() { endWebhook(span, p.URL, out) }()
	}
	out = notify.WebhookPostResult{Tried: true}
	start := time.Now()
	resp, err := w.client.Do(req)
	if err == nil {
		excerpt, _ := io.ReadAll(io.LimitReader(resp.Body, responseExcerptMax))
		_, _ = io.CopyN(io.Discard, resp.Body, 64<<10) // lets the connection be reused
		_ = resp.Body.Close()
		code := resp.StatusCode
		out.Status, out.Response = &code, textExcerpt(excerpt)
		if code < 200 || code > 299 {
			out.Error = "HTTP " + strconv.Itoa(code)
		}
	} else {
		out.Error = tryError(err, w.timeout)
	}
	out.Duration = time.Since(start)
	return out
}

// textExcerpt keeps a response body storable as text.
func textExcerpt(b []byte) string {
	s := strings.ToValidUTF8(string(b), "\uFFFD")
	s = strings.ReplaceAll(s, "\x00", "")
	for len(s) > responseExcerptMax { // the replacement rune can grow it
		_, n := utf8.DecodeLastRuneInString(s)
		s = s[:len(s)-n]
	}
	return s
}

func tryError(err error, timeout time.Duration) string {
	var ne net.Error
	switch {
	case errors.Is(err, provider.ErrBlockedTarget):
		return "target address is not allowed (private targets are disabled)"
	case errors.Is(err, context.DeadlineExceeded) || (errors.As(err, &ne) && ne.Timeout()):
		return "timeout after " + timeout.String()
	}
	// The URL's path and query may be a credential, the resolver is the
	// host's business: neither belongs in the delivery log.
	msg := textExcerpt([]byte(provider.ErrorText(err)))
	if len(msg) > 500 {
		msg = msg[:500]
	}
	return strings.ToValidUTF8(msg, "")
}
