package webhooks_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"
	"github.com/stretchr/testify/require"

	"github.com/notifyd/notifyd/client"
	"github.com/notifyd/notifyd/internal/config"
	"github.com/notifyd/notifyd/internal/notify"
	"github.com/notifyd/notifyd/internal/notifytest"
)

type eventBody struct {
	Type      string `json:"type"`
	Timestamp string `json:"timestamp"`
	Data      struct {
		RequestID                 string            `json:"requestId"`
		WorkspaceID               string            `json:"workspaceId"`
		Channel                   string            `json:"channel"`
		Status                    string            `json:"status"`
		RecipientAddress          string            `json:"recipientAddress"`
		SelectedProviderAccountID *string           `json:"selectedProviderAccountId"`
		SelectedProviderMessageID *string           `json:"selectedProviderMessageId"`
		FinalErrorCode            *string           `json:"finalErrorCode"`
		FinalErrorMessage         *string           `json:"finalErrorMessage"`
		Metadata                  map[string]string `json:"metadata"`
	} `json:"data"`
}

// verify checks a notifytest.Received request with the published Standard Webhooks
// library and with our client, and decodes its body.
func verify(t *testing.T, secret string, r notifytest.Received) eventBody {
	t.Helper()
	wh, err := standardwebhooks.NewWebhook(secret)
	require.NoError(t, err)
	require.NoError(t, wh.Verify(r.Body, r.Header), "standard-webhooks verification")
	require.NoError(t, client.VerifyWebhook(secret, r.Header, r.Body, time.Minute))
	require.Equal(t, "application/json", r.Header.Get("Content-Type"))
	var ev eventBody
	require.NoError(t, json.Unmarshal(r.Body, &ev))
	_, err = time.Parse("2006-01-02T15:04:05.000Z", ev.Timestamp)
	require.NoError(t, err, ev.Timestamp)
	return ev
}

// Sent, failed and canceled requests each reach a subscribed receiver as
// a signed event; subscriptions and enabled filter what is sent.
func TestEventsDelivered(t *testing.T) {
	t.Parallel()
	b := setup(t)
	provider := b.env.SimRoute(t, "sms", "vendora_sms", nil)
	all := notifytest.NewReceiver(t, notifytest.Always(http.StatusOK))
	onlyFailed := notifytest.NewReceiver(t, notifytest.Always(http.StatusNoContent))
	off := notifytest.NewReceiver(t, notifytest.Always(http.StatusOK))
	hAll, secret := b.createWebhook(t, all.URL+"/hooks", "notification.delivered", "notification.failed", "notification.canceled")
	hFailed, secretFailed := b.createWebhook(t, onlyFailed.URL, "notification.failed")
	r := notifytest.Dash(t, b.env.Owner, "POST", "/v1/webhooks", map[string]any{"url": off.URL, "events": []string{"notification.delivered"}, "enabled": false})
	require.Equal(t, http.StatusCreated, r.Status, string(r.Body))

	sent := b.send(t, "ok", nil)
	require.Eventually(t, func() bool { return b.status(t, sent) == "sent" }, 20*time.Second, 20*time.Millisecond)
	b.env.Fault(t, map[string]any{"kind": "vendora_sms", "vendorCode": -301})
	failed := b.send(t, "bad", nil)
	require.Eventually(t, func() bool { return b.status(t, failed) == "failed" }, 20*time.Second, 20*time.Millisecond)
	canceled := b.send(t, "later", map[string]any{"scheduledAt": time.Now().Add(time.Hour).UTC().Format(time.RFC3339)})
	c, err := b.key.Signed(ctx, "POST", "/v1/notifications/"+canceled+"/cancel", nil)
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, c.Status, string(c.Body))

	ds := b.waitDeliveries(t, hAll.ID, "three deliveries", finished(3))
	byType := map[string]notifytest.Received{}
	require.Eventually(t, func() bool { return len(all.Requests()) == 3 }, 5*time.Second, 10*time.Millisecond)
	ids := map[string]bool{}
	for _, rq := range all.Requests() {
		ev := verify(t, secret, rq)
		byType[ev.Type] = rq
		ids[rq.Header.Get("webhook-id")] = true
		require.Equal(t, b.env.Workspace, ev.Data.WorkspaceID)
		require.Equal(t, "sms", ev.Data.Channel)
		require.Equal(t, "01012345678", ev.Data.RecipientAddress)
		switch ev.Type {
		case "notification.delivered":
			require.Equal(t, sent, ev.Data.RequestID)
			require.Equal(t, "sent", ev.Data.Status)
			require.Equal(t, provider, *ev.Data.SelectedProviderAccountID)
			require.NotEmpty(t, *ev.Data.SelectedProviderMessageID)
			require.Nil(t, ev.Data.FinalErrorCode)
			require.Equal(t, map[string]string{"order": "ok"}, ev.Data.Metadata)
		case "notification.failed":
			require.Equal(t, failed, ev.Data.RequestID)
			require.Equal(t, "failed", ev.Data.Status)
			require.NotNil(t, ev.Data.FinalErrorCode)
			require.NotNil(t, ev.Data.FinalErrorMessage)
			require.Equal(t, map[string]string{"order": "bad"}, ev.Data.Metadata)
		case "notification.canceled":
			require.Equal(t, canceled, ev.Data.RequestID)
			require.Equal(t, "canceled", ev.Data.Status)
			require.Equal(t, "canceled_by_api", *ev.Data.FinalErrorCode)
		}
	}
	require.Len(t, byType, 3)
	require.Len(t, ids, 3, "one webhook-id per delivery")
	for _, d := range ds {
		require.Equal(t, "delivered", d.Status)
		require.Equal(t, hAll.ID, d.WebhookID)
		require.Equal(t, 1, d.Attempt)
		require.Equal(t, 200, *d.HTTPStatus)
		require.Nil(t, d.Error)
		require.Nil(t, d.NextRetryAt)
		require.NotNil(t, d.FinishedAt)
		require.Len(t, d.Tries, 1)
		require.Equal(t, 200, *d.Tries[0].HTTPStatus)
		require.Contains(t, *d.Tries[0].Response, "answer")
		require.True(t, ids[d.ID], "webhook-id is the delivery id")
		require.Equal(t, d.EventType, verify(t, secret, byType[d.EventType]).Type)
	}

	// The failed-only endpoint saw just the failure; the disabled one nothing.
	fs := b.waitDeliveries(t, hFailed.ID, "one delivery", finished(1))
	require.Equal(t, "notification.failed", fs[0].EventType)
	require.Equal(t, failed, fs[0].RequestID)
	require.Len(t, onlyFailed.Requests(), 1)
	require.Equal(t, failed, verify(t, secretFailed, onlyFailed.Requests()[0]).Data.RequestID)
	wh, err := standardwebhooks.NewWebhook(secret)
	require.NoError(t, err)
	require.Error(t, wh.Verify(onlyFailed.Requests()[0].Body, onlyFailed.Requests()[0].Header), "another endpoint's secret")
	require.Empty(t, off.Requests())
}

