package newsletter_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/notifyd/notifyd/client"
	"github.com/notifyd/notifyd/internal/notify"
	"github.com/notifyd/notifyd/internal/notifytest"
	"github.com/notifyd/notifyd/internal/simulator"
	"github.com/notifyd/notifyd/internal/store/sqlstore"
)

// Helpers of the campaign tests carry a camp prefix.

type campJSON struct {
	ID                 string         `json:"id"`
	Name               string         `json:"name"`
	Channel            string         `json:"channel"`
	Status             string         `json:"status"`
	Subject            string         `json:"subject"`
	ContentText        string         `json:"contentText"`
	ContentHTML        *string        `json:"contentHtml"`
	IsAdvertisement    bool           `json:"isAdvertisement"`
	IncludeUnsubscribe bool           `json:"includeUnsubscribe"`
	AudienceFilter     map[string]any `json:"audienceFilter"`
	ScheduledAt        *string        `json:"scheduledAt"`
	TotalRecipients    int            `json:"totalRecipients"`
	QueuedCount        int            `json:"queuedCount"`
	FailedCount        int            `json:"failedCount"`
	AudienceSize       *int           `json:"audienceSize"`
	DeliveryStats      map[string]int `json:"deliveryStats"`
	EstimatedFinishAt  *string        `json:"estimatedFinishAt"`
	FinishedAt         *string        `json:"finishedAt"`
	CreatedAt          string         `json:"createdAt"`
	UpdatedAt          string         `json:"updatedAt"`
}

type campSend struct {
	CampaignID   string  `json:"campaignId"`
	Status       string  `json:"status"`
	AudienceSize int     `json:"audienceSize"`
	ScheduledAt  *string `json:"scheduledAt"`
	FanoutJobID  *string `json:"fanoutJobId"`
}

const campMailKind = "mailx_email"

// campEmailRoute registers a mailx_email provider on the simulator and
// routes email to it.
func campEmailRoute(t *testing.T, env *notifytest.Env) {
	t.Helper()
	campKindRoute(t, env, campMailKind)
}

// campKindRoute registers an email provider of kind on the simulator,
// sending from news@example.com, and routes email to it.
func campKindRoute(t *testing.T, env *notifytest.Env, kind string) {
	t.Helper()
	notifytest.RegisterRoute(t, env.Owner, "email", kind, env.MailConfig(kind, "news@example.com"))
}

func campCreate(t *testing.T, c *client.Client, body map[string]any) campJSON {
	t.Helper()
	r := subDo(t, c, "POST", "/v1/newsletter/campaigns", body, http.StatusCreated)
	return notifytest.Field[campJSON](t, r, "campaign")
}

func campGet(t *testing.T, c *client.Client, id string) campJSON {
	t.Helper()
	r := subDo(t, c, "GET", "/v1/newsletter/campaigns/"+id, nil, http.StatusOK)
	return notifytest.Field[campJSON](t, r, "campaign")
}

func campSendIt(t *testing.T, c *client.Client, id string, body any) campSend {
	t.Helper()
	r := subDo(t, c, "POST", "/v1/newsletter/campaigns/"+id+"/send", body, http.StatusOK)
	return notifytest.Decode[campSend](t, r, http.StatusOK)
}

// campProblem requires an error answer with that status and detail.
func campProblem(t *testing.T, c *client.Client, method, path string, body any, status int, detail string) {
	t.Helper()
	r := subDo(t, c, method, path, body, status)
	if detail != "" {
		require.Equal(t, detail, r.Problem().Detail)
	}
}

