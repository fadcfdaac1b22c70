package providertest

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
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/notifyd/notifyd/internal/notify"
	"github.com/notifyd/notifyd/internal/provider"
)

// The adapter test kit, shared by every adapter package's tests: golden
// wire files, a recording fake vendor, a vendor that never answers, and
// the dependencies that let an adapter reach them on loopback.

var update = flag.Bool("update", false, "rewrite testdata/*.golden from the requests sent")

// Golden compares got with testdata/<name>.golden of the calling test's
// package; `go test -update` rewrites the file instead.
func Golden(t testing.TB, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name+".golden")
	if *update {
		require.NoError(t, os.MkdirAll("testdata", 0o755))
		require.NoError(t, os.WriteFile(path, got, 0o644))
		return
	}
	want, err := os.ReadFile(path)
	require.NoError(t, err, "run go test -update to create %s", path)
	require.Equal(t, string(want), string(got))
}

// goldenHeaders are the request headers a Request's Dump writes down.
var goldenHeaders = []string{"Authorization", "Content-Type"}

// Request is one request a Fake received.
type Request struct {
	Method string
	// Path is the URL path; Target adds the query (the request URI).
	Path, Target string
	Host         string
	Header       http.Header
	Body         []byte
}

// Dump is the request as golden files hold it: method and target, the
// headers that matter on the wire, and the body.
func (r Request) Dump() string {
	var sb strings.Builder
	sb.WriteString(r.Method + " " + r.Target + "\n")
	for _, h := range goldenHeaders {
		if v := r.Header.Get(h); v != "" {
			sb.WriteString(h + ": " + v + "\n")
		}
	}
	sb.WriteString("\n")
	sb.Write(r.Body)
	sb.WriteString("\n")
	return sb.String()
}

// Reply is a Fake's answer to one request.
type Reply struct {
	Status int
	Header map[string]string
	Body   string
}

// Fake is a fake vendor: it records each request and answers with what
// its reply function returns for it (n counts the requests from 0).
type Fake struct {
	// URL is the fake's root, for base_url or a webhook URL.
	URL string

	srv  *httptest.Server
	mu   sync.Mutex
	reqs []Request
}

// NewFake starts a Fake, closed after the test. reply runs on the
// server's goroutine: it reports with t.Errorf, never require.
func NewFake(t testing.TB, reply func(n int, r Request) Reply) *Fake {
	t.Helper()
	f := &Fake{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		req := Request{Method: r.Method, Path: r.URL.Path, Target: r.URL.RequestURI(), Host: r.Host, Header: r.Header.Clone(), Body: b}
		f.mu.Lock()
		n := len(f.reqs)
		f.reqs = append(f.reqs, req)
		f.mu.Unlock()
		rp := reply(n, req)
		for k, v := range rp.Header {
			w.Header().Set(k, v)
		}
		w.WriteHeader(rp.Status)
		_, _ = io.WriteString(w, rp.Body)
	}))
	t.Cleanup(srv.Close)
	f.URL, f.srv = srv.URL, srv
	return f
}

// Received returns the requests received so far, oldest first.
func (f *Fake) Received() []Request {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]Request(nil), f.reqs...)
}

// Last returns the latest request; it fails the test when there is none.
func (f *Fake) Last(t testing.TB) Request {
	t.Helper()
	reqs := f.Received()
	require.NotEmpty(t, reqs)
	return reqs[len(reqs)-1]
}

// Recorder is a Fake that answers every request with a fixed status,
// headers and body.
type Recorder struct{ *Fake }

// NewRecorder starts a Recorder, closed after the test.
func NewRecorder(t testing.TB, status int, body string, header map[string]string) (*Recorder, *httptest.Server) {
	t.Helper()
	rp := Reply{Status: status, Header: header, Body: body}
	rec := &Recorder{NewFake(t, func(int, Request) Reply { return rp })}
	return rec, rec.srv
}

// Requests returns the requests recorded so far, oldest first, as Dump
// writes them.
func (r *Recorder) Requests() []string {
	var out []string
	for _, q := range r.Received() {
		out = append(out, q.Dump())
	}
	return out
}

