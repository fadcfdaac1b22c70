package postmark_test

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/notifyd/notifyd/internal/notify"
	"github.com/notifyd/notifyd/internal/provider"
	"github.com/notifyd/notifyd/internal/provider/postmark"
)

var update = flag.Bool("update", false, "rewrite testdata/*.golden")

const serverToken = "pm-server-token-secret"

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

// serve starts a fake Postmark answering every call with status and body.
func serve(t *testing.T, cfg provider.Config, status int, body string) (*fake, provider.Provider) {
	t.Helper()
	f := &fake{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		f.mu.Lock()
		f.reqs = append(f.reqs, captured{r.Method, r.URL.Path, r.Header.Clone(), b})
		f.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		_, _ = io.WriteString(w, body)
	}))
	t.Cleanup(srv.Close)
	return f, newProvider(t, cfg, srv.URL, 2*time.Second)
}

func newProvider(t *testing.T, cfg provider.Config, baseURL string, timeout time.Duration) provider.Provider {
	t.Helper()
	full := provider.Config{
		"mailz_api_key":    serverToken,
		"mailz_from_email": "noreply@acme.test",
		"base_url":         baseURL,
	}
	for k, v := range cfg {
		full[k] = v
	}
	p, err := postmark.New(full, provider.Deps{HTTP: provider.NewHTTPClient(provider.HTTPOptions{AllowPrivate: true, Timeout: timeout})})
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

func okResult(to, id string) string {
	return fmt.Sprintf(`{"To":%q,"SubmittedAt":"2026-01-02T03:04:05.0000000Z","MessageID":%q,"ErrorCode":0,"Message":"OK"}`, to, id)
}

func requireNoSecret(t *testing.T, ex provider.Exchange) {
	t.Helper()
	b, err := json.Marshal(ex)
	require.NoError(t, err)
	require.NotContains(t, string(b), serverToken)
}

func TestKind(t *testing.T) {
	t.Parallel()
	k := postmark.Kind()
	require.Equal(t, "mailz_email", k.ID)
	require.Equal(t, notify.ChannelEmail, k.Channel)
	require.Equal(t, []string{"mailz_api_key", "mailz_from_email"}, k.Required)
	require.Equal(t, []string{"mailz_from_name"}, k.Optional)
	require.Equal(t, provider.BatchDefaults{CallsPerSecond: 2, Window: time.Second, MaxSize: 100}, k.Batch)
}

func TestNewMissingKey(t *testing.T) {
	t.Parallel()
	full := provider.Config{"mailz_api_key": "k", "mailz_from_email": "a@b.test"}
	for _, key := range postmark.Kind().Required {
		cfg := provider.Config{}
		for k, v := range full {
			if k != key {
				cfg[k] = v
			}
		}
		_, err := postmark.New(cfg, provider.Deps{})
		var perr *provider.Error
		require.True(t, errors.As(err, &perr), key)
		require.Equal(t, notify.FailureInvalidRequest, perr.Code)
		require.Contains(t, perr.Message, key)
	}
}

func TestFormatFrom(t *testing.T) {
	t.Parallel()
	cases := []struct{ name, want string }{
		{"notifyd", "notifyd <a@b.test>"},
		{"Acme Team", "Acme Team <a@b.test>"},
		{"Acme, Inc.", `"Acme, Inc." <a@b.test>`},
		{"J. Doe", `"J. Doe" <a@b.test>`},
		{`Say "hi" \o/`, `"Say \"hi\" \\o/" <a@b.test>`},
		{"홍길동 상점", "홍길동 상점 <a@b.test>"},
		{"Evil\r\nBcc: x@y.test", `"EvilBcc: x@y.test" <a@b.test>`},
		{"", "a@b.test"},
	}
	for _, c := range cases {
		require.Equal(t, c.want, postmark.FormatFrom(c.name, "a@b.test"), c.name)
	}
}

func TestSendSingle(t *testing.T) {
	t.Parallel()
	f, p := serve(t, provider.Config{"mailz_from_name": "Acme, Inc."}, 200, okResult("user@example.test", "b7bc2f4a-e38e-4336-af7d-e6c392c2f817"))
	res := p.Send(context.Background(), []provider.Message{msg("user@example.test")})
	require.Len(t, res, 1)
	require.Nil(t, res[0].Err)
	require.Equal(t, "b7bc2f4a-e38e-4336-af7d-e6c392c2f817", res[0].MessageID)
	got := f.last(t)
	require.Equal(t, http.MethodPost, got.Method)
	require.Equal(t, "/email", got.Path)
	require.Equal(t, serverToken, got.Header.Get("X-Postmark-Server-Token"))
	require.Equal(t, "application/json", got.Header.Get("Accept"))
	require.Equal(t, "application/json", got.Header.Get("Content-Type"))
	golden(t, "single", got.Body)
	requireNoSecret(t, res[0].Exchange)
}

// A List-Unsubscribe header marks bulk mail: it goes on the broadcast stream.
func TestSendBroadcastStream(t *testing.T) {
	t.Parallel()
	f, p := serve(t, nil, 200, okResult("user@example.test", "m-1"))
	m := msg("user@example.test")
	m.Headers = map[string]string{
		"List-Unsubscribe-Post": "List-Unsubscribe=One-Click",
		"List-Unsubscribe":      "<https://notifyd.test/u/abc>",
	}
	res := p.Send(context.Background(), []provider.Message{m})
	require.Nil(t, res[0].Err)
	golden(t, "broadcast", f.last(t).Body)
}

func TestSendBatch(t *testing.T) {
	t.Parallel()
	f, p := serve(t, nil, 200, "["+okResult("a@x.test", "m-1")+","+okResult("b@x.test", "m-2")+","+okResult("c@x.test", "m-3")+"]")
	res := p.Send(context.Background(), []provider.Message{msg("a@x.test"), msg("b@x.test"), msg("c@x.test")})
	require.Len(t, res, 3)
	for i, want := range []string{"m-1", "m-2", "m-3"} {
		require.Nil(t, res[i].Err)
		require.Equal(t, want, res[i].MessageID)
		requireNoSecret(t, res[i].Exchange)
	}
	got := f.last(t)
	require.Equal(t, "/email/batch", got.Path)
	golden(t, "batch", got.Body)
}

func TestSendBatchPartialFailure(t *testing.T) {
	t.Parallel()
	_, p := serve(t, nil, 200, "["+okResult("a@x.test", "m-1")+
		`,{"ErrorCode":406,"Message":"You tried to send to a recipient that has been marked as inactive."}`+
		","+okResult("c@x.test", "m-3")+"]")
	res := p.Send(context.Background(), []provider.Message{msg("a@x.test"), msg("b@x.test"), msg("c@x.test")})
	require.Len(t, res, 3)
	require.Nil(t, res[0].Err)
	require.Equal(t, "m-1", res[0].MessageID)
	require.NotNil(t, res[1].Err)
	require.Equal(t, notify.FailureInvalidRequest, res[1].Err.Code)
	require.Contains(t, res[1].Err.Message, "406")
	require.Nil(t, res[2].Err)
	require.Equal(t, "m-3", res[2].MessageID)
}

// mappingRows is the ErrorCode table; each row is checked as a call-level
// answer and as a per-message batch result.
var mappingRows = []struct {
	errorCode int
	status    int // HTTP status Postmark answers a single send with
	want      notify.FailureCode
}{
	{10, 401, notify.FailureUnauthorized},
	{100, 503, notify.FailureTemporaryUnavailable},
	{300, 422, notify.FailureInvalidRequest},
	{405, 422, notify.FailureCreditExhausted},
	{406, 422, notify.FailureInvalidRequest},
	{429, 429, notify.FailureRateLimited},
	// The rest of the 3xx/4xx block: sender signature, JSON, size.
	{400, 422, notify.FailureInvalidRequest},
	{401, 422, notify.FailureInvalidRequest},
	{402, 422, notify.FailureInvalidRequest},
	{412, 422, notify.FailureInvalidRequest},
	{499, 422, notify.FailureInvalidRequest},
	// Outside the table: unknown, or SPEC's status rule when it says more.
	{1235, 422, notify.FailureUnknown},
	{701, 500, notify.FailureTemporaryUnavailable},
}

func TestErrorMappingCall(t *testing.T) {
	t.Parallel()
	for _, c := range mappingRows {
		t.Run(fmt.Sprint(c.errorCode), func(t *testing.T) {
			t.Parallel()
			_, p := serve(t, nil, c.status, fmt.Sprintf(`{"ErrorCode":%d,"Message":"boom"}`, c.errorCode))
			res := p.Send(context.Background(), []provider.Message{msg("a@x.test")})
			require.NotNil(t, res[0].Err)
			require.Equal(t, c.want, res[0].Err.Code)
			require.Equal(t, c.status, res[0].Exchange.Response.HTTPStatus)
		})
	}
}

func TestErrorMappingBatchItem(t *testing.T) {
	t.Parallel()
	for _, c := range mappingRows {
		if c.status >= 500 {
			continue // a per-message result carries no HTTP status
		}
		t.Run(fmt.Sprint(c.errorCode), func(t *testing.T) {
			t.Parallel()
			_, p := serve(t, nil, 200, "["+okResult("a@x.test", "m-1")+fmt.Sprintf(`,{"ErrorCode":%d,"Message":"boom"}]`, c.errorCode))
			res := p.Send(context.Background(), []provider.Message{msg("a@x.test"), msg("b@x.test")})
			require.Nil(t, res[0].Err)
			require.NotNil(t, res[1].Err)
			require.Equal(t, c.want, res[1].Err.Code)
		})
	}
}

// Answers without a Postmark body go by SPEC's HTTP status rule.
func TestErrorMappingStatusOnly(t *testing.T) {
	t.Parallel()
	cases := []struct {
		status int
		want   notify.FailureCode
	}{
		{401, notify.FailureUnauthorized},
		{403, notify.FailureUnauthorized},
		{429, notify.FailureRateLimited},
		{500, notify.FailureTemporaryUnavailable},
		{503, notify.FailureTemporaryUnavailable},
		{404, notify.FailureUnknown},
	}
	for _, c := range cases {
		t.Run(fmt.Sprint(c.status), func(t *testing.T) {
			t.Parallel()
			_, p := serve(t, nil, c.status, "<html>oops</html>")
			res := p.Send(context.Background(), []provider.Message{msg("a@x.test"), msg("b@x.test")})
			for _, r := range res {
				require.NotNil(t, r.Err)
				require.Equal(t, c.want, r.Err.Code)
			}
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
	p := newProvider(t, nil, srv.URL, 100*time.Millisecond)
	res := p.Send(context.Background(), []provider.Message{msg("a@x.test")})
	require.NotNil(t, res[0].Err)
	require.Equal(t, notify.FailureTemporaryUnavailable, res[0].Err.Code)
	require.Nil(t, res[0].Exchange.Response)
}

// An account may raise its batch size above Postmark's 500 per call: Send
// splits, and a lone remainder goes to /email.
func TestSendSplitsOverBatchLimit(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	var calls []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		w.Header().Set("Content-Type", "application/json")
		if r.URL.Path == "/email" {
			mu.Lock()
			calls = append(calls, "/email:1")
			mu.Unlock()
			_, _ = io.WriteString(w, okResult("x@example.com", "single"))
			return
		}
		var items []json.RawMessage
		if err := json.Unmarshal(b, &items); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		mu.Lock()
		calls = append(calls, fmt.Sprintf("%s:%d", r.URL.Path, len(items)))
		mu.Unlock()
		out := make([]string, len(items))
		for i := range out {
			out[i] = okResult("x@example.com", fmt.Sprintf("b%d", i))
		}
		_, _ = io.WriteString(w, "["+strings.Join(out, ",")+"]")
	}))
	t.Cleanup(srv.Close)
	p := newProvider(t, nil, srv.URL, 2*time.Second)
	msgs := make([]provider.Message, 501)
	for i := range msgs {
		msgs[i] = msg(fmt.Sprintf("user%d@example.com", i))
	}
	res := p.Send(context.Background(), msgs)
	require.Len(t, res, 501)
	for i, r := range res {
		require.Nil(t, r.Err, "message %d", i)
	}
	require.Equal(t, "b499", res[499].MessageID)
	require.Equal(t, "single", res[500].MessageID)
	require.Equal(t, []string{"/email/batch:500", "/email:1"}, calls)
}
