// Package inboundhooks_test runs inbound hooks (issue 36, item 3) end to
// end on the suite's backend (SQLite, or PostgreSQL when
// NOTIFYD_TEST_DATABASE_URL is set): other tools' payloads posted to a
// hook's URL become sends delivered through routes and failover; wrong
// and rotated tokens look like unknown paths; the per-hook limit; the
// dashboard API with its audit log and workspace isolation.
package inboundhooks_test

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/notifyd/notifyd/client"
	"github.com/notifyd/notifyd/internal/notifytest"
	"github.com/notifyd/notifyd/internal/simulator"
)

type hook struct {
	ID                 string   `json:"id"`
	Name               string   `json:"name"`
	Format             string   `json:"format"`
	Channel            string   `json:"channel"`
	Addresses          []string `json:"addresses"`
	RecipientIDs       []string `json:"recipientIds"`
	TemplateCode       *string  `json:"templateCode"`
	Category           *string  `json:"category"`
	RateLimitPerMinute int      `json:"rateLimitPerMinute"`
	Enabled            bool     `json:"enabled"`
	TokenRotatedAt     string   `json:"tokenRotatedAt"`
	CreatedAt          string   `json:"createdAt"`
	UpdatedAt          string   `json:"updatedAt"`
}

type withToken struct {
	InboundHook hook   `json:"inboundHook"`
	Token       string `json:"token"`
	URL         string `json:"url"`
}

func dash(t *testing.T, c *client.Client, method, path string, body any, status int) *client.Response {
	t.Helper()
	return notifytest.DashboardCall(t, c, method, path, body, status)
}

// create makes a hook as c and answers it with its token.
func create(t *testing.T, c *client.Client, body map[string]any) withToken {
	t.Helper()
	return notifytest.Decode[withToken](t, dash(t, c, "POST", "/v1/inbound-hooks", body, http.StatusCreated), http.StatusCreated)
}

// answer is a hook URL's answer.
type answer struct {
	Status int
	Header http.Header
	Body   string
}

// post sends body to a hook URL as a tool would: no credentials but the
// token in the path, the given headers.
func post(t *testing.T, method, u string, body string, headers map[string]string) answer {
	t.Helper()
	req, err := http.NewRequest(method, u, strings.NewReader(body))
	require.NoError(t, err)
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return answer{Status: resp.StatusCode, Header: resp.Header, Body: string(b)}
}

// accepted requires a 200 JSON answer and answers its request ids.
func accepted(t *testing.T, a answer) []string {
	t.Helper()
	require.Equal(t, http.StatusOK, a.Status, a.Body)
	var out struct {
		Accepted   int      `json:"accepted"`
		RequestIDs []string `json:"requestIds"`
	}
	require.NoError(t, json.Unmarshal([]byte(a.Body), &out), a.Body)
	require.NotEmpty(t, out.RequestIDs)
	return out.RequestIDs
}

const jsonType = "application/json"

// amPayload is an Alertmanager webhook (version 4): two firing alerts.
const amPayload = `{
  "receiver": "notifyd", "status": "firing", "version": "4", "truncatedAlerts": 0,
  "groupKey": "{}:{alertname=\"HighCPU\"}", "externalURL": "http://alertmanager:9093",
  "groupLabels": {"alertname": "HighCPU"},
  "commonLabels": {"alertname": "HighCPU", "job": "node"},
  "commonAnnotations": {},
  "alerts": [
    {"status": "firing", "labels": {"alertname": "HighCPU", "instance": "a:9100", "job": "node"},
     "annotations": {"summary": "CPU above 90% on a"}, "startsAt": "2026-11-22T03:25:05Z", "fingerprint": "1"},
    {"status": "firing", "labels": {"alertname": "HighCPU", "instance": "b:9100", "job": "node"},
     "annotations": {"summary": "CPU above 90% on b"}, "startsAt": "2026-11-22T03:25:05Z", "fingerprint": "2"}
  ]
}`

