package slack

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

var update = flag.Bool("update", false, "rewrite testdata/*.golden from the requests sent")

// goldenHeaders are the request headers that matter on the wire.
var goldenHeaders = []string{"Authorization", "Content-Type"}

// recorder is a fake vendor that records each request and answers with a
// fixed status, headers and body.
type recorder struct {
	mu     sync.Mutex
	dumps  []string
	status int
	header map[string]string
	body   string
}

func newRecorder(t *testing.T, status int, body string, header map[string]string) (*recorder, *httptest.Server) {
	t.Helper()
	rec := &recorder{status: status, body: body, header: header}
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

func (r *recorder) requests() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.dumps...)
}

func golden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name+".golden")
	if *update {
		require.NoError(t, os.WriteFile(path, []byte(got), 0o644))
		return
	}
	want, err := os.ReadFile(path)
	require.NoError(t, err, "run go test -update to create %s", path)
	require.Equal(t, string(want), got)
}

// testDeps lets adapters reach httptest servers on loopback.
func testDeps() provider.Deps {
	return provider.Deps{HTTP: provider.NewHTTPClient(provider.HTTPOptions{AllowPrivate: true})}
}

func mustNew(t *testing.T, k provider.Kind, cfg provider.Config) provider.Provider {
	t.Helper()
	p, err := k.New(cfg, testDeps())
	require.NoError(t, err)
	return p
}
