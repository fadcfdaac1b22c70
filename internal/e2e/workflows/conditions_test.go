package workflows_test

import (
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/notifyd/notifyd/internal/notifytest"
)

// TestDelayUntilAndConditions: a delay until a payload time without an
// offset waits until that time in the recipient's time zone; branches on
// a payload field and a recipient attribute choose their targets.
func TestDelayUntilAndConditions(t *testing.T) {
	t.Parallel()
	env, k := setup(t)
	notifytest.DashboardCall(t, env.Owner, "PATCH", "/v1/recipients/u-1", map[string]any{"timeZone": "Asia/Seoul"}, http.StatusOK)
	define(t, env.Owner, "remind",
		map[string]any{"key": "at", "type": "delay", "until": "remindAt"},
		map[string]any{"key": "gold", "type": "branch", "conditions": []map[string]any{{"attribute": "tier", "value": "gold"},
			{"payload": "plan", "op": "ne", "value": "free"}}, "else": "plain"},
		send("vip", "inapp", "note"),
		map[string]any{"key": "skip", "type": "branch", "conditions": []map[string]any{{"payload": "plan", "op": "exists"}}, "then": "end"},
		send("plain", "sms", "note"))
	seoul, err := time.LoadLocation("Asia/Seoul")
	require.NoError(t, err)
	at := time.Now().In(seoul).Add(2 * time.Second).Truncate(time.Second)
	s := trigger(t, k, "remind", map[string]any{"recipients": []string{"u-1", "u-2"},
		"payload": map[string]any{"remindAt": at.Format("2006-01-02T15:04:05"), "plan": "pro"}})
	dueOf := func(id string) time.Time {
		r := notifytest.Data[struct {
			Run struct {
				Steps []struct {
					DueAt string `json:"dueAt"`
				} `json:"steps"`
			} `json:"run"`
		}](t, notifytest.Signed(t, k, "GET", "/v1/workflow-runs/"+id, nil), http.StatusOK).Run
		due, err := time.Parse(time.RFC3339Nano, r.Steps[0].DueAt)
		require.NoError(t, err)
		return due
	}
	require.True(t, dueOf(s[0].RunID).Equal(at), "due %s, want %s (Seoul time)", dueOf(s[0].RunID), at.UTC())
	require.Equal(t, 9*time.Hour, dueOf(s[1].RunID).Sub(at), "a profile without a zone reads the time in UTC")
	gold := waitRun(t, k, s[0].RunID)
	require.Equal(t, []string{"at:done", "gold:done", "vip:done", "skip:done"}, stepKeys(gold))
	require.Equal(t, "then", *step(gold, "skip").Outcome)

	// Not gold: the branch's else jumps to plain.
	notifytest.DashboardCall(t, env.Owner, "PATCH", "/v1/recipients/u-3", map[string]any{"attributes": map[string]string{"tier": "silver"}}, http.StatusOK)
	s = trigger(t, k, "remind", map[string]any{"recipients": []string{"u-3"}, "payload": map[string]any{"plan": "pro"}})
	plain := waitRun(t, k, s[0].RunID)
	require.Equal(t, []string{"at:done", "gold:done", "plain:done"}, stepKeys(plain))
	require.Equal(t, "else", *step(plain, "gold").Outcome)
}
