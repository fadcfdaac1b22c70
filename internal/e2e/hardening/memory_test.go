package hardening_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/notifyd/notifyd/client"
	"github.com/notifyd/notifyd/internal/notifytest"
	"github.com/notifyd/notifyd/internal/simulator"
)

// The issue 29 attacks run against the real binary under an address-space
// ceiling (ulimit -v), as the probe ran it: the unbounded rendering asked
// for gigabytes and the process died of "fatal error: out of memory".
const (
	// ceilingKiB is the child's address-space limit. An idle notifyd
	// reserves about 1.8 GiB of address space (the Go runtime's
	// reservations); what is left is far below the attacks' asks.
	ceilingKiB = 3 << 20
	// maxPeakRSS bounds the child's peak resident memory (VmHWM) after
	// the attacks.
	maxPeakRSS = 256 << 20
)

// ceilingNode is a notifyd child serving under the ceiling.
type ceilingNode struct {
	cmd     *exec.Cmd
	logs    *notifytest.Buffer
	done    chan struct{}
	baseURL string
	owner   *client.Client
}

// startUnderCeiling bootstraps a fresh database of the suite's backend and
// serves the binary bin on it under the ceiling, with the simulator's
// vendors reachable; it returns once /readyz answers 200.
func startUnderCeiling(t *testing.T, bin string) *ceilingNode {
	t.Helper()
	dbURL := "sqlite:" + filepath.Join(t.TempDir(), "notifyd.db")
	if os.Getenv(notifytest.EnvPostgres) != "" {
		dbURL = notifytest.DatabaseURL(t)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := l.Addr().String()
	require.NoError(t, l.Close())
	env := append(os.Environ(), "NOTIFYD_DATABASE_URL="+dbURL, "NOTIFYD_ADDR="+addr,
		"NOTIFYD_SECRET_KEY="+strings.Repeat("0", 63)+"9", "NOTIFYD_ALLOW_PRIVATE_TARGETS=true", "NOTIFYD_LOG_LEVEL=warn")
	boot := exec.Command(bin, "bootstrap", "--workspace", "Hardening", "--email", "owner@example.com", "--password", "correct horse battery")
	boot.Env = env
	out, err := boot.Output()
	require.NoError(t, err)
	var res struct {
		AccessToken string `json:"accessToken"`
	}
	require.NoError(t, json.Unmarshal(out, &res), string(out))

	n := &ceilingNode{logs: &notifytest.Buffer{}, done: make(chan struct{}), baseURL: "http://" + addr}
	n.cmd = exec.Command("sh", "-c", `ulimit -v "$0" && exec "$1" serve`, strconv.Itoa(ceilingKiB), bin)
	n.cmd.Env, n.cmd.Stdout, n.cmd.Stderr = env, n.logs, n.logs
	require.NoError(t, n.cmd.Start())
	go func() {
		_ = n.cmd.Wait()
		close(n.done)
	}()
	t.Cleanup(func() {
		if n.alive() {
			_ = n.cmd.Process.Kill()
			<-n.done
		}
		if t.Failed() {
			t.Logf("notifyd output:\n%s", n.logs.String())
		}
	})
	deadline := time.Now().Add(30 * time.Second)
	for !n.ready() {
		require.True(t, n.alive(), "notifyd exited before it was ready:\n%s", n.logs.String())
		require.True(t, time.Now().Before(deadline), "notifyd not ready:\n%s", n.logs.String())
		time.Sleep(50 * time.Millisecond)
	}
	n.owner = client.New(n.baseURL)
	n.owner.Token = res.AccessToken
	return n
}

func (n *ceilingNode) alive() bool {
	select {
	case <-n.done:
		return false
	default:
		return true
	}
}

func (n *ceilingNode) ready() bool {
	resp, err := http.Get(n.baseURL + "/readyz")
	if err != nil {
		return false
	}
	_ = resp.Body.Close()
	return resp.StatusCode == http.StatusOK
}

// requireUp requires the child alive, ready, and its peak resident memory
// under maxPeakRSS.
func (n *ceilingNode) requireUp(t *testing.T) {
	t.Helper()
	require.True(t, n.alive(), "notifyd died:\n%s", n.logs.String())
	require.True(t, n.ready(), "notifyd not ready")
	f, err := os.Open(fmt.Sprintf("/proc/%d/status", n.cmd.Process.Pid))
	require.NoError(t, err)
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "VmHWM:"); ok {
			kib, err := strconv.Atoi(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")))
			require.NoError(t, err)
			t.Logf("peak resident memory: %d MiB", kib>>10)
			require.Less(t, kib<<10, maxPeakRSS)
			return
		}
	}
	t.Fatal("no VmHWM in /proc status")
}

