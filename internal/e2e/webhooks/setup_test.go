package webhooks_test

import (
	"context"
	"encoding/base64"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/notifyd/notifyd/client"
	"github.com/notifyd/notifyd/internal/config"
	"github.com/notifyd/notifyd/internal/notifytest"
)

var ctx = context.Background()

type bundle struct {
	env *notifytest.Env
	key *client.Client
}

// fast shortens the webhook timeout and retry schedule to milliseconds.
func fast(timeout time.Duration, schedule ...time.Duration) notifytest.Option {
	return func(c *config.Config) {
		c.WebhookTimeout = timeout
		c.WebhookRetrySchedule = append([]time.Duration{}, schedule...)
	}
}

func setup(t *testing.T, opts ...notifytest.Option) *bundle {
	t.Helper()
	env := notifytest.StartDaemon(t, opts...)
	key, _, err := env.Owner.CreateAPIKey(ctx, "test", "notifications:send", "notifications:read")
	require.NoError(t, err)
	return &bundle{env: env, key: key}
}

func (b *bundle) dash(t *testing.T, method, path string, body any) *client.Response {
	t.Helper()
	return dashAs(t, b.env.Owner, method, path, body)
}

func dashAs(t *testing.T, c *client.Client, method, path string, body any) *client.Response {
	t.Helper()
	r, err := c.Dashboard(ctx, method, path, body)
	require.NoError(t, err)
	return r
}

func problem(t *testing.T, r *client.Response, status int, code string) client.Problem {
	t.Helper()
	require.Equal(t, status, r.Status, string(r.Body))
	require.Contains(t, r.Header.Get("Content-Type"), "application/problem+json", string(r.Body))
	p := r.Problem()
	require.Equal(t, code, p.Code, string(r.Body))
	return p
}

// smsRoute registers the simulator's vendora_sms and routes sms to it.
func (b *bundle) smsRoute(t *testing.T) string {
	t.Helper()
	r := b.dash(t, "POST", "/v1/providers", map[string]any{"providerKind": "vendora_sms", "displayName": "aligo",
		"configJson": map[string]string{"vendora_user_id": "u", "vendora_api_key": "k", "vendora_sender": "0212345678", "base_url": b.env.SimURL}})
	require.Equal(t, http.StatusCreated, r.Status, string(r.Body))
	var p struct {
		Provider struct {
			ID string `json:"id"`
		} `json:"provider"`
	}
	require.NoError(t, r.Decode(&p))
	r = b.dash(t, "PUT", "/v1/routes", map[string]any{"routes": []map[string]any{{"channel": "sms", "providerAccountId": p.Provider.ID, "priority": 1}}})
	require.Equal(t, http.StatusOK, r.Status, string(r.Body))
	return p.Provider.ID
}

func (b *bundle) fault(t *testing.T, f map[string]any) {
	t.Helper()
	c := *b.env.Owner
	c.BaseURL, c.Token = b.env.SimURL, ""
	r, err := c.Dashboard(ctx, "POST", "/_sim/faults", f)
	require.NoError(t, err)
	require.Less(t, r.Status, 300, string(r.Body))
}

// send accepts an sms; extra fields are merged into the body.
func (b *bundle) send(t *testing.T, text string, extra map[string]any) string {
	t.Helper()
	body := map[string]any{"channel": "sms", "recipient": map[string]any{"address": "01012345678"},
		"content": map[string]any{"text": text}, "metadata": map[string]string{"order": text}}
	for k, v := range extra {
		body[k] = v
	}
	r, err := b.key.Signed(ctx, "POST", "/v1/notifications", body)
	require.NoError(t, err)
	require.Equal(t, http.StatusCreated, r.Status, string(r.Body))
	var out struct {
		RequestID string `json:"requestId"`
	}
	require.NoError(t, r.Data(&out))
	return out.RequestID
}

func (b *bundle) status(t *testing.T, id string) string {
	t.Helper()
	r, err := b.key.Signed(ctx, "GET", "/v1/notifications/"+id, nil)
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, r.Status, string(r.Body))
	var out struct {
		Status string `json:"status"`
	}
	require.NoError(t, r.Data(&out))
	return out.Status
}

type webhookOut struct {
	ID        string   `json:"id"`
	URL       string   `json:"url"`
	Events    []string `json:"events"`
	Enabled   bool     `json:"enabled"`
	CreatedAt string   `json:"createdAt"`
	UpdatedAt string   `json:"updatedAt"`
}

