package resend_test

import (
	"context"
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/notifyd/notifyd/internal/notify"
	"github.com/notifyd/notifyd/internal/provider"
	"github.com/notifyd/notifyd/internal/provider/providertest"
	"github.com/notifyd/notifyd/internal/provider/resend"
)

const apiKey = "re_test_secret_key"

// serve starts a fake Resend answering every call with status, body and
// the header pairs.
func serve(t *testing.T, status int, body string, header ...string) (*providertest.Recorder, provider.Provider) {
	t.Helper()
	h := map[string]string{"Content-Type": "application/json"}
	for i := 0; i+1 < len(header); i += 2 {
		h[header[i]] = header[i+1]
	}
	rec, srv := providertest.NewRecorder(t, status, body, h)
	return rec, newProvider(t, srv.URL, 2*time.Second)
}

func newProvider(t *testing.T, baseURL string, timeout time.Duration) provider.Provider {
	t.Helper()
	p, err := resend.Kind().New(provider.Config{
		"mailx_api_key":    apiKey,
		"mailx_from_email": "Acme <noreply@acme.test>",
		// A path in base_url is ignored: only scheme and host are replaced.
		"base_url": baseURL + "/ignored",
	}, provider.Deps{HTTP: providertest.Client(timeout)})
	require.NoError(t, err)
	return p
}

var msg = providertest.MailMessage

func TestKind(t *testing.T) {
	t.Parallel()
	providertest.RequireKind(t, resend.Kind(), providertest.KindWant{
		ID: "mailx_email", Channel: notify.ChannelEmail,
		Required: []string{"mailx_api_key", "mailx_from_email"},
		Batch:    provider.BatchDefaults{CallsPerSecond: 2, Window: 750 * time.Millisecond, MaxSize: 100}, Identities: true,
	})
}

func TestNewMissingKey(t *testing.T) {
	t.Parallel()
	full := provider.Config{"mailx_api_key": "k", "mailx_from_email": "a@b.test"}
	providertest.RequireEachRequired(t, resend.Kind(), full)
	full["base_url"] = "ftp://nope"
	providertest.RequireInvalid(t, resend.Kind(), full)
}

func TestSendSingle(t *testing.T) {
	t.Parallel()
	f, p := serve(t, 200, `{"id":"49a3999c-0ce1-4ea6-ab68-afcd6dc2e794"}`)
	m := msg("user@example.test")
	m.Headers = map[string]string{
		"List-Unsubscribe":      "<https://notifyd.test/u/abc>",
		"List-Unsubscribe-Post": "List-Unsubscribe=One-Click",
	}
	res := p.Send(context.Background(), []provider.Message{m})
	providertest.RequireSent(t, res, []string{"49a3999c-0ce1-4ea6-ab68-afcd6dc2e794"}, apiKey)

	got := f.Last(t)
	require.Equal(t, http.MethodPost, got.Method)
	require.Equal(t, "/emails", got.Path)
	require.Equal(t, "Bearer "+apiKey, got.Header.Get("Authorization"))
	require.Equal(t, "application/json", got.Header.Get("Content-Type"))
	require.Empty(t, got.Header.Get("X-Batch-Validation"))
	require.Empty(t, got.Header.Get("Idempotency-Key"), "no key outside a queued run")
	providertest.Golden(t, "single", got.Body)

	require.Equal(t, 200, res[0].Exchange.Response.HTTPStatus)
	require.True(t, strings.HasSuffix(res[0].Exchange.URL, "/emails"))
}

// TestSendSingleIdempotencyKey: a single send carries the message's
// idempotency key, so Resend drops a repeat after a crash.
func TestSendSingleIdempotencyKey(t *testing.T) {
	t.Parallel()
	f, p := serve(t, 200, `{"id":"49a3999c-0ce1-4ea6-ab68-afcd6dc2e794"}`)
	m := msg("user@example.test")
	m.IdempotencyKey = "req/1/acc"
	res := p.Send(context.Background(), []provider.Message{m})
	require.Nil(t, res[0].Err)
	require.Equal(t, "req/1/acc", f.Last(t).Header.Get("Idempotency-Key"))
}

func TestSendBatch(t *testing.T) {
	t.Parallel()
	f, p := serve(t, 200, `{"data":[{"id":"id-1"},{"id":"id-2"},{"id":"id-3"}]}`)
	res := p.Send(context.Background(), []provider.Message{msg("a@x.test"), msg("b@x.test"), msg("c@x.test")})
	providertest.RequireSent(t, res, []string{"id-1", "id-2", "id-3"}, apiKey)
	got := f.Last(t)
	require.Equal(t, "/emails/batch", got.Path)
	require.Equal(t, "permissive", got.Header.Get("X-Batch-Validation"))
	providertest.Golden(t, "batch", got.Body)
}

