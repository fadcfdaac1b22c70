package postmark_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/notifyd/notifyd/internal/notify"
	"github.com/notifyd/notifyd/internal/provider"
	"github.com/notifyd/notifyd/internal/provider/postmark"
	"github.com/notifyd/notifyd/internal/provider/providertest"
)

const serverToken = "pm-server-token-secret"

// serve starts a fake Postmark answering every call with status and body.
func serve(t *testing.T, cfg provider.Config, status int, body string) (*providertest.Recorder, provider.Provider) {
	t.Helper()
	rec, srv := providertest.NewRecorder(t, status, body, map[string]string{"Content-Type": "application/json"})
	return rec, newProvider(t, cfg, srv.URL, 2*time.Second)
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
	p, err := postmark.Kind().New(full, provider.Deps{HTTP: providertest.Client(timeout)})
	require.NoError(t, err)
	return p
}

var msg = providertest.MailMessage

func okResult(to, id string) string {
	return fmt.Sprintf(`{"To":%q,"SubmittedAt":"2026-01-02T03:04:05.0000000Z","MessageID":%q,"ErrorCode":0,"Message":"OK"}`, to, id)
}

func TestKind(t *testing.T) {
	t.Parallel()
	providertest.RequireKind(t, postmark.Kind(), providertest.KindWant{
		ID: "mailz_email", Channel: notify.ChannelEmail,
		Required: []string{"mailz_api_key", "mailz_from_email"}, Optional: []string{"mailz_from_name"},
		Batch: provider.BatchDefaults{CallsPerSecond: 2, Window: time.Second, MaxSize: 100}, Identities: true,
	})
}

func TestNewMissingKey(t *testing.T) {
	t.Parallel()
	full := provider.Config{"mailz_api_key": "k", "mailz_from_email": "a@b.test"}
	providertest.RequireEachRequired(t, postmark.Kind(), full)
}

func TestSendSingle(t *testing.T) {
	t.Parallel()
	f, p := serve(t, provider.Config{"mailz_from_name": "Acme, Inc."}, 200, okResult("user@example.test", "b7bc2f4a-e38e-4336-af7d-e6c392c2f817"))
	res := p.Send(context.Background(), []provider.Message{msg("user@example.test")})
	providertest.RequireSent(t, res, []string{"b7bc2f4a-e38e-4336-af7d-e6c392c2f817"}, serverToken)
	got := f.Last(t)
	require.Equal(t, http.MethodPost, got.Method)
	require.Equal(t, "/email", got.Path)
	require.Equal(t, serverToken, got.Header.Get("X-Postmark-Server-Token"))
	require.Equal(t, "application/json", got.Header.Get("Accept"))
	require.Equal(t, "application/json", got.Header.Get("Content-Type"))
	providertest.Golden(t, "single", got.Body)
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
	providertest.Golden(t, "broadcast", f.Last(t).Body)
}

func TestSendBatch(t *testing.T) {
	t.Parallel()
	f, p := serve(t, nil, 200, "["+okResult("a@x.test", "m-1")+","+okResult("b@x.test", "m-2")+","+okResult("c@x.test", "m-3")+"]")
	res := p.Send(context.Background(), []provider.Message{msg("a@x.test"), msg("b@x.test"), msg("c@x.test")})
	providertest.RequireSent(t, res, []string{"m-1", "m-2", "m-3"}, serverToken)
	got := f.Last(t)
	require.Equal(t, "/email/batch", got.Path)
	providertest.Golden(t, "batch", got.Body)
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
			providertest.RequireFailure(t, res[0], c.want, c.status)
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
	p := newProvider(t, nil, providertest.Hang(t), 100*time.Millisecond)
	providertest.RequireTimeouts(t, p, msg("a@x.test"))
}

// An account may raise its batch size above Postmark's 500 per call: Send
// splits, and a lone remainder goes to /email.
func TestSendSplitsOverBatchLimit(t *testing.T) {
	t.Parallel()
	f := providertest.NewBatchVendor(t, "/email", okResult("x@example.com", "single"), func(n int) string {
		out := make([]string, n)
		for i := range out {
			out[i] = okResult("x@example.com", fmt.Sprintf("b%d", i))
		}
		return "[" + strings.Join(out, ",") + "]"
	})
	p := newProvider(t, nil, f.URL, 2*time.Second)
	res := p.Send(context.Background(), providertest.MailMessages(501))
	require.Len(t, res, 501)
	for i, r := range res {
		require.Nil(t, r.Err, "message %d", i)
	}
	require.Equal(t, "b499", res[499].MessageID)
	require.Equal(t, "single", res[500].MessageID)
	require.Equal(t, []string{"/email/batch:500", "/email:1"}, f.Calls(t))
}
