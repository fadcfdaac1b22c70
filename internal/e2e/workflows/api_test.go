package workflows_test

import (
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/notifyd/notifyd/internal/notifytest"
)

type definition struct {
	Workflow struct {
		ID               string `json:"id"`
		Key              string `json:"key"`
		Name             string `json:"name"`
		PublishedVersion *int   `json:"publishedVersion"`
	} `json:"workflow"`
	Versions []struct {
		Version     int              `json:"version"`
		Steps       []map[string]any `json:"steps"`
		PublishedAt *string          `json:"publishedAt"`
	} `json:"versions"`
}

// TestDefinitions: create (draft), validation problems naming the step
// and field, versions, publication; a run keeps the version it started
// with; triggering a workflow without a published version is 409.
func TestDefinitions(t *testing.T) {
	t.Parallel()
	env, k := setup(t)
	o := env.Owner
	d := notifytest.Decode[definition](t, notifytest.DashboardCall(t, o, "POST", "/v1/workflows", map[string]any{"key": "welcome", "name": "Welcome",
		"steps": []map[string]any{send("hello", "inapp", "note")}}, http.StatusCreated), http.StatusCreated)
	require.Nil(t, d.Workflow.PublishedVersion, "a draft")
	require.Equal(t, 1, d.Versions[0].Version)
	p := notifytest.RequireProblem(t, notifytest.Signed(t, k, "POST", "/v1/workflows/welcome/trigger", map[string]any{"recipients": []string{"u-1"}}),
		http.StatusConflict, "SVC-40900")
	require.Equal(t, "Workflow welcome has no published version", p.Detail)

	for _, c := range []struct {
		body   map[string]any
		detail string
	}{
		{map[string]any{"key": "a", "name": "A", "steps": []map[string]any{send("s", "sms", "missing")}},
			`steps[0].templateCode: no template "missing" on channel sms`},
		{map[string]any{"key": "a", "name": "A", "steps": []map[string]any{{"key": "s", "type": "send", "channel": "sms", "templateCode": "note", "category": "nope"}}},
			`steps[0].category: no category "nope"`},
		{map[string]any{"key": "a", "name": "A", "steps": []map[string]any{send("s", "inapp", "note"),
			{"key": "b", "type": "branch", "conditions": []map[string]any{{"step": "s", "state": "read"}}, "then": "s"}}},
			`steps[1].then: step "s" does not come after this branch; a jump back would make a cycle`},
		{map[string]any{"key": "a", "name": "A", "steps": []map[string]any{{"key": "w", "type": "delay", "duration": "1m"}}},
			"steps must hold at least one send step: a workflow without one sends nothing"},
		{map[string]any{"key": "a b", "name": "A", "steps": []map[string]any{send("s", "inapp", "note")}},
			"key must be 1 to 64 letters, digits, '-' or '_'"},
		{map[string]any{"key": "welcome", "name": "Again", "steps": []map[string]any{send("s", "inapp", "note")}}, ""},
	} {
		want := http.StatusBadRequest
		if c.detail == "" {
			want = http.StatusConflict
		}
		p := notifytest.DashboardProblem(t, o, "POST", "/v1/workflows", c.body, want)
		if c.detail != "" {
			require.Equal(t, c.detail, p.Detail)
		}
	}
	p = notifytest.DashboardProblem(t, o, "POST", "/v1/workflows", map[string]any{"key": "a", "name": "A",
		"steps": []map[string]any{{"key": "s", "type": "send", "channel": "sms", "templateCode": "note", "colour": "red"}}}, http.StatusBadRequest)
	require.Contains(t, p.Detail, "colour")

	// Version 1 published; version 2 a draft until published: runs keep theirs.
	notifytest.DashboardCall(t, o, "POST", "/v1/workflows/welcome/versions/1/publish", nil, http.StatusOK)
	v1 := trigger(t, k, "welcome", map[string]any{"recipients": []string{"u-1"}})
	notifytest.DashboardCall(t, o, "POST", "/v1/workflows/welcome/versions", map[string]any{"steps": []map[string]any{
		send("hello", "inapp", "note"), send("text", "sms", "note")}}, http.StatusCreated)
	still := trigger(t, k, "welcome", map[string]any{"recipients": []string{"u-2"}})
	require.Equal(t, 1, waitRun(t, k, still[0].RunID).Version, "a draft is not what triggers use")
	notifytest.DashboardCall(t, o, "POST", "/v1/workflows/welcome/versions/2/publish", nil, http.StatusOK)
	v2 := trigger(t, k, "welcome", map[string]any{"recipients": []string{"u-3"}})
	r1, r2 := waitRun(t, k, v1[0].RunID), waitRun(t, k, v2[0].RunID)
	require.Equal(t, 1, r1.Version)
	require.Len(t, r1.Steps, 1)
	require.Equal(t, 2, r2.Version)
	require.Equal(t, []string{"hello:done", "text:done"}, stepKeys(r2))
	got := notifytest.Decode[definition](t, notifytest.DashboardCall(t, o, "GET", "/v1/workflows/welcome", nil, http.StatusOK), http.StatusOK)
	require.Equal(t, 2, *got.Workflow.PublishedVersion)
	require.Len(t, got.Versions, 2)
	require.Equal(t, 2, got.Versions[0].Version, "newest first")
	notifytest.DashboardProblem(t, o, "POST", "/v1/workflows/welcome/versions/9/publish", nil, http.StatusNotFound)
	list := notifytest.Decode[struct {
		Workflows []map[string]any `json:"workflows"`
	}](t, notifytest.DashboardCall(t, o, "GET", "/v1/workflows", nil, http.StatusOK), http.StatusOK)
	require.Len(t, list.Workflows, 1)
	notifytest.Audit(t, o, "workflow.create")
	notifytest.Audit(t, o, "workflow.publish")
	notifytest.Audit(t, o, "workflow.version_create")

	// Trigger bounds.
	p = notifytest.RequireProblem(t, notifytest.Signed(t, k, "POST", "/v1/workflows/welcome/trigger", map[string]any{"recipients": []string{"nobody"}}),
		http.StatusBadRequest, "SVC-40000")
	require.Equal(t, `recipients[0]: no recipient profile "nobody"`, p.Detail)
	many := make([]string, 1001)
	for i := range many {
		many[i] = "r" + string(rune('a'+i%26)) + string(rune('a'+i/26%26)) + string(rune('a'+i/676))
	}
	p = notifytest.RequireProblem(t, notifytest.Signed(t, k, "POST", "/v1/workflows/welcome/trigger", map[string]any{"recipients": many}),
		http.StatusBadRequest, "SVC-40000")
	require.Equal(t, "recipients must hold 1 to 1000 recipient ids", p.Detail)
	notifytest.RequireProblem(t, notifytest.Signed(t, k, "POST", "/v1/workflows/nope/trigger", map[string]any{"recipients": []string{"u-1"}}),
		http.StatusNotFound, "SVC-40400")
}

