package recipients_test

import (
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/notifyd/notifyd/client"
	"github.com/notifyd/notifyd/internal/notifytest"
)

// prefSetup is sendSetup with the categories "marketing" (advertising),
// "security" (required) and "digest" (email only by default), and u-42's
// preferences: sms off for marketing and for security.
func prefSetup(t *testing.T) (*notifytest.Env, *client.Client) {
	t.Helper()
	env, key := sendSetup(t)
	for _, c := range []map[string]any{
		{"key": "marketing", "name": "Marketing", "advertising": true},
		{"key": "security", "name": "Security notices", "required": true},
		{"key": "digest", "name": "Digest", "defaultChannels": []string{"email"}},
	} {
		dash(t, env.Owner, "POST", "/v1/categories", c, http.StatusCreated)
	}
	setPrefs(t, env.Owner, "u-42", map[string]any{"categories": map[string]any{
		"marketing": map[string]bool{"sms": false}, "security": map[string]bool{"sms": false}}})
	return env, key
}

func setPrefs(t *testing.T, c *client.Client, id string, body map[string]any) {
	t.Helper()
	dash(t, c, "PUT", "/v1/recipients/"+id+"/preferences", body, http.StatusOK)
}

func withCategory(body map[string]any, cat string) map[string]any {
	body["category"] = cat
	return body
}

func explain(t *testing.T, k *client.Client, id string) explanation {
	t.Helper()
	return notifytest.Data[explanation](t, notifytest.Signed(t, k, "GET", "/v1/notifications/"+id+"/explanation", nil), http.StatusOK)
}

// TestPreferenceOptOut: sms off for a category → the SMS is not
// delivered (accepted canceled, code preference_opt_out, the rule in the
// message and the event), the email of the same category is; a required
// category ignores the opt-out; a category's default channels decide a
// send by address; an unknown category is a 400.
func TestPreferenceOptOut(t *testing.T) {
	t.Parallel()
	env, key := prefSetup(t)
	rc := notifytest.NewReceiver(t, nil)
	dash(t, env.Owner, "POST", "/v1/webhooks", map[string]any{"url": rc.URL,
		"events": []string{"notification.delivered", "notification.failed", "notification.canceled"}}, http.StatusCreated)

	res := notifytest.Send(t, key, withCategory(byID("sms", "u-42", "sale!"), "marketing"))
	require.Equal(t, "canceled", res.Status, "decided at acceptance")
	require.Nil(t, res.QueueJobID, "no job")
	out := notifytest.Lookup(t, key, res.RequestID)
	require.Equal(t, "canceled", out.Status)
	require.Equal(t, "preference_opt_out", *out.FinalErrorCode)
	require.Equal(t, "not delivered: sms is off for category marketing (rule recipient.category_channel)", *out.FinalErrorMessage)
	ex := explain(t, key, res.RequestID)
	require.Equal(t, "marketing", *ex.Category)
	require.Len(t, ex.Decisions, 2)
	require.Equal(t, decision{Stage: "acceptance", Kind: "preference", Channel: ptr("sms"), Outcome: "blocked",
		Rule: ptr("recipient.category_channel"), Detail: ptr("sms is off for category marketing (rule recipient.category_channel)")},
		ex.Decisions[1].plain())

	mail := notifytest.Send(t, key, withCategory(byID("email", "u-42", "sale!"), "marketing"))
	require.Equal(t, "queued", mail.Status)
	require.Equal(t, "sent", notifytest.Wait(t, key, mail.RequestID).Status)
	require.Len(t, env.Sim.Messages("mailz_email", "minji@example.com", 0), 1)

	sec := notifytest.Send(t, key, withCategory(byID("sms", "u-42", "new login"), "security"))
	require.Equal(t, "sent", notifytest.Wait(t, key, sec.RequestID).Status, "required ignores the opt-out")
	ex = explain(t, key, sec.RequestID)
	require.Equal(t, "required", *ex.Decisions[len(ex.Decisions)-1].Rule)
	msgs := env.Sim.Messages("vendora_sms", "01012345678", 0)
	require.Len(t, msgs, 1)
	require.Equal(t, "new login", msgs[0].Text)

	// By address: the category's default channels decide.
	d := notifytest.Send(t, key, withCategory(notifytest.SMS("01033334444", "digest"), "digest"))
	require.Equal(t, "canceled", d.Status)
	require.Equal(t, "category.default_channels", *explain(t, key, d.RequestID).Decisions[0].Rule)
	ok := notifytest.Send(t, key, withCategory(notifytest.Email("x@example.com", "Digest", "d"), "digest"))
	require.Equal(t, "sent", notifytest.Wait(t, key, ok.RequestID).Status)

	require.Equal(t, "category: no category promo in this workspace", sendProblem(t, key, withCategory(byID("sms", "u-42", "x"), "promo")))
	require.Equal(t, "category must not be empty", sendProblem(t, key, withCategory(byID("sms", "u-42", "x"), "")))

	// The canceled event names the rule, the profile and the category.
	evs := rc.AwaitEvent(t, res.RequestID, "notification.canceled")
	require.Len(t, evs, 1)
	require.Equal(t, "preference_opt_out", *evs[0].Data.FinalErrorCode)
	require.Equal(t, "u-42", *evs[0].Data.RecipientID)
	require.Equal(t, "marketing", *evs[0].Data.Category)
}

