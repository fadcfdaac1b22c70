// Package workflows_test runs workflows (issue 34) end to end on the
// suite's backend (SQLite, or PostgreSQL when NOTIFYD_TEST_DATABASE_URL
// is set): definitions and their validation, triggers, escalation on an
// unread in-app message, cancellation, idempotency, throttle, digest,
// runs, events and workspace isolation.
package workflows_test

import (
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/notifyd/notifyd/client"
	"github.com/notifyd/notifyd/internal/notifytest"
)

type runStep struct {
	Index     int     `json:"index"`
	Key       string  `json:"key"`
	Type      string  `json:"type"`
	Status    string  `json:"status"`
	Outcome   *string `json:"outcome"`
	RequestID *string `json:"requestId"`
}

type run struct {
	ID          string    `json:"id"`
	WorkflowKey string    `json:"workflowKey"`
	Version     int       `json:"version"`
	RecipientID string    `json:"recipientId"`
	Status      string    `json:"status"`
	Steps       []runStep `json:"steps"`
	RequestIDs  []string  `json:"requestIds"`
	Digest      *struct {
		Count int              `json:"count"`
		Items []map[string]any `json:"items"`
	} `json:"digest"`
}

type started struct {
	RunID        string `json:"runId"`
	RecipientID  string `json:"recipientId"`
	Deduplicated bool   `json:"deduplicated"`
}

// setup starts a daemon with an SMS route, the profiles u-1 to u-3 with
// phones, the templates "note" on inapp and sms, and answers a key that
// triggers and reads.
func setup(t *testing.T) (*notifytest.Env, *client.Client) {
	t.Helper()
	env := notifytest.StartDaemon(t)
	env.SimRoute(t, "sms", "vendora_sms", nil)
	for i, id := range []string{"u-1", "u-2", "u-3"} {
		notifytest.DashboardCall(t, env.Owner, "PUT", "/v1/recipients/"+id,
			map[string]any{"phone": "+1555000000" + string(rune('1'+i)), "attributes": map[string]string{"tier": "gold"}}, http.StatusCreated)
	}
	template(t, env.Owner, "note", "inapp", "{{title}}")
	template(t, env.Owner, "note", "sms", "Still unread: {{title}}")
	template(t, env.Owner, "digest", "sms", "{{digestCount}} new: {{item1_title}}")
	key, _ := env.APIKey(t, "app", "notifications:send", "notifications:read", "recipients:read", "recipients:write")
	return env, key
}

// template creates and publishes a template of code on channel.
func template(t *testing.T, owner *client.Client, code, channel, text string) {
	t.Helper()
	tp := notifytest.Decode[struct {
		Template struct {
			ID string `json:"id"`
		} `json:"template"`
	}](t, notifytest.DashboardCall(t, owner, "POST", "/v1/templates", map[string]any{"code": code, "channel": channel, "name": code + " " + channel},
		http.StatusCreated), http.StatusCreated)
	body := map[string]any{"text": text}
	if channel == "inapp" {
		body["title"] = "Note"
	}
	notifytest.DashboardCall(t, owner, "POST", "/v1/templates/"+tp.Template.ID+"/versions", body, http.StatusCreated)
	notifytest.DashboardCall(t, owner, "POST", "/v1/templates/"+tp.Template.ID+"/versions/1/publish", nil, http.StatusOK)
}

// define creates and publishes workflow key with steps.
func define(t *testing.T, owner *client.Client, key string, steps ...map[string]any) {
	t.Helper()
	notifytest.DashboardCall(t, owner, "POST", "/v1/workflows", map[string]any{"key": key, "name": key, "steps": steps, "publish": true},
		http.StatusCreated)
}

// trigger starts workflow key for recipients and answers the runs.
func trigger(t *testing.T, k *client.Client, key string, body map[string]any) []started {
	t.Helper()
	return notifytest.Data[struct {
		Runs []started `json:"runs"`
	}](t, notifytest.Signed(t, k, "POST", "/v1/workflows/"+key+"/trigger", body), http.StatusAccepted).Runs
}

func getRun(t *testing.T, k *client.Client, id string) run {
	t.Helper()
	return notifytest.Data[struct {
		Run run `json:"run"`
	}](t, notifytest.Signed(t, k, "GET", "/v1/workflow-runs/"+id, nil), http.StatusOK).Run
}

// waitRun waits until run id has ended and answers it.
func waitRun(t *testing.T, k *client.Client, id string) run {
	t.Helper()
	var r run
	require.Eventually(t, func() bool {
		r = getRun(t, k, id)
		return r.Status != "running"
	}, 60*time.Second, 100*time.Millisecond, "run %s did not end", id)
	return r
}

// waitStep waits until run id's step key has ended and answers the run.
func waitStep(t *testing.T, k *client.Client, id, key string) run {
	t.Helper()
	var r run
	require.Eventually(t, func() bool {
		r = getRun(t, k, id)
		for _, s := range r.Steps {
			if s.Key == key && s.Status != "pending" {
				return true
			}
		}
		return false
	}, 60*time.Second, 50*time.Millisecond, "step %s of run %s did not end", key, id)
	return r
}

func stepKeys(r run) []string {
	out := make([]string, len(r.Steps))
	for i, s := range r.Steps {
		out[i] = s.Key + ":" + s.Status
	}
	return out
}

func step(r run, key string) runStep {
	for _, s := range r.Steps {
		if s.Key == key {
			return s
		}
	}
	return runStep{}
}

func send(key, channel, template string) map[string]any {
	return map[string]any{"key": key, "type": "send", "channel": channel, "templateCode": template}
}

// webhook registers a receiver for the event types.
func webhook(t *testing.T, env *notifytest.Env, types ...string) *notifytest.Receiver {
	rc := notifytest.NewReceiver(t, nil)
	notifytest.DashboardCall(t, env.Owner, "POST", "/v1/webhooks", map[string]any{"url": rc.URL, "events": types}, http.StatusCreated)
	return rc
}
