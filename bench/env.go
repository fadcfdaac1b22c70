package main

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/notifyd/notifyd/client"
	"github.com/notifyd/notifyd/internal/config"
	"github.com/notifyd/notifyd/internal/daemon"
	"github.com/notifyd/notifyd/internal/simulator"
)

type bench struct {
	db       string
	duration time.Duration
	conns    int
	n        int
	role     string // serve scenario: all (default) or api
	rate     int    // chaos scenario: sends a second
	binary   string // the notifyd binary built for this run
	// serverProfile: a CPU profile of the notifyd process goes here.
	serverProfile string
	// trackingserve: the campaign's subscribers (0: the default), its
	// rounds ("off,on,..."), and a VACUUM ANALYZE and CHECKPOINT before
	// each round.
	subscribers int
	rounds      string
	vacuum      bool
	cleanups    []func()
}

func (b *bench) cleanup() {
	for i := len(b.cleanups) - 1; i >= 0; i-- {
		b.cleanups[i]()
	}
	b.cleanups = nil
}

// databaseURL returns a fresh database: a temp SQLite file, or a new
// PostgreSQL schema selected through search_path.
func (b *bench) databaseURL() (string, error) {
	if b.db == "sqlite" {
		dir, err := os.MkdirTemp("", "notifyd-bench-*")
		if err != nil {
			return "", err
		}
		b.cleanups = append(b.cleanups, func() { os.RemoveAll(dir) })
		return "sqlite:" + filepath.Join(dir, "bench.db"), nil
	}
	base := os.Getenv("NOTIFYD_BENCH_DATABASE_URL")
	if base == "" {
		base = "postgres://postgres@127.0.0.1:5432/test?sslmode=disable"
	}
	buf := make([]byte, 6)
	_, _ = rand.Read(buf)
	schema := "bench_" + hex.EncodeToString(buf)
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, base)
	if err != nil {
		return "", err
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, "CREATE SCHEMA "+schema); err != nil {
		return "", err
	}
	b.cleanups = append(b.cleanups, func() {
		c, err := pgx.Connect(context.Background(), base)
		if err == nil {
			_, _ = c.Exec(context.Background(), "DROP SCHEMA "+schema+" CASCADE")
			c.Close(context.Background())
		}
	})
	u, _ := url.Parse(base)
	q := u.Query()
	q.Set("search_path", schema)
	u.RawQuery = q.Encode()
	return u.String(), nil
}

// sim starts the provider simulator.
func (b *bench) sim() (*simulator.Simulator, string) {
	s := simulator.New()
	srv := httptest.NewServer(s)
	b.cleanups = append(b.cleanups, srv.Close)
	return s, srv.URL
}

// daemon starts notifyd with role on dbURL.
func (b *bench) daemon(ctx context.Context, dbURL, role string) (*daemon.Daemon, error) {
	cfg := config.Default()
	cfg.DatabaseURL, cfg.Addr, cfg.Role = dbURL, "127.0.0.1:0", role
	cfg.SecretKey = strings.Repeat("ab", 32)
	cfg.AllowPrivateTargets = true
	cfg.LogLevel = "error"
	d := daemon.New(cfg, nil, nil)
	if err := d.Open(ctx); err != nil {
		return nil, err
	}
	b.cleanups = append(b.cleanups, func() {
		cctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		_ = d.Close(cctx)
	})
	return d, nil
}

// freshAPI starts an api-role daemon on a fresh database.
func (b *bench) freshAPI(ctx context.Context) (*daemon.Daemon, string, error) {
	url, err := b.databaseURL()
	if err != nil {
		return nil, "", err
	}
	d, err := b.daemon(ctx, url, "api")
	return d, url, err
}

// apiKey bootstraps a workspace on d and returns a signing client.
func apiKey(ctx context.Context, d *daemon.Daemon, conns int) (*client.Client, *client.Client, error) {
	res, err := d.Rooms.Accounts.Bootstrap(ctx, "bench", fmt.Sprintf("bench-%d@example.com", time.Now().UnixNano()), "bench password 1")
	if err != nil {
		return nil, nil, err
	}
	owner := client.New(d.URL())
	owner.HTTP = httpClient(conns)
	owner.Token = res.AccessToken
	key, keyID, err := owner.CreateAPIKey(ctx, "bench", "notifications:send", "notifications:read")
	if err != nil {
		return nil, nil, err
	}
	// Lift the request limits (2,000 and 600 a minute by default) so the
	// benchmark measures throughput, not the limiter's refusals; the limit
	// check itself still runs on every request.
	policy := map[string]any{"windowSeconds": 3600, "maxRequests": 1000000}
	for _, path := range []string{"/v1/limits/rate/workspace", "/v1/limits/rate/api-keys/" + keyID} {
		r, err := owner.Dashboard(ctx, "PUT", path, policy)
		if err != nil || r.Status != 200 {
			return nil, nil, fmt.Errorf("rate policy %s: %v %s", path, err, r.Body)
		}
	}
	return owner, key, nil
}