// The first "done" line: an Alertmanager payload posted to a hook
// mapped to SMS becomes an SMS that fails over to the second provider
// when the first vendor answers 500.
func TestAlertmanagerBecomesSMSThatFailsOver(t *testing.T) {
	t.Parallel()
	e := notifytest.StartDaemon(t)
	key := e.SendKey(t)
	p1 := e.SimProvider(t, "vendora_sms", "first", nil)
	p2 := e.SimProvider(t, "vendorb_sms", "second", nil)
	notifytest.PutRoutes(t, e.Owner, notifytest.Route{Channel: "sms", ProviderAccountID: p1, Priority: 1},
		notifytest.Route{Channel: "sms", ProviderAccountID: p2, Priority: 2})
	e.Fault(t, map[string]any{"kind": "vendora_sms", "status": 500})
	h := create(t, e.Owner, map[string]any{"name": "prometheus", "format": "alertmanager", "channel": "sms",
		"addresses": []string{"010-1234-5678"}})
	require.Equal(t, e.Daemon.URL()+"/v1/hooks/"+h.Token, h.URL)

	ids := accepted(t, post(t, "POST", h.URL, amPayload, map[string]string{"Content-Type": jsonType}))
	require.Len(t, ids, 1, "one message per Alertmanager notification")
	out := notifytest.Wait(t, key, ids[0])
	require.Equal(t, "sent", out.Status)
	require.Equal(t, p2, *out.SelectedProviderAccountID)
	require.Len(t, out.Attempts, 2)
	require.Equal(t, "temporary_unavailable", *out.Attempts[0].FailureCode, "the first vendor's 500")
	msgs := e.Sim.Messages("vendorb_sms", "", 0)
	require.Len(t, msgs, 1)
	require.Equal(t, "[FIRING:2] HighCPU (node)\nFIRING HighCPU instance=a:9100: CPU above 90% on a\nFIRING HighCPU instance=b:9100: CPU above 90% on b",
		msgs[0].Text)

	// The request is an ordinary request of the workspace, its source the
	// hook.
	r := notifytest.Decode[struct {
		Source string `json:"source"`
	}](t, dash(t, e.Owner, "GET", "/v1/requests/"+ids[0], nil, http.StatusOK), http.StatusOK)
	require.Equal(t, "hook", r.Source)
}

// An ntfy-style publish with curl's defaults (curl -d "Backup done" -H
// "Title: Backup" URL) becomes an email whose subject is the title; PUT
// to a topic below the hook works too, and the answer is ntfy's message
// object.
func TestNtfyPublishBecomesEmail(t *testing.T) {
	t.Parallel()
	e := notifytest.StartDaemon(t)
	key := e.SendKey(t)
	e.SimRoute(t, "email", "mailx_email", nil)
	h := create(t, e.Owner, map[string]any{"name": "backups", "format": "ntfy", "channel": "email",
		"addresses": []string{"Ops@Example.com"}})

	a := post(t, "POST", h.URL, "Backup done", map[string]string{"Content-Type": "application/x-www-form-urlencoded",
		"Title": "Backup", "Priority": "high", "Tags": "floppy_disk"})
	require.Equal(t, http.StatusOK, a.Status, a.Body)
	var msg struct {
		ID         string   `json:"id"`
		Event      string   `json:"event"`
		Message    string   `json:"message"`
		Title      string   `json:"title"`
		Priority   int      `json:"priority"`
		Tags       []string `json:"tags"`
		RequestIDs []string `json:"requestIds"`
	}
	require.NoError(t, json.Unmarshal([]byte(a.Body), &msg))
	require.Equal(t, "message", msg.Event)
	require.Equal(t, "Backup done", msg.Message)
	require.Equal(t, "Backup", msg.Title)
	require.Equal(t, 4, msg.Priority)
	require.Equal(t, []string{"floppy_disk"}, msg.Tags)
	require.Equal(t, msg.RequestIDs[0], msg.ID)
	out := notifytest.Wait(t, key, msg.ID)
	require.Equal(t, "sent", out.Status)
	require.Equal(t, "ops@example.com", out.RecipientAddress)
	mails := e.Sim.Messages("mailx_email", "ops@example.com", 0)
	require.Len(t, mails, 1)
	require.Equal(t, "Backup", mails[0].Subject)
	require.Equal(t, "Backup done", mails[0].Text)

	// PUT to a topic, the title in the query; no title: the hook's name.
	a = post(t, "PUT", h.URL+"/nightly?title=Nightly", "Nightly backup done", nil)
	require.Equal(t, http.StatusOK, a.Status, a.Body)
	a = post(t, "POST", h.URL, "untitled", nil)
	require.Equal(t, http.StatusOK, a.Status, a.Body)
	mails = waitMails(t, e.Sim, "mailx_email", "ops@example.com", 3)
	subjects := map[string]string{}
	for _, m := range mails {
		subjects[m.Text] = m.Subject
	}
	require.Equal(t, map[string]string{"Backup done": "Backup", "Nightly backup done": "Nightly", "untitled": "backups"}, subjects)
}