// createWebhook registers url for events and returns it with its secret.
func (b *bundle) createWebhook(t *testing.T, url string, events ...string) (webhookOut, string) {
	t.Helper()
	r := b.dash(t, "POST", "/v1/webhooks", map[string]any{"url": url, "events": events})
	require.Equal(t, http.StatusCreated, r.Status, string(r.Body))
	var out struct {
		Webhook webhookOut `json:"webhook"`
		Secret  string     `json:"secret"`
	}
	require.NoError(t, r.Decode(&out))
	require.True(t, strings.HasPrefix(out.Secret, "whsec_"), out.Secret)
	raw, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(out.Secret, "whsec_"))
	require.NoError(t, err)
	require.GreaterOrEqual(t, len(raw), 24)
	return out.Webhook, out.Secret
}

type tryOut struct {
	Attempt    int     `json:"attempt"`
	HTTPStatus *int    `json:"httpStatus"`
	Error      *string `json:"error"`
	DurationMs int64   `json:"durationMs"`
	Response   *string `json:"response"`
	CreatedAt  string  `json:"createdAt"`
}

type deliveryOut struct {
	ID          string   `json:"id"`
	WebhookID   string   `json:"webhookId"`
	EventID     string   `json:"eventId"`
	EventType   string   `json:"eventType"`
	RequestID   string   `json:"requestId"`
	Status      string   `json:"status"`
	Attempt     int      `json:"attempt"`
	HTTPStatus  *int     `json:"httpStatus"`
	Error       *string  `json:"error"`
	DurationMs  *int64   `json:"durationMs"`
	NextRetryAt *string  `json:"nextRetryAt"`
	FinishedAt  *string  `json:"finishedAt"`
	Tries       []tryOut `json:"tries"`
}

type deliveryPage struct {
	Deliveries []deliveryOut `json:"deliveries"`
	Cursor     *string       `json:"cursor"`
	HasNext    bool          `json:"hasNext"`
}

func (b *bundle) deliveries(t *testing.T, webhookID, query string) deliveryPage {
	t.Helper()
	r := b.dash(t, "GET", "/v1/webhooks/"+webhookID+"/deliveries"+query, nil)
	require.Equal(t, http.StatusOK, r.Status, string(r.Body))
	var p deliveryPage
	require.NoError(t, r.Decode(&p))
	return p
}

// waitDeliveries polls the delivery log until cond holds.
func (b *bundle) waitDeliveries(t *testing.T, webhookID, what string, cond func([]deliveryOut) bool) []deliveryOut {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		p := b.deliveries(t, webhookID, "?limit=200")
		if cond(p.Deliveries) {
			return p.Deliveries
		}
		require.True(t, time.Now().Before(deadline), "%s not reached: %+v", what, p.Deliveries)
		time.Sleep(25 * time.Millisecond)
	}
}

func finished(n int) func([]deliveryOut) bool {
	return func(ds []deliveryOut) bool {
		if len(ds) != n {
			return false
		}
		for _, d := range ds {
			if d.Status == "pending" {
				return false
			}
		}
		return true
	}
}

// received is one request that reached a receiver.
type received struct {
	Header http.Header
	Body   []byte
	At     time.Time
}

// receiver is a webhook endpoint; answer decides each answer by the
// request's number (from 1): a status and a delay.
type receiver struct {
	srv    *httptest.Server
	mu     sync.Mutex
	got    []received
	answer func(n int) (int, time.Duration)
}

func newReceiver(t *testing.T, answer func(n int) (int, time.Duration)) *receiver {
	t.Helper()
	rc := &receiver{answer: answer}
	rc.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		rc.mu.Lock()
		rc.got = append(rc.got, received{Header: r.Header.Clone(), Body: body, At: time.Now()})
		n, answer := len(rc.got), rc.answer
		rc.mu.Unlock()
		status, delay := http.StatusOK, time.Duration(0)
		if answer != nil {
			status, delay = answer(n)
		}
		if delay > 0 {
			select {
			case <-time.After(delay):
			case <-r.Context().Done():
				return
			}
		}
		w.WriteHeader(status)
		_, _ = io.WriteString(w, "answer "+strconv.Itoa(n)+": "+http.StatusText(status))
	}))
	t.Cleanup(rc.srv.Close)
	return rc
}

func (rc *receiver) requests() []received {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return append([]received(nil), rc.got...)
}

func (rc *receiver) setAnswer(f func(n int) (int, time.Duration)) {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	rc.answer = f
}

func always(status int) func(int) (int, time.Duration) {
	return func(int) (int, time.Duration) { return status, 0 }
}

// member adds a member with role to the owner's workspace and logs in.
func (b *bundle) member(t *testing.T, role string) *client.Client {
	t.Helper()
	email := role + "-" + strconv.FormatInt(time.Now().UnixNano(), 36) + "@example.com"
	r := b.dash(t, "POST", "/v1/workspace/members", map[string]string{"email": email, "role": role, "password": "member password 1"})
	require.Equal(t, http.StatusCreated, r.Status, string(r.Body))
	c := client.New(b.env.Daemon.URL())
	require.NoError(t, c.Login(ctx, email, "member password 1"))
	return c
}
