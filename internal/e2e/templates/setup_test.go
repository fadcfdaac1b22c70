package templates_test

import (
	"context"
	"net/http"
	"strconv"
	"testing"

	"github.com/notifyd/notifyd/client"
	"github.com/notifyd/notifyd/internal/notifytest"
)

var ctx = context.Background()

type bundle struct {
	env *notifytest.Env
	key *client.Client
}

func setup(t *testing.T) *bundle {
	t.Helper()
	env := notifytest.StartDaemon(t)
	return &bundle{env: env, key: env.SendKey(t)}
}

type versionOut struct {
	Version     int     `json:"version"`
	Title       *string `json:"title"`
	Text        string  `json:"text"`
	HTML        *string `json:"html"`
	PublishedAt *string `json:"publishedAt"`
	CreatedAt   string  `json:"createdAt"`
	Locale      *string `json:"locale"`
	LayoutID    *string `json:"layoutId"`
}

type templateOut struct {
	ID                     string        `json:"id"`
	Code                   string        `json:"code"`
	Channel                string        `json:"channel"`
	Name                   string        `json:"name"`
	Status                 string        `json:"status"`
	ReviewStatus           *string       `json:"reviewStatus"`
	ProviderAccountID      *string       `json:"providerAccountId"`
	VendorTemplateID       *string       `json:"vendorTemplateId"`
	SenderProfileKey       *string       `json:"senderProfileKey"`
	LatestPublishedVersion *int          `json:"latestPublishedVersion"`
	CreatedAt              string        `json:"createdAt"`
	UpdatedAt              string        `json:"updatedAt"`
	Versions               *[]versionOut `json:"versions"`
}

func decodeTemplate(t *testing.T, r *client.Response) templateOut {
	t.Helper()
	return notifytest.Field[templateOut](t, r, "template")
}

func decodeVersion(t *testing.T, r *client.Response) versionOut {
	t.Helper()
	return notifytest.Field[versionOut](t, r, "version")
}

// createTemplate creates a template as c from body.
func createTemplate(t *testing.T, c *client.Client, body map[string]any) templateOut {
	t.Helper()
	return decodeTemplate(t, notifytest.DashboardCall(t, c, "POST", "/v1/templates", body, http.StatusCreated))
}

func getTemplate(t *testing.T, c *client.Client, id string) templateOut {
	t.Helper()
	return decodeTemplate(t, notifytest.DashboardCall(t, c, "GET", "/v1/templates/"+id, nil, http.StatusOK))
}

func addVersion(t *testing.T, c *client.Client, id string, body map[string]any) versionOut {
	t.Helper()
	return decodeVersion(t, notifytest.DashboardCall(t, c, "POST", "/v1/templates/"+id+"/versions", body, http.StatusCreated))
}

func publish(t *testing.T, c *client.Client, id string, version int) versionOut {
	t.Helper()
	return decodeVersion(t, notifytest.DashboardCall(t, c, "POST", "/v1/templates/"+id+"/versions/"+strconv.Itoa(version)+"/publish", nil, http.StatusOK))
}

func review(t *testing.T, c *client.Client, id, status string) templateOut {
	t.Helper()
	return decodeTemplate(t, notifytest.DashboardCall(t, c, "PUT", "/v1/templates/"+id+"/review-status", map[string]any{"reviewStatus": status}, http.StatusOK))
}

// published creates a template with one published version of text.
func published(t *testing.T, c *client.Client, body map[string]any, text string) templateOut {
	t.Helper()
	tp := createTemplate(t, c, body)
	addVersion(t, c, tp.ID, map[string]any{"text": text})
	publish(t, c, tp.ID, 1)
	return tp
}

// sendProblem posts a notification with key that must fail with status.
func sendProblem(t *testing.T, key *client.Client, body map[string]any, status int) client.Problem {
	t.Helper()
	return notifytest.RequireProblem(t, notifytest.Signed(t, key, "POST", "/v1/notifications", body), status, "")
}

func sms(to string, content map[string]any) map[string]any {
	return map[string]any{"channel": "sms", "recipient": map[string]any{"address": to}, "content": content}
}