// waitMails waits until the simulator holds n messages of kind to to.
func waitMails(t *testing.T, sim *simulator.Simulator, kind, to string, n int) []simulator.Message {
	t.Helper()
	deadline := time.Now().Add(notifytest.WaitTimeout)
	for {
		if ms := sim.Messages(kind, to, 0); len(ms) >= n {
			return ms
		}
		require.True(t, time.Now().Before(deadline), "%d messages to %s not reached", n, to)
		time.Sleep(20 * time.Millisecond)
	}
}

// Slack, Apprise and Grafana payloads map to their message: title as the
// subject, the text as the body; a template fills in the payload's
// fields; recipient profiles receive by their external id.
func TestFormatsMapToEmail(t *testing.T) {
	t.Parallel()
	e := notifytest.StartDaemon(t)
	e.SimRoute(t, "email", "mailx_email", nil)
	dash(t, e.Owner, "PUT", "/v1/recipients/u-1", map[string]any{"email": "profile@example.com"}, http.StatusCreated)
	type hookCase struct {
		name, body, contentType, path string
		to, subject, text             string
		slackOK                       bool
	}
	slack := create(t, e.Owner, map[string]any{"name": "slack", "format": "slack", "channel": "email", "addresses": []string{"slack@example.com"}})
	apprise := create(t, e.Owner, map[string]any{"name": "apprise", "format": "apprise", "channel": "email", "addresses": []string{"apprise@example.com"}})
	grafana := create(t, e.Owner, map[string]any{"name": "grafana", "format": "grafana", "channel": "email", "recipientIds": []string{"u-1"}})
	form := url.Values{"title": {"Form title"}, "body": {"Form body"}, "type": {"warning"}}
	for _, c := range []hookCase{
		{name: "slack blocks", body: `{"text": "fallback", "blocks": [{"type": "header", "text": {"type": "plain_text", "text": "Deploy finished"}},
			{"type": "section", "text": {"type": "mrkdwn", "text": "api v2 is live: <https://ci.example/1|build 1>"}}]}`,
			path: slack.URL, to: "slack@example.com", subject: "Deploy finished", text: "Deploy finished\napi v2 is live: build 1 (https://ci.example/1)", slackOK: true},
		{name: "apprise json", body: `{"title": "Backup", "body": "Backup done", "type": "success"}`, contentType: jsonType,
			path: apprise.URL, to: "apprise@example.com", subject: "Backup", text: "Backup done"},
		{name: "apprise form at its own layout", body: form.Encode(), contentType: "application/x-www-form-urlencoded",
			path: e.Daemon.URL() + "/v1/hooks/notify/" + apprise.Token, to: "apprise@example.com", subject: "Form title", text: "Form body"},
		{name: "grafana", body: `{"receiver": "n", "status": "firing", "version": "1", "title": "[FIRING:1] DiskFull", "message": "Disk almost full on db1",
			"alerts": [{"status": "firing", "labels": {"alertname": "DiskFull"}, "annotations": {}}]}`, contentType: jsonType,
			path: grafana.URL, to: "profile@example.com", subject: "[FIRING:1] DiskFull", text: "Disk almost full on db1"},
	} {
		a := post(t, "POST", c.path, c.body, map[string]string{"Content-Type": c.contentType})
		require.Equal(t, http.StatusOK, a.Status, "%s: %s", c.name, a.Body)
		if c.slackOK {
			require.Equal(t, "ok", a.Body, "Slack's answer")
		}
		n := len(e.Sim.Messages("mailx_email", c.to, 0)) + 1
		ms := waitMails(t, e.Sim, "mailx_email", c.to, n)
		require.Equal(t, c.subject, ms[n-1].Subject, c.name)
		require.Equal(t, c.text, ms[n-1].Text, c.name)
	}

	// A template of the channel, filled with the payload's fields.
	tp := notifytest.Decode[struct {
		Template struct {
			ID string `json:"id"`
		} `json:"template"`
	}](t, dash(t, e.Owner, "POST", "/v1/templates", map[string]any{"code": "alert", "channel": "email", "name": "Alert"}, http.StatusCreated), http.StatusCreated)
	dash(t, e.Owner, "POST", "/v1/templates/"+tp.Template.ID+"/versions", map[string]any{"title": "{{alertname}} is {{status}}",
		"text": "{{firing}} firing on {{label_job}} ({{hookName}})"}, http.StatusCreated)
	dash(t, e.Owner, "POST", "/v1/templates/"+tp.Template.ID+"/versions/1/publish", nil, http.StatusOK)
	am := create(t, e.Owner, map[string]any{"name": "am-template", "format": "alertmanager", "channel": "email",
		"addresses": []string{"tpl@example.com"}, "templateCode": "alert"})
	accepted(t, post(t, "POST", am.URL, amPayload, map[string]string{"Content-Type": jsonType}))
	ms := waitMails(t, e.Sim, "mailx_email", "tpl@example.com", 1)
	require.Equal(t, "HighCPU is firing", ms[0].Subject)
	require.Equal(t, "2 firing on node (am-template)", ms[0].Text)

	// Bad payloads: 400 problems that say what is wrong, never a 500.
	for _, c := range []struct{ path, body, detail string }{
		{slack.URL, `{"text": ""}`, "The body is not a valid Slack payload: no_text"},
		{slack.URL, `not json`, "The body is not a valid Slack payload: malformed JSON"},
		{apprise.URL, `{"title": "x"}`, "The body is not a valid Apprise payload: body is required"},
		{grafana.URL, `[]`, "The body is not a valid Grafana payload: the body must be a JSON object"},
		{am.URL, `{"alerts": []}`, "The body is not a valid Alertmanager payload: alerts must hold at least one alert"},
	} {
		a := post(t, "POST", c.path, c.body, map[string]string{"Content-Type": jsonType})
		require.Equal(t, http.StatusBadRequest, a.Status, a.Body)
		require.Equal(t, "application/problem+json", a.Header.Get("Content-Type"))
		p := problemOf(t, a)
		require.Contains(t, p.Detail, c.detail)
		require.Equal(t, "/v1/hooks/[redacted]", p.Instance, "the token is not in the problem")
	}
}