// A 500 and a timeout are retried on the schedule under the same
// webhook-id; every try is logged.
func TestRetriesOn500AndTimeout(t *testing.T) {
	t.Parallel()
	b := setup(t, fast(300*time.Millisecond, 50*time.Millisecond, 100*time.Millisecond, 50*time.Millisecond))
	b.env.SimRoute(t, "sms", "vendora_sms", nil)
	rc := notifytest.NewReceiver(t, func(n int) (int, time.Duration) {
		switch n {
		case 1:
			return http.StatusInternalServerError, 0
		case 2:
			return http.StatusOK, 2 * time.Second // beyond the 300 ms timeout
		}
		return http.StatusOK, 0
	})
	h, secret := b.createWebhook(t, rc.URL, "notification.delivered")
	b.send(t, "ok", nil)
	ds := b.waitDeliveries(t, h.ID, "delivered", finished(1))
	d := ds[0]
	require.Equal(t, "delivered", d.Status)
	require.Equal(t, 3, d.Attempt)
	require.Len(t, d.Tries, 3)
	// A first try that itself timed out (a loaded machine against the 300 ms
	// timeout) fails here instead of panicking on the nil status.
	require.NotNil(t, d.Tries[0].HTTPStatus, "first try: %+v", d.Tries[0])
	require.Equal(t, 500, *d.Tries[0].HTTPStatus)
	require.Equal(t, "HTTP 500", *d.Tries[0].Error)
	require.Contains(t, *d.Tries[0].Response, "Internal Server Error")
	require.Nil(t, d.Tries[1].HTTPStatus)
	require.Contains(t, *d.Tries[1].Error, "timeout")
	require.GreaterOrEqual(t, d.Tries[1].DurationMs, int64(250))
	require.Less(t, d.Tries[1].DurationMs, int64(2000))
	require.Equal(t, 200, *d.Tries[2].HTTPStatus)
	for i, tr := range d.Tries {
		require.Equal(t, i+1, tr.Attempt)
	}
	reqs := rc.Requests()
	require.Len(t, reqs, 3)
	for _, rq := range reqs {
		require.Equal(t, d.ID, rq.Header.Get("webhook-id"), "stable across retries")
		verify(t, secret, rq)
	}
	// The waits follow the schedule (50 ms, then 100 ms after the timeout).
	require.GreaterOrEqual(t, reqs[1].At.Sub(reqs[0].At), 40*time.Millisecond)
	require.GreaterOrEqual(t, reqs[2].At.Sub(reqs[1].At), 300*time.Millisecond+80*time.Millisecond)
	// Metrics: one try per result, two answered, one delivery delivered.
	reg := b.env.Daemon.Metrics.Registry
	require.Equal(t, 1.0, notifytest.Counter(t, reg, "notifyd_webhook_tries_total", map[string]string{"result": "5xx"}))
	require.Equal(t, 1.0, notifytest.Counter(t, reg, "notifyd_webhook_tries_total", map[string]string{"result": "error"}))
	require.Equal(t, 1.0, notifytest.Counter(t, reg, "notifyd_webhook_tries_total", map[string]string{"result": "2xx"}))
	require.Equal(t, uint64(2), notifytest.HistogramCount(t, b.env.Daemon.Metrics.Registry, "notifyd_webhook_try_duration_seconds"))
	require.Equal(t, 1.0, notifytest.Counter(t, reg, "notifyd_webhook_deliveries_finished_total", map[string]string{"outcome": "delivered"}))
	require.Equal(t, 0.0, notifytest.Counter(t, reg, "notifyd_webhook_deliveries_finished_total", map[string]string{"outcome": "failed"}))
}

