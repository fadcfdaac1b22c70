package inbox_test

import (
	"encoding/json"
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/notifyd/notifyd/internal/notifytest"
)

// TestInboxStatesOutward: read, seen and archived are recorded with their
// time, shown in the request lookup, and sent to the webhooks that
// subscribe to notification.read, .seen and .archived (one per message,
// read-all included); a request delivered elsewhere has no inbox field.
func TestInboxStatesOutward(t *testing.T) {
	t.Parallel()
	env, key := setup(t)
	rc := notifytest.NewReceiver(t, nil)
	notifytest.DashboardCall(t, env.Owner, "POST", "/v1/webhooks", map[string]any{"url": rc.URL,
		"events": []string{"notification.delivered", "notification.read", "notification.seen", "notification.archived"}}, http.StatusCreated)
	tok := mint(t, key, "u-1")
	a := notifytest.Send(t, key, inapp("u-1", "A", "first"))
	notifytest.Wait(t, key, a.RequestID)
	b := notifytest.Send(t, key, inapp("u-1", "B", "second"))
	notifytest.Wait(t, key, b.RequestID)

	lookup := func(id string) map[string]any {
		t.Helper()
		var out map[string]any
		require.NoError(t, json.Unmarshal(notifytest.Signed(t, key, "GET", "/v1/notifications/"+id, nil).Body, &out))
		return out["data"].(map[string]any)
	}
	in := lookup(a.RequestID)["inbox"].(map[string]any)
	require.Nil(t, in["readAt"])
	ms := get[page](t, env, "/v1/inbox/messages", tok).Messages
	require.Equal(t, in["messageId"], ms[1].ID)

	post(t, env, "/v1/inbox/messages/"+ms[1].ID+"/read", tok, 200)
	in = lookup(a.RequestID)["inbox"].(map[string]any)
	require.NotNil(t, in["readAt"])
	require.NotNil(t, in["seenAt"], "reading sees")
	require.Nil(t, in["archivedAt"])
	rc.AwaitEvent(t, a.RequestID, "notification.read")
	rc.AwaitEvent(t, a.RequestID, "notification.delivered")

	post(t, env, "/v1/inbox/seen-all", tok, 200)
	rc.AwaitEvent(t, b.RequestID, "notification.seen")
	post(t, env, "/v1/inbox/archive-all", tok, 200)
	rc.AwaitEvent(t, a.RequestID, "notification.archived")
	rc.AwaitEvent(t, b.RequestID, "notification.archived")
	require.NotNil(t, lookup(b.RequestID)["inbox"].(map[string]any)["archivedAt"])
	for _, ev := range rc.Events() {
		if ev.Type == "notification.read" {
			require.Equal(t, "inapp", ev.Data.Channel)
		}
	}

	status, _, _ := call(t, env, "DELETE", "/v1/inbox/messages/"+ms[1].ID, tok, "")
	require.Equal(t, http.StatusNoContent, status)
	out := lookup(a.RequestID)
	require.Contains(t, out, "inbox")
	require.Nil(t, out["inbox"], "deleted by the recipient")
	mail := notifytest.Send(t, key, notifytest.Email("x@example.com", "s", "t"))
	notifytest.Wait(t, key, mail.RequestID)
	require.NotContains(t, lookup(mail.RequestID), "inbox")
}