func problemOf(t *testing.T, a answer) client.Problem {
	t.Helper()
	var p client.Problem
	require.NoError(t, json.Unmarshal([]byte(a.Body), &p), a.Body)
	return p
}

// A wrong token, a rotated-away one, a disabled or deleted hook's are
// refused with the same answer as a token that never existed, which is
// the answer to any unknown path: nothing tells a hook exists.
func TestUnknownTokensLookLikeUnknownPaths(t *testing.T) {
	t.Parallel()
	e := notifytest.StartDaemon(t)
	e.SimRoute(t, "email", "mailx_email", nil)
	base := e.Daemon.URL() + "/v1/hooks/"
	rotated := create(t, e.Owner, map[string]any{"name": "rotated", "format": "ntfy", "channel": "email", "addresses": []string{"a@example.com"}})
	accepted(t, post(t, "POST", base+"notify/"+rotated.Token, `{"body": "x"}`, nil))
	fresh := notifytest.Decode[withToken](t, dash(t, e.Owner, "POST", "/v1/inbound-hooks/"+rotated.InboundHook.ID+"/rotate-token", nil, http.StatusOK), http.StatusOK)
	require.NotEqual(t, rotated.Token, fresh.Token)
	require.Equal(t, base+fresh.Token, fresh.URL)
	disabled := create(t, e.Owner, map[string]any{"name": "disabled", "format": "ntfy", "channel": "email", "addresses": []string{"a@example.com"},
		"enabled": false})
	deleted := create(t, e.Owner, map[string]any{"name": "deleted", "format": "ntfy", "channel": "email", "addresses": []string{"a@example.com"}})
	dash(t, e.Owner, "DELETE", "/v1/inbound-hooks/"+deleted.InboundHook.ID, nil, http.StatusNoContent)

	never := "hk_" + strings.Repeat("a", 32)
	want := post(t, "POST", base+never, "x", nil)
	require.Equal(t, http.StatusNotFound, want.Status)
	wp := problemOf(t, want)
	require.Equal(t, "No route matches POST /v1/hooks/[redacted]", wp.Detail)
	require.Equal(t, "/v1/hooks/[redacted]", wp.Instance)
	for name, token := range map[string]string{"rotated away": rotated.Token, "disabled": disabled.Token, "deleted": deleted.Token,
		"malformed": "nope", "upper case": strings.ToUpper(fresh.Token), "one character off": offByOne(fresh.Token)} {
		for _, u := range []string{base + token, base + token + "/topic", base + "notify/" + token} {
			a := post(t, "POST", u, `{"body": "x"}`, map[string]string{"Content-Type": jsonType})
			require.Equal(t, want.Status, a.Status, name)
			p := problemOf(t, a)
			p.Instance = wp.Instance
			if strings.HasSuffix(u, "/topic") {
				require.Equal(t, "No route matches POST /v1/hooks/[redacted]/topic", p.Detail, name)
				p.Detail = wp.Detail
			}
			if strings.Contains(u, "/notify/") {
				require.Equal(t, "No route matches POST /v1/hooks/notify/[redacted]", p.Detail, name)
				p.Detail = wp.Detail
			}
			require.Equal(t, wp, p, "%s: %s", name, u)
			require.NotContains(t, a.Body, token, name)
		}
	}
	// The new token works.
	accepted(t, post(t, "POST", base+"notify/"+fresh.Token, `{"body": "x"}`, nil))
	// Enabling the disabled hook opens it.
	dash(t, e.Owner, "PATCH", "/v1/inbound-hooks/"+disabled.InboundHook.ID, map[string]any{"enabled": true}, http.StatusOK)
	require.Equal(t, http.StatusOK, post(t, "POST", disabled.URL, "x", nil).Status)
}

