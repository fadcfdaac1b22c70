package inbox_test

import (
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/notifyd/notifyd/internal/notifytest"
)

// TestInAppDelivery: an inapp send needs no route; it is sent through the
// normal settlement and its message (title, text, action URL, data,
// category, request id) lands in the profile's inbox, and only there.
func TestInAppDelivery(t *testing.T) {
	t.Parallel()
	env, key := setup(t)
	notifytest.DashboardCall(t, env.Owner, "POST", "/v1/categories", map[string]any{"key": "orders", "name": "Orders"}, http.StatusCreated)
	body := inapp("u-1", "Shipped", "Your order is on its way")
	body["category"] = "orders"
	body["content"].(map[string]any)["actionUrl"] = "https://shop.example.com/orders/7"
	body["content"].(map[string]any)["data"] = map[string]any{"orderId": 7}
	res := notifytest.Send(t, key, body)
	out := notifytest.Wait(t, key, res.RequestID)
	require.Equal(t, "sent", out.Status)
	require.Equal(t, "inapp", *out.DeliveredChannel)
	require.Equal(t, "u-1", out.RecipientAddress)
	require.Empty(t, out.Attempts, "no provider call")
	ms := stored(t, env, "u-1")
	require.Len(t, ms, 1)
	m := ms[0]
	require.Equal(t, res.RequestID, m.RequestID)
	require.Equal(t, "Shipped", m.Title)
	require.Equal(t, "Your order is on its way", m.Body)
	require.Equal(t, "https://shop.example.com/orders/7", m.ActionURL)
	require.Equal(t, map[string]any{"orderId": float64(7)}, m.Data)
	require.Equal(t, "orders", m.Category)
	require.Empty(t, stored(t, env, "u-2"))
}

// TestInAppValidation: inapp names a profile; actionUrl and data belong
// to an inapp send; a route for inapp is refused.
func TestInAppValidation(t *testing.T) {
	t.Parallel()
	env, key := setup(t)
	problem := func(body map[string]any) string {
		t.Helper()
		return notifytest.RequireProblem(t, notifytest.Signed(t, key, "POST", "/v1/notifications", body), http.StatusBadRequest, "").Detail
	}
	require.Equal(t, "recipient.id is required for channel inapp: the inbox is a recipient profile's",
		problem(map[string]any{"channel": "inapp", "recipient": map[string]any{"address": "u-1"}, "content": map[string]any{"text": "x"}}))
	require.Equal(t, "recipient.id: no recipient profile nobody in this workspace", problem(inapp("nobody", "t", "x")))
	mail := notifytest.Email("a@example.com", "s", "x")
	mail["content"].(map[string]any)["actionUrl"] = "/x"
	require.Equal(t, "content.actionUrl and content.data belong to a send with channel inapp (or an inapp step)", problem(mail))
	bad := inapp("u-1", "t", "x")
	bad["content"].(map[string]any)["actionUrl"] = "javascript:alert(1)"
	require.Equal(t, "content.actionUrl must be an http or https URL, or a path starting with /", problem(bad))
	step := notifytest.Email("a@example.com", "s", "x")
	step["channelFallback"] = []any{map[string]any{"channel": "inapp"}}
	require.Equal(t, "recipient.id is required for an inapp step: the inbox is a recipient profile's", problem(step))
	p := notifytest.DashboardProblem(t, env.Owner, "PUT", "/v1/routes", map[string]any{"routes": []any{
		map[string]any{"channel": "inapp", "providerAccountId": "00000000-0000-0000-0000-000000000000", "priority": 1}}}, http.StatusBadRequest)
	require.Equal(t, "routes[0].channel: inapp takes no route, it is delivered to the recipient's inbox", p.Detail)
}

// TestInAppThenEmail: a category with inapp off for the profile skips
// the inbox and the chain's email step delivers; with inapp on the inbox
// delivers and the email step is skipped.
func TestInAppThenEmail(t *testing.T) {
	t.Parallel()
	env, key := setup(t)
	notifytest.DashboardCall(t, env.Owner, "POST", "/v1/categories", map[string]any{"key": "promo", "name": "Promo"}, http.StatusCreated)
	notifytest.DashboardCall(t, env.Owner, "PUT", "/v1/recipients/u-2/preferences",
		map[string]any{"categories": map[string]any{"promo": map[string]bool{"inapp": false}}}, http.StatusOK)
	chain := func(id string) map[string]any {
		b := inapp(id, "Sale", "Half price")
		b["category"] = "promo"
		b["channelFallback"] = []any{map[string]any{"channel": "email"}}
		return b
	}
	one := notifytest.Wait(t, key, notifytest.Send(t, key, chain("u-1")).RequestID)
	require.Equal(t, "sent", one.Status)
	require.Equal(t, "inapp", *one.DeliveredChannel)
	require.Len(t, stored(t, env, "u-1"), 1)
	require.Empty(t, env.Sim.Messages("mailz_email", "u-1@example.com", 0))

	two := notifytest.Wait(t, key, notifytest.Send(t, key, chain("u-2")).RequestID)
	require.Equal(t, "sent", two.Status)
	require.Equal(t, "email", *two.DeliveredChannel, "inapp is off for promo: the email step delivers")
	require.Empty(t, stored(t, env, "u-2"))
	require.Len(t, env.Sim.Messages("mailz_email", "u-2@example.com", 0), 1)
}

