package providertest

import (
	"flag"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/notifyd/notifyd/internal/provider"
)

// The adapter test kit, shared by every adapter package's tests: golden
// wire files, a recording fake vendor, and the dependencies that let an
// adapter reach it on loopback.

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

// goldenHeaders are the request headers a Recorder writes down.
var goldenHeaders = []string{"Authorization", "Content-Type"}

// Recorder is a fake vendor that records each request (method, target,
// the headers that matter on the wire, body) and answers with a fixed
// status, headers and body.
type Recorder struct {
	mu     sync.Mutex
	dumps  []string
	status int
	header map[string]string
	body   string
}

// NewRecorder starts a Recorder, closed after the test.
func NewRecorder(t testing.TB, status int, body string, header map[string]string) (*Recorder, *httptest.Server) {
	t.Helper()
	rec := &Recorder{status: status, body: body, header: header}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		var sb strings.Builder
		sb.WriteString(r.Method + " " + r.URL.RequestURI() + "\n")
		for _, h := range goldenHeaders {
			if v := r.Header.Get(h); v != "" {
				sb.WriteString(h + ": " + v + "\n")
			}
		}
		sb.WriteString("\n")
		sb.Write(b)
		sb.WriteString("\n")
		rec.mu.Lock()
		rec.dumps = append(rec.dumps, sb.String())
		rec.mu.Unlock()
		for k, v := range rec.header {
			w.Header().Set(k, v)
		}
		w.WriteHeader(rec.status)
		_, _ = io.WriteString(w, rec.body)
	}))
	t.Cleanup(srv.Close)
	return rec, srv
}

// Requests returns the requests recorded so far, oldest first.
func (r *Recorder) Requests() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.dumps...)
}

// Deps lets adapters reach httptest servers on loopback.
func Deps() provider.Deps {
	return provider.Deps{HTTP: provider.NewHTTPClient(provider.HTTPOptions{AllowPrivate: true})}
}

// MustNew builds an adapter of kind k with Deps.
func MustNew(t testing.TB, k provider.Kind, cfg provider.Config) provider.Provider {
	t.Helper()
	p, err := k.New(cfg, Deps())
	require.NoError(t, err)
	return p
}
