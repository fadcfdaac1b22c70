package recipients_test

import (
	"encoding/json"
	"net/http"
	"os"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/notifyd/notifyd/client"
	"github.com/notifyd/notifyd/internal/notifytest"
)

// capSetup is sendSetup with the category "promo" capped at 3 per
// windowSeconds in mode.
func capSetup(t *testing.T, windowSeconds int, mode string) (*notifytest.Env, *client.Client) {
	t.Helper()
	env, key := sendSetup(t)
	got := dash(t, env.Owner, "POST", "/v1/categories", map[string]any{"key": "promo", "name": "Promotions",
		"frequencyCap": map[string]any{"max": 3, "windowSeconds": windowSeconds, "mode": mode}}, http.StatusCreated)
	require.Equal(t, map[string]any{"max": 3.0, "windowSeconds": float64(windowSeconds), "mode": mode},
		notifytest.Field[map[string]any](t, got, "category")["frequencyCap"])
	return env, key
}

// sendAll posts n sends of body with keys in turn, at once, and answers
// their request ids.
func sendAll(t *testing.T, keys []*client.Client, n int, body func() map[string]any) []string {
	t.Helper()
	ids := make([]string, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() { ids[i] = notifytest.Send(t, keys[i%len(keys)], body()).RequestID })
	}
	wg.Wait()
	return ids
}

// finals waits for every request and counts the final states, and the
// final error codes.
func finals(t *testing.T, k *client.Client, ids []string, within time.Duration) (map[string]int, map[string][]string) {
	t.Helper()
	states, byState := map[string]int{}, map[string][]string{}
	for _, id := range ids {
		out := notifytest.WaitWithin(t, k, id, within)
		states[out.Status]++
		byState[out.Status] = append(byState[out.Status], id)
		if out.Status == "canceled" {
			require.Equal(t, "frequency_capped", *out.FinalErrorCode)
			require.Equal(t, "not delivered: frequency cap of category promo reached (cap 3 per 86400s)", *out.FinalErrorMessage)
		}
	}
	return states, byState
}