// After the schedule is spent the delivery fails; a redelivery sends the
// same id and body again with a fresh schedule.
func TestGiveUpAndRedeliver(t *testing.T) {
	t.Parallel()
	b := setup(t, fast(time.Second, 30*time.Millisecond, 30*time.Millisecond))
	b.env.SimRoute(t, "sms", "vendora_sms", nil)
	rc := notifytest.NewReceiver(t, notifytest.Always(http.StatusServiceUnavailable))
	h, secret := b.createWebhook(t, rc.URL, "notification.delivered")
	b.send(t, "ok", nil)
	ds := b.waitDeliveries(t, h.ID, "failed", finished(1))
	d := ds[0]
	require.Equal(t, "failed", d.Status)
	require.Equal(t, 3, d.Attempt, "the first try and two retries")
	require.Len(t, d.Tries, 3)
	require.Nil(t, d.NextRetryAt)
	require.NotNil(t, d.FinishedAt)
	require.Equal(t, 503, *d.HTTPStatus)
	time.Sleep(150 * time.Millisecond)
	require.Len(t, rc.Requests(), 3, "no try after giving up")
	require.Equal(t, 1.0, notifytest.Counter(t, b.env.Daemon.Metrics.Registry, "notifyd_webhook_deliveries_finished_total", map[string]string{"outcome": "failed"}))
	require.Equal(t, 3.0, notifytest.Counter(t, b.env.Daemon.Metrics.Registry, "notifyd_webhook_tries_total", map[string]string{"result": "5xx"}))

	rc.SetAnswer(notifytest.Always(http.StatusOK))
	r := notifytest.Dash(t, b.env.Owner, "POST", "/v1/webhooks/"+h.ID+"/deliveries/"+d.ID+"/redeliver", nil)
	require.Equal(t, http.StatusOK, r.Status, string(r.Body))
	var out struct {
		Delivery deliveryOut `json:"delivery"`
	}
	require.NoError(t, r.Decode(&out))
	require.Equal(t, "pending", out.Delivery.Status)
	require.Equal(t, d.ID, out.Delivery.ID)
	ds = b.waitDeliveries(t, h.ID, "redelivered", finished(1))
	require.Equal(t, "delivered", ds[0].Status)
	require.Equal(t, 4, ds[0].Attempt)
	require.Len(t, ds[0].Tries, 4)
	reqs := rc.Requests()
	require.Len(t, reqs, 4)
	require.Equal(t, d.ID, reqs[3].Header.Get("webhook-id"))
	require.Equal(t, string(reqs[0].Body), string(reqs[3].Body), "the same body")
	verify(t, secret, reqs[3])

	// Unknown deliveries and other webhooks' deliveries: 404.
	other, _ := b.createWebhook(t, rc.URL, "notification.failed")
	notifytest.RequireProblem(t, notifytest.Dash(t, b.env.Owner, "POST", "/v1/webhooks/"+other.ID+"/deliveries/"+d.ID+"/redeliver", nil), 404, "SVC-40400")
	notifytest.RequireProblem(t, notifytest.Dash(t, b.env.Owner, "POST", "/v1/webhooks/"+h.ID+"/deliveries/"+zeroID+"/redeliver", nil), 404, "SVC-40400")
	notifytest.RequireProblem(t, notifytest.Dash(t, b.env.Owner, "POST", "/v1/webhooks/"+h.ID+"/deliveries/nope/redeliver", nil), 404, "SVC-40400")
	// A disabled webhook is not redelivered to.
	r = notifytest.Dash(t, b.env.Owner, "PATCH", "/v1/webhooks/"+h.ID, map[string]any{"enabled": false})
	require.Equal(t, http.StatusOK, r.Status, string(r.Body))
	notifytest.RequireProblem(t, notifytest.Dash(t, b.env.Owner, "POST", "/v1/webhooks/"+h.ID+"/deliveries/"+d.ID+"/redeliver", nil), 409, "SVC-40900")
}

