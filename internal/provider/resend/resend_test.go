package resend_test

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/notifyd/notifyd/internal/notify"
	"github.com/notifyd/notifyd/internal/provider"
	"github.com/notifyd/notifyd/internal/provider/resend"
)

var update = flag.Bool("update", false, "rewrite testdata/*.golden")

const apiKey = "re_test_secret_key"

// captured is one request the fake Resend received.
type captured struct {
	Method, Path string
	Header       http.Header
	Body         []byte
}

type fake struct {
	mu   sync.Mutex
	reqs []captured
}

func (f *fake) last(t *testing.T) captured {
	t.Helper()
	f.mu.Lock()
	defer f.mu.Unlock()
	require.NotEmpty(t, f.reqs)
	return f.reqs[len(f.reqs)-1]
}

// serve starts a fake Resend answering every call with status and body.
func serve(t *testing.T, status int, body string, header ...string) (*fake, provider.Provider) {
	t.Helper()
	f := &fake{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		f.mu.Lock()
		f.reqs = append(f.reqs, captured{r.Method, r.URL.Path, r.Header.Clone(), b})
		f.mu.Unlock()
		for i := 0; i+1 < len(header); i += 2 {
			w.Header().Set(header[i], header[i+1])
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		_, _ = io.WriteString(w, body)
	}))
	t.Cleanup(srv.Close)
	return f, newProvider(t, srv.URL, 2*time.Second)
}

func newProvider(t *testing.T, baseURL string, timeout time.Duration) provider.Provider {
	t.Helper()
	p, err := resend.New(provider.Config{
		"mailx_api_key":    apiKey,
		"mailx_from_email": "Acme <noreply@acme.test>",
		// A path in base_url is ignored: only scheme and host are replaced.
		"base_url": baseURL + "/ignored",
	}, provider.Deps{HTTP: provider.NewHTTPClient(provider.HTTPOptions{AllowPrivate: true, Timeout: timeout})})
	require.NoError(t, err)
	return p
}

func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name+".golden")
	if *update {
		require.NoError(t, os.MkdirAll("testdata", 0o755))
		require.NoError(t, os.WriteFile(path, got, 0o644))
	}
	want, err := os.ReadFile(path)
	require.NoError(t, err, "run go test -update to create %s", path)
	require.Equal(t, string(want), string(got))
}

func msg(to string) provider.Message {
	return provider.Message{
		ID:      "req-" + to,
		Channel: notify.ChannelEmail,
		To:      to,
		Title:   "Your code",
		Text:    "Code 123456 & more",
		HTML:    "<p>Code <b>123456</b></p>",
	}
}

func requireNoSecret(t *testing.T, ex provider.Exchange) {
	t.Helper()
	require.NotContains(t, string(mustJSON(t, ex)), apiKey)
}

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	require.NoError(t, err)
	return b
}

func TestKind(t *testing.T) {
	t.Parallel()
	k := resend.Kind()
	require.Equal(t, "mailx_email", k.ID)
	require.Equal(t, notify.ChannelEmail, k.Channel)
	require.Equal(t, []string{"mailx_api_key", "mailx_from_email"}, k.Required)
	require.Empty(t, k.Optional)
	require.Equal(t, provider.BatchDefaults{CallsPerSecond: 2, Window: 750 * time.Millisecond, MaxSize: 100}, k.Batch)
	require.NotNil(t, k.New)
}