// TestFrequencyCapDrop: of 4 sends of a category capped at 3 a day, 3
// are delivered and the 4th ends canceled (frequency_capped) with the
// cap's decision, without its fallback step (a cap is per person, not
// per channel); another profile and a send by address are not counted;
// a category's cap is refused when required, and can be removed.
func TestFrequencyCapDrop(t *testing.T) {
	t.Parallel()
	env, key := capSetup(t, 86400, "drop")
	put(t, env.Owner, "u-7", map[string]any{"phone": "010-7777-7777"}, http.StatusCreated)

	// A dry run shows what the cap would decide now, and counts nothing.
	dryCap := func() decision {
		t.Helper()
		body := withCategory(byID("sms", "u-42", "sale!"), "promo")
		body["dryRun"] = true
		d := notifytest.Data[dryRun](t, notifytest.Signed(t, key, "POST", "/v1/notifications", body), http.StatusOK)
		return d.Decisions[len(d.Decisions)-1].plain()
	}
	require.Equal(t, decision{Stage: "dispatch", Kind: "cap", Channel: ptr("sms"), Outcome: "allowed", Rule: ptr("cap 3 per 86400s"),
		Detail: ptr("frequency cap of category promo: 0 of 3 counted in the window; this one would be counted")}, dryCap())

	ids := sendAll(t, []*client.Client{key}, 4, func() map[string]any { return withCategory(byID("sms", "u-42", "sale!"), "promo") })
	states, by := finals(t, key, ids, notifytest.WaitTimeout)
	require.Equal(t, map[string]int{"sent": 3, "canceled": 1}, states)
	require.Len(t, env.Sim.Messages("vendora_sms", "01012345678", 0), 3)
	ex := explain(t, key, by["canceled"][0])
	last := ex.Decisions[len(ex.Decisions)-1].plain()
	require.Equal(t, decision{Stage: "dispatch", Kind: "cap", Channel: ptr("sms"), Outcome: "dropped",
		Rule: ptr("cap 3 per 86400s"), Detail: ptr("frequency cap of category promo reached")}, last)
	ex = explain(t, key, by["sent"][0])
	require.Equal(t, decision{Stage: "dispatch", Kind: "cap", Channel: ptr("sms"), Outcome: "allowed",
		Rule: ptr("cap 3 per 86400s"), Detail: ptr("frequency cap of category promo counted")}, ex.Decisions[len(ex.Decisions)-1].plain())
	require.Equal(t, decision{Stage: "dispatch", Kind: "cap", Channel: ptr("sms"), Outcome: "dropped", Rule: ptr("cap 3 per 86400s"),
		Detail: ptr("frequency cap of category promo: 3 of 3 counted in the window; it would be dropped")}, dryCap())

	// A 5th with an email fallback: dropped, and no email.
	body := withCategory(byID("sms", "u-42", "sale!"), "promo")
	body["channelFallback"] = []any{map[string]any{"channel": "email"}}
	out := notifytest.Wait(t, key, notifytest.Send(t, key, body).RequestID)
	require.Equal(t, "canceled", out.Status)
	require.Equal(t, "frequency_capped", *out.FinalErrorCode)
	require.Empty(t, env.Sim.Messages("mailz_email", "minji@example.com", 0), "the fallback does not take over")

	// Another profile has a count of its own; a send by address is not
	// a profile's and is not counted.
	require.Equal(t, "sent", notifytest.Wait(t, key, notifytest.Send(t, key, withCategory(byID("sms", "u-7", "sale!"), "promo")).RequestID).Status)
	byAddr := withCategory(map[string]any{"channel": "sms", "recipient": map[string]any{"address": "010-1234-5678"},
		"content": map[string]any{"title": "Hi", "text": "sale!"}}, "promo")
	require.Equal(t, "sent", notifytest.Wait(t, key, notifytest.Send(t, key, byAddr).RequestID).Status)

	// Refused caps; a required category cannot have one.
	for body, detail := range map[string]string{
		`{"max": 0, "windowSeconds": 60}`:                  "frequencyCap.max must be an integer from 1 to 1000",
		`{"max": 3, "windowSeconds": 0}`:                   "frequencyCap.windowSeconds must be an integer from 1 to 2678400",
		`{"max": 3, "windowSeconds": 60, "mode": "later"}`: "frequencyCap.mode must be one of drop, defer",
	} {
		require.Equal(t, detail, problem(t, env.Owner, "PATCH", "/v1/categories/promo", rawJSON(`{"frequencyCap": `+body+`}`)), body)
	}
	require.Equal(t, "A required category cannot have a frequency cap: its messages are never held back",
		problem(t, env.Owner, "PATCH", "/v1/categories/promo", map[string]any{"required": true}))
	// Removed: the next send goes.
	got := dash(t, env.Owner, "PATCH", "/v1/categories/promo", map[string]any{"frequencyCap": nil}, http.StatusOK)
	require.Nil(t, notifytest.Field[map[string]any](t, got, "category")["frequencyCap"])
	require.Equal(t, []any{"frequencyCap"}, notifytest.Audit(t, env.Owner, "category.update")[0].Payload["fields"], "audited")
	require.Equal(t, "sent", notifytest.Wait(t, key, notifytest.Send(t, key, withCategory(byID("sms", "u-42", "again"), "promo")).RequestID).Status)
}