const zeroID = "00000000-0000-7000-8000-000000000000"

// During the overlap after a rotation both secrets verify a delivery;
// after it only the new one does.
func TestRotationOverlap(t *testing.T) {
	t.Parallel()
	// Long enough for a slow (race-enabled, shared) machine to deliver
	// within it.
	const overlap = 4 * time.Second
	b := setup(t, func(c *config.Config) { c.WebhookSecretOverlap = overlap })
	b.env.SimRoute(t, "sms", "vendora_sms", nil)
	rc := notifytest.NewReceiver(t, notifytest.Always(http.StatusOK))
	h, oldSecret := b.createWebhook(t, rc.URL, "notification.delivered")

	// The server rotates between these two instants.
	before := time.Now()
	r := notifytest.Dash(t, b.env.Owner, "POST", "/v1/webhooks/"+h.ID+"/rotate-secret", nil)
	require.Equal(t, http.StatusOK, r.Status, string(r.Body))
	rotated := time.Now()
	var out struct {
		Secret string `json:"secret"`
	}
	require.NoError(t, r.Decode(&out))
	newSecret := out.Secret
	require.True(t, strings.HasPrefix(newSecret, "whsec_"))
	require.NotEqual(t, oldSecret, newSecret)

	b.send(t, "during", nil)
	require.Eventually(t, func() bool { return len(rc.Requests()) == 1 }, 20*time.Second, 10*time.Millisecond)
	during := rc.Requests()[0]
	require.Less(t, during.At.Sub(before), overlap, "the test machine was too slow to observe the overlap")
	require.Len(t, strings.Fields(during.Header.Get("webhook-signature")), 2)
	verify(t, newSecret, during)
	verify(t, oldSecret, during)

	time.Sleep(time.Until(rotated.Add(overlap + 100*time.Millisecond)))
	b.send(t, "after", nil)
	require.Eventually(t, func() bool { return len(rc.Requests()) == 2 }, 20*time.Second, 10*time.Millisecond)
	after := rc.Requests()[1]
	require.Len(t, strings.Fields(after.Header.Get("webhook-signature")), 1)
	verify(t, newSecret, after)
	old, err := standardwebhooks.NewWebhook(oldSecret)
	require.NoError(t, err)
	require.Error(t, old.Verify(after.Body, after.Header))
	require.ErrorIs(t, client.VerifyWebhook(oldSecret, after.Header, after.Body, time.Minute), client.ErrWebhookSignature)
}

type auditOut struct {
	Logs []struct {
		Action     string         `json:"action"`
		TargetType string         `json:"targetType"`
		TargetID   string         `json:"targetId"`
		Payload    map[string]any `json:"payload"`
	} `json:"logs"`
}