// TestWorkflowRoles: definitions are read by every role and written by
// operators and up; runs are read by every role and by a key with
// notifications:read; triggering needs notifications:send.
func TestWorkflowRoles(t *testing.T) {
	t.Parallel()
	env, k := setup(t)
	define(t, env.Owner, "note", send("inapp", "inapp", "note"))
	s := trigger(t, k, "note", map[string]any{"recipients": []string{"u-1"}})
	rank := map[string]int{"viewer": 0, "operator": 1, "admin": 2}
	for i, c := range []struct {
		method, path string
		body         any
		min          string
		status       int
	}{
		{"GET", "/v1/workflows", nil, "viewer", http.StatusOK},
		{"GET", "/v1/workflows/note", nil, "viewer", http.StatusOK},
		{"GET", "/v1/workflow-runs", nil, "viewer", http.StatusOK},
		{"GET", "/v1/workflow-runs/" + s[0].RunID, nil, "viewer", http.StatusOK},
		{"POST", "/v1/workflows/note/versions", map[string]any{"steps": []map[string]any{send("inapp", "inapp", "note")}}, "operator", http.StatusCreated},
		{"POST", "/v1/workflows/note/versions/1/publish", nil, "operator", http.StatusOK},
		{"POST", "/v1/workflows", nil, "operator", 0},
	} {
		for _, role := range []string{"viewer", "operator", "admin"} {
			want := c.status
			body := c.body
			if c.status == 0 {
				body = map[string]any{"key": "w-" + role + string(rune('a'+i)), "name": "x", "steps": []map[string]any{send("inapp", "inapp", "note")}}
				want = http.StatusCreated
			}
			if rank[role] < rank[c.min] {
				want = http.StatusForbidden
			}
			notifytest.DashboardCall(t, env.Member(t, role), c.method, c.path, body, want)
		}
	}
	ro, _ := env.APIKey(t, "read", "notifications:read")
	r := notifytest.Signed(t, ro, "POST", "/v1/workflows/note/trigger", map[string]any{"recipients": []string{"u-1"}})
	require.Equal(t, http.StatusForbidden, r.Status)
	r = notifytest.Signed(t, ro, "GET", "/v1/workflow-runs/"+s[0].RunID, nil)
	require.Equal(t, http.StatusOK, r.Status)
	// A dashboard token does not trigger (the Notification API's route).
	notifytest.DashboardProblem(t, env.Owner, "POST", "/v1/workflows/note/trigger", map[string]any{"recipients": []string{"u-1"}}, http.StatusUnauthorized)
}

