package crash_test

import (
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/notifyd/notifyd/internal/notifytest"
	"github.com/notifyd/notifyd/internal/simulator"
)

// TestWorkflowDigestCrash kills notifyd with SIGKILL while a workflow's
// digest window is open (issue 34): after a restart on the same database
// the digest is released exactly once, with every trigger's item.
func TestWorkflowDigestCrash(t *testing.T) {
	bin := notifytest.BuildBinary(t)
	sim := simulator.New()
	simSrv := httptest.NewServer(sim)
	t.Cleanup(simSrv.Close)
	env, baseURL, owner := bootstrap(t, bin, "NOTIFYD_SQLITE_SYNCHRONOUS=FULL")
	first := serve(t, bin, env, baseURL, "first notifyd")
	key, _ := smsRoute(t, owner, simSrv.URL)

	dashboard(t, owner, "PUT", "/v1/recipients/u-1", map[string]any{"phone": "01012345678"}, http.StatusCreated)
	tp := notifytest.Decode[struct {
		Template struct {
			ID string `json:"id"`
		} `json:"template"`
	}](t, dashboard(t, owner, "POST", "/v1/templates", map[string]any{"code": "digest", "channel": "sms", "name": "Digest"}, http.StatusCreated), http.StatusCreated)
	dashboard(t, owner, "POST", "/v1/templates/"+tp.Template.ID+"/versions", map[string]any{"text": "{{digestCount}} new"}, http.StatusCreated)
	dashboard(t, owner, "POST", "/v1/templates/"+tp.Template.ID+"/versions/1/publish", nil, http.StatusOK)
	dashboard(t, owner, "POST", "/v1/workflows", map[string]any{"key": "digest", "name": "Digest", "publish": true, "steps": []map[string]any{
		{"key": "collect", "type": "digest", "window": "8s"},
		{"key": "sms", "type": "send", "channel": "sms", "templateCode": "digest"},
	}}, http.StatusCreated)

	type runJSON struct {
		ID     string `json:"id"`
		Status string `json:"status"`
		Steps  []struct {
			Outcome *string `json:"outcome"`
		} `json:"steps"`
		Digest *struct {
			Count int `json:"count"`
		} `json:"digest"`
		RequestIDs []string `json:"requestIds"`
	}
	runs := func() []runJSON {
		return notifytest.Data[struct {
			Runs []runJSON `json:"runs"`
		}](t, notifytest.Signed(t, key, "GET", "/v1/workflow-runs?workflow=digest&limit=200", nil), http.StatusOK).Runs
	}
	const n = 20
	for i := range n {
		r := notifytest.Signed(t, key, "POST", "/v1/workflows/digest/trigger", map[string]any{"recipients": []string{"u-1"},
			"payload": map[string]any{"i": strconv.Itoa(i)}})
		require.Equal(t, http.StatusAccepted, r.Status, string(r.Body))
	}
	// The window is open: one run collects, the others have joined it.
	require.Eventually(t, func() bool {
		digested, collecting := 0, 0
		for _, r := range runs() {
			switch r.Status {
			case "digested":
				digested++
			case "running":
				if len(r.Steps) == 1 && r.Steps[0].Outcome != nil && *r.Steps[0].Outcome == "collecting" {
					collecting++
				}
			}
		}
		return digested == n-1 && collecting == 1
	}, 20*time.Second, 100*time.Millisecond, "%+v", runs())
	first.kill()
	require.Empty(t, sim.Messages(smsKind, "", 0), "nothing sent before the window's end")

	serve(t, bin, env, baseURL, "second notifyd")
	var leader runJSON
	require.Eventually(t, func() bool {
		for _, r := range runs() {
			if r.Status == "completed" {
				leader = r
				return true
			}
		}
		return false
	}, 40*time.Second, 200*time.Millisecond)
	require.Equal(t, n, leader.Digest.Count)
	require.Len(t, leader.RequestIDs, 1, "%v", *leader.Steps[1].Outcome)
	require.Eventually(t, func() bool { return lookup(t, key, leader.RequestIDs[0]).Status == "sent" }, 20*time.Second, 100*time.Millisecond)
	time.Sleep(time.Second) // a second release would have sent by now
	msgs := sim.Messages(smsKind, "", 0)
	require.Len(t, msgs, 1, "exactly one digest")
	require.True(t, strings.Contains(msgs[0].Text, "20 new"), msgs[0].Text)
}
