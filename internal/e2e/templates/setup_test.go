package templates_test

import (
	"context"
	"encoding/json"
	"net/http"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

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
	key, _, err := env.Owner.CreateAPIKey(ctx, "test", "notifications:send", "notifications:read")
	require.NoError(t, err)
	return &bundle{env: env, key: key}
}

// call sends a dashboard request as c and requires the status.
func call(t *testing.T, c *client.Client, method, path string, body any, status int) *client.Response {
	t.Helper()
	r, err := c.Dashboard(ctx, method, path, body)
	require.NoError(t, err)
	require.Equal(t, status, r.Status, "%s %s: %s", method, path, string(r.Body))
	return r
}

// problem sends a dashboard request as c, requires the error status and
// returns the problem.
func problem(t *testing.T, c *client.Client, method, path string, body any, status int) client.Problem {
	t.Helper()
	p := call(t, c, method, path, body, status).Problem()
	require.Equal(t, status, p.Status)
	return p
}

// provider registers a provider of kind against the simulator.
func (b *bundle) provider(t *testing.T, kind, name string, cfg map[string]string) string {
	t.Helper()
	c := map[string]string{"base_url": b.env.SimURL}
	for k, v := range cfg {
		c[k] = v
	}
	r := call(t, b.env.Owner, "POST", "/v1/providers", map[string]any{"providerKind": kind, "displayName": name, "configJson": c}, http.StatusCreated)
	var out struct {
		Provider struct {
			ID string `json:"id"`
		} `json:"provider"`
	}
	require.NoError(t, r.Decode(&out))
	return out.Provider.ID
}

func smsConfig() map[string]string {
	return map[string]string{"vendora_user_id": "u", "vendora_api_key": "k", "vendora_sender": "0212345678"}
}

func msgrConfig() map[string]string {
	return map[string]string{"vendorb_api_key": "k", "vendorb_api_secret": "s", "vendorb_sender": "0212345678"}
}

type route struct {
	Channel           string `json:"channel"`
	ProviderAccountID string `json:"providerAccountId"`
	Priority          int    `json:"priority"`
}

func (b *bundle) routes(t *testing.T, rs ...route) {
	t.Helper()
	call(t, b.env.Owner, "PUT", "/v1/routes", map[string]any{"routes": rs}, http.StatusOK)
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

// named decodes the member name of the response body's object.
func named[T any](t *testing.T, r *client.Response, name string) T {
	t.Helper()
	var out map[string]json.RawMessage
	require.NoError(t, r.Decode(&out))
	var v T
	require.Contains(t, out, name, string(r.Body))
	require.NoError(t, json.Unmarshal(out[name], &v))
	return v
}

func decodeTemplate(t *testing.T, r *client.Response) templateOut {
	t.Helper()
	return named[templateOut](t, r, "template")
}

func decodeVersion(t *testing.T, r *client.Response) versionOut {
	t.Helper()
	return named[versionOut](t, r, "version")
}

// createTemplate creates a template as c from body.
func createTemplate(t *testing.T, c *client.Client, body map[string]any) templateOut {
	t.Helper()
	return decodeTemplate(t, call(t, c, "POST", "/v1/templates", body, http.StatusCreated))
}

func getTemplate(t *testing.T, c *client.Client, id string) templateOut {
	t.Helper()
	return decodeTemplate(t, call(t, c, "GET", "/v1/templates/"+id, nil, http.StatusOK))
}

func addVersion(t *testing.T, c *client.Client, id string, body map[string]any) versionOut {
	t.Helper()
	return decodeVersion(t, call(t, c, "POST", "/v1/templates/"+id+"/versions", body, http.StatusCreated))
}

func publish(t *testing.T, c *client.Client, id string, version int) versionOut {
	t.Helper()
	return decodeVersion(t, call(t, c, "POST", "/v1/templates/"+id+"/versions/"+strconv.Itoa(version)+"/publish", nil, http.StatusOK))
}

func review(t *testing.T, c *client.Client, id, status string) templateOut {
	t.Helper()
	return decodeTemplate(t, call(t, c, "PUT", "/v1/templates/"+id+"/review-status", map[string]any{"reviewStatus": status}, http.StatusOK))
}

// published creates a template with one published version of text.
func published(t *testing.T, c *client.Client, body map[string]any, text string) templateOut {
	t.Helper()
	tp := createTemplate(t, c, body)
	addVersion(t, c, tp.ID, map[string]any{"text": text})
	publish(t, c, tp.ID, 1)
	return tp
}

type sendOut struct {
	Status    string `json:"status"`
	RequestID string `json:"requestId"`
}

// send posts a notification with key, requiring 201.
func send(t *testing.T, key *client.Client, body map[string]any) sendOut {
	t.Helper()
	r, err := key.Signed(ctx, "POST", "/v1/notifications", body)
	require.NoError(t, err)
	require.Equal(t, http.StatusCreated, r.Status, string(r.Body))
	var out sendOut
	require.NoError(t, r.Data(&out))
	return out
}

// sendProblem posts a notification with key, requiring status.
func sendProblem(t *testing.T, key *client.Client, body map[string]any, status int) client.Problem {
	t.Helper()
	r, err := key.Signed(ctx, "POST", "/v1/notifications", body)
	require.NoError(t, err)
	require.Equal(t, status, r.Status, string(r.Body))
	return r.Problem()
}

type requestOut struct {
	Status                    string  `json:"status"`
	SelectedProviderAccountID *string `json:"selectedProviderAccountId"`
	SelectedProviderMessageID *string `json:"selectedProviderMessageId"`
	FinalErrorCode            *string `json:"finalErrorCode"`
}

// wait polls the status lookup until the request is terminal.
func wait(t *testing.T, key *client.Client, id string) requestOut {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		r, err := key.Signed(ctx, "GET", "/v1/notifications/"+id, nil)
		require.NoError(t, err)
		require.Equal(t, http.StatusOK, r.Status, string(r.Body))
		var out requestOut
		require.NoError(t, r.Data(&out))
		if out.Status == "sent" || out.Status == "failed" || out.Status == "canceled" {
			return out
		}
		require.True(t, time.Now().Before(deadline), "request %s still %s", id, out.Status)
		time.Sleep(20 * time.Millisecond)
	}
}

// member adds a member with role to the owner's workspace and returns a
// client logged in as them.
func (b *bundle) member(t *testing.T, email, role string) *client.Client {
	t.Helper()
	const pw = "correct horse battery staple"
	call(t, b.env.Owner, "POST", "/v1/workspace/members", map[string]any{"email": email, "role": role, "password": pw}, http.StatusCreated)
	c := client.New(b.env.Daemon.URL())
	require.NoError(t, c.Login(ctx, email, pw))
	return c
}

func sms(to string, content map[string]any) map[string]any {
	return map[string]any{"channel": "sms", "recipient": map[string]any{"address": to}, "content": content}
}