// campWait polls the detail until cond holds.
func campWait(t *testing.T, c *client.Client, id string, d time.Duration, cond func(campJSON) bool) campJSON {
	t.Helper()
	deadline := time.Now().Add(d)
	for {
		x := campGet(t, c, id)
		if cond(x) {
			return x
		}
		if time.Now().After(deadline) {
			t.Fatalf("campaign %s: condition not met in %s; last %+v", id, d, x)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func campImport(t *testing.T, env *notifytest.Env, n int, attrs func(i int) map[string]string) {
	t.Helper()
	for start := 0; start < n; start += 5000 {
		var items []map[string]any
		for i := start; i < min(n, start+5000); i++ {
			it := map[string]any{"channel": "email", "address": fmt.Sprintf("user%05d@example.com", i), "name": fmt.Sprintf("User %d", i)}
			if attrs != nil {
				it["attributes"] = attrs(i)
			}
			items = append(items, it)
		}
		subImport(t, env.Owner, map[string]any{"subscribers": items})
	}
}

func campMails(env *notifytest.Env) []simulator.Message {
	return env.Sim.Messages(campMailKind, "", 0)
}

// campRequireUnique requires exactly n mails, one per address.
func campRequireUnique(t *testing.T, env *notifytest.Env, n int) {
	t.Helper()
	ms := campMails(env)
	seen := map[string]int{}
	for _, m := range ms {
		seen[m.To]++
	}
	for to, k := range seen {
		require.Equal(t, 1, k, "%s got %d mails", to, k)
	}
	require.Len(t, ms, n)
}

func TestCampaignSendAndMailRules(t *testing.T) {
	t.Parallel()
	env := notifytest.StartDaemon(t)
	campEmailRoute(t, env)
	a := subCreate(t, env.Owner, map[string]any{"channel": "email", "address": "kim@example.com", "name": "Kim",
		"attributes": map[string]string{"이름": "김철수", "plan": "pro", "age": "30", "vip": "true"}})
	subCreate(t, env.Owner, map[string]any{"channel": "email", "address": "lee@example.com",
		"attributes": map[string]string{"plan": "free"}})
	subCreate(t, env.Owner, map[string]any{"channel": "email", "address": "park@example.com", "consentStatus": "pending",
		"attributes": map[string]string{"plan": "pro", "age": "30", "vip": "true"}})
	subDo(t, env.Owner, "POST", "/v1/suppressions", map[string]any{"address": "choi@example.com", "reason": "complaint"}, http.StatusCreated)
	subCreate(t, env.Owner, map[string]any{"channel": "email", "address": "choi@example.com",
		"attributes": map[string]string{"plan": "pro", "age": "30", "vip": "true"}})

	c0 := campCreate(t, env.Owner, map[string]any{"name": "Spring sale", "channel": "email", "subject": "{{이름}}님 특가",
		"contentText": "안녕하세요 {{이름}}님, plan {{plan}}{{missing}}.", "contentHtml": "<html><body><p>Hi {{이름}} <b>{{plan}}</b></p></body></html>",
		"audienceFilter": map[string]any{"attributes": map[string]any{"plan": "pro", "age": 30, "vip": true}}})
	c := c0
	require.Equal(t, "draft", c.Status)
	require.True(t, c.IsAdvertisement, "default true")
	require.True(t, c.IncludeUnsubscribe, "default true")
	require.Nil(t, c.ScheduledAt)

	r := subDo(t, env.Owner, "GET", "/v1/newsletter/campaigns/"+c.ID+"/audience", nil, http.StatusOK)
	var aud struct {
		AudienceSize int `json:"audienceSize"`
	}
	require.NoError(t, r.Decode(&aud))
	require.Equal(t, 1, aud.AudienceSize, "pending, suppressed and non-matching subscribers are not targeted")

	s := campSendIt(t, env.Owner, c.ID, nil)
	require.Equal(t, "sending", s.Status)
	require.Equal(t, 1, s.AudienceSize)
	require.Nil(t, s.ScheduledAt)
	require.NotNil(t, s.FanoutJobID)

	x := campWait(t, env.Owner, c.ID, 20*time.Second, func(x campJSON) bool { return x.Status == "sent" })
	require.NotNil(t, x.FinishedAt)
	require.Equal(t, 1, x.TotalRecipients)
	require.Equal(t, 1, x.QueuedCount)
	require.Equal(t, 0, x.FailedCount)
	require.Equal(t, map[string]int{"queued": 0, "processing": 0, "sent": 1, "failed": 0, "canceled": 0, "unknown": 0}, x.DeliveryStats)

	ms := campMails(env)
	require.Len(t, ms, 1)
	m := ms[0]
	require.Equal(t, "kim@example.com", m.To)
	require.Equal(t, "(광고) 김철수님 특가", m.Subject)
	require.True(t, strings.HasPrefix(m.Text, "안녕하세요 김철수님, plan pro."), m.Text)
	token := unsubToken(t, env, env.Workspace, a.ID)
	page := env.Daemon.URL() + "/v1/newsletter/unsubscribe?token=" + token
	require.Contains(t, m.Text, page, "text footer")
	require.Contains(t, m.HTML, `<p>Hi 김철수 <b>pro</b></p>`)
	require.Contains(t, m.HTML, `href="`+page+`"`, "HTML footer")
	require.True(t, strings.HasSuffix(m.HTML, "</body></html>"), "footer goes inside the body")
	require.Equal(t, "<"+env.Daemon.URL()+"/v1/newsletter/unsubscribe/one-click?token="+token+">", m.Headers["List-Unsubscribe"])
	require.Equal(t, "List-Unsubscribe=One-Click", m.Headers["List-Unsubscribe-Post"])

	// The request carries the campaign and subscriber ids.
	ctx := context.Background()
	var meta string
	require.NoError(t, env.Daemon.DB.View(ctx, func(tx notify.Tx) error {
		c := tx.(interface{ Conn() sqlstore.Conn }).Conn()
		return c.QueryRow(ctx, `SELECT metadata FROM notification_requests WHERE campaign_id = ?`, c0.ID).Scan(&meta)
	}))
	require.JSONEq(t, `{"campaignId":"`+c0.ID+`","subscriberId":"`+a.ID+`"}`, meta)

	// RFC 8058: the mail client posts List-Unsubscribe=One-Click to the header's URL.
	oneClick := strings.TrimSuffix(strings.TrimPrefix(m.Headers["List-Unsubscribe"], "<"+env.Daemon.URL()), ">")
	p := unsubReq(t, env, "POST", oneClick, "application/x-www-form-urlencoded", []byte("List-Unsubscribe=One-Click"))
	require.Equal(t, http.StatusOK, p.status, p.body)
	require.Equal(t, "unsubscribed", subGet(t, env.Owner, a.ID).ConsentStatus)
	require.Equal(t, "unsubscribe", unsubSuppression(t, env, env.Workspace, "kim@example.com"))

	// Terminal: no edit, no second send, no cancel, no delete.
	campProblem(t, env.Owner, "PATCH", "/v1/newsletter/campaigns/"+c.ID, map[string]any{"name": "x"}, http.StatusConflict, "")
	campProblem(t, env.Owner, "POST", "/v1/newsletter/campaigns/"+c.ID+"/send", nil, http.StatusConflict, "")
	campProblem(t, env.Owner, "POST", "/v1/newsletter/campaigns/"+c.ID+"/cancel", nil, http.StatusConflict, "")
	campProblem(t, env.Owner, "DELETE", "/v1/newsletter/campaigns/"+c.ID, nil, http.StatusConflict, "")

	// Audit trail.
	r = subDo(t, env.Owner, "GET", "/v1/audit-logs?targetType=campaign", nil, http.StatusOK)
	require.Contains(t, string(r.Body), `"campaign.create"`)
	require.Contains(t, string(r.Body), `"campaign.send"`)
}

func TestCampaignNonAdvertisement(t *testing.T) {
	t.Parallel()
	env := notifytest.StartDaemon(t)
	campEmailRoute(t, env)
	subCreate(t, env.Owner, map[string]any{"channel": "email", "address": "a@example.com"})
	// Already prefixed: not doubled. Non-advertisement without footer.
	c := campCreate(t, env.Owner, map[string]any{"name": "n", "channel": "email", "subject": "(광고) Notice",
		"contentText": "Body {{x}}", "isAdvertisement": false, "includeUnsubscribe": false})
	require.False(t, c.IncludeUnsubscribe)
	campSendIt(t, env.Owner, c.ID, map[string]any{})
	campWait(t, env.Owner, c.ID, 20*time.Second, func(x campJSON) bool { return x.Status == "sent" })
	m := campMails(env)[0]
	require.Equal(t, "(광고) Notice", m.Subject)
	require.Equal(t, "Body ", m.Text, "no footer, missing variable empty")
	require.NotEmpty(t, m.Headers["List-Unsubscribe"], "headers on every newsletter mail")

	// An advertisement campaign prefixes once.
	c = campCreate(t, env.Owner, map[string]any{"name": "ad", "channel": "email", "subject": "(광고) Sale", "contentText": "t"})
	campSendIt(t, env.Owner, c.ID, nil)
	campWait(t, env.Owner, c.ID, 20*time.Second, func(x campJSON) bool { return x.Status == "sent" })
	for _, m := range campMails(env) {
		require.False(t, strings.HasPrefix(m.Subject, "(광고) (광고)"), m.Subject)
	}
}

func TestCampaignValidation(t *testing.T) {
	t.Parallel()
	env := notifytest.StartDaemon(t)
	o := env.Owner
	base := func(extra map[string]any) map[string]any {
		b := map[string]any{"name": "n", "channel": "email", "subject": "s", "contentText": "t"}
		for k, v := range extra {
			b[k] = v
		}
		return b
	}
	const path = "/v1/newsletter/campaigns"
	past := time.Now().Add(-time.Hour).UTC().Format(time.RFC3339)
	for _, tc := range []struct {
		body   map[string]any
		detail string
	}{
		{map[string]any{"name": "n", "channel": "email", "contentText": "t"}, "subject is required for email campaigns"},
		{base(map[string]any{"subject": ""}), "subject is required for email campaigns"},
		{base(map[string]any{"scheduledAt": past}), "scheduledAt must be in the future"},
		{base(map[string]any{"scheduledAt": "tomorrow"}), ""},
		{base(map[string]any{"scheduledAt": ""}), ""},
		{base(map[string]any{"includeUnsubscribe": false}), ""},
		{base(map[string]any{"channel": "sms"}), "channel must be email"},
		{base(map[string]any{"name": ""}), ""},
		{base(map[string]any{"name": strings.Repeat("n", 201)}), ""},
		{base(map[string]any{"subject": strings.Repeat("s", 201)}), ""},
		{base(map[string]any{"contentText": ""}), ""},
		{base(map[string]any{"contentText": strings.Repeat("t", 100_001)}), ""},
		{base(map[string]any{"contentHtml": strings.Repeat("h", 500_001)}), ""},
		{base(map[string]any{"unknown": 1}), ""},
		{base(map[string]any{"audienceFilter": []any{}}), "audienceFilter must be an object"},
		{map[string]any{"channel": "email", "subject": "s", "contentText": "t"}, "name is required"},
	} {
		campProblem(t, o, "POST", path, tc.body, http.StatusBadRequest, tc.detail)
	}
	// Limits at the edge pass.
	campCreate(t, o, base(map[string]any{"name": strings.Repeat("이", 200), "subject": strings.Repeat("s", 200),
		"contentText": strings.Repeat("t", 100_000), "contentHtml": strings.Repeat("h", 500_000)}))

	// The filter is judged at send, preview and detail (fail-closed).
	subCreate(t, o, map[string]any{"channel": "email", "address": "a@example.com", "attributes": map[string]string{"k": "v"}})
	for _, f := range []any{map[string]any{}, []any{}, map[string]any{"a": nil}, map[string]any{"a": []any{"x"}}, "x", nil} {
		c := campCreate(t, o, base(map[string]any{"audienceFilter": map[string]any{"attributes": f}}))
		for _, p := range []struct{ method, path string }{{"POST", path + "/" + c.ID + "/send"}, {"GET", path + "/" + c.ID + "/audience"},
			{"GET", path + "/" + c.ID}} {
			r := subDo(t, o, p.method, p.path, nil, http.StatusBadRequest)
			require.Equal(t, "SVC-40000", r.Problem().Code)
			require.Equal(t, "audienceFilter.attributes must contain at least one string/number/boolean value", r.Problem().Detail)
		}
		require.Equal(t, "draft", campList(t, o, "?status=draft").byID(c.ID).Status)
	}
	// Absent attributes: other filter fields are ignored, everyone is targeted.
	c := campCreate(t, o, base(map[string]any{"audienceFilter": map[string]any{"segment": "x"}}))
	require.Equal(t, 1, *campGet(t, o, c.ID).AudienceSize)
	// A mixed filter: a null condition matches nobody.
	c = campCreate(t, o, base(map[string]any{"audienceFilter": map[string]any{"attributes": map[string]any{"k": "v", "z": nil}}}))
	require.Equal(t, 0, *campGet(t, o, c.ID).AudienceSize)
	campProblem(t, o, "POST", path+"/"+c.ID+"/send", nil, http.StatusBadRequest, "")

	// Audience of 0, bad send schedule, 404s.
	c = campCreate(t, o, base(map[string]any{"audienceFilter": map[string]any{"attributes": map[string]any{"k": "nope"}}}))
	campProblem(t, o, "POST", path+"/"+c.ID+"/send", nil, http.StatusBadRequest, "")
	c = campCreate(t, o, base(nil))
	campProblem(t, o, "POST", path+"/"+c.ID+"/send", map[string]any{"scheduledAt": past}, http.StatusBadRequest, "scheduledAt must be in the future")
	campProblem(t, o, "POST", path+"/"+c.ID+"/send", map[string]any{"scheduledAt": "2030-01-01 00:00:00"}, http.StatusBadRequest, "")
	campProblem(t, o, "POST", path+"/"+c.ID+"/send", map[string]any{"other": 1}, http.StatusBadRequest, "")
	for _, p := range []struct{ method, path string }{{"GET", ""}, {"PATCH", ""}, {"DELETE", ""}, {"GET", "/audience"},
		{"POST", "/send"}, {"POST", "/cancel"}} {
		var body any
		if p.method == "PATCH" {
			body = map[string]any{"name": "x"}
		}
		campProblem(t, o, p.method, path+"/00000000-0000-0000-0000-000000000000"+p.path, body, http.StatusNotFound, "")
	}
	// Another workspace sees nothing.
	other, _ := env.NewWorkspace(t, "Other", "other@example.com")
	campProblem(t, other, "GET", path+"/"+c.ID, nil, http.StatusNotFound, "")
	for _, p := range []struct{ method, path string }{{"PATCH", ""}, {"DELETE", ""}, {"GET", "/audience"},
		{"POST", "/send"}, {"POST", "/cancel"}} {
		var body any
		if p.method == "PATCH" {
			body = map[string]any{"name": "x"}
		}
		campProblem(t, other, p.method, path+"/"+c.ID+p.path, body, http.StatusNotFound, "")
	}
	require.Equal(t, 0, campList(t, other, "").Total)
	require.Equal(t, "draft", campGet(t, o, c.ID).Status, "untouched by the other workspace")

	// Update: partial, channel fixed, schedule set and removed, ad rule.
	future := time.Now().Add(time.Hour).UTC().Truncate(time.Second)
	u := campPatch(t, o, c.ID, map[string]any{"name": "renamed", "scheduledAt": future.Format(time.RFC3339), "contentHtml": "<p>x</p>"})
	require.Equal(t, "renamed", u.Name)
	require.Equal(t, "s", u.Subject)
	require.NotNil(t, u.ScheduledAt)
	require.Equal(t, "draft", u.Status, "a saved schedule does not send")
	u = campPatch(t, o, c.ID, map[string]any{"scheduledAt": nil, "contentHtml": nil})
	require.Nil(t, u.ScheduledAt)
	require.Nil(t, u.ContentHTML)
	campProblem(t, o, "PATCH", path+"/"+c.ID, map[string]any{"channel": "email"}, http.StatusBadRequest, "")
	campProblem(t, o, "PATCH", path+"/"+c.ID, map[string]any{"includeUnsubscribe": false}, http.StatusBadRequest, "")
	campProblem(t, o, "PATCH", path+"/"+c.ID, map[string]any{"scheduledAt": past}, http.StatusBadRequest, "scheduledAt must be in the future")
	campProblem(t, o, "PATCH", path+"/"+c.ID, map[string]any{"subject": ""}, http.StatusBadRequest, "subject is required for email campaigns")
	u = campPatch(t, o, c.ID, map[string]any{"isAdvertisement": false, "includeUnsubscribe": false})
	require.False(t, u.IsAdvertisement)

	// List: newest first, status filter, limits.
	l := campList(t, o, "?limit=2&offset=1")
	require.Equal(t, 2, l.Limit)
	require.Equal(t, 1, l.Offset)
	require.Len(t, l.Campaigns, 2)
	all := campList(t, o, "")
	require.Equal(t, 50, all.Limit)
	require.Equal(t, c.ID, all.Campaigns[0].ID)
	for _, q := range []string{"?limit=0", "?limit=201", "?offset=-1", "?status=nope", "?limit=x"} {
		campProblem(t, o, "GET", path+q, nil, http.StatusBadRequest, "")
	}
	// Delete a draft.
	subDo(t, o, "DELETE", path+"/"+c.ID, nil, http.StatusNoContent)
	campProblem(t, o, "GET", path+"/"+c.ID, nil, http.StatusNotFound, "")
}

type campListJSON struct {
	Campaigns []campJSON `json:"campaigns"`
	Total     int        `json:"total"`
	Limit     int        `json:"limit"`
	Offset    int        `json:"offset"`
}

func (l campListJSON) byID(id string) campJSON {
	for _, c := range l.Campaigns {
		if c.ID == id {
			return c
		}
	}
	return campJSON{}
}

func campList(t *testing.T, c *client.Client, q string) campListJSON {
	t.Helper()
	r := subDo(t, c, "GET", "/v1/newsletter/campaigns"+q, nil, http.StatusOK)
	var out campListJSON
	require.NoError(t, r.Decode(&out))
	return out
}

func campPatch(t *testing.T, c *client.Client, id string, body any) campJSON {
	t.Helper()
	r := subDo(t, c, "PATCH", "/v1/newsletter/campaigns/"+id, body, http.StatusOK)
	return notifytest.Field[campJSON](t, r, "campaign")
}

func TestCampaignRoles(t *testing.T) {
	t.Parallel()
	env := notifytest.StartDaemon(t)
	subCreate(t, env.Owner, map[string]any{"channel": "email", "address": "a@example.com"})
	viewer, operator := env.Member(t, "viewer"), env.Member(t, "operator")
	body := map[string]any{"name": "n", "channel": "email", "subject": "s", "contentText": "t"}
	campProblem(t, viewer, "POST", "/v1/newsletter/campaigns", body, http.StatusForbidden, "")
	c := campCreate(t, operator, body)
	campGet(t, viewer, c.ID)
	campList(t, viewer, "")
	subDo(t, viewer, "GET", "/v1/newsletter/campaigns/"+c.ID+"/audience", nil, http.StatusOK)
	campProblem(t, viewer, "PATCH", "/v1/newsletter/campaigns/"+c.ID, map[string]any{"name": "x"}, http.StatusForbidden, "")
	campProblem(t, viewer, "POST", "/v1/newsletter/campaigns/"+c.ID+"/send", nil, http.StatusForbidden, "")
	campProblem(t, viewer, "POST", "/v1/newsletter/campaigns/"+c.ID+"/cancel", nil, http.StatusForbidden, "")
	campProblem(t, operator, "DELETE", "/v1/newsletter/campaigns/"+c.ID, nil, http.StatusForbidden, "")
	campPatch(t, operator, c.ID, map[string]any{"name": "x"})
	s := campSendIt(t, operator, c.ID, map[string]any{"scheduledAt": time.Now().Add(time.Hour).UTC().Format(time.RFC3339)})
	require.Equal(t, "scheduled", s.Status)
	subDo(t, operator, "POST", "/v1/newsletter/campaigns/"+c.ID+"/cancel", nil, http.StatusOK)
	subDo(t, env.Owner, "DELETE", "/v1/newsletter/campaigns/"+c.ID, nil, http.StatusNoContent)
}

func TestCampaignScheduleAndCancel(t *testing.T) {
	t.Parallel()
	env := notifytest.StartDaemon(t)
	campEmailRoute(t, env)
	subCreate(t, env.Owner, map[string]any{"channel": "email", "address": "a@example.com"})
	o := env.Owner
	body := map[string]any{"name": "n", "channel": "email", "subject": "s", "contentText": "t"}

	// A saved future schedule is used by a send without one.
	future := time.Now().Add(time.Hour).UTC().Truncate(time.Second)
	body["scheduledAt"] = future.Format(time.RFC3339)
	c := campCreate(t, o, body)
	s := campSendIt(t, o, c.ID, nil)
	require.Equal(t, "scheduled", s.Status)
	require.Equal(t, future, subParse(t, s.ScheduledAt))
	// The audit entry shows the schedule as every timestamp of the API.
	r := subDo(t, o, "GET", "/v1/audit-logs?action=campaign.send", nil, http.StatusOK)
	var logs struct {
		Logs []struct {
			Payload map[string]any `json:"payload"`
		} `json:"logs"`
	}
	require.NoError(t, r.Decode(&logs))
	require.Len(t, logs.Logs, 1)
	require.Equal(t, future.Format("2006-01-02T15:04:05.000Z"), logs.Logs[0].Payload["scheduledAt"])
	// Sending a scheduled campaign again replaces its fan-out job.
	later := future.Add(time.Hour)
	s2 := campSendIt(t, o, c.ID, map[string]any{"scheduledAt": later.Format(time.RFC3339)})
	require.Equal(t, "scheduled", s2.Status)
	require.NotEqual(t, *s.FanoutJobID, *s2.FanoutJobID)
	x := campGet(t, o, c.ID)
	require.Equal(t, "scheduled", x.Status, "a scheduled campaign whose fan-out has not run stays scheduled")
	campProblem(t, o, "PATCH", "/v1/newsletter/campaigns/"+c.ID, map[string]any{"name": "x"}, http.StatusConflict, "")
	campProblem(t, o, "DELETE", "/v1/newsletter/campaigns/"+c.ID, nil, http.StatusConflict, "")
	r = subDo(t, o, "POST", "/v1/newsletter/campaigns/"+c.ID+"/cancel", nil, http.StatusOK)
	var cr struct {
		CampaignID       string `json:"campaignId"`
		Status           string `json:"status"`
		CanceledRequests int    `json:"canceledRequests"`
	}
	require.NoError(t, r.Decode(&cr))
	require.Equal(t, c.ID, cr.CampaignID)
	require.Equal(t, "canceled", cr.Status)
	require.Equal(t, 0, cr.CanceledRequests)
	campProblem(t, o, "POST", "/v1/newsletter/campaigns/"+c.ID+"/cancel", nil, http.StatusConflict, "")
	campProblem(t, o, "POST", "/v1/newsletter/campaigns/"+c.ID+"/send", nil, http.StatusConflict, "")
	subDo(t, o, "DELETE", "/v1/newsletter/campaigns/"+c.ID, nil, http.StatusNoContent)

	// A schedule a second ahead: the fan-out runs at its time.
	delete(body, "scheduledAt")
	c = campCreate(t, o, body)
	at := time.Now().Add(1500 * time.Millisecond).UTC()
	s = campSendIt(t, o, c.ID, map[string]any{"scheduledAt": at.Format(time.RFC3339Nano)})
	require.Equal(t, "scheduled", s.Status)
	x = campWait(t, o, c.ID, 20*time.Second, func(x campJSON) bool { return x.Status == "sent" })
	require.Len(t, campMails(env), 1)
	require.False(t, subParse(t, x.FinishedAt).Before(at.Truncate(time.Millisecond)), "not sent before its time")
}

func TestCampaignCancelWhileSending(t *testing.T) {
	t.Parallel()
	env := notifytest.StartDaemon(t)
	campEmailRoute(t, env)
	campImport(t, env, 1200, nil)
	// The fan-out stops after its first batch until released; the vendor is slow.
	release := make(chan struct{})
	var releaseOnce sync.Once
	// Cleanups run last-in first-out: the fan-out is released before the
	// daemon stops, even when the test fails early.
	t.Cleanup(func() { releaseOnce.Do(func() { close(release) }) })
	env.Daemon.Rooms.Newsletter.SetFanoutFault(func(_ string, n int) error {
		if n == 1 {
			<-release
		}
		return nil
	})
	// An endpoint subscribes to cancels: events are written for webhooks.
	subDo(t, env.Owner, "POST", "/v1/webhooks", map[string]any{"url": "http://127.0.0.1:9/hook", "events": []string{"notification.canceled"}},
		http.StatusCreated)
	c := campCreate(t, env.Owner, map[string]any{"name": "n", "channel": "email", "subject": "s", "contentText": "t"})
	resp, err := http.Post(env.SimURL+"/_sim/faults", "application/json",
		strings.NewReader(`{"kind":"mailx_email","latencyMs":3000,"count":100000}`))
	require.NoError(t, err)
	resp.Body.Close()
	campSendIt(t, env.Owner, c.ID, nil)
	campWait(t, env.Owner, c.ID, 20*time.Second, func(x campJSON) bool { return x.QueuedCount == 500 })
	r := subDo(t, env.Owner, "POST", "/v1/newsletter/campaigns/"+c.ID+"/cancel", nil, http.StatusOK)
	releaseOnce.Do(func() { close(release) })
	var cr struct {
		CanceledRequests int `json:"canceledRequests"`
	}
	require.NoError(t, r.Decode(&cr))
	require.Greater(t, cr.CanceledRequests, 0)
	require.LessOrEqual(t, cr.CanceledRequests, 500)
	time.Sleep(500 * time.Millisecond)
	x := campGet(t, env.Owner, c.ID)
	require.Equal(t, "canceled", x.Status)
	require.Equal(t, 500, x.QueuedCount, "the fan-out stops at the cancel")
	require.Equal(t, 1200, x.TotalRecipients)
	require.Equal(t, 700, x.DeliveryStats["unknown"])
	require.Equal(t, cr.CanceledRequests, x.DeliveryStats["canceled"])
	// Each canceled request has its notification.canceled event (webhooks).
	ctx := context.Background()
	var events int
	require.NoError(t, env.Daemon.DB.View(ctx, func(tx notify.Tx) error {
		c := tx.(interface{ Conn() sqlstore.Conn }).Conn()
		return c.QueryRow(ctx, `SELECT COUNT(*) FROM events e JOIN notification_requests r ON r.id = e.request_id
			WHERE r.campaign_id = ? AND e.type = ?`, x.ID, notify.EventCanceled).Scan(&events)
	}))
	require.Equal(t, cr.CanceledRequests, events)
	subDo(t, env.Owner, "DELETE", "/v1/newsletter/campaigns/"+c.ID, nil, http.StatusNoContent)
}

// TestCampaignFanoutResume kills the fan-out after its second batch: the
// retried job skips everyone already queued, so every subscriber gets
// exactly one mail and the counters add up.
func TestCampaignFanoutResume(t *testing.T) {
	t.Parallel()
	env := notifytest.StartDaemon(t)
	campEmailRoute(t, env)
	const n = 1200 // three batches: 500, 500, 200
	campImport(t, env, n, func(i int) map[string]string { return map[string]string{"n": fmt.Sprint(i)} })
	var runs atomic.Int32
	env.Daemon.Rooms.Newsletter.SetFanoutFault(func(_ string, batch int) error {
		if batch == 0 { // a run starts
			runs.Add(1)
		}
		if batch == 2 && runs.Load() == 1 {
			return errors.New("killed halfway")
		}
		return nil
	})
	campSendExactlyOnce(t, env, "s {{n}}", n)
	require.GreaterOrEqual(t, runs.Load(), int32(2), "the fan-out ran again")
	for _, m := range campMails(env) {
		var i int
		_, err := fmt.Sscanf(m.To, "user%d@example.com", &i)
		require.NoError(t, err)
		require.Equal(t, fmt.Sprintf("(광고) s %d", i), m.Subject)
	}
}

// TestCampaignFanoutContinues makes a fan-out run spend its budget (runs
// work 10 s, and each batch is held 2.5 s): the next run goes on after
// the last batch of the one before, and every subscriber still gets
// exactly one mail, with the counters adding up. (A shorter budget through
// a shorter job timeout would bound the delivery runs too, which the race
// detector on a loaded machine can outlast.)
func TestCampaignFanoutContinues(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("holds the fan-out 12 s")
	}
	env := notifytest.StartDaemon(t)
	campEmailRoute(t, env)
	const n = 3000 // six batches
	campImport(t, env, n, nil)
	var runs atomic.Int32
	env.Daemon.Rooms.Newsletter.SetFanoutFault(func(_ string, batch int) error {
		if batch == 0 { // a run starts
			runs.Add(1)
		} else {
			time.Sleep(2500 * time.Millisecond)
		}
		return nil
	})
	campSendExactlyOnce(t, env, "s", n)
	require.GreaterOrEqual(t, runs.Load(), int32(2), "a run spent its budget and another went on")
}

// campSendExactlyOnce sends a campaign with subject to the n imported
// subscribers and waits until it is sent: every subscriber got one mail,
// and the counters add up.
func campSendExactlyOnce(t *testing.T, env *notifytest.Env, subject string, n int) {
	t.Helper()
	c := campCreate(t, env.Owner, map[string]any{"name": "n", "channel": "email", "subject": subject, "contentText": "t"})
	campSendIt(t, env.Owner, c.ID, nil)
	// Delivery of every mail can be slow under the race detector.
	x := campWait(t, env.Owner, c.ID, 3*time.Minute, func(x campJSON) bool { return x.Status == "sent" })
	require.Equal(t, n, x.TotalRecipients)
	require.Equal(t, n, x.QueuedCount)
	require.Equal(t, 0, x.FailedCount)
	require.Equal(t, n, x.DeliveryStats["sent"])
	campRequireUnique(t, env, n)
}

func TestCampaignFanoutFails(t *testing.T) {
	t.Parallel()
	env := notifytest.StartDaemon(t)
	campEmailRoute(t, env)
	campImport(t, env, 600, nil)
	var calls atomic.Int32
	env.Daemon.Rooms.Newsletter.SetFanoutFault(func(_ string, n int) error {
		if n == 0 {
			calls.Add(1)
			return errors.New("database gone")
		}
		return nil
	})
	c := campCreate(t, env.Owner, map[string]any{"name": "n", "channel": "email", "subject": "s", "contentText": "t"})
	campSendIt(t, env.Owner, c.ID, nil)
	x := campWait(t, env.Owner, c.ID, 60*time.Second, func(x campJSON) bool { return x.Status == "failed" })
	require.Equal(t, int32(5), calls.Load(), "five attempts")
	require.Equal(t, 0, x.QueuedCount)
	campProblem(t, env.Owner, "POST", "/v1/newsletter/campaigns/"+c.ID+"/cancel", nil, http.StatusConflict, "")
	subDo(t, env.Owner, "DELETE", "/v1/newsletter/campaigns/"+c.ID, nil, http.StatusNoContent)
}

// TestCampaignHeadersEveryVendor checks that the List-Unsubscribe headers
// reach the vendor payload of each email kind (all three take headers),
// each mail with its own subscriber's link also when the adapter sends
// several mails in one batch call (mailx and mailz batch).
func TestCampaignHeadersEveryVendor(t *testing.T) {
	t.Parallel()
	for _, kind := range []string{"mailx_email", "maily_email", "mailz_email"} {
		t.Run(kind, func(t *testing.T) {
			t.Parallel()
			env := notifytest.StartDaemon(t)
			campKindRoute(t, env, kind)
			tokens := map[string]string{}
			for i := 0; i < 5; i++ {
				addr := fmt.Sprintf("h%d@example.com", i)
				x := subCreate(t, env.Owner, map[string]any{"channel": "email", "address": addr})
				tokens[addr] = unsubToken(t, env, env.Workspace, x.ID)
			}
			c := campCreate(t, env.Owner, map[string]any{"name": "n", "channel": "email", "subject": "s", "contentText": "t",
				"contentHtml": "<p>h</p>"})
			campSendIt(t, env.Owner, c.ID, nil)
			campWait(t, env.Owner, c.ID, 20*time.Second, func(x campJSON) bool { return x.Status == "sent" })
			// Through the simulator's control API, as an outside observer.
			resp, err := http.Get(env.SimURL + "/_sim/messages?kind=" + kind)
			require.NoError(t, err)
			defer resp.Body.Close()
			var out struct {
				Messages []simulator.Message `json:"messages"`
			}
			require.NoError(t, json.NewDecoder(resp.Body).Decode(&out))
			require.Len(t, out.Messages, len(tokens))
			for _, m := range out.Messages {
				token := tokens[m.To]
				require.NotEmpty(t, token, m.To)
				require.Equal(t, "<"+env.Daemon.URL()+"/v1/newsletter/unsubscribe/one-click?token="+token+">", m.Headers["List-Unsubscribe"])
				require.Equal(t, "List-Unsubscribe=One-Click", m.Headers["List-Unsubscribe-Post"])
				require.Contains(t, m.HTML, "/v1/newsletter/unsubscribe?token="+token)
				require.Contains(t, m.Text, "/v1/newsletter/unsubscribe?token="+token)
				require.Equal(t, "(광고) s", m.Subject)
			}
		})
	}
}

// TestCampaignCancelDuringDispatch: a cancel while a dispatch holds one
// of the campaign's requests answers 200 (SPEC: cancel in sending). The
// dispatch locks a request and then its job; a cancel that locked the
// jobs first deadlocked against it on PostgreSQL and answered 500.
func TestCampaignCancelDuringDispatch(t *testing.T) {
	t.Parallel()
	env := notifytest.StartDaemon(t)
	campEmailRoute(t, env)
	for i := 0; i < 3; i++ {
		subCreate(t, env.Owner, map[string]any{"channel": "email", "address": fmt.Sprintf("d%d@example.com", i)})
	}
	// A slow vendor keeps the requests queued or processing.
	resp, err := http.Post(env.SimURL+"/_sim/faults", "application/json",
		strings.NewReader(`{"kind":"mailx_email","latencyMs":5000,"count":100000}`))
	require.NoError(t, err)
	resp.Body.Close()
	c := campCreate(t, env.Owner, map[string]any{"name": "n", "channel": "email", "subject": "s", "contentText": "t"})
	campSendIt(t, env.Owner, c.ID, nil)
	campWait(t, env.Owner, c.ID, 20*time.Second, func(x campJSON) bool { return x.QueuedCount == 3 })

	ctx := context.Background()
	var rid string
	require.NoError(t, env.Daemon.DB.View(ctx, func(tx notify.Tx) error {
		conn := tx.(interface{ Conn() sqlstore.Conn }).Conn()
		return conn.QueryRow(ctx, `SELECT id FROM notification_requests WHERE campaign_id = ? AND status IN ('queued', 'processing')
			ORDER BY id LIMIT 1`, c.ID).Scan(&rid)
	}))

	// A dispatch-like transaction: the request's lock, then its job's.
	locked, proceed, dispatched := make(chan struct{}), make(chan struct{}), make(chan error, 1)
	go func() {
		dispatched <- env.Daemon.DB.Update(ctx, func(tx notify.Tx) error {
			if _, err := tx.LockRequest(ctx, env.Workspace, rid); err != nil {
				return err
			}
			close(locked)
			<-proceed
			j, err := tx.FindJobByRequest(ctx, env.Workspace, rid)
			if err != nil {
				return err
			}
			return tx.UpdateJob(ctx, j)
		})
	}()
	<-locked
	canceled := make(chan *client.Response, 1)
	go func() {
		r, err := env.Owner.Dashboard(ctx, "POST", "/v1/newsletter/campaigns/"+c.ID+"/cancel", nil)
		if err != nil {
			r = &client.Response{Body: []byte(err.Error())}
		}
		canceled <- r
	}()
	time.Sleep(500 * time.Millisecond) // the cancel reaches the request's lock
	close(proceed)
	require.NoError(t, <-dispatched)
	r := <-canceled
	require.Equal(t, http.StatusOK, r.Status, string(r.Body))
	x := campGet(t, env.Owner, c.ID)
	require.Equal(t, "canceled", x.Status)
	var cr struct {
		CanceledRequests int `json:"canceledRequests"`
	}
	require.NoError(t, r.Decode(&cr))
	require.Equal(t, cr.CanceledRequests, x.DeliveryStats["canceled"])
	require.NoError(t, env.Daemon.DB.View(ctx, func(tx notify.Tx) error {
		j, err := tx.FindJobByRequest(ctx, env.Workspace, rid)
		require.NoError(t, err)
		require.Equal(t, notify.JobCanceled, j.Status, "the canceled request's job is canceled")
		return nil
	}))
}

// TestCampaignSendDuringCancel: a send that meets a cancel in progress
// waits for it and answers 409 (the campaign is canceled), never 500. A
// send that locked the old fan-out job before the campaign deadlocked on
// PostgreSQL against the cancel, which locks the campaign first.
func TestCampaignSendDuringCancel(t *testing.T) {
	t.Parallel()
	env := notifytest.StartDaemon(t)
	subCreate(t, env.Owner, map[string]any{"channel": "email", "address": "a@example.com"})
	c := campCreate(t, env.Owner, map[string]any{"name": "n", "channel": "email", "subject": "s", "contentText": "t"})
	s := campSendIt(t, env.Owner, c.ID, map[string]any{"scheduledAt": time.Now().Add(time.Hour).UTC().Format(time.RFC3339)})
	require.Equal(t, "scheduled", s.Status)
	var job int64
	_, err := fmt.Sscan(*s.FanoutJobID, &job)
	require.NoError(t, err)

	// A cancel-like transaction: the campaign's lock, then its fan-out job.
	ctx := context.Background()
	locked, proceed, done := make(chan struct{}), make(chan struct{}), make(chan error, 1)
	go func() {
		done <- env.Daemon.DB.Update(ctx, func(tx notify.Tx) error {
			ok, err := tx.MoveCampaign(ctx, env.Workspace, c.ID, []notify.CampaignStatus{"scheduled"}, "canceled", time.Now())
			if err != nil || !ok {
				return fmt.Errorf("move: %v %v", ok, err)
			}
			close(locked)
			<-proceed
			return tx.CancelScheduledWork(ctx, job)
		})
	}()
	<-locked
	sent := make(chan *client.Response, 1)
	go func() {
		r, err := env.Owner.Dashboard(ctx, "POST", "/v1/newsletter/campaigns/"+c.ID+"/send",
			map[string]any{"scheduledAt": time.Now().Add(2 * time.Hour).UTC().Format(time.RFC3339)})
		if err != nil {
			r = &client.Response{Body: []byte(err.Error())}
		}
		sent <- r
	}()
	time.Sleep(500 * time.Millisecond) // the send reaches the campaign's lock
	close(proceed)
	require.NoError(t, <-done)
	r := <-sent
	require.Equal(t, http.StatusConflict, r.Status, string(r.Body))
	require.Equal(t, "canceled", campGet(t, env.Owner, c.ID).Status)
}

// TestCampaignEditDuringSend: an edit or delete of a draft that a send is
// moving on answers 409 once the send commits; it used to write the
// draft it had read over the sending campaign (or delete it).
func TestCampaignEditDuringSend(t *testing.T) {
	t.Parallel()
	env := notifytest.StartDaemon(t)
	ctx := context.Background()
	for _, op := range []struct {
		method string
		body   any
	}{{"PATCH", map[string]any{"name": "renamed"}}, {"DELETE", nil}} {
		c := campCreate(t, env.Owner, map[string]any{"name": "n", "channel": "email", "subject": "s", "contentText": "t"})
		// A send-like transaction holds the draft's row and moves it on.
		locked, proceed, done := make(chan struct{}), make(chan struct{}), make(chan error, 1)
		go func() {
			done <- env.Daemon.DB.Update(ctx, func(tx notify.Tx) error {
				ok, err := tx.MoveCampaign(ctx, env.Workspace, c.ID, []notify.CampaignStatus{"draft"}, "sending", time.Now())
				if err != nil || !ok {
					return fmt.Errorf("move: %v %v", ok, err)
				}
				close(locked)
				<-proceed
				return nil
			})
		}()
		<-locked
		edited := make(chan *client.Response, 1)
		go func() {
			r, err := env.Owner.Dashboard(ctx, op.method, "/v1/newsletter/campaigns/"+c.ID, op.body)
			if err != nil {
				r = &client.Response{Body: []byte(err.Error())}
			}
			edited <- r
		}()
		time.Sleep(500 * time.Millisecond) // the edit reaches the campaign's lock
		close(proceed)
		require.NoError(t, <-done)
		r := <-edited
		require.Equal(t, http.StatusConflict, r.Status, "%s: %s", op.method, r.Body)
		x := campGet(t, env.Owner, c.ID)
		require.Equal(t, "sending", x.Status, op.method)
		require.Equal(t, "n", x.Name, op.method)
	}
}

// TestCampaignDetailDuringCancel: a detail lookup that finds a finished
// campaign due to become sent while a cancel of it commits leaves it
// canceled; it used to write sent over the cancel.
func TestCampaignDetailDuringCancel(t *testing.T) {
	t.Parallel()
	env := notifytest.StartDaemon(t)
	campEmailRoute(t, env)
	subCreate(t, env.Owner, map[string]any{"channel": "email", "address": "a@example.com"})
	c := campCreate(t, env.Owner, map[string]any{"name": "n", "channel": "email", "subject": "s", "contentText": "t"})
	campSendIt(t, env.Owner, c.ID, nil)
	// Wait, without a detail lookup (which would move it), until the
	// fan-out is done and the mail is sent.
	ctx := context.Background()
	deadline := time.Now().Add(20 * time.Second)
	for {
		var done bool
		require.NoError(t, env.Daemon.DB.View(ctx, func(tx notify.Tx) error {
			conn := tx.(interface{ Conn() sqlstore.Conn }).Conn()
			var n int
			err := conn.QueryRow(ctx, `SELECT COUNT(*) FROM campaigns c JOIN notification_requests r ON r.campaign_id = c.id
				WHERE c.id = ? AND c.fanout_done_at IS NOT NULL AND r.status = 'sent'`, c.ID).Scan(&n)
			done = n == 1
			return err
		}))
		if done {
			break
		}
		require.True(t, time.Now().Before(deadline), "campaign not delivered")
		time.Sleep(50 * time.Millisecond)
	}
	require.Equal(t, "sending", campList(t, env.Owner, "").byID(c.ID).Status)

	// A cancel-like transaction holds the campaign while the detail runs.
	locked, proceed, done := make(chan struct{}), make(chan struct{}), make(chan error, 1)
	go func() {
		done <- env.Daemon.DB.Update(ctx, func(tx notify.Tx) error {
			ok, err := tx.MoveCampaign(ctx, env.Workspace, c.ID, []notify.CampaignStatus{"sending"}, "canceled", time.Now())
			if err != nil || !ok {
				return fmt.Errorf("move: %v %v", ok, err)
			}
			close(locked)
			<-proceed
			return nil
		})
	}()
	<-locked
	detail := make(chan *client.Response, 1)
	go func() {
		r, err := env.Owner.Dashboard(ctx, "GET", "/v1/newsletter/campaigns/"+c.ID, nil)
		if err != nil {
			r = &client.Response{Body: []byte(err.Error())}
		}
		detail <- r
	}()
	time.Sleep(500 * time.Millisecond) // the lookup reaches the campaign's lock
	close(proceed)
	require.NoError(t, <-done)
	r := <-detail
	require.Equal(t, http.StatusOK, r.Status, string(r.Body))
	require.Equal(t, "canceled", campGet(t, env.Owner, c.ID).Status, "the cancel stands")
}

// TestCampaignCancelDuringBatchedDispatch: the dispatch records results of
// several requests in one shared transaction (group commit), each locking
// its request, in arrival order; a cancel locking the campaign's requests
// in its own scan order can deadlock against it whatever order it uses.
// PostgreSQL then aborts the cancel, which answered 500; it is now
// retried and answers 200 with every request canceled.
func TestCampaignCancelDuringBatchedDispatch(t *testing.T) {
	t.Parallel()
	// No workers: the requests stay queued and in insertion order.
	env := notifytest.StartDaemon(t, notifytest.WithRole("api"))
	c := campCreate(t, env.Owner, map[string]any{"name": "n", "channel": "email", "subject": "s", "contentText": "t"})
	ctx := context.Background()
	var ids []string
	require.NoError(t, env.Daemon.DB.Update(ctx, func(tx notify.Tx) error {
		now := time.Now()
		var accs []*notify.Accept
		for i := 0; i < 4; i++ {
			r := &notify.Request{ID: uuid.NewString(), WorkspaceID: env.Workspace,
				Source: notify.SourceCampaign, Channel: notify.ChannelEmail, Status: notify.StatusQueued, CampaignID: c.ID,
				RecipientAddress: fmt.Sprintf("b%d@example.com", i), Title: "s", Text: "t", RequestedAt: now, UpdatedAt: now}
			ids = append(ids, r.ID)
			accs = append(accs, &notify.Accept{Request: r, MaxAttempts: 3})
		}
		if err := tx.AcceptRequests(ctx, accs, now); err != nil {
			return err
		}
		ok, err := tx.MoveCampaign(ctx, env.Workspace, c.ID, []notify.CampaignStatus{"draft"}, "sending", now)
		if err == nil && !ok {
			err = errors.New("not moved")
		}
		return err
	}))

	// A batched dispatch transaction: the last request's lock, then (once
	// the cancel waits for it) the first one's.
	locked, proceed, done := make(chan struct{}), make(chan struct{}), make(chan error, 1)
	go func() {
		done <- env.Daemon.DB.Update(ctx, func(tx notify.Tx) error {
			if _, err := tx.LockRequest(ctx, env.Workspace, ids[len(ids)-1]); err != nil {
				return err
			}
			close(locked)
			<-proceed
			_, err := tx.LockRequest(ctx, env.Workspace, ids[0])
			return err
		})
	}()
	<-locked
	canceled := make(chan *client.Response, 1)
	go func() {
		r, err := env.Owner.Dashboard(ctx, "POST", "/v1/newsletter/campaigns/"+c.ID+"/cancel", nil)
		if err != nil {
			r = &client.Response{Body: []byte(err.Error())}
		}
		canceled <- r
	}()
	time.Sleep(500 * time.Millisecond) // the cancel holds the first requests and waits for the last
	close(proceed)
	require.NoError(t, <-done)
	r := <-canceled
	require.Equal(t, http.StatusOK, r.Status, string(r.Body))
	var cr struct {
		CanceledRequests int `json:"canceledRequests"`
	}
	require.NoError(t, r.Decode(&cr))
	require.Equal(t, len(ids), cr.CanceledRequests)
	x := campGet(t, env.Owner, c.ID)
	require.Equal(t, "canceled", x.Status)
	require.Equal(t, len(ids), x.DeliveryStats["canceled"])
}