// The per-hook limit answers 429 with Retry-After, counts per hook and
// per minute window, and a refused request sends nothing.
func TestPerHookLimit(t *testing.T) {
	t.Parallel()
	clock := &notifytest.Clock{}
	// Start 5 s into a minute, so the test does not straddle a window.
	clock.AdvanceTo(time.Now().Truncate(time.Minute).Add(time.Minute + 5*time.Second))
	e := notifytest.StartDaemonAt(t, clock.Now)
	e.SimRoute(t, "email", "mailx_email", nil)
	h := create(t, e.Owner, map[string]any{"name": "limited", "format": "ntfy", "channel": "email", "addresses": []string{"a@example.com"},
		"rateLimitPerMinute": 2})
	other := create(t, e.Owner, map[string]any{"name": "other", "format": "ntfy", "channel": "email", "addresses": []string{"b@example.com"}})
	require.Equal(t, 2, h.InboundHook.RateLimitPerMinute)
	require.Equal(t, 60, other.InboundHook.RateLimitPerMinute, "the default")
	for range 2 {
		require.Equal(t, http.StatusOK, post(t, "POST", h.URL, "x", nil).Status)
	}
	a := post(t, "POST", h.URL, "x", nil)
	require.Equal(t, http.StatusTooManyRequests, a.Status, a.Body)
	p := problemOf(t, a)
	require.Equal(t, "SVC-42900", p.Code)
	require.Equal(t, "Inbound hook rate limit exceeded: at most 2 requests per minute", p.Detail)
	require.Equal(t, "/v1/hooks/[redacted]", p.Instance)
	retry := a.Header.Get("Retry-After")
	require.NotEmpty(t, retry)
	require.Equal(t, http.StatusOK, post(t, "POST", other.URL, "x", nil).Status, "another hook has its own limit")
	waitMails(t, e.Sim, "mailx_email", "a@example.com", 2)
	time.Sleep(100 * time.Millisecond)
	require.Len(t, e.Sim.Messages("mailx_email", "a@example.com", 0), 2, "the refused request sent nothing")

	clock.Advance(time.Minute)
	require.Equal(t, http.StatusOK, post(t, "POST", h.URL, "x", nil).Status, "a new window")
}

