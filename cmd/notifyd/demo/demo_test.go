package demo_test

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"path/filepath"
	"regexp"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/notifyd/notifyd/client"
	"github.com/notifyd/notifyd/cmd/notifyd/demo"
	"github.com/notifyd/notifyd/internal/config"
	"github.com/notifyd/notifyd/internal/daemon"
)

// demoPrint is what a demo start printed that a user would copy.
type demoPrint struct {
	URL, APIKey, HMACSecret, SimURL string
}

var (
	exportRE = regexp.MustCompile(`export (NOTIFYD_[A-Z_]+)=(\S+)`)
	simRE    = regexp.MustCompile(`curl (\S+)/_sim/messages`)
)

func parseDemoPrint(t *testing.T, out string) demoPrint {
	t.Helper()
	env := map[string]string{}
	for _, m := range exportRE.FindAllStringSubmatch(out, -1) {
		env[m[1]] = m[2]
	}
	sim := simRE.FindStringSubmatch(out)
	require.NotNil(t, sim, "no simulator URL in:\n%s", out)
	p := demoPrint{URL: env["NOTIFYD_URL"], APIKey: env["NOTIFYD_API_KEY"], HMACSecret: env["NOTIFYD_HMAC_SECRET"], SimURL: sim[1]}
	require.NotEmpty(t, p.URL, out)
	require.NotEmpty(t, p.APIKey, out)
	require.NotEmpty(t, p.HMACSecret, out)
	require.Contains(t, out, "notifyd send --channel sms")
	return p
}

// openDemo starts a demo daemon on dbPath and returns what it printed.
func openDemo(t *testing.T, dbPath string) (*daemon.Daemon, demoPrint) {
	t.Helper()
	cfg := config.Default()
	cfg.DatabaseURL = "sqlite:" + dbPath
	cfg.Addr = "127.0.0.1:0"
	cfg.Demo = true
	cfg.QueueBackoff = 100 * time.Millisecond
	var out bytes.Buffer
	d := daemon.New(cfg, nil, &out)
	m := demo.Attach(d)
	err := d.Open(t.Context())
	if err != nil {
		_ = d.Close(context.Background())
	}
	require.NoError(t, err)
	t.Cleanup(func() { _ = d.Close(context.Background()) })
	require.NotNil(t, m.Simulator())
	return d, parseDemoPrint(t, out.String())
}

// waitSent polls a request until it is final and requires it sent.
func waitSent(t *testing.T, c *client.Client, id string) {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for {
		r, err := c.Signed(t.Context(), "GET", "/v1/notifications/"+id, nil)
		require.NoError(t, err)
		require.Equal(t, http.StatusOK, r.Status, string(r.Body))
		var rec struct {
			Status string `json:"status"`
		}
		require.NoError(t, r.Data(&rec))
		switch rec.Status {
		case "sent":
			return
		case "failed", "canceled":
			t.Fatalf("request %s ended %s: %s", id, rec.Status, r.Body)
		}
		require.True(t, time.Now().Before(deadline), "request %s still %s", id, rec.Status)
		time.Sleep(50 * time.Millisecond)
	}
}

// simMessages asks the simulator (over HTTP, as a user would) what kind received.
func simMessages(t *testing.T, simURL, kind string) []map[string]any {
	t.Helper()
	resp, err := http.Get(simURL + "/_sim/messages?kind=" + url.QueryEscape(kind))
	require.NoError(t, err)
	defer resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	var out struct {
		Messages []map[string]any `json:"messages"`
	}
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&out))
	return out.Messages
}

func TestDemo(t *testing.T) {
	t.Parallel()
	dbPath := filepath.Join(t.TempDir(), "notifyd.db")
	d, p := openDemo(t, dbPath)

	c := client.New(p.URL)
	c.APIKey, c.HMACSecret = p.APIKey, p.HMACSecret

	sends := []struct {
		channel, to, kind string
		content           map[string]any
	}{
		{"sms", "010-1234-5678", "vendora_sms", map[string]any{"text": "hi by sms"}},
		{"msgr_alimtalk", "010-2222-3333", "vendora_msgr", map[string]any{"templateCode": "DEMO_WELCOME", "templateVariables": map[string]string{"name": "Kim"}}},
		{"email", "someone@example.com", "mailx_email", map[string]any{"text": "hi by mail", "title": "Hello"}},
		{"push_mobile", "device-token-1", "push_gateway", map[string]any{"text": "hi by push", "title": "Hello"}},
		{"chata_webhook", "ops", "chata_webhook", map[string]any{"text": "hi on chat A"}},
		{"chatb_webhook", "ops", "chatb_webhook", map[string]any{"text": "hi on chat B"}},
	}
	ids := make([]string, len(sends))
	for i, s := range sends {
		r, err := c.Signed(t.Context(), "POST", "/v1/notifications", map[string]any{
			"channel": s.channel, "recipient": map[string]any{"address": s.to}, "content": s.content})
		require.NoError(t, err)
		require.Equal(t, http.StatusCreated, r.Status, "%s: %s", s.channel, r.Body)
		var acc struct {
			RequestID string `json:"requestId"`
		}
		require.NoError(t, r.Data(&acc))
		ids[i] = acc.RequestID
	}
	for i, s := range sends {
		waitSent(t, c, ids[i])
		ms := simMessages(t, p.SimURL, s.kind)
		require.Len(t, ms, 1, "%s: simulator messages of %s", s.channel, s.kind)
	}
	require.Contains(t, simMessages(t, p.SimURL, "vendora_msgr")[0]["text"], "Hello Kim")

	// A restart on the same database finds the demo workspace again,
	// re-points its providers at the new simulator and mints a new key.
	require.NoError(t, d.Close(context.Background()))
	_, p2 := openDemo(t, dbPath)
	require.NotEqual(t, p.APIKey, p2.APIKey)
	c2 := client.New(p2.URL)
	c2.APIKey, c2.HMACSecret = p2.APIKey, p2.HMACSecret
	r, err := c2.Signed(t.Context(), "POST", "/v1/notifications", map[string]any{
		"channel": "sms", "recipient": map[string]any{"address": "010-1234-5678"}, "content": map[string]any{"text": "again"}})
	require.NoError(t, err)
	require.Equal(t, http.StatusCreated, r.Status, string(r.Body))
	var acc struct {
		RequestID string `json:"requestId"`
	}
	require.NoError(t, r.Data(&acc))
	waitSent(t, c2, acc.RequestID)
	require.Len(t, simMessages(t, p2.SimURL, "vendora_sms"), 1)
}
