// Package hardening_test checks that no single call can take the service
// down (issue 29): bounds on what a call may make the service build, and
// the process staying up under a memory ceiling when attacked.
package hardening_test

import (
	"fmt"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/notifyd/notifyd/client"
	"github.com/notifyd/notifyd/internal/notifytest"
)

// Helpers of the rendering tests carry a render prefix.

// renderRefused requires r to be a 400 SVC-40000 with detail.
func renderRefused(t *testing.T, r *client.Response, detail string) {
	t.Helper()
	p := notifytest.RequireProblem(t, r, http.StatusBadRequest, "SVC-40000")
	require.Equal(t, detail, p.Detail)
}

// renderTemplate creates an active template of channel with one published
// version of text as the owner and returns its id.
func renderTemplate(t *testing.T, env *notifytest.Env, code, channel, text string) string {
	t.Helper()
	r := notifytest.DashboardCall(t, env.Owner, "POST", "/v1/templates", map[string]any{"code": code, "channel": channel, "name": code}, http.StatusCreated)
	id := notifytest.Field[struct {
		ID string `json:"id"`
	}](t, r, "template").ID
	notifytest.DashboardCall(t, env.Owner, "POST", "/v1/templates/"+id+"/versions", map[string]any{"text": text}, http.StatusCreated)
	notifytest.DashboardCall(t, env.Owner, "POST", "/v1/templates/"+id+"/versions/1/publish", nil, http.StatusOK)
	return id
}

// renderCampaign creates an email campaign from body as the owner and
// returns its id.
func renderCampaign(t *testing.T, env *notifytest.Env, body map[string]any) string {
	t.Helper()
	body["name"], body["channel"] = "c", "email"
	r := notifytest.DashboardCall(t, env.Owner, "POST", "/v1/newsletter/campaigns", body, http.StatusCreated)
	return notifytest.Field[struct {
		ID string `json:"id"`
	}](t, r, "campaign").ID
}

// renderCampaignStatus polls the campaign until it is sent or failed.
func renderCampaignStatus(t *testing.T, env *notifytest.Env, id string) (status string, queued, failed int) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		r := notifytest.DashboardCall(t, env.Owner, "GET", "/v1/newsletter/campaigns/"+id, nil, http.StatusOK)
		c := notifytest.Field[struct {
			Status      string `json:"status"`
			QueuedCount int    `json:"queuedCount"`
			FailedCount int    `json:"failedCount"`
		}](t, r, "campaign")
		if c.Status == "sent" || c.Status == "failed" {
			return c.Status, c.QueuedCount, c.FailedCount
		}
		require.True(t, time.Now().Before(deadline), "campaign still %s", c.Status)
		time.Sleep(50 * time.Millisecond)
	}
}