// CRUD answers, validation, audit entries.
func TestCRUD(t *testing.T) {
	t.Parallel()
	b := setup(t)
	h, _ := b.createWebhook(t, "https://hooks.example.com/notifyd", "notification.delivered", "notification.delivered")
	require.Equal(t, []string{"notification.delivered"}, h.Events, "duplicates dropped")
	require.True(t, h.Enabled)
	require.Equal(t, "https://hooks.example.com/notifyd", h.URL)
	require.NotEmpty(t, h.CreatedAt)
	require.Equal(t, h.CreatedAt, h.UpdatedAt)

	r := notifytest.Dash(t, b.env.Owner, "GET", "/v1/webhooks", nil)
	require.Equal(t, http.StatusOK, r.Status)
	require.NotContains(t, string(r.Body), "whsec_", "secrets are never listed")
	var list struct {
		Webhooks []webhookOut `json:"webhooks"`
	}
	require.NoError(t, r.Decode(&list))
	require.Equal(t, []webhookOut{h}, list.Webhooks)

	for name, body := range map[string]string{
		"no url":        `{"events":["notification.delivered"]}`,
		"no events":     `{"url":"https://a.example"}`,
		"empty events":  `{"url":"https://a.example","events":[]}`,
		"null events":   `{"url":"https://a.example","events":null}`,
		"unknown event": `{"url":"https://a.example","events":["notification.sent"]}`,
		"ftp":           `{"url":"ftp://a.example/x","events":["notification.failed"]}`,
		"relative":      `{"url":"/hooks","events":["notification.failed"]}`,
		"not a url":     `{"url":"hooks at example","events":["notification.failed"]}`,
		"credentials":   `{"url":"https://u:p@a.example/x","events":["notification.failed"]}`,
		"long":          `{"url":"https://a.example/` + strings.Repeat("x", 2100) + `","events":["notification.failed"]}`,
		"unknown field": `{"url":"https://a.example","events":["notification.failed"],"secret":"x"}`,
		"enabled null":  `{"url":"https://a.example","events":["notification.failed"],"enabled":null}`,
		"enabled type":  `{"url":"https://a.example","events":["notification.failed"],"enabled":"yes"}`,
	} {
		p := notifytest.RequireProblem(t, notifytest.Dash(t, b.env.Owner, "POST", "/v1/webhooks", []byte(body)), 400, "SVC-40000")
		require.NotEmpty(t, p.Detail, name)
	}
	p := notifytest.RequireProblem(t, notifytest.Dash(t, b.env.Owner, "POST", "/v1/webhooks", []byte(`{"url":"https://a.example","events":[]}`)), 400, "SVC-40000")
	require.Equal(t, "events must hold at least one event", p.Detail)
	p = notifytest.RequireProblem(t, notifytest.Dash(t, b.env.Owner, "POST", "/v1/webhooks", []byte(`{"url":"https://a.example","events":["x"]}`)), 400, "SVC-40000")
	require.Equal(t, "events must be among notification.delivered, notification.failed, notification.canceled, "+
		strings.Join(notify.WebhookEventTypes[3:], ", "), p.Detail, "SPEC's events first, then every later one")
	require.Contains(t, notify.WebhookEventTypes, "notification.read")

	// Update: partial; bad values change nothing.
	r = notifytest.Dash(t, b.env.Owner, "PATCH", "/v1/webhooks/"+h.ID, map[string]any{"events": []string{"notification.failed", "notification.canceled"}, "enabled": false})
	require.Equal(t, http.StatusOK, r.Status, string(r.Body))
	var up struct {
		Webhook webhookOut `json:"webhook"`
	}
	require.NoError(t, r.Decode(&up))
	require.Equal(t, []string{"notification.failed", "notification.canceled"}, up.Webhook.Events)
	require.False(t, up.Webhook.Enabled)
	require.Equal(t, h.URL, up.Webhook.URL)
	require.Equal(t, h.CreatedAt, up.Webhook.CreatedAt)
	for _, body := range []string{`{"events":[]}`, `{"url":"gopher://x"}`, `{"url":null}`, `{"events":["nope"]}`, `{"id":"x"}`} {
		notifytest.RequireProblem(t, notifytest.Dash(t, b.env.Owner, "PATCH", "/v1/webhooks/"+h.ID, []byte(body)), 400, "SVC-40000")
	}
	r = notifytest.Dash(t, b.env.Owner, "GET", "/v1/webhooks", nil)
	require.NoError(t, r.Decode(&list))
	require.Equal(t, []webhookOut{up.Webhook}, list.Webhooks)

	r = notifytest.Dash(t, b.env.Owner, "POST", "/v1/webhooks/"+h.ID+"/rotate-secret", nil)
	require.Equal(t, http.StatusOK, r.Status, string(r.Body))
	require.Contains(t, string(r.Body), `"secret":"whsec_`)

	page := b.deliveries(t, h.ID, "")
	require.Empty(t, page.Deliveries)
	require.NotNil(t, page.Deliveries)
	require.Nil(t, page.Cursor)
	require.False(t, page.HasNext)
	for _, q := range []string{"?limit=0", "?limit=201", "?limit=x", "?cursor=not-a-cursor!"} {
		notifytest.RequireProblem(t, notifytest.Dash(t, b.env.Owner, "GET", "/v1/webhooks/"+h.ID+"/deliveries"+q, nil), 400, "SVC-40000")
	}

	r = notifytest.Dash(t, b.env.Owner, "DELETE", "/v1/webhooks/"+h.ID, nil)
	require.Equal(t, http.StatusNoContent, r.Status, string(r.Body))
	for _, rq := range []struct{ method, path string }{
		{"PATCH", "/v1/webhooks/" + h.ID}, {"DELETE", "/v1/webhooks/" + h.ID},
		{"POST", "/v1/webhooks/" + h.ID + "/rotate-secret"}, {"GET", "/v1/webhooks/" + h.ID + "/deliveries"},
		{"PATCH", "/v1/webhooks/not-a-uuid"}, {"DELETE", "/v1/webhooks/" + zeroID},
	} {
		var body any
		if rq.method == "PATCH" {
			body = map[string]any{"enabled": true}
		}
		notifytest.RequireProblem(t, notifytest.Dash(t, b.env.Owner, rq.method, rq.path, body), 404, "SVC-40400")
	}
	r = notifytest.Dash(t, b.env.Owner, "GET", "/v1/webhooks", nil)
	require.NoError(t, r.Decode(&list))
	require.Empty(t, list.Webhooks)

	// One audit entry per change, none for refused input.
	r = notifytest.Dash(t, b.env.Owner, "GET", "/v1/audit-logs?targetType=webhook", nil)
	require.Equal(t, http.StatusOK, r.Status, string(r.Body))
	var logs auditOut
	require.NoError(t, r.Decode(&logs))
	var actions []string
	for _, l := range logs.Logs {
		require.Equal(t, h.ID, l.TargetID)
		actions = append(actions, l.Action)
	}
	require.Equal(t, []string{"webhook.delete", "webhook.rotate_secret", "webhook.update", "webhook.create"}, actions)
	require.NotContains(t, string(r.Body), "whsec_")
}

