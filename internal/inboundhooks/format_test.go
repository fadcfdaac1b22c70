package inboundhooks

import (
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/notifyd/notifyd/internal/notify"
)

// amPayload is an Alertmanager webhook (version 4) of a group of three
// alerts, two firing, as Alertmanager 0.27 posts it.
const amPayload = `{
  "receiver": "notifyd", "status": "firing", "version": "4", "truncatedAlerts": 0,
  "groupKey": "{}:{alertname=\"HighCPU\"}",
  "groupLabels": {"alertname": "HighCPU"},
  "commonLabels": {"alertname": "HighCPU", "job": "node", "severity": "critical"},
  "commonAnnotations": {"runbook_url": "https://runbooks.example/cpu"},
  "externalURL": "http://alertmanager:9093",
  "alerts": [
    {"status": "firing", "labels": {"alertname": "HighCPU", "instance": "a:9100", "job": "node", "severity": "critical"},
     "annotations": {"summary": "CPU above 90% on a"}, "startsAt": "2026-11-22T03:25:05Z", "endsAt": "0001-01-01T00:00:00Z",
     "generatorURL": "http://prometheus/graph", "fingerprint": "1"},
    {"status": "firing", "labels": {"alertname": "HighCPU", "instance": "b:9100", "job": "node", "severity": "critical"},
     "annotations": {"description": "CPU above 90% on b"}, "fingerprint": "2"},
    {"status": "resolved", "labels": {"alertname": "HighCPU", "instance": "c:9100", "job": "node", "severity": "critical"},
     "annotations": {}, "fingerprint": "3"}
  ]
}`

// grafanaPayload is Grafana's unified alerting webhook (version 1).
const grafanaPayload = `{
  "receiver": "notifyd", "status": "firing", "orgId": 1, "version": "1", "state": "alerting",
  "title": "[FIRING:1] DiskFull (disk)",
  "message": "**Firing**\n\nValue: B=97\nLabels:\n - alertname = DiskFull\nSource: <https://grafana.example/alerting/1|rule>\n",
  "groupLabels": {"alertname": "DiskFull"}, "commonLabels": {"alertname": "DiskFull", "team": "ops"},
  "commonAnnotations": {"summary": "Disk almost full"}, "externalURL": "https://grafana.example/",
  "alerts": [{"status": "firing", "labels": {"alertname": "DiskFull", "team": "ops"}, "annotations": {"summary": "Disk almost full"},
    "values": {"B": 97.2}, "valueString": "[ var='B' value=97.2 ]", "dashboardURL": "", "panelURL": "", "silenceURL": "x"}]
}`

func TestParseAlertmanager(t *testing.T) {
	t.Parallel()
	m, err := Parse(notify.HookAlertmanager, Payload{Body: []byte(amPayload)})
	require.NoError(t, err)
	require.Equal(t, "[FIRING:2] HighCPU (node critical)", m.Title, "Alertmanager's default subject")
	require.Equal(t, "FIRING HighCPU instance=a:9100: CPU above 90% on a\nFIRING HighCPU instance=b:9100: CPU above 90% on b\nRESOLVED HighCPU instance=c:9100", m.Text)
	require.Equal(t, "firing", m.Vars["status"])
	require.Equal(t, "2", m.Vars["firing"])
	require.Equal(t, "1", m.Vars["resolved"])
	require.Equal(t, "HighCPU", m.Vars["alertname"])
	require.Equal(t, "critical", m.Vars["severity"])
	require.Equal(t, "CPU above 90% on a", m.Vars["summary"], "the first alert's when no common one")
	require.Equal(t, "node", m.Vars["label_job"])
	require.Equal(t, "https://runbooks.example/cpu", m.Vars["annotation_runbook_url"])
	require.Equal(t, "HighCPU", m.Vars["group_alertname"])
	require.Equal(t, m.Title, m.Vars["title"])

	resolved := strings.ReplaceAll(amPayload, `"status": "firing"`, `"status": "resolved"`)
	m, err = Parse(notify.HookAlertmanager, Payload{Body: []byte(resolved)})
	require.NoError(t, err)
	require.Equal(t, "[RESOLVED] HighCPU (node critical)", m.Title)

	for body, detail := range map[string]string{
		``:                              "the body is empty",
		`[]`:                            "the body must be a JSON object",
		`{"alerts": "x"}`:               "alerts must be a JSON array",
		`{"status": "firing"}`:          "alerts must hold at least one alert",
		`{"status": "bogus"}`:           "status must be firing or resolved",
		`{"alerts": [{"status": "x"}]}`: "alerts[0].status must be firing or resolved",
		`{"alerts": [{"status": "firing", "labels": {"a": 1}}]}`: "alerts.labels must be a JSON string",
		`{"alerts": [] } x`: "unexpected data after the JSON value",
		`{"alerts": [`:      "malformed JSON",
	} {
		_, err := Parse(notify.HookAlertmanager, Payload{Body: []byte(body)})
		e, ok := notify.AsError(err)
		require.True(t, ok, "%s: %v", body, err)
		require.Equal(t, 400, e.Status())
		require.Contains(t, e.Detail, "The body is not a valid Alertmanager payload: ", body)
		require.Contains(t, e.Detail, detail, body)
	}
}

