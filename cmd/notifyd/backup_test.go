package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime/debug"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/notifyd/notifyd/client"
	"github.com/notifyd/notifyd/internal/config"
	"github.com/notifyd/notifyd/internal/daemon"
	"github.com/notifyd/notifyd/internal/notifytest"
	"github.com/notifyd/notifyd/internal/simulator"
)

// openSQLite runs a daemon on the SQLite database in dir with the key file
// beside it (no NOTIFYD_SECRET_KEY), closed after the test.
func openSQLite(t *testing.T, dir string, opts ...func(*config.Config)) (*daemon.Daemon, config.Config) {
	t.Helper()
	cfg := config.Default()
	cfg.DatabaseURL = "sqlite:" + filepath.Join(dir, "notifyd.db")
	cfg.Addr = "127.0.0.1:0"
	cfg.AllowPrivateTargets, cfg.MXCheck, cfg.SQLiteSynchronous = true, false, "NORMAL"
	cfg.QueueBackoff = 50 * time.Millisecond
	for _, o := range opts {
		o(&cfg)
	}
	d := daemon.New(cfg, nil, nil)
	require.NoError(t, d.Open(context.Background()))
	t.Cleanup(func() { closeDaemon(d) })
	return d, cfg
}

func closeDaemon(d *daemon.Daemon) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_ = d.Close(ctx)
}

func sendSMS(t *testing.T, key *client.Client, text string) string {
	t.Helper()
	r, err := key.Signed(context.Background(), "POST", "/v1/notifications", map[string]any{"channel": "sms",
		"recipient": map[string]any{"address": "01012345678"}, "content": map[string]any{"text": text}})
	require.NoError(t, err)
	require.Equal(t, http.StatusCreated, r.Status, string(r.Body))
	var out struct {
		RequestID string `json:"requestId"`
	}
	require.NoError(t, r.Data(&out))
	return out.RequestID
}

// lookup answers the status lookup's data, and its status.
func lookup(t *testing.T, key *client.Client, id string) (json.RawMessage, string) {
	t.Helper()
	r, err := key.Signed(context.Background(), "GET", "/v1/notifications/"+id, nil)
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, r.Status, string(r.Body))
	var data json.RawMessage
	require.NoError(t, r.Data(&data))
	var s struct {
		Status string `json:"status"`
	}
	require.NoError(t, json.Unmarshal(data, &s))
	return data, s.Status
}

func waitSent(t *testing.T, key *client.Client, id string) json.RawMessage {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		data, status := lookup(t, key, id)
		if status == "sent" {
			return data
		}
		require.True(t, time.Now().Before(deadline), "%s still %s", id, status)
		time.Sleep(20 * time.Millisecond)
	}
}