// Writes are for owners and admins; every role reads.
func TestRoles(t *testing.T) {
	t.Parallel()
	b := setup(t)
	h, _ := b.createWebhook(t, "https://hooks.example.com/a", "notification.failed")
	for _, role := range []string{"admin", "operator", "viewer"} {
		c := b.env.Member(t, role)
		r := notifytest.Dash(t, c, "GET", "/v1/webhooks", nil)
		require.Equal(t, http.StatusOK, r.Status, role)
		r = notifytest.Dash(t, c, "GET", "/v1/webhooks/"+h.ID+"/deliveries", nil)
		require.Equal(t, http.StatusOK, r.Status, role)
		create := notifytest.Dash(t, c, "POST", "/v1/webhooks", map[string]any{"url": "https://hooks.example.com/" + role, "events": []string{"notification.failed"}})
		patch := notifytest.Dash(t, c, "PATCH", "/v1/webhooks/"+h.ID, map[string]any{"enabled": true})
		rotate := notifytest.Dash(t, c, "POST", "/v1/webhooks/"+h.ID+"/rotate-secret", nil)
		redeliver := notifytest.Dash(t, c, "POST", "/v1/webhooks/"+h.ID+"/deliveries/"+zeroID+"/redeliver", nil)
		if role == "admin" {
			require.Equal(t, http.StatusCreated, create.Status, string(create.Body))
			require.Equal(t, http.StatusOK, patch.Status, string(patch.Body))
			require.Equal(t, http.StatusOK, rotate.Status, string(rotate.Body))
			require.Equal(t, http.StatusNotFound, redeliver.Status, string(redeliver.Body))
			continue
		}
		for _, r := range []*client.Response{create, patch, rotate, redeliver, notifytest.Dash(t, c, "DELETE", "/v1/webhooks/"+h.ID, nil)} {
			notifytest.RequireProblem(t, r, 403, "SVC-40300")
		}
	}
	r := notifytest.Dash(t, b.env.Owner, "GET", "/v1/webhooks", nil)
	var list struct {
		Webhooks []webhookOut `json:"webhooks"`
	}
	require.NoError(t, r.Decode(&list))
	require.Len(t, list.Webhooks, 2, "only the admin created one")
}