func TestParseAlertmanagerManyAlerts(t *testing.T) {
	t.Parallel()
	var alerts []string
	for range 25 {
		alerts = append(alerts, `{"status": "firing", "labels": {"alertname": "X"}}`)
	}
	m, err := Parse(notify.HookAlertmanager, Payload{Body: []byte(`{"status": "firing", "truncatedAlerts": 5, "alerts": [` + strings.Join(alerts, ",") + `]}`)})
	require.NoError(t, err)
	require.Equal(t, "[FIRING:25] X", m.Title, "no group labels: the alert name")
	lines := strings.Split(m.Text, "\n")
	require.Len(t, lines, maxListed+1)
	require.Equal(t, "… and 10 more", lines[maxListed])
}

func TestParseGrafana(t *testing.T) {
	t.Parallel()
	m, err := Parse(notify.HookGrafana, Payload{Body: []byte(grafanaPayload)})
	require.NoError(t, err)
	require.Equal(t, "[FIRING:1] DiskFull (disk)", m.Title)
	require.Contains(t, m.Text, "Source: rule (https://grafana.example/alerting/1)", "Slack-style links made plain")
	require.Equal(t, "alerting", m.Vars["state"])
	require.Equal(t, "Disk almost full", m.Vars["summary"])
	require.Equal(t, "ops", m.Vars["label_team"])

	// Without a rendered title and message: the Alertmanager summary.
	m, err = Parse(notify.HookGrafana, Payload{Body: []byte(`{"status": "resolved", "alerts": [{"status": "resolved", "labels": {"alertname": "DiskFull"}}]}`)})
	require.NoError(t, err)
	require.Equal(t, "[RESOLVED] DiskFull", m.Title)
	// Legacy alerting.
	m, err = Parse(notify.HookGrafana, Payload{Body: []byte(`{"title": "[Alerting] Load", "ruleName": "Load", "state": "alerting", "message": "Load high", "ruleUrl": "https://g/x"}`)})
	require.NoError(t, err)
	require.Equal(t, "[Alerting] Load", m.Title)
	require.Equal(t, "Load high", m.Text)
	require.Equal(t, "Load", m.Vars["ruleName"])

	_, err = Parse(notify.HookGrafana, Payload{Body: []byte(`{"status": "firing"}`)})
	require.ErrorContains(t, err, "title and message, or alerts, are required")
}

func TestParseNtfy(t *testing.T) {
	t.Parallel()
	h := http.Header{}
	h.Set("Title", "Backup")
	h.Set("Priority", "high")
	h.Set("Tags", "floppy_disk, ok,,")
	m, err := Parse(notify.HookNtfy, Payload{Body: []byte("Backup done\n"), Header: h.Get, Topic: "backups"})
	require.NoError(t, err)
	require.Equal(t, "Backup", m.Title)
	require.Equal(t, "Backup done", m.Text)
	require.Equal(t, "4", m.Vars["priority"])
	require.Equal(t, "floppy_disk,ok", m.Vars["tags"])
	require.Equal(t, "backups", m.Vars["topic"])
	require.Equal(t, map[string]string{"priority": "4", "tags": "floppy_disk,ok"}, m.Meta)

	// X- headers, short forms, RFC 2047 and the query.
	h = http.Header{}
	h.Set("X-Title", "=?UTF-8?B?67Cx7JeF?=")
	h.Set("p", "1")
	m, err = Parse(notify.HookNtfy, Payload{Body: nil, Header: h.Get, Query: url.Values{"message": {"from the query"}, "tags": {"a"}}})
	require.NoError(t, err)
	require.Equal(t, "백업", m.Title)
	require.Equal(t, "from the query", m.Text)
	require.Equal(t, "1", m.Vars["priority"])
	require.Equal(t, "a", m.Vars["tags"])

	m, err = Parse(notify.HookNtfy, Payload{})
	require.NoError(t, err)
	require.Equal(t, "triggered", m.Text, "ntfy's empty publish")

	// JSON publishing (the topic is the token's, so it is ignored).
	m, err = Parse(notify.HookNtfy, Payload{Body: []byte(`{"topic": "x", "message": "Disk full", "title": "srv1", "tags": ["warning"], "priority": 5}`)})
	require.NoError(t, err)
	require.Equal(t, "srv1", m.Title)
	require.Equal(t, "Disk full", m.Text)
	require.Equal(t, "5", m.Vars["priority"])
	// A JSON-looking message without topic is a message.
	m, err = Parse(notify.HookNtfy, Payload{Body: []byte(`{"a": 1}`)})
	require.NoError(t, err)
	require.Equal(t, `{"a": 1}`, m.Text)

	h = http.Header{}
	h.Set("Priority", "9")
	_, err = Parse(notify.HookNtfy, Payload{Body: []byte("x"), Header: h.Get})
	require.ErrorContains(t, err, "priority must be 1 to 5")
	_, err = Parse(notify.HookNtfy, Payload{Body: []byte{0xff, 0xfe}})
	require.ErrorContains(t, err, "the body must be UTF-8 text")
}