// The send attacks of finding 1: each answers 400 naming the field, and
// the process stays up with a small peak.
func TestRenderAttacksUnderMemoryCeiling(t *testing.T) {
	t.Parallel()
	n := startUnderCeiling(t, notifytest.BuildBinary(t))
	ctx := context.Background()
	key, _, err := n.owner.CreateAPIKey(ctx, "k", "notifications:send")
	require.NoError(t, err)
	send := func(content map[string]any) *client.Response {
		r, err := key.Signed(ctx, "POST", "/v1/notifications", map[string]any{"channel": "email",
			"recipient": map[string]any{"address": "a@example.com"}, "content": content})
		require.NoError(t, err, "notifyd died:\n%s", n.logs.String())
		return r
	}
	// The probe's request: 100,000 "{{a}}" and a 500 KB value (50 GB).
	renderRefused(t, send(map[string]any{"title": "t", "text": strings.Repeat("{{a}}", 100_000),
		"templateVariables": map[string]any{"a": strings.Repeat("x", 500_000)}}), "content.text must be at most 100000 characters")
	// Within every bound as sent: 100,000 "{{a}}" in the HTML, and a
	// value of 10,000 '"' escaped to 50,000 characters (5 GB).
	renderRefused(t, send(map[string]any{"title": "t", "text": "t", "html": strings.Repeat("{{a}}", 100_000),
		"templateVariables": map[string]any{"a": strings.Repeat(`"`, 10_000)}}),
		"content.html must be at most 500000 characters after template variables are put in")
	renderRefused(t, send(map[string]any{"title": "t", "text": strings.Repeat("{{a}}", 20_000),
		"templateVariables": map[string]any{"a": strings.Repeat("x", 10_000)}}),
		"content.text must be at most 100000 characters after template variables are put in")
	// A template of 100,000 characters previewed with the largest value.
	r := notifytest.DashboardCall(t, n.owner, "POST", "/v1/templates", map[string]any{"code": "big", "channel": "sms", "name": "big"}, http.StatusCreated)
	id := notifytest.Field[struct {
		ID string `json:"id"`
	}](t, r, "template").ID
	notifytest.DashboardCall(t, n.owner, "POST", "/v1/templates/"+id+"/versions", map[string]any{"text": strings.Repeat("{{a}}", 20_000)}, http.StatusCreated)
	renderRefused(t, notifytest.Dash(t, n.owner, "POST", "/v1/templates/"+id+"/preview",
		map[string]any{"version": 1, "variables": map[string]any{"a": strings.Repeat("x", 10_000)}}),
		"content.text must be at most 100000 characters after template variables are put in")
	n.requireUp(t)
}

// The campaign attack of finding 2: an HTML of 100,000 "{{x}}" and
// subscribers whose attribute x holds 2,000 '"' (10,000 characters once
// escaped: 1 GB a recipient). The campaign fails with its reason recorded
// and the process stays up.
func TestCampaignAttackUnderMemoryCeiling(t *testing.T) {
	t.Parallel()
	sim := simulator.New()
	simSrv := httptest.NewServer(sim)
	t.Cleanup(simSrv.Close)
	n := startUnderCeiling(t, notifytest.BuildBinary(t))
	notifytest.RegisterRoute(t, n.owner, "email", "mailx_email",
		map[string]string{"base_url": simSrv.URL, "mailx_api_key": "re_test", "mailx_from_email": "news@example.com"})
	var subs []map[string]any
	for i := range 40 {
		subs = append(subs, map[string]any{"channel": "email", "address": fmt.Sprintf("s%02d@example.com", i),
			"attributes": map[string]any{"x": strings.Repeat(`"`, 2_000)}})
	}
	notifytest.DashboardCall(t, n.owner, "POST", "/v1/newsletter/subscribers/import", map[string]any{"subscribers": subs}, http.StatusOK)
	r := notifytest.DashboardCall(t, n.owner, "POST", "/v1/newsletter/campaigns", map[string]any{"name": "c", "channel": "email",
		"subject": "s", "contentText": "t", "contentHtml": strings.Repeat("{{x}}", 100_000)}, http.StatusCreated)
	id := notifytest.Field[struct {
		ID string `json:"id"`
	}](t, r, "campaign").ID
	notifytest.DashboardCall(t, n.owner, "POST", "/v1/newsletter/campaigns/"+id+"/send", nil, http.StatusOK)
	deadline := time.Now().Add(60 * time.Second)
	for {
		r, err := n.owner.Dashboard(context.Background(), "GET", "/v1/newsletter/campaigns/"+id, nil)
		require.NoError(t, err, "notifyd died:\n%s", n.logs.String())
		status := notifytest.Field[struct {
			Status string `json:"status"`
		}](t, r, "campaign").Status
		if status == "failed" {
			break
		}
		require.True(t, time.Now().Before(deadline), "campaign still %s", status)
		time.Sleep(100 * time.Millisecond)
	}
	fails := notifytest.Audit(t, n.owner, "campaign.fail")
	require.Len(t, fails, 1)
	require.Contains(t, fails[0].Payload["reason"], "contentHtml must be at most 500000 characters after subscriber attributes are put in")
	require.Empty(t, sim.Messages("mailx_email", "", 0))
	n.requireUp(t)
}
