package workflows_test

import (
	"encoding/json"
	"io"
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/notifyd/notifyd/client"
	"github.com/notifyd/notifyd/internal/notifytest"
)

// escalation is "in-app first; SMS if still unread after the wait".
func escalation(wait string) []map[string]any {
	return []map[string]any{
		send("inapp", "inapp", "note"),
		{"key": "wait", "type": "delay", "duration": wait},
		{"key": "unread", "type": "branch", "conditions": []map[string]any{{"step": "inapp", "state": "unread"}}},
		send("sms", "sms", "note"),
	}
}

// readInbox reads every in-app message of profile id as its recipient.
func readInbox(t *testing.T, env *notifytest.Env, k *client.Client, id string) {
	t.Helper()
	tok := notifytest.Data[struct {
		Token string `json:"token"`
	}](t, notifytest.Signed(t, k, "POST", "/v1/recipients/"+id+"/inbox-token", map[string]any{"ttlSeconds": 600}), http.StatusOK).Token
	req, err := http.NewRequest("POST", env.Owner.BaseURL+"/v1/inbox/read-all", nil)
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bearer "+tok)
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode, string(b))
	var counts struct {
		Counts struct {
			Unread int `json:"unread"`
		} `json:"counts"`
	}
	require.NoError(t, json.Unmarshal(b, &counts))
	require.Zero(t, counts.Counts.Unread)
}

// TestEscalation: an in-app message read within the wait sends no SMS;
// one left unread sends exactly one, through the send path (the SMS
// reaches the simulator).
func TestEscalation(t *testing.T) {
	t.Parallel()
	env, k := setup(t)
	define(t, env.Owner, "comment", escalation("4s")...)
	runs := trigger(t, k, "comment", map[string]any{"recipients": []string{"u-1", "u-2"}, "payload": map[string]any{"title": "New comment"}})
	require.Len(t, runs, 2)
	require.Equal(t, "u-1", runs[0].RecipientID)

	// u-1 reads the in-app message as soon as it is delivered.
	r := waitStep(t, k, runs[0].RunID, "inapp")
	require.NotNil(t, step(r, "inapp").RequestID)
	require.Equal(t, "sent", notifytest.Wait(t, k, *step(r, "inapp").RequestID).Status)
	readInbox(t, env, k, "u-1")

	read := waitRun(t, k, runs[0].RunID)
	require.Equal(t, "completed", read.Status)
	require.Equal(t, []string{"inapp:done", "wait:done", "unread:done"}, stepKeys(read))
	require.Equal(t, "else", *step(read, "unread").Outcome)
	require.Len(t, read.RequestIDs, 1, "no SMS for a read message")

	unread := waitRun(t, k, runs[1].RunID)
	require.Equal(t, "completed", unread.Status)
	require.Equal(t, []string{"inapp:done", "wait:done", "unread:done", "sms:done"}, stepKeys(unread))
	require.Len(t, unread.RequestIDs, 2)
	sms := notifytest.Wait(t, k, unread.RequestIDs[1])
	require.Equal(t, "sent", sms.Status)
	require.Equal(t, "sms", sms.Channel)
	require.Equal(t, "+15550000002", sms.RecipientAddress)
	// Exactly one SMS reached the vendor, with the template filled from the payload.
	msgs := env.Sim.Messages("vendora_sms", "+15550000002", 10)
	require.Len(t, msgs, 1)
	require.Empty(t, env.Sim.Messages("vendora_sms", "+15550000001", 10))
	require.Contains(t, msgs[0].Text, "Still unread: New comment")
}
