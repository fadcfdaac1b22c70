package newsletter_test

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/notifyd/notifyd/client"
	"github.com/notifyd/notifyd/internal/notifytest"
)

// Campaign preview (issue 21): the mail a subscriber with the sample
// attributes would get, advertisement prefix and unsubscribe footer
// included, rendered by the fan-out's own code.

type campPreviewJSON struct {
	Subject          string   `json:"subject"`
	Text             string   `json:"text"`
	HTML             *string  `json:"html"`
	MissingVariables []string `json:"missingVariables"`
}

func campPreview(t *testing.T, c *client.Client, id string, attrs map[string]string) campPreviewJSON {
	t.Helper()
	var out struct {
		Preview campPreviewJSON `json:"preview"`
	}
	require.NoError(t, subDo(t, c, "POST", "/v1/newsletter/campaigns/"+id+"/preview", map[string]any{"attributes": attrs}, http.StatusOK).Decode(&out))
	return out.Preview
}

func TestCampaignPreviewMatchesSend(t *testing.T) {
	t.Parallel()
	env := notifytest.StartDaemon(t)
	campEmailRoute(t, env)
	attrs := map[string]string{"이름": "김철수", "plan": "<pro>"}
	a := subCreate(t, env.Owner, map[string]any{"channel": "email", "address": "kim@example.com", "attributes": attrs})
	c := campCreate(t, env.Owner, map[string]any{"name": "Spring sale", "channel": "email", "subject": "{{이름}}님 특가",
		"contentText": "안녕하세요 {{이름}}님, plan {{plan}}.", "contentHtml": "<html><body><p>Hi {{이름}} <b>{{plan}}</b></p></body></html>"})

	// Missing attributes are listed and rendered empty; the footer link
	// carries a placeholder token.
	p := campPreview(t, env.Owner, c.ID, map[string]string{"이름": "김철수"})
	require.Equal(t, []string{"plan"}, p.MissingVariables)
	require.Equal(t, "(광고) 김철수님 특가", p.Subject)
	require.True(t, strings.HasPrefix(p.Text, "안녕하세요 김철수님, plan ."), p.Text)
	require.Contains(t, p.Text, env.Daemon.URL()+"/v1/newsletter/unsubscribe?token=preview")
	require.Contains(t, *p.HTML, `href="`+env.Daemon.URL()+`/v1/newsletter/unsubscribe?token=preview"`)

	// With the subscriber's attributes the preview is the delivered mail,
	// but for the subscriber's own token.
	p = campPreview(t, env.Owner, c.ID, attrs)
	require.Empty(t, p.MissingVariables)
	campSendIt(t, env.Owner, c.ID, nil)
	campWait(t, env.Owner, c.ID, 30*time.Second, func(x campJSON) bool { return x.Status == "sent" })
	ms := campMails(env)
	require.Len(t, ms, 1)
	token := "token=" + unsubToken(t, env, env.Workspace, a.ID)
	require.Equal(t, p.Subject, ms[0].Subject)
	require.Equal(t, strings.ReplaceAll(p.Text, "token=preview", token), ms[0].Text)
	require.Equal(t, strings.ReplaceAll(*p.HTML, "token=preview", token), ms[0].HTML)
	require.Contains(t, ms[0].HTML, "<b>&lt;pro&gt;</b>")

	// A non-advertisement without the footer: neither prefix nor footer.
	n := campCreate(t, env.Owner, map[string]any{"name": "Notice", "channel": "email", "subject": "Notice", "contentText": "Body",
		"isAdvertisement": false, "includeUnsubscribe": false})
	p = campPreview(t, env.Owner, n.ID, nil)
	require.Equal(t, "Notice", p.Subject)
	require.Equal(t, "Body", p.Text)
	require.Nil(t, p.HTML)

	// Every member may preview; bad bodies are 400; another workspace's
	// campaign is 404.
	viewer := env.Member(t, "viewer")
	require.Equal(t, "Notice", campPreview(t, viewer, n.ID, nil).Subject)
	for _, body := range []any{map[string]any{"attrs": map[string]string{}}, map[string]any{"attributes": map[string]any{"a": 1}}, []byte("{")} {
		r := subDo(t, env.Owner, "POST", "/v1/newsletter/campaigns/"+n.ID+"/preview", body, http.StatusBadRequest)
		require.Equal(t, "application/problem+json", r.Header.Get("Content-Type"))
		require.Equal(t, "SVC-40000", r.Problem().Code)
	}
	other, _ := env.NewWorkspace(t, "Other", "other@example.com")
	campProblem(t, other, "POST", "/v1/newsletter/campaigns/"+n.ID+"/preview", map[string]any{}, http.StatusNotFound, "Campaign not found")
	campProblem(t, env.Owner, "POST", "/v1/newsletter/campaigns/0190aaaa-0000-7000-8000-000000000000/preview", map[string]any{}, http.StatusNotFound, "Campaign not found")
	// Previews change nothing: the draft is still a draft.
	require.Equal(t, "draft", campGet(t, env.Owner, n.ID).Status)
}