// The dashboard API: create (validation, 409 on a name), list, get,
// update, rotate, delete, each change audited without the token; the
// token is never read back.
func TestHookLifecycle(t *testing.T) {
	t.Parallel()
	e := notifytest.StartDaemon(t)
	dash(t, e.Owner, "POST", "/v1/categories", map[string]any{"key": "ops", "name": "Ops"}, http.StatusCreated)
	h := create(t, e.Owner, map[string]any{"name": " alerts ", "format": "alertmanager", "channel": "sms",
		"addresses": []string{"01012345678", "01012345678"}, "recipientIds": []string{"u-1"}, "category": "ops", "rateLimitPerMinute": 30})
	require.Regexp(t, `^hk_[a-z2-7]{32}$`, h.Token)
	got := h.InboundHook
	require.Equal(t, hook{ID: got.ID, Name: "alerts", Format: "alertmanager", Channel: "sms", Addresses: []string{"01012345678"},
		RecipientIDs: []string{"u-1"}, Category: ptr("ops"), RateLimitPerMinute: 30, Enabled: true,
		TokenRotatedAt: got.CreatedAt, CreatedAt: got.CreatedAt, UpdatedAt: got.CreatedAt}, got)

	one := notifytest.Field[hook](t, dash(t, e.Owner, "GET", "/v1/inbound-hooks/"+got.ID, nil, http.StatusOK), "inboundHook")
	require.Equal(t, got, one)
	list := dash(t, e.Owner, "GET", "/v1/inbound-hooks", nil, http.StatusOK)
	require.Equal(t, []hook{got}, notifytest.Field[[]hook](t, list, "inboundHooks"))
	require.NotContains(t, string(list.Body), h.Token)

	upd := notifytest.Field[hook](t, dash(t, e.Owner, "PATCH", "/v1/inbound-hooks/"+got.ID, map[string]any{"name": "alerts-2",
		"category": nil, "enabled": false}, http.StatusOK), "inboundHook")
	require.Equal(t, "alerts-2", upd.Name)
	require.Nil(t, upd.Category)
	require.False(t, upd.Enabled)
	require.Equal(t, got.TokenRotatedAt, upd.TokenRotatedAt, "an update keeps the token")

	create(t, e.Owner, map[string]any{"name": "second", "format": "slack", "channel": "chata_webhook"})
	require.Equal(t, "An inbound hook named second already exists",
		notifytest.DashboardProblem(t, e.Owner, "POST", "/v1/inbound-hooks", map[string]any{"name": "second", "format": "slack", "channel": "chata_webhook"}, http.StatusConflict).Detail)
	require.Equal(t, "An inbound hook named second already exists",
		notifytest.DashboardProblem(t, e.Owner, "PATCH", "/v1/inbound-hooks/"+got.ID, map[string]any{"name": "second"}, http.StatusConflict).Detail)

	for body, detail := range map[string]string{
		`{"format": "ntfy", "channel": "sms", "addresses": ["010"]}`:                                                   "name is required",
		`{"name": "x", "channel": "sms", "addresses": ["01012345678"]}`:                                                "format is required",
		`{"name": "x", "format": "pagerduty", "channel": "sms"}`:                                                       "format must be one of alertmanager, grafana, ntfy, slack, apprise",
		`{"name": "x", "format": "ntfy", "channel": "fax"}`:                                                            "channel must be one of sms, msgr_alimtalk, email, push_mobile, chata_webhook, chatb_webhook, chata_bot, chatb_bot",
		`{"name": "x", "format": "ntfy", "channel": "sms"}`:                                                            "addresses or recipientIds must name at least one recipient for channel sms",
		`{"name": "x", "format": "ntfy", "channel": "email", "addresses": ["nope"]}`:                                   "addresses must be an email address for channel email",
		`{"name": "x", "format": "ntfy", "channel": "email", "recipientIds": ["a b"]}`:                                 `recipientIds must be 1 to 200 printable ASCII characters without space, /, ?, #, % or \`,
		`{"name": "x", "format": "ntfy", "channel": "email", "addresses": ["a@example.com"], "templateCode": "nope"}`:  `templateCode: no template "nope" on channel email`,
		`{"name": "x", "format": "ntfy", "channel": "email", "addresses": ["a@example.com"], "category": "nope"}`:      `category: no category "nope"`,
		`{"name": "x", "format": "ntfy", "channel": "email", "addresses": ["a@example.com"], "rateLimitPerMinute": 0}`: "rateLimitPerMinute must be between 1 and 10000",
		`{"name": "x", "format": "ntfy", "channel": "email", "addresses": ["a@example.com"], "token": "mine"}`:         "token is not an allowed field",
		`{"name": null, "format": "ntfy", "channel": "email", "addresses": ["a@example.com"]}`:                         "name must be a string",
	} {
		p := notifytest.DashboardProblem(t, e.Owner, "POST", "/v1/inbound-hooks", body, http.StatusBadRequest)
		require.Contains(t, p.Detail, detail, body)
	}

	rot := notifytest.Decode[withToken](t, dash(t, e.Owner, "POST", "/v1/inbound-hooks/"+got.ID+"/rotate-token", nil, http.StatusOK), http.StatusOK)
	require.NotEqual(t, h.Token, rot.Token)
	dash(t, e.Owner, "DELETE", "/v1/inbound-hooks/"+got.ID, nil, http.StatusNoContent)
	dash(t, e.Owner, "GET", "/v1/inbound-hooks/"+got.ID, nil, http.StatusNotFound)
	dash(t, e.Owner, "GET", "/v1/inbound-hooks/not-a-uuid", nil, http.StatusNotFound)

	for _, action := range []string{"inbound_hook.create", "inbound_hook.update", "inbound_hook.rotate_token", "inbound_hook.delete"} {
		entries := notifytest.Audit(t, e.Owner, action)
		require.NotEmpty(t, entries, action)
		require.Equal(t, "inbound_hook", entries[len(entries)-1].TargetType)
		require.NotNil(t, entries[0].ActorUserID, action)
		b, err := json.Marshal(entries)
		require.NoError(t, err)
		require.False(t, bytes.Contains(b, []byte(h.Token)) || bytes.Contains(b, []byte(rot.Token)), "no token in the audit log")
	}
	created := notifytest.Audit(t, e.Owner, "inbound_hook.create")
	require.Equal(t, "alertmanager", created[len(created)-1].Payload["format"])
}

func ptr(s string) *string { return &s }

// offByOne is token with its last character changed.
func offByOne(token string) string {
	last := byte('a')
	if token[len(token)-1] == 'a' {
		last = 'b'
	}
	return token[:len(token)-1] + string(last)
}

// Every id of another workspace is 404 on the dashboard API, and its
// hooks are not listed.
func TestOtherWorkspaceHooksAreNotFound(t *testing.T) {
	t.Parallel()
	e := notifytest.StartDaemon(t)
	other, _ := e.NewWorkspace(t, "Other", "other@example.com")
	theirs := create(t, other, map[string]any{"name": "theirs", "format": "ntfy", "channel": "chata_webhook"})
	id := theirs.InboundHook.ID
	for _, c := range []struct {
		method, path string
		body         any
	}{
		{"GET", "/v1/inbound-hooks/" + id, nil},
		{"PATCH", "/v1/inbound-hooks/" + id, map[string]any{"name": "mine"}},
		{"DELETE", "/v1/inbound-hooks/" + id, nil},
		{"POST", "/v1/inbound-hooks/" + id + "/rotate-token", nil},
	} {
		require.Equal(t, "Inbound hook not found", notifytest.DashboardProblem(t, e.Owner, c.method, c.path, c.body, http.StatusNotFound).Detail, c.method)
	}
	require.Empty(t, notifytest.Field[[]hook](t, dash(t, e.Owner, "GET", "/v1/inbound-hooks", nil, http.StatusOK), "inboundHooks"))
	// Theirs is untouched: same name and token.
	require.Equal(t, "theirs", notifytest.Field[hook](t, dash(t, other, "GET", "/v1/inbound-hooks/"+id, nil, http.StatusOK), "inboundHook").Name)
	require.Equal(t, http.StatusOK, post(t, "POST", theirs.URL, "still mine", nil).Status)
	// A hook can name only its own workspace's template and category.
	dash(t, other, "POST", "/v1/categories", map[string]any{"key": "theirs", "name": "Theirs"}, http.StatusCreated)
	require.Equal(t, `category: no category "theirs"`, notifytest.DashboardProblem(t, e.Owner, "POST", "/v1/inbound-hooks",
		map[string]any{"name": "x", "format": "ntfy", "channel": "chata_webhook", "category": "theirs"}, http.StatusBadRequest).Detail)
}