// Hang starts a vendor that never answers (until the client gives up or
// five seconds pass), for timeout tests. Its URL is the fake's root.
func Hang(t testing.TB) string {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// Reading the body lets the server notice the client hanging up.
		_, _ = io.Copy(io.Discard, r.Body)
		select {
		case <-r.Context().Done():
		case <-time.After(5 * time.Second):
		}
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

// Client is an outbound client that may reach loopback, with timeout
// (zero: provider.DefaultHTTPTimeout).
func Client(timeout time.Duration) *http.Client {
	return provider.NewHTTPClient(provider.HTTPOptions{AllowPrivate: true, Timeout: timeout})
}

// Deps lets adapters reach httptest servers on loopback.
func Deps() provider.Deps {
	return provider.Deps{HTTP: Client(0)}
}

// MustNew builds an adapter of kind k with Deps.
func MustNew(t testing.TB, k provider.Kind, cfg provider.Config) provider.Provider {
	t.Helper()
	p, err := k.New(cfg, Deps())
	require.NoError(t, err)
	return p
}

// RequireHidden fails the test when the exchange, as the attempt history
// stores it, contains any of secrets.
func RequireHidden(t testing.TB, ex provider.Exchange, secrets ...string) {
	t.Helper()
	b, err := json.Marshal(ex)
	require.NoError(t, err)
	for _, s := range secrets {
		require.NotContains(t, string(b), s)
	}
}

// MailMessage is the e-mail the mail adapters' tests send to to: a title,
// a text with an ampersand and an HTML part (neither may be escaped on
// the wire).
func MailMessage(to string) provider.Message {
	return provider.Message{
		ID:      "req-" + to,
		Channel: notify.ChannelEmail,
		To:      to,
		Title:   "Your code",
		Text:    "Code 123456 & more",
		HTML:    "<p>Code <b>123456</b></p>",
	}
}

// RequireInvalid fails the test unless building kind k from cfg fails,
// with no provider, with an invalid_request *provider.Error whose message
// contains each of contains. It returns that error.
func RequireInvalid(t testing.TB, k provider.Kind, cfg provider.Config, contains ...string) *provider.Error {
	t.Helper()
	p, err := k.New(cfg, Deps())
	require.Nil(t, p, "%s %v", k.ID, cfg)
	var perr *provider.Error
	require.True(t, errors.As(err, &perr), "%s %v: %v", k.ID, cfg, err)
	require.Equal(t, notify.FailureInvalidRequest, perr.Code, "%s %v", k.ID, cfg)
	for _, s := range contains {
		require.Contains(t, perr.Message, s)
	}
	return perr
}

// RequireEachRequired checks that kind k, built from the complete config
// full, refuses it with any one required key left out or empty, naming
// that key.
func RequireEachRequired(t testing.TB, k provider.Kind, full provider.Config) {
	t.Helper()
	for _, key := range k.Required {
		without, empty := provider.Config{}, provider.Config{}
		for name, v := range full {
			empty[name] = v
			if name != key {
				without[name] = v
			}
		}
		empty[key] = ""
		RequireInvalid(t, k, without, key)
		RequireInvalid(t, k, empty, key)
	}
}

// RequireTimeouts sends msgs through p, built against a vendor that never
// answers (Hang) with a short client timeout, and checks that every
// message fails temporary_unavailable without a recorded answer. It
// returns the results for further checks.
func RequireTimeouts(t testing.TB, p provider.Provider, msgs ...provider.Message) []provider.Result {
	t.Helper()
	res := p.Send(context.Background(), msgs)
	require.Len(t, res, len(msgs))
	for _, r := range res {
		require.NotNil(t, r.Err)
		require.Equal(t, notify.FailureTemporaryUnavailable, r.Err.Code)
		require.Nil(t, r.Exchange.Response)
	}
	return res
}

// RequireGuardedByDefault checks that kind k, built with Deps.HTTP unset
// (the shared default client) or with a client without AllowPrivate,
// refuses to send msg to a loopback vendor (the SSRF guard:
// invalid_request), which receives nothing. cfg is the account's config
// for the vendor's URL.
func RequireGuardedByDefault(t testing.TB, k provider.Kind, cfg func(url string) provider.Config, msg provider.Message) {
	t.Helper()
	rec, srv := NewRecorder(t, http.StatusOK, "ok", nil)
	for _, deps := range []provider.Deps{{}, {HTTP: provider.NewHTTPClient(provider.HTTPOptions{})}} {
		p, err := k.New(cfg(srv.URL), deps)
		require.NoError(t, err)
		res := p.Send(context.Background(), []provider.Message{msg})
		require.NotNil(t, res[0].Err)
		require.Equal(t, notify.FailureInvalidRequest, res[0].Err.Code, res[0].Err.Message)
	}
	require.Empty(t, rec.Requests())
}

// ErrorRow is one vendor answer and the failure it must classify as.
type ErrorRow struct {
	Name       string
	Status     int
	Body       string
	Header     map[string]string
	Want       notify.FailureCode
	RetryAfter time.Duration
}

// RunErrorRows sends msg through kind k, one subtest a row, to a vendor
// answering with the row, and checks the failure code, the retry delay,
// that no message id is reported and that the answer is recorded. cfg is
// the account's config for the vendor's URL.
func RunErrorRows(t *testing.T, k provider.Kind, cfg func(url string) provider.Config, msg provider.Message, rows []ErrorRow) {
	t.Helper()
	for _, row := range rows {
		t.Run(row.Name, func(t *testing.T) {
			t.Parallel()
			_, srv := NewRecorder(t, row.Status, row.Body, row.Header)
			p := MustNew(t, k, cfg(srv.URL))
			res := p.Send(context.Background(), []provider.Message{msg})
			RequireFailure(t, res[0], row.Want, row.Status)
			require.Equal(t, row.RetryAfter, res[0].Err.RetryAfter)
			require.Empty(t, res[0].MessageID)
		})
	}
}

// RequireFailure fails the test unless r failed with code want and holds
// the vendor's answer, with HTTP status status.
func RequireFailure(t testing.TB, r provider.Result, want notify.FailureCode, status int) {
	t.Helper()
	require.NotNil(t, r.Err)
	require.Equal(t, want, r.Err.Code, r.Err.Message)
	require.NotNil(t, r.Exchange.Response)
	require.Equal(t, status, r.Exchange.Response.HTTPStatus)
}

// RequireRefused fails the test unless r failed invalid_request before
// any call: there is no vendor answer.
func RequireRefused(t testing.TB, r provider.Result) {
	t.Helper()
	require.NotNil(t, r.Err)
	require.Equal(t, notify.FailureInvalidRequest, r.Err.Code, r.Err.Message)
	require.Nil(t, r.Exchange.Response, "no call was made")
}

// RequireSent fails the test unless res is one success per id of ids, in
// order, each reporting that message id, with none of secrets in its
// exchange.
func RequireSent(t testing.TB, res []provider.Result, ids []string, secrets ...string) {
	t.Helper()
	require.Len(t, res, len(ids))
	for i, id := range ids {
		require.Nil(t, res[i].Err)
		require.Equal(t, id, res[i].MessageID)
		RequireHidden(t, res[i].Exchange, secrets...)
	}
}

// RequireHangTimeouts builds kind k from cfg(url) for a vendor that never
// answers (Hang), with a short client timeout, and checks RequireTimeouts
// for msg, with none of secrets in the failure's message.
func RequireHangTimeouts(t testing.TB, k provider.Kind, cfg func(url string) provider.Config, msg provider.Message, secrets ...string) {
	t.Helper()
	p, err := k.New(cfg(Hang(t)), provider.Deps{HTTP: Client(50 * time.Millisecond)})
	require.NoError(t, err)
	res := RequireTimeouts(t, p, msg)
	for _, s := range secrets {
		require.NotContains(t, res[0].Err.Message, s)
	}
}

// RequireCovered fails the test unless every code of a vendor's code
// table has a test case: key gives the code a case is for.
func RequireCovered[K comparable, V, C any](t testing.TB, table map[K]V, cases []C, key func(C) K) {
	t.Helper()
	seen := map[K]bool{}
	for _, c := range cases {
		seen[key(c)] = true
	}
	for code := range table {
		require.True(t, seen[code], "code table row %v has no test case", code)
	}
}