func TestSendBatchPartialFailure(t *testing.T) {
	t.Parallel()
	_, p := serve(t, 200, `{"data":[{"id":"id-1"},{"id":"id-3"}],"errors":[{"index":1,"message":"Invalid `+"`to`"+` field."}]}`)
	res := p.Send(context.Background(), []provider.Message{msg("a@x.test"), msg("bad"), msg("c@x.test")})
	require.Len(t, res, 3)
	require.Nil(t, res[0].Err)
	require.Equal(t, "id-1", res[0].MessageID)
	require.NotNil(t, res[1].Err)
	require.Equal(t, notify.FailureInvalidRequest, res[1].Err.Code)
	require.Contains(t, res[1].Err.Message, "Invalid")
	require.Empty(t, res[1].MessageID)
	require.Nil(t, res[2].Err)
	require.Equal(t, "id-3", res[2].MessageID)
}

func TestSendBatchWholeFailure(t *testing.T) {
	t.Parallel()
	_, p := serve(t, 429, `{"statusCode":429,"name":"rate_limit_exceeded","message":"Too many requests."}`, "Retry-After", "2")
	res := p.Send(context.Background(), []provider.Message{msg("a@x.test"), msg("b@x.test")})
	require.Len(t, res, 2)
	for _, r := range res {
		require.NotNil(t, r.Err)
		require.Equal(t, notify.FailureRateLimited, r.Err.Code)
		require.Equal(t, 2*time.Second, r.Err.RetryAfter)
	}
}

// TestErrorMapping pins every row of the mapping table.
func TestErrorMapping(t *testing.T) {
	t.Parallel()
	cases := []struct {
		status int
		name   string
		want   notify.FailureCode
	}{
		{429, "daily_quota_exceeded", notify.FailureCreditExhausted},
		{429, "monthly_quota_exceeded", notify.FailureCreditExhausted},
		{429, "rate_limit_exceeded", notify.FailureRateLimited},
		{401, "missing_api_key", notify.FailureUnauthorized},
		{401, "restricted_api_key", notify.FailureUnauthorized},
		{403, "invalid_api_key", notify.FailureUnauthorized},
		{403, "validation_error", notify.FailureUnauthorized},
		{400, "validation_error", notify.FailureInvalidRequest},
		{422, "validation_error", notify.FailureInvalidRequest},
		{422, "invalid_from_address", notify.FailureInvalidRequest},
		{422, "missing_required_field", notify.FailureInvalidRequest},
		{409, "invalid_idempotent_request", notify.FailureUnknown},
		{409, "concurrent_idempotent_requests", notify.FailureUnknown},
		{500, "application_error", notify.FailureTemporaryUnavailable},
		{500, "internal_server_error", notify.FailureTemporaryUnavailable},
		// Names not in the table fall to SPEC's status rule, then unknown.
		{503, "", notify.FailureTemporaryUnavailable},
		{429, "something_new", notify.FailureRateLimited},
		{403, "something_new", notify.FailureUnauthorized},
		{404, "not_found", notify.FailureUnknown},
	}
	for _, c := range cases {
		t.Run(c.name+"_"+http.StatusText(c.status), func(t *testing.T) {
			t.Parallel()
			body := `{"statusCode":` + strconv.Itoa(c.status) + `,"name":"` + c.name + `","message":"boom"}`
			_, p := serve(t, c.status, body)
			res := p.Send(context.Background(), []provider.Message{msg("a@x.test")})
			require.Len(t, res, 1)
			providertest.RequireFailure(t, res[0], c.want, c.status)
			require.Empty(t, res[0].MessageID)
		})
	}
}

func TestTimeout(t *testing.T) {
	t.Parallel()
	p := newProvider(t, providertest.Hang(t), 100*time.Millisecond)
	providertest.RequireTimeouts(t, p, msg("a@x.test"), msg("b@x.test"))
}

// An account may raise its batch size above Resend's 100 per call: Send
// splits, and a lone remainder goes to /emails.
func TestSendSplitsOverBatchLimit(t *testing.T) {
	t.Parallel()
	f := providertest.NewBatchVendor(t, "/emails", `{"id":"single"}`, func(n int) string {
		data := make([]map[string]string, n)
		for i := range data {
			data[i] = map[string]string{"id": "b" + strconv.Itoa(i)}
		}
		b, _ := json.Marshal(map[string]any{"data": data})
		return string(b)
	})
	p := newProvider(t, f.URL, 2*time.Second)
	res := p.Send(context.Background(), providertest.MailMessages(101))
	require.Len(t, res, 101)
	for i, r := range res {
		require.Nil(t, r.Err, "message %d", i)
	}
	require.Equal(t, "b99", res[99].MessageID)
	require.Equal(t, "single", res[100].MessageID)
	require.Equal(t, []string{"/emails/batch:100", "/emails:1"}, f.Calls(t))
}
