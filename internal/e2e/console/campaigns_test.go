package console_test

import (
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/notifyd/notifyd/internal/notifytest"
)

// mailKind is the simulator's email vendor the campaign tests route to.
const mailKind = "mailx_email"

// newsletterEnv is a daemon with an email route to the simulator.
func newsletterEnv(t *testing.T) *notifytest.Env {
	t.Helper()
	env := notifytest.StartDaemon(t)
	notifytest.RegisterRoute(t, env.Owner, "email", mailKind, env.MailConfig(mailKind, "news@example.com"))
	return env
}

type progress struct {
	Status          string         `json:"status"`
	TotalRecipients int            `json:"totalRecipients"`
	AudienceSize    int            `json:"audienceSize"`
	DeliveryStats   map[string]int `json:"deliveryStats"`
	Terminal        bool           `json:"terminal"`
}

// waitProgress polls the campaign page's progress route until the status
// is want.
func waitProgress(t *testing.T, c *notifytest.Console, id, want string) progress {
	t.Helper()
	var p progress
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		resp, body := c.Get(t, "/newsletter/campaigns/"+id+"/progress")
		require.Equal(t, http.StatusOK, resp.StatusCode, body)
		require.Equal(t, "application/json", resp.Header.Get("Content-Type"))
		require.NoError(t, json.Unmarshal([]byte(body), &p))
		if p.Status == want {
			return p
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatalf("campaign %s stayed %q, want %q", id, p.Status, want)
	return p
}

// createCampaign submits the console's create form and answers the new
// campaign's id (from the redirect to its page).
func createCampaign(t *testing.T, c *notifytest.Console, name, audience string) string {
	t.Helper()
	resp, body := c.Post(t, "/newsletter/campaigns", url.Values{"name": {name}, "subject": {"Spring news"},
		"contentText": {"Hello from the console."}, "audience": {audience}, "isAdvertisement": {"1"}, "includeUnsubscribe": {"1"}})
	require.Equal(t, http.StatusSeeOther, resp.StatusCode, body)
	loc := resp.Header.Get("Location")
	require.True(t, strings.HasPrefix(loc, "/newsletter/campaigns/"), loc)
	return strings.TrimPrefix(loc, "/newsletter/campaigns/")
}

// TestConsoleCampaigns: a draft created in the console shows its audience
// count (edited filter, new count), sends, and its progress route reaches
// sent with the delivery stats; terminal actions are refused with the
// service's 409 on the page; a viewer sees no write control and a forged
// send from the viewer's session is refused; another workspace's
// campaign is 404; a campaign name with a script shows as text.
func TestConsoleCampaigns(t *testing.T) {
	t.Parallel()
	env := newsletterEnv(t)
	r, err := env.Owner.Dashboard(ctx, "POST", "/v1/newsletter/subscribers/import", map[string]any{"subscribers": []map[string]any{
		{"channel": "email", "address": "ann@example.com", "attributes": map[string]string{"plan": "pro"}},
		{"channel": "email", "address": "bob@example.com", "attributes": map[string]string{"plan": "pro"}},
		{"channel": "email", "address": "cid@example.com", "attributes": map[string]string{"plan": "free"}}}})
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, r.Status, string(r.Body))
	c := env.ConsoleLogin(t, env.Email, env.Password)

	_, body := c.Get(t, "/newsletter")
	require.Contains(t, body, `id="create-form"`)
	resp, body := c.Post(t, "/newsletter/campaigns", url.Values{"name": {"x"}, "contentText": {"t"}, "audience": {"plan"}})
	require.Equal(t, http.StatusBadRequest, resp.StatusCode)
	require.Contains(t, body, "audience line 1 must be key=value")
	resp, body = c.Post(t, "/newsletter/campaigns", url.Values{"name": {"x"}, "contentText": {"t"}})
	require.Equal(t, http.StatusBadRequest, resp.StatusCode)
	require.Contains(t, body, "subject is required for email campaigns")

	const evil = `<script>alert(1)</script>`
	id := createCampaign(t, c, "Spring "+evil, "plan=free")
	resp, body = c.Get(t, "/newsletter/campaigns/"+id)
	require.Equal(t, http.StatusOK, resp.StatusCode)
	require.Contains(t, body, "Draft created")
	require.Contains(t, body, `id="audience-size">1<`, "the preview count of plan=free")
	require.NotContains(t, body, evil)
	require.Contains(t, body, "&lt;script&gt;alert(1)&lt;/script&gt;")
	require.NotContains(t, body, "data-progress-url", "a draft is not polled")
	// Edit the filter: the page counts the new audience.
	resp, _ = c.Post(t, "/newsletter/campaigns/"+id, url.Values{"name": {"Spring " + evil}, "subject": {"Spring news"},
		"contentText": {"Hello from the console."}, "audience": {"plan=pro"}, "isAdvertisement": {"1"}, "includeUnsubscribe": {"1"}})
	require.Equal(t, http.StatusSeeOther, resp.StatusCode)
	_, body = c.Get(t, "/newsletter/campaigns/"+id)
	require.Contains(t, body, `id="audience-size">2<`)
	require.Contains(t, body, `id="send"`)
	_, body = c.Get(t, "/newsletter")
	require.Contains(t, body, `data-campaign-id="`+id+`"`)
	require.NotContains(t, body, evil)

	viewer := env.ConsoleMember(t, "viewer")
	resp, body = viewer.Get(t, "/newsletter/campaigns/"+id)
	require.Equal(t, http.StatusOK, resp.StatusCode)
	require.NotContains(t, body, `id="send"`)
	require.NotContains(t, body, `id="edit-form"`)
	require.NotContains(t, body, `method="post" action="/newsletter`)
	_, body = viewer.Get(t, "/newsletter")
	require.NotContains(t, body, `id="create-form"`)
	resp, body = viewer.Post(t, "/newsletter/campaigns/"+id+"/send", nil)
	require.Equal(t, http.StatusForbidden, resp.StatusCode, "a viewer's forged send with a valid CSRF token")
	require.Contains(t, body, "Role viewer is not allowed")

	env.NewWorkspace(t, "Other", "other-camp@example.com")
	other := env.ConsoleLogin(t, "other-camp@example.com", "correct horse battery")
	for _, p := range []string{"/newsletter/campaigns/" + id, "/newsletter/campaigns/" + id + "/progress"} {
		resp, _ = other.Get(t, p)
		require.Equal(t, http.StatusNotFound, resp.StatusCode, "another workspace's campaign: %s", p)
	}
	resp, _ = other.Post(t, "/newsletter/campaigns/"+id+"/send", nil)
	require.Equal(t, http.StatusNotFound, resp.StatusCode)
	p := waitProgress(t, c, id, "draft")
	require.Equal(t, 2, p.AudienceSize, "the forged sends changed nothing")

	c.Get(t, "/newsletter/campaigns/"+id)
	resp, _ = c.Post(t, "/newsletter/campaigns/"+id+"/send", nil)
	require.Equal(t, http.StatusSeeOther, resp.StatusCode)
	_, body = c.Get(t, "/newsletter/campaigns/"+id)
	require.Contains(t, body, "Sending to 2 subscribers.")
	p = waitProgress(t, c, id, "sent")
	require.Equal(t, 2, p.TotalRecipients)
	require.Equal(t, 2, p.DeliveryStats["sent"])
	require.Equal(t, 2, p.DeliveryStats["done"])
	require.True(t, p.Terminal)
	require.Len(t, env.Sim.Messages(mailKind, "ann@example.com", 0), 1)
	require.Empty(t, env.Sim.Messages(mailKind, "cid@example.com", 0), "plan=free is not in the audience")

	_, body = c.Get(t, "/newsletter/campaigns/"+id)
	require.Contains(t, body, `id="status" class="status-sent">sent<`)
	require.Contains(t, body, `id="stat-sent">2<`)
	require.NotContains(t, body, "data-progress-url", "a sent campaign is not polled")
	require.NotContains(t, body, `id="cancel"`)
	require.NotContains(t, body, `id="delete"`, "a sent campaign cannot be deleted")
	resp, body = c.Post(t, "/newsletter/campaigns/"+id+"/delete", nil)
	require.Equal(t, http.StatusConflict, resp.StatusCode)
	require.Contains(t, body, "only a draft, canceled or failed campaign can be deleted")
	resp, body = c.Post(t, "/newsletter/campaigns/"+id+"/cancel", nil)
	require.Equal(t, http.StatusConflict, resp.StatusCode)
	require.Contains(t, body, "only a scheduled, sending or paused campaign can be canceled")
	resp, body = c.Post(t, "/newsletter/campaigns/"+id+"/pause", nil)
	require.Equal(t, http.StatusConflict, resp.StatusCode)
	require.Contains(t, body, "only a sending campaign can be paused")

	// Scheduling, then canceling: the schedule shows, the cancel is audited.
	id2 := createCampaign(t, c, "Later", "")
	_, body = c.Get(t, "/newsletter/campaigns/"+id2)
	require.Contains(t, body, `id="audience-size">3<`, "no filter: every subscriber")
	at := time.Now().UTC().Add(48 * time.Hour).Format("2006-01-02T15:04")
	resp, _ = c.Post(t, "/newsletter/campaigns/"+id2+"/send", url.Values{"scheduledAt": {at}})
	require.Equal(t, http.StatusSeeOther, resp.StatusCode)
	_, body = c.Get(t, "/newsletter/campaigns/"+id2)
	require.Contains(t, body, "Scheduled for")
	require.Contains(t, body, `class="status-scheduled">scheduled<`)
	require.Contains(t, body, `id="cancel"`)
	resp, _ = c.Post(t, "/newsletter/campaigns/"+id2+"/cancel", nil)
	require.Equal(t, http.StatusSeeOther, resp.StatusCode)
	_, body = c.Get(t, "/newsletter?status=canceled")
	require.Contains(t, body, `data-campaign-id="`+id2+`"`)
	require.NotContains(t, body, `data-campaign-id="`+id+`"`)
	_, body = c.Get(t, "/newsletter/campaigns/"+id2)
	require.Contains(t, body, `id="delete"`)
	resp, _ = c.Post(t, "/newsletter/campaigns/"+id2+"/delete", nil)
	require.Equal(t, http.StatusSeeOther, resp.StatusCode)
	resp, _ = c.Get(t, "/newsletter/campaigns/"+id2)
	require.Equal(t, http.StatusNotFound, resp.StatusCode)
	r, err = env.Owner.Dashboard(ctx, "GET", "/v1/audit-logs?targetType=campaign", nil)
	require.NoError(t, err)
	for _, action := range []string{"campaign.create", "campaign.update", "campaign.send", "campaign.cancel", "campaign.delete"} {
		require.Contains(t, string(r.Body), `"`+action+`"`)
	}
}
