// Package bounces_test drives the suppression list and the bounce and
// complaint intake end to end: daemon, simulator and both backends.
package bounces_test

import (
	"context"
	"encoding/base64"
	"net/http"
	"net/http/httptest"
	"net/url"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/notifyd/notifyd/client"
	"github.com/notifyd/notifyd/internal/config"
	"github.com/notifyd/notifyd/internal/notifytest"
	"github.com/notifyd/notifyd/internal/simulator"
)

var ctx = context.Background()

// resendSecret is the Resend webhook signing secret the tests configure.
var resendSecret = "whsec_" + base64.StdEncoding.EncodeToString([]byte("resend webhook secret, 32 bytes!"))

type bundle struct {
	env *notifytest.Env
	key *client.Client
	// certBase is a trusted host (NOTIFYD_SNS_CERT_HOSTS) that serves the
	// simulator: the daemon's simulator address is only known after start.
	certBase string
}

func setup(t *testing.T) *bundle {
	t.Helper()
	var sim atomic.Pointer[simulator.Simulator]
	front := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if s := sim.Load(); s != nil {
			s.ServeHTTP(w, r)
			return
		}
		w.WriteHeader(http.StatusServiceUnavailable)
	}))
	t.Cleanup(front.Close)
	u, _ := url.Parse(front.URL)
	env := notifytest.StartDaemon(t, func(c *config.Config) { c.SNSCertHosts = []string{u.Host} })
	sim.Store(env.Sim)
	key, _, err := env.Owner.CreateAPIKey(ctx, "test", "notifications:send", "notifications:read")
	require.NoError(t, err)
	return &bundle{env: env, key: key, certBase: front.URL}
}

func emailConfig(kind string) map[string]string {
	switch kind {
	case "mailx_email":
		return map[string]string{"mailx_api_key": "re_test", "mailx_from_email": "from@example.com", "mailx_webhook_secret": resendSecret}
	case "maily_email":
		return map[string]string{"maily_access_key_id": "AKIATEST", "maily_secret_access_key": "secret", "maily_region": "us-east-1",
			"maily_from_email": "from@example.com"}
	default:
		return map[string]string{"mailz_api_key": "pm-token", "mailz_from_email": "from@example.com"}
	}
}

func (b *bundle) dash(t *testing.T, c *client.Client, method, path string, body any) *client.Response {
	t.Helper()
	r, err := c.Dashboard(ctx, method, path, body)
	require.NoError(t, err)
	return r
}

func (b *bundle) owner(t *testing.T, method, path string, body any) *client.Response {
	t.Helper()
	return b.dash(t, b.env.Owner, method, path, body)
}

// provider registers an email provider of kind on the simulator and routes
// email to it.
func (b *bundle) provider(t *testing.T, kind string) string {
	t.Helper()
	cfg := emailConfig(kind)
	cfg["base_url"] = b.env.SimURL
	r := b.owner(t, "POST", "/v1/providers", map[string]any{"providerKind": kind, "displayName": kind, "configJson": cfg})
	require.Equal(t, http.StatusCreated, r.Status, string(r.Body))
	var out struct {
		Provider struct {
			ID string `json:"id"`
		} `json:"provider"`
	}
	require.NoError(t, r.Decode(&out))
	r = b.owner(t, "PUT", "/v1/routes", map[string]any{"routes": []map[string]any{
		{"channel": "email", "providerAccountId": out.Provider.ID, "priority": 1}}})
	require.Equal(t, http.StatusOK, r.Status, string(r.Body))
	return out.Provider.ID
}

type secretOut struct {
	CallbackSecret struct {
		ProviderAccountID string  `json:"providerAccountId"`
		Configured        bool    `json:"configured"`
		RotationPending   bool    `json:"rotationPending"`
		RotatedAt         *string `json:"rotatedAt"`
		CallbackURL       string  `json:"callbackUrl"`
	} `json:"callbackSecret"`
	Secret                string `json:"secret"`
	CallbackURLWithSecret string `json:"callbackUrlWithSecret"`
}

func (b *bundle) rotate(t *testing.T, pid string) secretOut {
	t.Helper()
	r := b.owner(t, "POST", "/v1/providers/"+pid+"/callback-secret/rotate", nil)
	require.Equal(t, http.StatusOK, r.Status, string(r.Body))
	var out secretOut
	require.NoError(t, r.Decode(&out))
	require.NotEmpty(t, out.Secret)
	return out
}

func (b *bundle) callbackURL(pid, secret string) string {
	return b.env.Daemon.URL() + "/v1/callbacks/" + pid + "?token=" + url.QueryEscape(secret)
}