// smsRoute registers a simulated SMS provider with a route.
func smsRoute(ctx context.Context, owner *client.Client, simURL string) error {
	r, err := owner.Dashboard(ctx, "POST", "/v1/providers", map[string]any{"providerKind": "vendorb_sms", "displayName": "sim",
		"configJson": map[string]string{"vendorb_api_key": "k", "vendorb_api_secret": "s", "vendorb_sender": "0212345678", "base_url": simURL,
			// Per-message calls with no window and no call cap, as before
			// adapter batching: deliver measures the pipeline, not batching.
			"dispatch_batch_window_ms": "0", "dispatch_max_batch_size": "1", "dispatch_max_requests_per_second": "0"}})
	if err != nil || r.Status != 201 {
		return fmt.Errorf("register provider: %v %s", err, r.Body)
	}
	var p struct {
		Provider struct{ ID string } `json:"provider"`
	}
	_ = r.Decode(&p)
	r, err = owner.Dashboard(ctx, "PUT", "/v1/routes", map[string]any{"routes": []map[string]any{
		{"channel": "sms", "providerAccountId": p.Provider.ID, "priority": 1}}})
	if err != nil || r.Status != 200 {
		return fmt.Errorf("routes: %v %s", err, r.Body)
	}
	return nil
}

// sendBody is a ~400-byte notification.
func sendBody(i int) []byte {
	b, _ := json.Marshal(map[string]any{
		"channel":   "sms",
		"recipient": map[string]any{"address": fmt.Sprintf("010%08d", i%100000000), "name": "Benchmark Recipient"},
		"content":   map[string]any{"text": "Your verification code is 123456. It expires in 3 minutes. " + strings.Repeat("x", 180)},
		"metadata":  map[string]string{"orderId": fmt.Sprintf("order-%d", i), "source": "bench"},
	})
	return b
}

// bareServer is the baseline handler of PERFORMANCE.md: read the JSON
// body, check the HMAC signature, decode, answer 201.
func bareServer(secret string) (string, func()) {
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if _, ok := bareCheck(w, r, secret); ok {
			created(w)
		}
	})
	ln, _ := net.Listen("tcp", "127.0.0.1:0")
	srv := &http.Server{Handler: h}
	go srv.Serve(ln)
	return "http://" + ln.Addr().String(), func() { srv.Close() }
}

// bareCheck is the bare handler's work: it reads the body, checks its
// HMAC signature and decodes it, or answers the error and returns false.
func bareCheck(w http.ResponseWriter, r *http.Request, secret string) ([]byte, bool) {
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, 1<<20))
	if err != nil {
		http.Error(w, "body", 400)
		return nil, false
	}
	mac := hmac.New(sha256.New, []byte(secret))
	mac.Write([]byte(client.StringToSign(r.Method, r.RequestURI, r.Header.Get("X-Timestamp"), r.Header.Get("X-Nonce"), body)))
	want := mac.Sum(nil)
	got, _ := hex.DecodeString(r.Header.Get("X-Signature"))
	if !hmac.Equal(want, got) {
		http.Error(w, "sig", http.StatusUnauthorized)
		return nil, false
	}
	var v map[string]any
	if err := json.NewDecoder(bytes.NewReader(body)).Decode(&v); err != nil {
		http.Error(w, "json", 400)
		return nil, false
	}
	return body, true
}

// created is the baselines' answer to an accepted send.
func created(w http.ResponseWriter) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(201)
	_, _ = w.Write([]byte(`{"data":{"status":"queued"}}`))
}

// post sends one signed request and checks the status.
func post(ctx context.Context, c *client.Client, method, path string, body []byte, want int) error {
	r, err := c.Signed(ctx, method, path, body)
	if err != nil {
		return err
	}
	if r.Status != want {
		return fmt.Errorf("status %d: %s", r.Status, r.Body)
	}
	return nil
}