// TestFrequencyCapDefer: of 4 sends of a category capped at 3 in 3 s,
// 3 are delivered at once and the 4th waits queued until the oldest
// counted send leaves the window, then is delivered.
func TestFrequencyCapDefer(t *testing.T) {
	t.Parallel()
	env, key := capSetup(t, 3, "defer")
	ids := sendAll(t, []*client.Client{key}, 4, func() map[string]any { return withCategory(byID("sms", "u-42", "sale!"), "promo") })
	states, by := finals(t, key, ids, notifytest.WaitTimeout)
	require.Equal(t, map[string]int{"sent": 4}, states)
	require.Len(t, env.Sim.Messages("vendora_sms", "01012345678", 0), 4)
	deferred := 0
	for _, id := range by["sent"] {
		ex := explain(t, key, id)
		var until time.Time
		for _, d := range ex.Decisions {
			if d.Kind != "cap" {
				continue
			}
			switch d.Outcome {
			case "deferred":
				deferred++
				require.NotNil(t, d.Until)
				u, err := time.Parse(time.RFC3339Nano, *d.Until)
				require.NoError(t, err)
				until = u
			case "allowed":
				at, err := time.Parse(time.RFC3339Nano, d.At)
				require.NoError(t, err)
				require.False(t, at.Before(until), "counted no earlier than the room it waited for")
			}
		}
	}
	require.Positive(t, deferred, "the 4th waited")
	requireSliding(t, key, ids, 3, 3*time.Second)
}

// requireSliding requires that the sends ids were counted at most max in
// any window: the times of their allowed cap decisions, in order, lie at
// least window apart max places apart.
func requireSliding(t *testing.T, k *client.Client, ids []string, max int, window time.Duration) {
	t.Helper()
	var at []time.Time
	for _, id := range ids {
		for _, d := range explain(t, k, id).Decisions {
			if d.Kind == "cap" && d.Outcome == "allowed" {
				v, err := time.Parse(time.RFC3339Nano, d.At)
				require.NoError(t, err)
				at = append(at, v)
			}
		}
	}
	require.Len(t, at, len(ids), "each counted once")
	slices.SortFunc(at, time.Time.Compare)
	for i := max; i < len(at); i++ {
		// The log keeps milliseconds: a send leaves within 1 ms of its window.
		require.GreaterOrEqual(t, at[i].Sub(at[i-max]), window-time.Millisecond, "send %d counted within the window of send %d", i, i-max)
	}
}

// TestFrequencyCapAcrossProcesses: with three processes on one
// PostgreSQL (api and worker each) taking sends and dispatching them,
// a cap of 3 lets exactly 3 of 12 through, and a deferring cap of 3 in
// 3 s sends all of 7, never more than 3 in any 3 s.
func TestFrequencyCapAcrossProcesses(t *testing.T) {
	t.Parallel()
	if os.Getenv(notifytest.EnvPostgres) == "" {
		t.Skip("several processes share one database only on PostgreSQL (set " + notifytest.EnvPostgres + ")")
	}
	env, key := capSetup(t, 86400, "drop")
	keys := []*client.Client{key}
	for range 2 {
		k := *key
		k.BaseURL = env.StartPeer(t, nil).URL()
		keys = append(keys, &k)
	}
	ids := sendAll(t, keys, 12, func() map[string]any { return withCategory(byID("sms", "u-42", "sale!"), "promo") })
	states, _ := finals(t, key, ids, 60*time.Second)
	require.Equal(t, map[string]int{"sent": 3, "canceled": 9}, states)
	require.Len(t, env.Sim.Messages("vendora_sms", "01012345678", 0), 3)

	// Deferred across the processes: all 7 go, never more than 3 in 3 s.
	dash(t, env.Owner, "POST", "/v1/categories", map[string]any{"key": "burst", "name": "Bursts",
		"frequencyCap": map[string]any{"max": 3, "windowSeconds": 3, "mode": "defer"}}, http.StatusCreated)
	ids = sendAll(t, keys, 7, func() map[string]any { return withCategory(byID("sms", "u-42", "burst"), "burst") })
	states, _ = finals(t, key, ids, 60*time.Second)
	require.Equal(t, map[string]int{"sent": 7}, states)
	requireSliding(t, key, ids, 3, 3*time.Second)
}

func rawJSON(s string) json.RawMessage { return json.RawMessage(s) }
