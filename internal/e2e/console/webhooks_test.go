package console_test

import (
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/notifyd/notifyd/internal/notify"
)

var secretRE = regexp.MustCompile(`id="secret" class="mono" readonly size="50" value="(whsec_[^"]+)"`)

// TestConsoleWebhooks: an admin creates a webhook and sees its signing
// secret once, a send's event is delivered and listed in the delivery
// log, redelivered, the webhook edited, disabled (redeliver refused),
// enabled, its secret rotated, and deleted; a viewer sees the log without
// write controls and is refused a write; another workspace's webhook is 404.
func TestConsoleWebhooks(t *testing.T) {
	t.Parallel()
	f := setup(t)
	var hits atomic.Int32
	rcv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		w.WriteHeader(http.StatusNoContent)
	}))
	t.Cleanup(rcv.Close)
	c := f.env.ConsoleMember(t, "admin")

	resp, body := c.Get(t, "/webhooks")
	require.Equal(t, http.StatusOK, resp.StatusCode)
	require.Contains(t, body, `id="no-webhooks"`)
	resp, body = c.Post(t, "/webhooks", url.Values{"url": {"ftp://x <script>"}, "events": {notify.EventDelivered}})
	require.Equal(t, http.StatusBadRequest, resp.StatusCode)
	require.Contains(t, body, "url must be an absolute http or https URL")
	require.Contains(t, body, `value="ftp://x &lt;script&gt;"`, "the form keeps its input, escaped")
	resp, body = c.Post(t, "/webhooks", url.Values{"url": {rcv.URL}})
	require.Equal(t, http.StatusBadRequest, resp.StatusCode)
	require.Contains(t, body, "events must hold at least one event")

	resp, body = c.Post(t, "/webhooks", url.Values{"url": {rcv.URL + "/hook"}, "events": {notify.EventDelivered, notify.EventFailed}})
	require.Equal(t, http.StatusCreated, resp.StatusCode)
	m := secretRE.FindStringSubmatch(body)
	require.NotNil(t, m, "the secret is shown on creation")
	secret := m[1]
	require.Contains(t, body, `data-copy="secret"`)
	require.Contains(t, body, `<script src="/static/copy.js" defer></script>`)
	id := regexp.MustCompile(`action="/webhooks/([0-9a-f-]{36})"`).FindStringSubmatch(body)[1]
	resp, body = c.Get(t, "/webhooks/"+id)
	require.Equal(t, http.StatusOK, resp.StatusCode)
	require.NotContains(t, body, secret, "the secret is shown once")
	require.NotContains(t, body, "whsec_")
	resp, _ = c.Get(t, "/static/copy.js")
	require.Equal(t, http.StatusOK, resp.StatusCode)

	// A delivered send makes a delivery, shown in the log.
	rid := f.send(t, "010-1234-5678", "", "hello", nil)
	f.waitStatus(t, rid, notify.StatusSent)
	var delivery string
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		_, body = c.Get(t, "/webhooks/"+id)
		if strings.Contains(body, `<td class="delivery-status">delivered</td>`) {
			delivery = regexp.MustCompile(`data-delivery-id="([0-9a-f-]{36})"`).FindStringSubmatch(body)[1]
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	require.NotEmpty(t, delivery, "the delivery log shows the delivery: %s", body)
	require.Contains(t, body, `href="/messages/`+rid+`"`)
	require.Contains(t, body, `<td class="delivery-tries">1</td>`)
	resp, _ = c.Post(t, "/webhooks/"+id+"/deliveries/"+delivery+"/redeliver", nil)
	require.Equal(t, http.StatusSeeOther, resp.StatusCode)
	deadline = time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) && !strings.Contains(body, `<td class="delivery-tries">2</td>`) {
		time.Sleep(100 * time.Millisecond)
		_, body = c.Get(t, "/webhooks/"+id)
	}
	require.Contains(t, body, `<td class="delivery-tries">2</td>`, "redelivered")
	require.GreaterOrEqual(t, hits.Load(), int32(2))

	// Edit, disable (redeliver refused), enable.
	resp, _ = c.Post(t, "/webhooks/"+id, url.Values{"url": {rcv.URL + "/v2"}, "events": {notify.EventCanceled}})
	require.Equal(t, http.StatusSeeOther, resp.StatusCode)
	_, body = c.Get(t, "/webhooks/"+id)
	require.Contains(t, body, `<dd class="mono" id="webhook-url">`+rcv.URL+`/v2</dd>`)
	require.Contains(t, body, `<dd id="webhook-events">`+notify.EventCanceled+`</dd>`)
	resp, _ = c.Post(t, "/webhooks/"+id+"/enabled", url.Values{"enabled": {"false"}})
	require.Equal(t, http.StatusSeeOther, resp.StatusCode)
	_, body = c.Get(t, "/webhooks/"+id)
	require.Contains(t, body, `<dd id="webhook-enabled">no</dd>`)
	require.Contains(t, body, `id="enable"`)
	resp, body = c.Post(t, "/webhooks/"+id+"/deliveries/"+delivery+"/redeliver", nil)
	require.Equal(t, http.StatusConflict, resp.StatusCode)
	require.Contains(t, body, "Webhook is disabled")
	resp, _ = c.Post(t, "/webhooks/"+id+"/enabled", url.Values{"enabled": {"true"}})
	require.Equal(t, http.StatusSeeOther, resp.StatusCode)
	_, body = c.Get(t, "/webhooks/"+id)
	require.Contains(t, body, `<dd id="webhook-enabled">yes</dd>`)

	// Rotation shows the new secret once.
	resp, body = c.Post(t, "/webhooks/"+id+"/rotate-secret", nil)
	require.Equal(t, http.StatusOK, resp.StatusCode)
	m = secretRE.FindStringSubmatch(body)
	require.NotNil(t, m)
	require.NotEqual(t, secret, m[1])

	// Viewer: the log, no write controls, writes refused.
	viewer := f.env.ConsoleMember(t, "viewer")
	resp, body = viewer.Get(t, "/webhooks/"+id)
	require.Equal(t, http.StatusOK, resp.StatusCode)
	require.Contains(t, body, `data-delivery-id="`+delivery+`"`)
	require.NotContains(t, body, `method="post" action="/webhooks`)
	_, body = viewer.Get(t, "/webhooks")
	require.NotContains(t, body, `method="post" action="/webhooks`)
	for _, path := range []string{"/webhooks", "/webhooks/" + id, "/webhooks/" + id + "/enabled", "/webhooks/" + id + "/delete",
		"/webhooks/" + id + "/rotate-secret", "/webhooks/" + id + "/deliveries/" + delivery + "/redeliver"} {
		resp, body := viewer.Post(t, path, url.Values{"url": {rcv.URL}, "events": {notify.EventDelivered}, "enabled": {"false"}})
		require.Equal(t, http.StatusForbidden, resp.StatusCode, path)
		require.Contains(t, body, "Role viewer is not allowed", path)
	}

	// Another workspace's owner: 404 everywhere.
	f.env.NewWorkspace(t, "Other", "other@example.com")
	oc := f.env.ConsoleLogin(t, "other@example.com", "correct horse battery")
	resp, _ = oc.Get(t, "/webhooks/"+id)
	require.Equal(t, http.StatusNotFound, resp.StatusCode)
	for _, path := range []string{"/webhooks/" + id, "/webhooks/" + id + "/enabled", "/webhooks/" + id + "/delete",
		"/webhooks/" + id + "/rotate-secret", "/webhooks/" + id + "/deliveries/" + delivery + "/redeliver"} {
		resp, _ := oc.Post(t, path, url.Values{"url": {rcv.URL}, "events": {notify.EventDelivered}, "enabled": {"false"}})
		require.Equal(t, http.StatusNotFound, resp.StatusCode, path)
	}

	resp, _ = c.Post(t, "/webhooks/"+id+"/delete", nil)
	require.Equal(t, http.StatusSeeOther, resp.StatusCode)
	_, body = c.Get(t, "/webhooks")
	require.Contains(t, body, "Webhook deleted")
	require.Contains(t, body, `id="no-webhooks"`)
	resp, _ = c.Get(t, "/webhooks/"+id)
	require.Equal(t, http.StatusNotFound, resp.StatusCode)
	r, err := f.env.Owner.Dashboard(ctx, "GET", "/v1/audit-logs?targetId="+id, nil)
	require.NoError(t, err)
	for _, action := range []string{"webhook.create", "webhook.redeliver", "webhook.update", "webhook.rotate_secret", "webhook.delete"} {
		require.Contains(t, string(r.Body), `"`+action+`"`)
	}
}