// TestPreferenceChangedBeforeDispatch: a preference changed between
// acceptance and dispatch is honoured, both ways.
func TestPreferenceChangedBeforeDispatch(t *testing.T) {
	t.Parallel()
	env, key := prefSetup(t)
	at := time.Now().Add(2 * time.Second).UTC().Format(time.RFC3339Nano)
	off := withCategory(byID("email", "u-42", "turned off later"), "marketing")
	off["scheduledAt"] = at
	on := withCategory(byID("sms", "u-42", "turned on later"), "marketing")
	on["channelFallback"] = []any{map[string]any{"channel": "email"}}
	on["scheduledAt"] = at
	offID := notifytest.Send(t, key, off).RequestID
	onRes := notifytest.Send(t, key, on)
	require.Equal(t, "queued", onRes.Status, "sms is off, but the email step is allowed")
	setPrefs(t, env.Owner, "u-42", map[string]any{"categories": map[string]any{"marketing": map[string]bool{"email": false, "sms": true}}})

	out := notifytest.Wait(t, key, offID)
	require.Equal(t, "canceled", out.Status)
	require.Equal(t, "preference_opt_out", *out.FinalErrorCode)
	ex := explain(t, key, offID)
	require.Equal(t, []string{"acceptance/address/resolved", "acceptance/preference/allowed", "dispatch/preference/blocked"}, steps(ex))
	require.Empty(t, env.Sim.Messages("mailz_email", "", 0))

	// Accepted to start at its email step (sms was off), dispatched when
	// email is off: the chain has no step after it, so it ends canceled,
	// and nothing goes; the decisions say so.
	out = notifytest.Wait(t, key, onRes.RequestID)
	require.Equal(t, "canceled", out.Status)
	require.Empty(t, out.Attempts)
	require.Equal(t, "email", out.ChannelFallback.CurrentChannel)
	require.Empty(t, env.Sim.Messages("vendora_sms", "", 0))
}

// TestPreferenceFallbackSkipsBlockedStep: a chain whose first channel is
// off starts at the first allowed step; a step turned off before it is
// reached is skipped at dispatch without a call.
func TestPreferenceFallbackSkipsBlockedStep(t *testing.T) {
	t.Parallel()
	env, key := prefSetup(t)
	body := withCategory(byID("sms", "u-42", "chain"), "marketing")
	body["channelFallback"] = []any{map[string]any{"channel": "email"}}
	id := notifytest.Send(t, key, body).RequestID
	out := notifytest.Wait(t, key, id)
	require.Equal(t, "sent", out.Status)
	require.Equal(t, "email", *out.DeliveredChannel)
	require.Len(t, out.Attempts, 1, "no sms call")
	require.Empty(t, env.Sim.Messages("vendora_sms", "", 0))

	// Email fails for good, so the chain moves to sms, which the person
	// turned off meanwhile: skipped at dispatch, the request canceled.
	setPrefs(t, env.Owner, "u-42", map[string]any{"categories": map[string]any{"marketing": map[string]bool{"sms": false}}})
	env.Fault(t, map[string]any{"kind": "mailz_email", "status": 400, "count": 100})
	body = withCategory(byID("email", "u-42", "chain 2"), "marketing")
	body["channelFallback"] = []any{map[string]any{"channel": "sms"}}
	id = notifytest.Send(t, key, body).RequestID
	out = notifytest.Wait(t, key, id)
	require.Equal(t, "canceled", out.Status)
	require.Equal(t, "preference_opt_out", *out.FinalErrorCode)
	require.Equal(t, "sms", out.ChannelFallback.CurrentChannel)
	require.Empty(t, env.Sim.Messages("vendora_sms", "", 0))
	require.Equal(t, []string{"acceptance/address/resolved", "acceptance/address/resolved", "acceptance/preference/allowed",
		"acceptance/preference/blocked", "dispatch/preference/allowed", "dispatch/preference/blocked"}, steps(explain(t, key, id)))
}

func steps(ex explanation) []string {
	out := make([]string, len(ex.Decisions))
	for i, d := range ex.Decisions {
		out[i] = d.Stage + "/" + d.Kind + "/" + d.Outcome
	}
	return out
}