// TestBackupUnderLoadAndRestore: `notifyd backup FILE` copies the SQLite
// database while sends keep arriving; the copy, put in a fresh directory
// with the key file beside it, opens as a service that serves the same
// requests (identical status lookups), knows every send acknowledged
// before the backup began, and still decrypts the API key's HMAC secret
// and the provider's config (a new send through it is delivered).
func TestBackupUnderLoadAndRestore(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	sim := httptest.NewServer(simulator.New())
	t.Cleanup(sim.Close)
	dir := t.TempDir()
	d, cfg := openSQLite(t, dir)
	res, err := d.Rooms.Accounts.Bootstrap(ctx, "Backup", "owner@example.com", "correct horse battery")
	require.NoError(t, err)
	owner := client.New(d.URL())
	owner.Token = res.AccessToken
	notifytest.RegisterRoute(t, owner, "sms", "vendora_sms",
		map[string]string{"vendora_user_id": "u", "vendora_api_key": "k", "vendora_sender": "0212345678", "base_url": sim.URL})
	key, _, err := owner.CreateAPIKey(ctx, "k", "notifications:send", "notifications:read")
	require.NoError(t, err)

	// Delivered before the backup: their lookups must read the same after.
	settled := map[string]json.RawMessage{}
	for i := range 20 {
		id := sendSMS(t, key, fmt.Sprintf("settled %d", i))
		settled[id] = nil
	}
	for id := range settled {
		settled[id] = waitSent(t, key, id)
	}

	// Sends keep arriving during the backup.
	var mu sync.Mutex
	var acked []string
	loadCtx, stop := context.WithCancel(ctx)
	var wg sync.WaitGroup
	for g := range 3 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 100 && loadCtx.Err() == nil; i++ {
				id := sendSMS(t, key, fmt.Sprintf("load %d/%d", g, i))
				mu.Lock()
				acked = append(acked, id)
				mu.Unlock()
				time.Sleep(2 * time.Millisecond)
			}
		}()
	}
	// The backup starts once the load is under way (a fixed pause was too
	// short for a loaded -race run: nothing was acknowledged yet).
	var before []string
	require.Eventually(t, func() bool {
		mu.Lock()
		defer mu.Unlock()
		before = append([]string(nil), acked...)
		return len(before) >= 3
	}, 30*time.Second, 5*time.Millisecond, "no send acknowledged")
	dest := filepath.Join(t.TempDir(), "backup.db")
	var stdout, stderr bytes.Buffer
	code := run(ctx, []string{"backup", "--database-url", cfg.DatabaseURL, dest}, &stdout, &stderr)
	require.Equal(t, 0, code, stderr.String())
	mu.Lock()
	during := len(acked) - len(before)
	mu.Unlock()
	stop()
	wg.Wait()
	require.Contains(t, stdout.String(), "backup written to "+dest)
	require.Contains(t, stdout.String(), filepath.Join(dir, "notifyd.key"), "the key file to keep with it")
	info, err := os.Stat(dest)
	require.NoError(t, err)
	require.Equal(t, os.FileMode(0o600), info.Mode().Perm())
	t.Logf("%d sends acknowledged before the backup, %d while it ran", len(before), during)
	require.NotEmpty(t, before)
	closeDaemon(d)

	// Restore: the copy and the key file in a fresh directory.
	dir2 := t.TempDir()
	copyFile(t, dest, filepath.Join(dir2, "notifyd.db"))
	// Without its key the copy is refused rather than served with
	// secrets nobody can read.
	bare := cfg
	bare.DatabaseURL = "sqlite:" + filepath.Join(dir2, "notifyd.db")
	nokey := daemon.New(bare, nil, nil)
	require.Error(t, nokey.Open(ctx), "a restore without the key file")
	closeDaemon(nokey)
	require.NoFileExists(t, filepath.Join(dir2, "notifyd.key"), "no new key left behind")
	copyFile(t, filepath.Join(dir, "notifyd.key"), filepath.Join(dir2, "notifyd.key"))
	d2, _ := openSQLite(t, dir2)
	key2 := *key
	key2.BaseURL = d2.URL()
	for id, want := range settled {
		got, _ := lookup(t, &key2, id)
		require.JSONEq(t, string(want), string(got), "the restored service serves the same request")
	}
	for _, id := range before {
		lookup(t, &key2, id) // 200: acknowledged before the backup began, so in it
	}
	// The HMAC secret (the signed calls above) and the provider config
	// decrypt with the restored key: a new send is delivered.
	waitSent(t, &key2, sendSMS(t, &key2, "after restore"))

	// A second backup to the same file is refused rather than overwriting it.
	stderr.Reset()
	require.Equal(t, 1, run(ctx, []string{"backup", "--database-url", "sqlite:" + filepath.Join(dir2, "notifyd.db"), dest}, &stdout, &stderr))
	require.Contains(t, stderr.String(), "already exists")
}

func copyFile(t *testing.T, from, to string) {
	t.Helper()
	b, err := os.ReadFile(from)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(to, b, 0o600))
}