// Every path that renders {{name}} placeholders answers 400 naming the
// field when the rendering would be over the field's bound, and bounds
// what fills the placeholders; nothing is accepted.
func TestRenderedSizeBounds(t *testing.T) {
	t.Parallel()
	env := notifytest.StartDaemon(t)
	key := env.SendKey(t)
	value := strings.Repeat("v", 10_000)   // the largest template variable
	over := strings.Repeat("{{a}}", 11)    // 110,000 characters once a is put in
	exactly := strings.Repeat("{{a}}", 10) // 100,000
	vars := map[string]any{"a": value}
	sms := func(content map[string]any) map[string]any {
		return map[string]any{"channel": "sms", "recipient": map[string]any{"address": "01012345678"}, "content": content}
	}
	email := func(content map[string]any) map[string]any {
		return map[string]any{"channel": "email", "recipient": map[string]any{"address": "a@example.com"}, "content": content}
	}
	many := func(n int, v string) map[string]any {
		m := map[string]any{}
		for i := range n {
			m[fmt.Sprintf("k%03d", i)] = v
		}
		return m
	}
	renderTemplate(t, env, "big", "sms", over)
	sends := []struct {
		name   string
		body   map[string]any
		detail string
	}{
		{"text after rendering", sms(map[string]any{"text": over, "templateVariables": vars}),
			"content.text must be at most 100000 characters after template variables are put in"},
		{"html after rendering, escaped values counted", email(map[string]any{"title": "t", "text": "t", "html": strings.Repeat("{{q}}", 11),
			"templateVariables": map[string]any{"q": strings.Repeat(`"`, 10_000)}}),
			"content.html must be at most 500000 characters after template variables are put in"},
		{"title after rendering", email(map[string]any{"title": "{{a}}{{a}}", "text": "t", "templateVariables": map[string]any{"a": strings.Repeat("t", 101)}}),
			"content.title must be at most 200 characters after template variables are put in"},
		{"template text after rendering", sms(map[string]any{"templateCode": "big", "templateVariables": vars}),
			"content.text must be at most 100000 characters after template variables are put in"},
		{"text as sent", sms(map[string]any{"text": strings.Repeat("x", 100_001)}), "content.text must be at most 100000 characters"},
		{"html as sent", email(map[string]any{"text": "t", "html": strings.Repeat("x", 500_001)}), "content.html must be at most 500000 characters"},
		{"variables count", sms(map[string]any{"text": "t", "templateVariables": many(201, "v")}),
			"content.templateVariables must hold at most 200 variables"},
		{"variable name", sms(map[string]any{"text": "t", "templateVariables": map[string]any{strings.Repeat("n", 201): "v"}}),
			"content.templateVariables names must be at most 200 characters"},
		{"variable value", sms(map[string]any{"text": "t", "templateVariables": map[string]any{"a": value + "v"}}),
			"content.templateVariables values must be at most 10000 characters"},
		{"fallback step", func() map[string]any {
			b := sms(map[string]any{"text": "t", "templateVariables": vars})
			b["channelFallback"] = []any{map[string]any{"channel": "email", "recipient": map[string]any{"address": "a@example.com"},
				"content": map[string]any{"title": "t", "text": over}}}
			return b
		}(), "channelFallback[0].content.text must be at most 100000 characters after template variables are put in"},
	}
	for _, c := range sends {
		renderRefused(t, notifytest.Signed(t, key, "POST", "/v1/notifications", c.body), c.detail)
	}
	metadata := []struct {
		m      map[string]any
		detail string
	}{
		{many(101, "v"), "metadata must hold at most 100 entries"},
		{map[string]any{strings.Repeat("k", 201): "v"}, "metadata keys must be at most 200 characters"},
		{map[string]any{"k": strings.Repeat("v", 2_001)}, "metadata values must be at most 2000 characters"},
	}
	for _, c := range metadata {
		b := sms(map[string]any{"text": "t"})
		b["metadata"] = c.m
		renderRefused(t, notifytest.Signed(t, key, "POST", "/v1/notifications", b), c.detail)
	}
	// A bulk item rendered over a bound refuses the whole call, as an item
	// failing validation does.
	ok := sms(map[string]any{"text": "fine"})
	renderRefused(t, notifytest.Signed(t, key, "POST", "/v1/notifications/bulk", map[string]any{"items": []any{ok, sends[0].body}}),
		"items[1].content.text must be at most 100000 characters after template variables are put in")
	renderRefused(t, notifytest.Signed(t, key, "POST", "/v1/notifications/bulk", map[string]any{"items": []any{sends[3].body, ok}}),
		"items[0].content.text must be at most 100000 characters after template variables are put in")
	renderRefused(t, notifytest.Signed(t, key, "POST", "/v1/notifications/bulk", map[string]any{"items": []any{ok, sends[9].body}}),
		"items[1].channelFallback[0].content.text must be at most 100000 characters after template variables are put in")
	renderRefused(t, notifytest.Signed(t, key, "POST", "/v1/notifications/bulk", map[string]any{"items": []any{ok, sends[6].body}}),
		"items[1].content.templateVariables must hold at most 200 variables")

	// The bounds are inclusive.
	notifytest.Send(t, key, sms(map[string]any{"text": exactly, "templateVariables": vars}))
	notifytest.Send(t, key, email(map[string]any{"title": strings.Repeat("{{t}}", 2), "text": "t", "templateVariables": map[string]any{"t": strings.Repeat("가", 100)}}))
	r := notifytest.Dash(t, env.Owner, "GET", "/v1/metrics", nil)
	require.Equal(t, 2, notifytest.Decode[struct {
		TotalRequests int `json:"totalRequests"`
	}](t, r, http.StatusOK).TotalRequests, "nothing refused was accepted")

	// A viewer's preview of an operator's template.
	viewer := env.Member(t, "viewer")
	tpl := renderTemplate(t, env, "preview", "sms", over)
	renderRefused(t, notifytest.Dash(t, viewer, "POST", "/v1/templates/"+tpl+"/preview", map[string]any{"variables": vars}),
		"content.text must be at most 100000 characters after template variables are put in")
	renderRefused(t, notifytest.Dash(t, viewer, "POST", "/v1/templates/"+tpl+"/preview", map[string]any{"variables": many(201, "v")}),
		"variables must hold at most 200 variables")

	// A test-send.
	prov := env.SimProvider(t, "vendora_sms", "sms", nil)
	testSend := func(content map[string]any) *client.Response {
		return notifytest.Dash(t, env.Owner, "POST", "/v1/providers/"+prov+"/test-send",
			map[string]any{"mode": "test", "recipient": map[string]any{"address": "01012345678"}, "content": content})
	}
	renderRefused(t, testSend(map[string]any{"text": over, "templateVariables": vars}),
		"content.text must be at most 100000 characters after template variables are put in")
	renderRefused(t, testSend(map[string]any{"text": "t", "templateVariables": many(201, "v")}),
		"content.templateVariables must hold at most 200 variables")
	renderRefused(t, testSend(map[string]any{"text": "t", "title": "{{s}}", "templateVariables": map[string]any{"s": "a\r\nBcc: x@example.net"}}),
		"content.title must not contain control characters")

	// An OTP sent through a template.
	renderTemplate(t, env, "otp", "sms", over+"{{code}}")
	otpKey, _ := env.APIKey(t, "otp", "otp:send", "otp:verify")
	otpSend := func(vars map[string]any) *client.Response {
		return notifytest.Signed(t, otpKey, "POST", "/v1/otp", map[string]any{"channel": "sms", "to": "01012345678", "templateCode": "otp", "templateVariables": vars})
	}
	renderRefused(t, otpSend(vars), "content.text must be at most 100000 characters after template variables are put in")
	renderRefused(t, otpSend(many(201, "v")), "templateVariables must hold at most 200 variables")
	require.Empty(t, env.Sim.Messages("vendora_sms", "", 0), "nothing was sent")
}