// Another workspace's webhook is unknown (404) and never listed; its
// events never reach this workspace's endpoints.
func TestWorkspaceIsolation(t *testing.T) {
	t.Parallel()
	b, _, h, _ := deliveredOnce(t)
	ds := b.waitDeliveries(t, h.ID, "delivered", finished(1))

	other, _ := b.env.NewWorkspace(t, "Other", "other@example.com")
	for _, rq := range []struct{ method, path string }{
		{"PATCH", "/v1/webhooks/" + h.ID}, {"DELETE", "/v1/webhooks/" + h.ID},
		{"POST", "/v1/webhooks/" + h.ID + "/rotate-secret"}, {"GET", "/v1/webhooks/" + h.ID + "/deliveries"},
		{"POST", "/v1/webhooks/" + h.ID + "/deliveries/" + ds[0].ID + "/redeliver"},
	} {
		var body any
		if rq.method == "PATCH" {
			body = map[string]any{"enabled": false}
		}
		notifytest.RequireProblem(t, notifytest.Dash(t, other, rq.method, rq.path, body), 404, "SVC-40400")
	}
	r := notifytest.Dash(t, other, "GET", "/v1/webhooks", nil)
	require.Equal(t, http.StatusOK, r.Status)
	require.JSONEq(t, `{"webhooks":[]}`, string(r.Body))
	// Still there and unchanged for its owner.
	r = notifytest.Dash(t, b.env.Owner, "GET", "/v1/webhooks", nil)
	var list struct {
		Webhooks []webhookOut `json:"webhooks"`
	}
	require.NoError(t, r.Decode(&list))
	require.Equal(t, []webhookOut{h}, list.Webhooks)

	// The other workspace's own webhook gets none of our events.
	rc2 := notifytest.NewReceiver(t, notifytest.Always(http.StatusOK))
	r = notifytest.Dash(t, other, "POST", "/v1/webhooks", map[string]any{"url": rc2.URL, "events": []string{"notification.delivered"}})
	require.Equal(t, http.StatusCreated, r.Status, string(r.Body))
	b.send(t, "again", nil)
	b.waitDeliveries(t, h.ID, "second delivery", finished(2))
	require.Empty(t, rc2.Requests())
}

// Without NOTIFYD_ALLOW_PRIVATE_TARGETS only https URLs are accepted, and
// a private address fails its try through the SSRF guard.
func TestPrivateTargetsRefused(t *testing.T) {
	t.Parallel()
	b := setup(t, func(c *config.Config) { c.AllowPrivateTargets = false }, fast(time.Second))
	p := notifytest.RequireProblem(t, notifytest.Dash(t, b.env.Owner, "POST", "/v1/webhooks", map[string]any{"url": "http://hooks.example.com/x", "events": []string{"notification.failed"}}), 400, "SVC-40000")
	require.Equal(t, "url must be an absolute https URL", p.Detail)
	h, _ := b.createWebhook(t, "https://127.0.0.1:1/hook", "notification.failed")
	// No route: the request fails, which is an event.
	b.send(t, "nowhere", nil)
	ds := b.waitDeliveries(t, h.ID, "failed delivery", finished(1))
	require.Equal(t, "failed", ds[0].Status)
	require.Equal(t, 1, ds[0].Attempt, "an empty schedule makes one try")
	require.Contains(t, *ds[0].Error, "not allowed")
}

// Deliveries page newest first.
func TestDeliveriesPaging(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.env.SimRoute(t, "sms", "vendora_sms", nil)
	rc := notifytest.NewReceiver(t, notifytest.Always(http.StatusOK))
	h, _ := b.createWebhook(t, rc.URL, "notification.delivered")
	for i := range 3 {
		b.send(t, "m"+strconv.Itoa(i), nil)
	}
	all := b.waitDeliveries(t, h.ID, "three", finished(3))
	var seen []string
	cursor := ""
	for {
		p := b.deliveries(t, h.ID, "?limit=2"+cursor)
		for _, d := range p.Deliveries {
			seen = append(seen, d.ID)
		}
		if !p.HasNext {
			require.Nil(t, p.Cursor)
			break
		}
		cursor = "&cursor=" + *p.Cursor
	}
	want := make([]string, len(all))
	for i, d := range all {
		want[i] = d.ID
	}
	require.Equal(t, want, seen)
	sorted := slices.Clone(seen)
	slices.Sort(sorted)
	slices.Reverse(sorted)
	require.Equal(t, sorted, seen, "newest first (ids are time-ordered)")
}

