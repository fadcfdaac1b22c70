package workflows_test

import (
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/notifyd/notifyd/internal/notifytest"
)

// TestTopics: subscriptions (put, list, delete), and a trigger to a topic
// reaching each subscriber once, honouring each one's preferences.
func TestTopics(t *testing.T) {
	t.Parallel()
	env, k := setup(t)
	notifytest.DashboardCall(t, env.Owner, "POST", "/v1/categories", map[string]any{"key": "news", "name": "News"}, http.StatusCreated)
	define(t, env.Owner, "news", map[string]any{"key": "sms", "type": "send", "channel": "sms", "templateCode": "note", "category": "news"})
	for _, id := range []string{"u-1", "u-2", "u-3"} {
		require.Equal(t, http.StatusCreated, notifytest.Signed(t, k, "PUT", "/v1/topics/releases/subscribers/"+id, nil).Status)
	}
	require.Equal(t, http.StatusOK, notifytest.Signed(t, k, "PUT", "/v1/topics/releases/subscribers/u-1", nil).Status, "again: 200")
	notifytest.RequireProblem(t, notifytest.Signed(t, k, "PUT", "/v1/topics/releases/subscribers/nobody", nil), http.StatusNotFound, "SVC-40400")
	require.Equal(t, http.StatusNoContent, notifytest.Signed(t, k, "DELETE", "/v1/topics/releases/subscribers/u-3", nil).Status)
	notifytest.RequireProblem(t, notifytest.Signed(t, k, "DELETE", "/v1/topics/releases/subscribers/u-3", nil), http.StatusNotFound, "SVC-40400")
	type page struct {
		Subscribers []string `json:"subscribers"`
		Cursor      *string  `json:"cursor"`
		HasNext     bool     `json:"hasNext"`
	}
	p := notifytest.Data[page](t, notifytest.Signed(t, k, "GET", "/v1/topics/releases/subscribers?limit=1", nil), http.StatusOK)
	require.Equal(t, []string{"u-1"}, p.Subscribers)
	require.True(t, p.HasNext)
	p = notifytest.Data[page](t, notifytest.Signed(t, k, "GET", "/v1/topics/releases/subscribers?limit=1&cursor="+*p.Cursor, nil), http.StatusOK)
	require.Equal(t, []string{"u-2"}, p.Subscribers)
	require.False(t, p.HasNext)

	// u-2 takes no news by SMS.
	notifytest.DashboardCall(t, env.Owner, "PUT", "/v1/recipients/u-2/preferences",
		map[string]any{"categories": map[string]any{"news": map[string]bool{"sms": false}}}, http.StatusOK)
	runs := trigger(t, k, "news", map[string]any{"topic": "releases", "payload": map[string]any{"title": "v2"}})
	require.Len(t, runs, 2)
	got := map[string]string{}
	for _, s := range runs {
		r := waitRun(t, k, s.RunID)
		require.Len(t, r.RequestIDs, 1)
		got[r.RecipientID] = notifytest.Wait(t, k, r.RequestIDs[0]).Status
	}
	require.Equal(t, map[string]string{"u-1": "sent", "u-2": "canceled"}, got)
	require.Len(t, env.Sim.Messages("vendora_sms", "+15550000001", 10), 1)
	require.Empty(t, env.Sim.Messages("vendora_sms", "+15550000002", 10), "preferences honoured")
	require.Empty(t, env.Sim.Messages("vendora_sms", "+15550000003", 10), "unsubscribed")
	notifytest.RequireProblem(t, notifytest.Signed(t, k, "POST", "/v1/workflows/news/trigger", map[string]any{"topic": "releases",
		"recipients": []string{"u-1"}}), http.StatusBadRequest, "SVC-40000")
	empty := trigger(t, k, "news", map[string]any{"topic": "nobody-here"})
	require.Empty(t, empty)
	// Erasing a profile ends its subscriptions and erases its runs.
	var u1Run string
	for _, s := range runs {
		if s.RecipientID == "u-1" {
			u1Run = s.RunID
		}
	}
	notifytest.DashboardCall(t, env.Owner, "DELETE", "/v1/recipients/u-1", nil, http.StatusNoContent)
	notifytest.RequireProblem(t, notifytest.Signed(t, k, "GET", "/v1/workflow-runs/"+u1Run, nil), http.StatusNotFound, "SVC-40400")
	p = notifytest.Data[page](t, notifytest.Signed(t, k, "GET", "/v1/topics/releases/subscribers", nil), http.StatusOK)
	require.Equal(t, []string{"u-2"}, p.Subscribers)
	notifytest.Audit(t, env.Owner, "topic.subscribe")
}