// A campaign preview runs the fan-out's bounds on the sample attributes:
// each rendered field within its campaign field's bound, and a subject
// on one line.
func TestCampaignPreviewBounds(t *testing.T) {
	t.Parallel()
	env := notifytest.StartDaemon(t)
	viewer := env.Member(t, "viewer")
	id := renderCampaign(t, env, map[string]any{"subject": "{{s}}", "contentText": strings.Repeat("{{t}}", 51),
		"contentHtml": strings.Repeat("{{h}}", 51)})
	preview := func(attrs map[string]any) *client.Response {
		return notifytest.Dash(t, viewer, "POST", "/v1/newsletter/campaigns/"+id+"/preview", map[string]any{"attributes": attrs})
	}
	quotes := strings.Repeat(`"`, 2_000) // 10,000 characters once escaped
	renderRefused(t, preview(map[string]any{"s": strings.Repeat("s", 201)}),
		"subject must be at most 200 characters after subscriber attributes are put in")
	renderRefused(t, preview(map[string]any{"t": strings.Repeat("t", 2_000)}),
		"contentText must be at most 100000 characters after subscriber attributes are put in")
	renderRefused(t, preview(map[string]any{"h": quotes}),
		"contentHtml must be at most 500000 characters after subscriber attributes are put in")
	renderRefused(t, preview(map[string]any{"s": "Hello\r\nBcc: victim@example.net"}),
		"subject must not contain control characters after subscriber attributes are put in")
	r := preview(map[string]any{"s": strings.Repeat("s", 200), "t": strings.Repeat("t", 1_960), "h": strings.Repeat("&", 1_960)})
	require.Equal(t, http.StatusOK, r.Status, string(r.Body))
}