func TestParseSlack(t *testing.T) {
	t.Parallel()
	m, err := Parse(notify.HookSlack, Payload{Body: []byte(`{"text": "Deploy <https://ci.example/1|#1> done"}`)})
	require.NoError(t, err)
	require.Equal(t, "", m.Title)
	require.Equal(t, "Deploy #1 (https://ci.example/1) done", m.Text)

	blocks := `{"text": "fallback", "blocks": [
	  {"type": "header", "text": {"type": "plain_text", "text": "Deploy finished"}},
	  {"type": "section", "text": {"type": "mrkdwn", "text": "*api* v2 is live"}, "fields": [{"type": "mrkdwn", "text": "*Env:* prod"}]},
	  {"type": "divider"},
	  {"type": "context", "elements": [{"type": "mrkdwn", "text": "by ci"}, {"type": "image", "image_url": "x", "alt_text": "y"}]},
	  {"type": "rich_text", "elements": [{"type": "rich_text_section", "elements": [{"type": "text", "text": "see "},
	     {"type": "link", "url": "https://x.example", "text": "notes"}, {"type": "emoji", "name": "rocket"}]},
	     {"type": "rich_text_list", "elements": [{"type": "rich_text_section", "elements": [{"type": "text", "text": "one"}]},
	       {"type": "rich_text_section", "elements": [{"type": "text", "text": "two"}]}]}]}
	]}`
	m, err = Parse(notify.HookSlack, Payload{Body: []byte(blocks)})
	require.NoError(t, err)
	require.Equal(t, "Deploy finished", m.Title)
	require.Equal(t, "Deploy finished\n*api* v2 is live\n*Env:* prod\nby ci\nsee notes (https://x.example):rocket:\n• one\n• two", m.Text)
	require.Equal(t, "fallback", m.Vars["slackText"])

	// Legacy attachments, as a form's payload field.
	form := url.Values{"payload": {`{"attachments": [{"fallback": "fb", "pretext": "Build", "title": "Failed", "fields": [{"title": "Branch", "value": "main"}]}]}`}}
	m, err = Parse(notify.HookSlack, Payload{Body: []byte(form.Encode()), ContentType: "application/x-www-form-urlencoded"})
	require.NoError(t, err)
	require.Equal(t, "Failed", m.Title)
	require.Equal(t, "Build\nFailed\nBranch: main", m.Text)

	_, err = Parse(notify.HookSlack, Payload{Body: []byte(`{"text": ""}`)})
	require.ErrorContains(t, err, "no_text")
	_, err = Parse(notify.HookSlack, Payload{Body: []byte(`{"blocks": {}}`)})
	require.ErrorContains(t, err, "blocks must be a JSON array")
}

func TestParseApprise(t *testing.T) {
	t.Parallel()
	m, err := Parse(notify.HookApprise, Payload{Body: []byte(`{"title": "Backup", "body": "done", "type": "success", "tag": ["a", "b"]}`),
		ContentType: "application/json"})
	require.NoError(t, err)
	require.Equal(t, "Backup", m.Title)
	require.Equal(t, "done", m.Text)
	require.Equal(t, map[string]string{"body": "done", "type": "success", "format": "text", "tag": "a,b", "title": "Backup", "text": "done"}, m.Vars)

	form := url.Values{"body": {"from a form"}, "title": {"T"}, "type": {"warning"}}
	m, err = Parse(notify.HookApprise, Payload{Body: []byte(form.Encode()), ContentType: "application/x-www-form-urlencoded; charset=utf-8"})
	require.NoError(t, err)
	require.Equal(t, "T", m.Title)
	require.Equal(t, "from a form", m.Text)
	require.Equal(t, "warning", m.Vars["type"])

	mp := "--b\r\nContent-Disposition: form-data; name=\"body\"\r\n\r\nmultipart body\r\n--b--\r\n"
	m, err = Parse(notify.HookApprise, Payload{Body: []byte(mp), ContentType: "multipart/form-data; boundary=b"})
	require.NoError(t, err)
	require.Equal(t, "multipart body", m.Text)

	for body, detail := range map[string]string{
		`{"title": "x"}`:                 "body is required",
		`{"body": "x", "type": "no"}`:    "type must be one of info, success, warning, failure",
		`{"body": "x", "format": "pdf"}`: "format must be one of text, markdown, html",
		`{"body": 1}`:                    "body must be a JSON string",
	} {
		_, err := Parse(notify.HookApprise, Payload{Body: []byte(body)})
		require.ErrorContains(t, err, detail, body)
	}
}