func TestNewMissingKey(t *testing.T) {
	t.Parallel()
	full := provider.Config{"mailx_api_key": "k", "mailx_from_email": "a@b.test"}
	for _, key := range resend.Kind().Required {
		cfg := provider.Config{}
		for k, v := range full {
			if k != key {
				cfg[k] = v
			}
		}
		_, err := resend.New(cfg, provider.Deps{})
		var perr *provider.Error
		require.True(t, errors.As(err, &perr), key)
		require.Equal(t, notify.FailureInvalidRequest, perr.Code)
		require.Contains(t, perr.Message, key)
	}
	full["base_url"] = "ftp://nope"
	_, err := resend.New(full, provider.Deps{})
	var perr *provider.Error
	require.True(t, errors.As(err, &perr))
	require.Equal(t, notify.FailureInvalidRequest, perr.Code)
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
	require.Len(t, res, 1)
	require.Nil(t, res[0].Err)
	require.Equal(t, "49a3999c-0ce1-4ea6-ab68-afcd6dc2e794", res[0].MessageID)

	got := f.last(t)
	require.Equal(t, http.MethodPost, got.Method)
	require.Equal(t, "/emails", got.Path)
	require.Equal(t, "Bearer "+apiKey, got.Header.Get("Authorization"))
	require.Equal(t, "application/json", got.Header.Get("Content-Type"))
	require.Empty(t, got.Header.Get("X-Batch-Validation"))
	require.Empty(t, got.Header.Get("Idempotency-Key"), "no key outside a queued run")
	golden(t, "single", got.Body)

	require.Equal(t, 200, res[0].Exchange.Response.HTTPStatus)
	require.True(t, strings.HasSuffix(res[0].Exchange.URL, "/emails"))
	requireNoSecret(t, res[0].Exchange)
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
	require.Equal(t, "req/1/acc", f.last(t).Header.Get("Idempotency-Key"))
}

func TestSendBatch(t *testing.T) {
	t.Parallel()
	f, p := serve(t, 200, `{"data":[{"id":"id-1"},{"id":"id-2"},{"id":"id-3"}]}`)
	res := p.Send(context.Background(), []provider.Message{msg("a@x.test"), msg("b@x.test"), msg("c@x.test")})
	require.Len(t, res, 3)
	for i, want := range []string{"id-1", "id-2", "id-3"} {
		require.Nil(t, res[i].Err)
		require.Equal(t, want, res[i].MessageID)
		requireNoSecret(t, res[i].Exchange)
	}
	got := f.last(t)
	require.Equal(t, "/emails/batch", got.Path)
	require.Equal(t, "permissive", got.Header.Get("X-Batch-Validation"))
	golden(t, "batch", got.Body)
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
			require.NotNil(t, res[0].Err)
			require.Equal(t, c.want, res[0].Err.Code)
			require.Equal(t, c.status, res[0].Exchange.Response.HTTPStatus)
			require.Empty(t, res[0].MessageID)
		})
	}
}

func TestTimeout(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// Reading the body lets the server notice the client hanging up.
		_, _ = io.Copy(io.Discard, r.Body)
		select {
		case <-r.Context().Done():
		case <-time.After(5 * time.Second):
		}
	}))
	t.Cleanup(srv.Close)
	p := newProvider(t, srv.URL, 100*time.Millisecond)
	res := p.Send(context.Background(), []provider.Message{msg("a@x.test"), msg("b@x.test")})
	require.Len(t, res, 2)
	for _, r := range res {
		require.NotNil(t, r.Err)
		require.Equal(t, notify.FailureTemporaryUnavailable, r.Err.Code)
		require.Nil(t, r.Exchange.Response)
	}
}

// An account may raise its batch size above Resend's 100 per call: Send
// splits, and a lone remainder goes to /emails.
func TestSendSplitsOverBatchLimit(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	var calls []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		w.Header().Set("Content-Type", "application/json")
		if r.URL.Path == "/emails" {
			mu.Lock()
			calls = append(calls, "/emails:1")
			mu.Unlock()
			_, _ = io.WriteString(w, `{"id":"single"}`)
			return
		}
		var items []json.RawMessage
		if err := json.Unmarshal(b, &items); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		mu.Lock()
		calls = append(calls, r.URL.Path+":"+strconv.Itoa(len(items)))
		mu.Unlock()
		data := make([]map[string]string, len(items))
		for i := range data {
			data[i] = map[string]string{"id": "b" + strconv.Itoa(i)}
		}
		_ = json.NewEncoder(w).Encode(map[string]any{"data": data})
	}))
	t.Cleanup(srv.Close)
	p := newProvider(t, srv.URL, 2*time.Second)
	msgs := make([]provider.Message, 101)
	for i := range msgs {
		msgs[i] = msg("user" + strconv.Itoa(i) + "@example.com")
	}
	res := p.Send(context.Background(), msgs)
	require.Len(t, res, 101)
	for i, r := range res {
		require.Nil(t, r.Err, "message %d", i)
	}
	require.Equal(t, "b99", res[99].MessageID)
	require.Equal(t, "single", res[100].MessageID)
	require.Equal(t, []string{"/emails/batch:100", "/emails:1"}, calls)
}