// TestInAppLikeAnyChannel: an inapp template renders with the send's
// variables; bulk items, idempotency keys, scheduling and cancel work on
// inapp as on any channel.
func TestInAppLikeAnyChannel(t *testing.T) {
	t.Parallel()
	env, key := setup(t)
	var tpl struct {
		Template struct {
			ID string `json:"id"`
		} `json:"template"`
	}
	require.NoError(t, notifytest.DashboardCall(t, env.Owner, "POST", "/v1/templates",
		map[string]any{"code": "shipped", "channel": "inapp", "name": "Shipped"}, http.StatusCreated).Decode(&tpl))
	notifytest.DashboardCall(t, env.Owner, "POST", "/v1/templates/"+tpl.Template.ID+"/versions",
		map[string]any{"title": "Order {{order}}", "text": "Order {{order}} is on its way"}, http.StatusCreated)
	notifytest.DashboardCall(t, env.Owner, "POST", "/v1/templates/"+tpl.Template.ID+"/versions/1/publish", nil, http.StatusOK)
	res := notifytest.Send(t, key, map[string]any{"channel": "inapp", "recipient": map[string]any{"id": "u-1"},
		"content":        map[string]any{"templateCode": "shipped", "templateVariables": map[string]string{"order": "#7"}},
		"idempotencyKey": "order-7"})
	require.Equal(t, "sent", notifytest.Wait(t, key, res.RequestID).Status)
	again := notifytest.Send(t, key, map[string]any{"channel": "inapp", "recipient": map[string]any{"id": "u-1"},
		"content":        map[string]any{"templateCode": "shipped", "templateVariables": map[string]string{"order": "#7"}},
		"idempotencyKey": "order-7"})
	require.True(t, again.Deduplicated)
	ms := stored(t, env, "u-1")
	require.Len(t, ms, 1)
	require.Equal(t, "Order #7", ms[0].Title)
	require.Equal(t, "Order #7 is on its way", ms[0].Body)

	ids := notifytest.Bulk(t, key, []any{inapp("u-1", "b", "bulk one"), inapp("u-2", "b", "bulk two")})
	for _, id := range ids {
		require.Equal(t, "sent", notifytest.Wait(t, key, id).Status)
	}
	require.Len(t, stored(t, env, "u-1"), 2)
	require.Len(t, stored(t, env, "u-2"), 1)

	later := inapp("u-2", "later", "tomorrow")
	later["scheduledAt"] = time.Now().Add(24 * time.Hour).UTC().Format(time.RFC3339)
	sch := notifytest.Send(t, key, later)
	require.NotNil(t, sch.ScheduledAt)
	notifytest.Signed(t, key, "POST", "/v1/notifications/"+sch.RequestID+"/cancel", nil)
	require.Equal(t, "canceled", notifytest.Lookup(t, key, sch.RequestID).Status)
	require.Len(t, stored(t, env, "u-2"), 1, "a canceled send stores nothing")
}

// TestInAppAtAcceptance: an inapp send with nothing to wait for is
// delivered in its acceptance's transaction: the 201 already says sent,
// the message is in the inbox when it arrives, no job was queued, and
// notification.delivered goes out as for any delivery. A send with a
// channel fallback chain (or scheduled, or held, or capped) keeps the
// engine's path; a repeated idempotency key stores nothing twice.
func TestInAppAtAcceptance(t *testing.T) {
	t.Parallel()
	env, key := setup(t)
	rc := notifytest.NewReceiver(t, nil)
	notifytest.DashboardCall(t, env.Owner, "POST", "/v1/webhooks", map[string]any{"url": rc.URL,
		"events": []string{"notification.delivered"}}, http.StatusCreated)

	body := inapp("u-1", "Now", "at once")
	body["idempotencyKey"] = "now-1"
	res := notifytest.Send(t, key, body)
	require.Equal(t, "sent", res.Status)
	require.Nil(t, res.QueueJobID, "no job")
	ms := stored(t, env, "u-1")
	require.Len(t, ms, 1, "stored before the 201")
	require.Equal(t, res.RequestID, ms[0].RequestID)
	out := notifytest.Lookup(t, key, res.RequestID)
	require.Equal(t, "sent", out.Status)
	require.Equal(t, "inapp", *out.DeliveredChannel)
	ev := rc.AwaitEvent(t, res.RequestID, "notification.delivered")
	require.Len(t, ev, 1)

	again := notifytest.Send(t, key, body)
	require.True(t, again.Deduplicated)
	require.Equal(t, res.RequestID, again.RequestID)
	require.Len(t, stored(t, env, "u-1"), 1)

	chain := inapp("u-2", "Chain", "then email")
	chain["channelFallback"] = []map[string]any{{"channel": "email"}}
	c := notifytest.Send(t, key, chain)
	require.Equal(t, "queued", c.Status, "a chain goes through the engine")
	require.NotNil(t, c.QueueJobID)
	require.Equal(t, "sent", notifytest.Wait(t, key, c.RequestID).Status)
	require.Len(t, stored(t, env, "u-2"), 1)
}