func TestTokens(t *testing.T) {
	t.Parallel()
	a, b := newToken(), newToken()
	require.NotEqual(t, a, b)
	require.True(t, wellFormed(a), a)
	require.Len(t, a, tokenLen)
	for _, bad := range []string{"", "hk_", a[:len(a)-1], a + "a", "xx" + a[2:], strings.ToUpper(a), a[:len(a)-1] + "1"} {
		require.False(t, wellFormed(bad), bad)
	}
}

func TestSendsOf(t *testing.T) {
	t.Parallel()
	h := &notify.InboundHook{ID: "h1", Name: "alerts", Format: notify.HookNtfy, Channel: notify.ChannelSMS, Addresses: []string{"01012345678"},
		RecipientIDs: []string{"user-1"}}
	m := &Message{Title: "Backup", Text: "done", Vars: map[string]string{"x": "y"}, Meta: map[string]string{"priority": "3"}}
	ss, err := sendsOf(h, m)
	require.NoError(t, err)
	require.Len(t, ss, 2)
	require.Equal(t, "01012345678", ss[0].Address)
	require.Equal(t, "user-1", ss[1].RecipientID)
	require.Equal(t, "Backup\ndone", *ss[0].Text, "sms: the title is the first line")
	require.Nil(t, ss[0].Title)
	require.Nil(t, ss[0].Variables, "no template: the text is sent as it is")
	require.Equal(t, map[string]string{"hookId": "h1", "hookFormat": "ntfy", "priority": "3"}, ss[0].Metadata)

	h.Channel = notify.ChannelEmail
	ss, err = sendsOf(h, &Message{Text: "done"})
	require.NoError(t, err)
	require.Equal(t, "alerts", *ss[0].Title, "email without a title: the hook's name")
	require.Equal(t, "done", *ss[0].Text)

	h.TemplateCode = "alert"
	ss, err = sendsOf(h, m)
	require.NoError(t, err)
	require.Nil(t, ss[0].Text)
	require.Equal(t, "alert", ss[0].TemplateCode)
	require.Equal(t, map[string]string{"x": "y", "hookName": "alerts"}, ss[0].Variables)

	h.TemplateCode, h.Channel, h.Addresses, h.RecipientIDs = "", notify.ChannelChatAWebhook, nil, nil
	ss, err = sendsOf(h, m)
	require.NoError(t, err)
	require.Equal(t, "hook:alerts", ss[0].Address, "a chat webhook's label")

	_, err = sendsOf(h, &Message{})
	require.ErrorContains(t, err, "The payload holds no message text")
}

// FuzzParse: whatever arrives, every format answers a message or a 400,
// never a panic or another error (a 500 on the hook's URL).
func FuzzParse(f *testing.F) {
	for _, seed := range []string{amPayload, grafanaPayload, `{"text": "x", "blocks": [{"type": "rich_text", "elements": [{"type": "rich_text_list", "elements": [1, {}]}]}]}`,
		`{"body": "x", "tag": {"a": 1}}`, `{"topic": "t", "priority": 9}`, "payload=%7B%7D", "--b\r\n\r\n--b--", "", "null", "[]", "\xff"} {
		f.Add([]byte(seed), "application/json")
		f.Add([]byte(seed), "application/x-www-form-urlencoded")
		f.Add([]byte(seed), "multipart/form-data; boundary=b")
	}
	f.Fuzz(func(t *testing.T, body []byte, contentType string) {
		for _, format := range notify.HookFormats {
			m, err := Parse(format, Payload{Body: body, ContentType: contentType, Query: url.Values{}})
			if err != nil {
				e, ok := notify.AsError(err)
				if !ok || e.Status() != 400 {
					t.Fatalf("%s: %v", format, err)
				}
				continue
			}
			if m.Vars == nil {
				t.Fatalf("%s: no variables", format)
			}
		}
	})
}