// TestBackupPostgres: on PostgreSQL the command answers with pg_dump,
// without connecting and without needing the serve settings.
func TestBackupPostgres(t *testing.T) {
	t.Parallel()
	var stdout, stderr bytes.Buffer
	code := run(context.Background(), []string{"backup", "--database-url", "postgres://u@127.0.0.1:1/db", "x.db"}, &stdout, &stderr)
	require.Equal(t, 1, code)
	require.Contains(t, stderr.String(), "pg_dump --format=custom")
	require.Contains(t, stderr.String(), "pg_restore")
	require.NoFileExists(t, "x.db")

	code = run(context.Background(), []string{"backup", "--database-url", "sqlite:" + filepath.Join(t.TempDir(), "none.db"), "y.db"}, &stdout, &stderr)
	require.Equal(t, 1, code, "a missing database is an error, not a new empty one")
	require.NoFileExists(t, "y.db")
}

// TestVersion: -ldflags -X wins; else the module version and VCS revision
// the toolchain recorded.
func TestVersion(t *testing.T) {
	t.Parallel()
	require.True(t, strings.HasPrefix(formatVersion("v1.2.3", "abc123", nil), "notifyd v1.2.3 (commit abc123, go"))
	bi := &debug.BuildInfo{Main: debug.Module{Version: "v0.9.0"},
		Settings: []debug.BuildSetting{{Key: "vcs.revision", Value: "deadbeef"}, {Key: "vcs.modified", Value: "true"}}}
	require.True(t, strings.HasPrefix(formatVersion("dev", "", bi), "notifyd v0.9.0 (commit deadbeef+dirty, go"))
	require.True(t, strings.HasPrefix(formatVersion("v2", "c0ffee", bi), "notifyd v2 (commit c0ffee, go"), "ldflags win")
	require.True(t, strings.HasPrefix(formatVersion("dev", "", &debug.BuildInfo{Main: debug.Module{Version: "(devel)"}}),
		"notifyd dev (commit unknown, go"))
	var stdout bytes.Buffer
	require.Equal(t, 0, run(context.Background(), []string{"version"}, &stdout, &stdout))
	require.True(t, strings.HasPrefix(stdout.String(), "notifyd "), stdout.String())
}

// TestHealthcheck: 0 for a 2xx answer, 1 for another or none; without a
// URL it asks /readyz of the local listener.
func TestHealthcheck(t *testing.T) {
	t.Parallel()
	ok := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/readyz" {
			w.WriteHeader(http.StatusServiceUnavailable)
		}
	}))
	t.Cleanup(ok.Close)
	var out bytes.Buffer
	require.Equal(t, 0, run(context.Background(), []string{"healthcheck", ok.URL + "/readyz"}, &out, &out), out.String())
	require.Equal(t, 1, run(context.Background(), []string{"healthcheck", ok.URL + "/other"}, &out, &out))
	require.Contains(t, out.String(), "503")
	require.Equal(t, 1, run(context.Background(), []string{"healthcheck", "http://127.0.0.1:1/readyz"}, &out, &out))

	require.Equal(t, "http://127.0.0.1:8081/readyz", localReadyURL(":8081", ":8080"))
	require.Equal(t, "http://127.0.0.1:8080/readyz", localReadyURL("", "0.0.0.0:8080"))
	require.Equal(t, "http://10.0.0.5:9000/readyz", localReadyURL("", "10.0.0.5:9000"))
	require.Equal(t, "http://127.0.0.1:8080/readyz", localReadyURL("", ""))
}

// TestHealthcheckWorker: the probe of the compose file and the image's
// HEALTHCHECK against a real worker: /readyz and /healthz of its
// NOTIFYD_HEALTH_ADDR listener answer, so `notifyd healthcheck` exits 0.
func TestHealthcheckWorker(t *testing.T) {
	t.Parallel()
	d, _ := openSQLite(t, t.TempDir(), func(c *config.Config) { c.Role, c.HealthAddr = "worker", "127.0.0.1:0" })
	require.NotEmpty(t, d.HealthAddr())
	for _, path := range []string{"/readyz", "/healthz"} {
		var out bytes.Buffer
		require.Equal(t, 0, run(context.Background(), []string{"healthcheck", "http://" + d.HealthAddr() + path}, &out, &out), out.String())
	}
	require.Equal(t, "http://"+d.HealthAddr()+"/readyz", localReadyURL(d.HealthAddr(), ":8080"))
}