// A redirect is not followed (it would turn the POST into a GET) but
// logged and retried; disabling an endpoint ends its pending deliveries.
func TestRedirectAndDisable(t *testing.T) {
	t.Parallel()
	b := setup(t, fast(time.Second, 50*time.Millisecond, 2*time.Second))
	b.env.SimRoute(t, "sms", "vendora_sms", nil)
	target := notifytest.NewReceiver(t, notifytest.Always(http.StatusOK))
	redirecting := httptest.NewServer(http.RedirectHandler(target.URL, http.StatusFound))
	t.Cleanup(redirecting.Close)
	h, _ := b.createWebhook(t, redirecting.URL, "notification.delivered")
	b.send(t, "ok", nil)
	ds := b.waitDeliveries(t, h.ID, "two tries", func(ds []deliveryOut) bool { return len(ds) == 1 && ds[0].Attempt == 2 })
	require.Equal(t, "pending", ds[0].Status, "the second retry waits 2 s")
	require.NotNil(t, ds[0].NextRetryAt)
	require.Equal(t, 302, *ds[0].HTTPStatus)
	require.Equal(t, "HTTP 302", *ds[0].Error)
	require.Empty(t, target.Requests())

	r := notifytest.Dash(t, b.env.Owner, "PATCH", "/v1/webhooks/"+h.ID, map[string]any{"enabled": false})
	require.Equal(t, http.StatusOK, r.Status, string(r.Body))
	ds = b.waitDeliveries(t, h.ID, "ended", finished(1))
	require.Equal(t, "failed", ds[0].Status)
	require.Equal(t, "webhook is disabled", *ds[0].Error)
	require.Len(t, ds[0].Tries, 2, "no try once disabled")
	require.Nil(t, ds[0].NextRetryAt)
}

// GET /v1/webhooks/{id} answers {webhook} (never the secret) to every role;
// a missing, malformed or other workspace's id is 404, not 405.
func TestGetOne(t *testing.T) {
	t.Parallel()
	b := setup(t)
	h, _ := b.createWebhook(t, "https://hooks.example.com/one", "notification.failed")
	for _, c := range []*client.Client{b.env.Owner, b.env.Member(t, "viewer")} {
		r := notifytest.Dash(t, c, "GET", "/v1/webhooks/"+h.ID, nil)
		require.Equal(t, http.StatusOK, r.Status, string(r.Body))
		require.NotContains(t, string(r.Body), "whsec_")
		var out struct {
			Webhook webhookOut `json:"webhook"`
		}
		require.NoError(t, r.Decode(&out))
		require.Equal(t, h, out.Webhook)
	}
	other, _ := b.env.NewWorkspace(t, "Other", "other@example.com")
	notifytest.RequireProblem(t, notifytest.Dash(t, other, "GET", "/v1/webhooks/"+h.ID, nil), 404, "SVC-40400")
	notifytest.RequireProblem(t, notifytest.Dash(t, b.env.Owner, "GET", "/v1/webhooks/"+zeroID, nil), 404, "SVC-40400")
	notifytest.RequireProblem(t, notifytest.Dash(t, b.env.Owner, "GET", "/v1/webhooks/not-a-uuid", nil), 404, "SVC-40400")
}

// TestSignatureOneSpelling is issue 29 finding 10: client.VerifyWebhook
// compares the signature as the text notifyd sends; another spelling of
// the same bytes (base64 with an unused bit set) does not verify.
func TestSignatureOneSpelling(t *testing.T) {
	t.Parallel()
	_, rcv, _, secret := deliveredOnce(t)
	require.Eventually(t, func() bool { return len(rcv.Requests()) == 1 }, 20*time.Second, 10*time.Millisecond)
	r := rcv.Requests()[0]
	require.NoError(t, client.VerifyWebhook(secret, r.Header, r.Body, time.Minute))

	version, sig, ok := strings.Cut(r.Header.Get("webhook-signature"), ",")
	require.True(t, ok)
	h := r.Header.Clone()
	h.Set("webhook-signature", version+","+notifytest.OtherSpelling(t, sig))
	require.ErrorIs(t, client.VerifyWebhook(secret, h, r.Body, time.Minute), client.ErrWebhookSignature)
}

// deliveredOnce routes SMS to the simulator, subscribes a receiver to
// notification.delivered and sends one SMS: it answers the bundle, the
// receiver, the webhook and its secret.
func deliveredOnce(t *testing.T) (*bundle, *notifytest.Receiver, webhookOut, string) {
	t.Helper()
	b := setup(t)
	b.env.SimRoute(t, "sms", "vendora_sms", nil)
	rc := notifytest.NewReceiver(t, notifytest.Always(http.StatusOK))
	h, secret := b.createWebhook(t, rc.URL, "notification.delivered")
	b.send(t, "ok", nil)
	return b, rc, h, secret
}