// A campaign whose rendering for a subscriber is over a bound fails at
// once, with the reason in its campaign.fail audit entry, and its fan-out
// is not run again.
func TestCampaignRenderedOverBoundFails(t *testing.T) {
	t.Parallel()
	env := notifytest.StartDaemon(t)
	notifytest.RegisterRoute(t, env.Owner, "email", "mailx_email", env.MailConfig("mailx_email", "news@example.com"))
	var runs atomic.Int32
	env.Daemon.Rooms.Newsletter.SetFanoutFault(func(_ string, n int) error {
		if n == 0 {
			runs.Add(1)
		}
		return nil
	})
	var bad string
	for i, x := range []string{"fine", strings.Repeat(`"`, 2_000), "also fine"} {
		r := notifytest.DashboardCall(t, env.Owner, "POST", "/v1/newsletter/subscribers", map[string]any{"channel": "email",
			"address": fmt.Sprintf("s%d@example.com", i), "attributes": map[string]any{"x": x}}, http.StatusCreated)
		if i == 1 {
			bad = notifytest.Field[struct {
				ID string `json:"id"`
			}](t, r, "subscriber").ID
		}
	}
	id := renderCampaign(t, env, map[string]any{"subject": "s", "contentText": "t", "contentHtml": "<p>" + strings.Repeat("{{x}}", 51) + "</p>"})
	notifytest.DashboardCall(t, env.Owner, "POST", "/v1/newsletter/campaigns/"+id+"/send", nil, http.StatusOK)
	status, queued, _ := renderCampaignStatus(t, env, id)
	require.Equal(t, "failed", status)
	require.Zero(t, queued, "the batch holding the subscriber was not written")
	fails := notifytest.Audit(t, env.Owner, "campaign.fail")
	require.Len(t, fails, 1)
	require.Equal(t, id, fails[0].TargetID)
	require.Equal(t, "contentHtml must be at most 500000 characters after subscriber attributes are put in (subscriber "+bad+")",
		fails[0].Payload["reason"])
	time.Sleep(300 * time.Millisecond) // a retry would run after the test daemon's 50 ms backoff
	require.Equal(t, int32(1), runs.Load(), "the fan-out ran once")
	require.Empty(t, env.Sim.Messages("mailx_email", "", 0))
}

// A subscriber attribute that would break the subject onto two lines
// (Bcc injection) gets that subscriber no mail, counted as failed; the
// campaign goes on for the others (issue 29, finding 6).
func TestCampaignSubjectStaysOneLine(t *testing.T) {
	t.Parallel()
	env := notifytest.StartDaemon(t)
	notifytest.RegisterRoute(t, env.Owner, "email", "mailx_email", env.MailConfig("mailx_email", "news@example.com"))
	for i, greet := range []string{"Hello\r\nBcc: victim@example.net", "Hello", "Hi\u2028there", "Tab\there"} {
		notifytest.DashboardCall(t, env.Owner, "POST", "/v1/newsletter/subscribers", map[string]any{"channel": "email",
			"address": fmt.Sprintf("s%d@example.com", i), "attributes": map[string]any{"greet": greet}}, http.StatusCreated)
	}
	id := renderCampaign(t, env, map[string]any{"subject": "{{greet}} from us", "contentText": "t"})
	notifytest.DashboardCall(t, env.Owner, "POST", "/v1/newsletter/campaigns/"+id+"/send", nil, http.StatusOK)
	status, queued, failed := renderCampaignStatus(t, env, id)
	require.Equal(t, "sent", status)
	require.Equal(t, 1, queued)
	require.Equal(t, 3, failed)
	var ms []string
	deadline := time.Now().Add(30 * time.Second)
	for len(ms) == 0 && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
		for _, m := range env.Sim.Messages("mailx_email", "", 0) {
			ms = append(ms, m.To+" "+m.Subject)
		}
	}
	require.Equal(t, []string{"s1@example.com (광고) Hello from us"}, ms)
}