// post asks the simulator to post a vendor callback.
func (b *bundle) post(t *testing.T, req simulator.CallbackRequest) *simulator.CallbackResult {
	t.Helper()
	if req.Kind == "mailx_email" && req.Secret == "" {
		req.Secret = resendSecret
	}
	if req.CertBase == "" {
		req.CertBase = b.certBase
	}
	res, err := b.env.Sim.PostCallback(ctx, req)
	require.NoError(t, err)
	return res
}

func email(to string) map[string]any {
	return map[string]any{"channel": "email", "recipient": map[string]any{"address": to},
		"content": map[string]any{"title": "Hello", "text": "hi"}}
}

type feedbackOut struct {
	Type       string  `json:"type"`
	BounceType *string `json:"bounceType"`
	Recipient  string  `json:"recipient"`
	Suppressed bool    `json:"suppressed"`
}

type attemptOut struct {
	Status            string        `json:"status"`
	ProviderMessageID *string       `json:"providerMessageId"`
	DeliveryFeedback  []feedbackOut `json:"deliveryFeedback"`
}

type requestOut struct {
	RequestID         string       `json:"requestId"`
	Status            string       `json:"status"`
	FinalErrorCode    *string      `json:"finalErrorCode"`
	FinalErrorMessage *string      `json:"finalErrorMessage"`
	Attempts          []attemptOut `json:"attempts"`
}

func (b *bundle) send(t *testing.T, to string) string {
	t.Helper()
	r, err := b.key.Signed(ctx, "POST", "/v1/notifications", email(to))
	require.NoError(t, err)
	require.Equal(t, http.StatusCreated, r.Status, string(r.Body))
	var out struct {
		RequestID string `json:"requestId"`
	}
	require.NoError(t, r.Data(&out))
	return out.RequestID
}

func (b *bundle) get(t *testing.T, id string) requestOut {
	t.Helper()
	r, err := b.key.Signed(ctx, "GET", "/v1/notifications/"+id, nil)
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, r.Status, string(r.Body))
	var out requestOut
	require.NoError(t, r.Data(&out))
	return out
}

func (b *bundle) wait(t *testing.T, id string) requestOut {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		out := b.get(t, id)
		if out.Status == "sent" || out.Status == "failed" || out.Status == "canceled" {
			return out
		}
		require.True(t, time.Now().Before(deadline), "request %s still %s", id, out.Status)
		time.Sleep(20 * time.Millisecond)
	}
}

type suppressionOut struct {
	Address   string `json:"address"`
	Reason    string `json:"reason"`
	CreatedAt string `json:"createdAt"`
}

type listOut struct {
	Suppressions []suppressionOut `json:"suppressions"`
	Cursor       *string          `json:"cursor"`
	HasNext      bool             `json:"hasNext"`
}

func (b *bundle) list(t *testing.T, c *client.Client, query string) listOut {
	t.Helper()
	r := b.dash(t, c, "GET", "/v1/suppressions"+query, nil)
	require.Equal(t, http.StatusOK, r.Status, string(r.Body))
	var out listOut
	require.NoError(t, r.Decode(&out))
	return out
}

func (b *bundle) reasonOf(t *testing.T, address string) string {
	t.Helper()
	l := b.list(t, b.env.Owner, "?address="+url.QueryEscape(address))
	if len(l.Suppressions) == 0 {
		return ""
	}
	return l.Suppressions[0].Reason
}

// problem asserts r is a problem+json answer with status and code.
func problem(t *testing.T, r *client.Response, status int, code string) client.Problem {
	t.Helper()
	require.Equal(t, status, r.Status, string(r.Body))
	require.Contains(t, r.Header.Get("Content-Type"), "application/problem+json", string(r.Body))
	p := r.Problem()
	if code != "" {
		require.Equal(t, code, p.Code, string(r.Body))
	}
	return p
}

// member adds a member with role and returns a logged-in client.
func (b *bundle) member(t *testing.T, email, role string) *client.Client {
	t.Helper()
	r := b.owner(t, "POST", "/v1/workspace/members", map[string]any{"email": email, "role": role, "password": "correct horse battery"})
	require.Equal(t, http.StatusCreated, r.Status, string(r.Body))
	c := client.New(b.env.Daemon.URL())
	require.NoError(t, c.Login(ctx, email, "correct horse battery"))
	return c
}

func (b *bundle) auditActions(t *testing.T, action string) []map[string]any {
	t.Helper()
	r := b.owner(t, "GET", "/v1/audit-logs?action="+action, nil)
	require.Equal(t, http.StatusOK, r.Status, string(r.Body))
	var out struct {
		Logs []map[string]any `json:"logs"`
	}
	require.NoError(t, r.Decode(&out))
	return out.Logs
}