// TestWorkflowIsolation: every id and key of another workspace answers
// 404, on both APIs.
func TestWorkflowIsolation(t *testing.T) {
	t.Parallel()
	env, k := setup(t)
	define(t, env.Owner, "note", send("inapp", "inapp", "note"))
	s := trigger(t, k, "note", map[string]any{"recipients": []string{"u-1"}, "cancellationKey": "c"})
	other, _ := env.NewWorkspace(t, "Other", "other@example.com")
	otherKey, _, err := other.CreateAPIKey(t.Context(), "other", "notifications:send", "notifications:read")
	require.NoError(t, err)
	for _, path := range []string{"/v1/workflows/note", "/v1/workflow-runs/" + s[0].RunID} {
		notifytest.DashboardProblem(t, other, "GET", path, nil, http.StatusNotFound)
	}
	notifytest.DashboardProblem(t, other, "POST", "/v1/workflows/note/versions/1/publish", nil, http.StatusNotFound)
	notifytest.RequireProblem(t, notifytest.Signed(t, otherKey, "GET", "/v1/workflow-runs/"+s[0].RunID, nil), http.StatusNotFound, "SVC-40400")
	notifytest.RequireProblem(t, notifytest.Signed(t, otherKey, "POST", "/v1/workflows/note/trigger", map[string]any{"recipients": []string{"u-1"}}),
		http.StatusNotFound, "SVC-40400")
	notifytest.RequireProblem(t, notifytest.Signed(t, otherKey, "POST", "/v1/workflows/note/cancel", map[string]any{"cancellationKey": "c"}),
		http.StatusNotFound, "SVC-40400")
	runs := notifytest.Data[struct {
		Runs []run `json:"runs"`
	}](t, notifytest.Signed(t, otherKey, "GET", "/v1/workflow-runs?recipientId=u-1", nil), http.StatusOK).Runs
	require.Empty(t, runs)
	notifytest.RequireProblem(t, notifytest.Signed(t, k, "GET", "/v1/workflow-runs/not-a-uuid", nil), http.StatusNotFound, "SVC-40400")
	notifytest.RequireProblem(t, notifytest.Signed(t, k, "GET", "/v1/workflow-runs?limit=500", nil), http.StatusBadRequest, "SVC-40000")
	notifytest.RequireProblem(t, notifytest.Signed(t, k, "GET", "/v1/workflow-runs?cursor=%25%25", nil), http.StatusBadRequest, "SVC-40000")
}
