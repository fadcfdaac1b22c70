package pipeline_test

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/notifyd/notifyd/client"
	"github.com/notifyd/notifyd/internal/notify"
	"github.com/notifyd/notifyd/internal/notifytest"
)

var ctx = context.Background()

type bundle struct {
	env *notifytest.Env
	key *client.Client
}

func setup(t *testing.T, opts ...notifytest.Option) *bundle {
	t.Helper()
	env := notifytest.StartDaemon(t, opts...)
	key, _, err := env.Owner.CreateAPIKey(ctx, "test", "notifications:send", "notifications:read")
	require.NoError(t, err)
	return &bundle{env: env, key: key}
}

// provider registers a provider of kind against the simulator.
func (b *bundle) provider(t *testing.T, kind, name string, cfg map[string]string) string {
	t.Helper()
	if cfg == nil {
		cfg = map[string]string{}
	}
	if _, ok := cfg["base_url"]; !ok {
		cfg["base_url"] = b.env.SimURL
	}
	r, err := b.env.Owner.Dashboard(ctx, "POST", "/v1/providers", map[string]any{"providerKind": kind, "displayName": name, "configJson": cfg})
	require.NoError(t, err)
	require.Equal(t, http.StatusCreated, r.Status, string(r.Body))
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

func solapiConfig() map[string]string {
	return map[string]string{"vendorb_api_key": "k", "vendorb_api_secret": "s", "vendorb_sender": "0212345678"}
}

type route struct {
	Channel           string `json:"channel"`
	ProviderAccountID string `json:"providerAccountId"`
	Priority          int    `json:"priority"`
}

func (b *bundle) routes(t *testing.T, rs ...route) {
	t.Helper()
	r, err := b.env.Owner.Dashboard(ctx, "PUT", "/v1/routes", map[string]any{"routes": rs})
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, r.Status, string(r.Body))
}

type sendOut struct {
	Status       string  `json:"status"`
	RequestID    string  `json:"requestId"`
	QueueJobID   *string `json:"queueJobId"`
	Deduplicated bool    `json:"deduplicated"`
	ScheduledAt  *string `json:"scheduledAt"`
}

func (b *bundle) send(t *testing.T, body map[string]any) sendOut {
	t.Helper()
	r, err := b.key.Signed(ctx, "POST", "/v1/notifications", body)
	require.NoError(t, err)
	require.Equal(t, http.StatusCreated, r.Status, string(r.Body))
	var out sendOut
	require.NoError(t, r.Data(&out))
	return out
}

type attemptOut struct {
	ProviderAccountID string  `json:"providerAccountId"`
	Status            string  `json:"status"`
	FailureCode       *string `json:"failureCode"`
	ProviderMessageID *string `json:"providerMessageId"`
	ProviderKind      string  `json:"providerKind"`
	StartedAt         string  `json:"startedAt"`
	FinishedAt        string  `json:"finishedAt"`
}

type requestOut struct {
	RequestID                 string       `json:"requestId"`
	WorkspaceID               string       `json:"workspaceId"`
	Channel                   string       `json:"channel"`
	Status                    string       `json:"status"`
	ScheduledAt               *string      `json:"scheduledAt"`
	SelectedProviderAccountID *string      `json:"selectedProviderAccountId"`
	SelectedProviderMessageID *string      `json:"selectedProviderMessageId"`
	FinalErrorCode            *string      `json:"finalErrorCode"`
	FinalErrorMessage         *string      `json:"finalErrorMessage"`
	Attempts                  []attemptOut `json:"attempts"`
	Job                       *struct {
		ID           string  `json:"id"`
		QueueJobID   string  `json:"queueJobId"`
		Status       string  `json:"status"`
		AttemptsMade int     `json:"attemptsMade"`
		MaxAttempts  int     `json:"maxAttempts"`
		ScheduledAt  *string `json:"scheduledAt"`
		LastError    *struct {
			Code    string `json:"code"`
			Message string `json:"message"`
		} `json:"lastError"`
	} `json:"job"`
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

// wait polls the status lookup until the request is terminal.
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

func sms(to, text string) map[string]any {
	return map[string]any{"channel": "sms", "recipient": map[string]any{"address": to}, "content": map[string]any{"text": text}}
}

// signed sends a raw signed Notification API call; body may be []byte.
func (b *bundle) signed(t *testing.T, method, path string, body any) *client.Response {
	t.Helper()
	r, err := b.key.Signed(ctx, method, path, body)
	require.NoError(t, err)
	return r
}

// dash sends a Dashboard API call as the workspace owner.
func (b *bundle) dash(t *testing.T, method, path string, body any) *client.Response {
	t.Helper()
	r, err := b.env.Owner.Dashboard(ctx, method, path, body)
	require.NoError(t, err)
	return r
}

// problem asserts r is a problem+json answer with status and code.
func problem(t *testing.T, r *client.Response, status int, code string) client.Problem {
	t.Helper()
	require.Equal(t, status, r.Status, string(r.Body))
	require.Contains(t, r.Header.Get("Content-Type"), "application/problem+json", string(r.Body))
	p := r.Problem()
	require.Equal(t, status, p.Status, string(r.Body))
	if code != "" {
		require.Equal(t, code, p.Code, string(r.Body))
	}
	return p
}

// waitFor polls the status lookup until cond holds.
func (b *bundle) waitFor(t *testing.T, id string, what string, cond func(requestOut) bool) requestOut {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		out := b.get(t, id)
		if cond(out) {
			return out
		}
		require.True(t, time.Now().Before(deadline), "request %s: %s not reached (status %s)", id, what, out.Status)
		time.Sleep(10 * time.Millisecond)
	}
}

// twoRoutes registers kinds k1 and k2 as sms providers with routes of
// priority 1 and 2 and returns their ids.
func (b *bundle) twoRoutes(t *testing.T, k1, k2 string) (string, string) {
	t.Helper()
	p1 := b.provider(t, k1, k1+"-1", configOf(k1))
	p2 := b.provider(t, k2, k2+"-2", configOf(k2))
	b.routes(t, route{Channel: "sms", ProviderAccountID: p1, Priority: 1}, route{Channel: "sms", ProviderAccountID: p2, Priority: 2})
	return p1, p2
}

func configOf(kind string) map[string]string {
	switch kind {
	case "vendora_sms":
		return smsConfig()
	case "vendorb_sms":
		return solapiConfig()
	case "mailx_email":
		return map[string]string{"mailx_api_key": "re_test", "mailx_from_email": "noreply@example.com"}
	}
	return map[string]string{}
}

type attemptHistoryOut struct {
	Attempts []struct {
		ID                    string  `json:"id"`
		NotificationRequestID string  `json:"notificationRequestId"`
		NotificationJobID     string  `json:"notificationJobId"`
		ProviderAccountID     string  `json:"providerAccountId"`
		Channel               string  `json:"channel"`
		Status                string  `json:"status"`
		FailureCode           *string `json:"failureCode"`
		ProviderMessageID     *string `json:"providerMessageId"`
		StartedAt             string  `json:"startedAt"`
		Request               struct {
			Recipient struct {
				Address string `json:"address"`
			} `json:"recipient"`
			Variables       map[string]string `json:"variables"`
			RenderedContent struct {
				Title *string `json:"title"`
				Text  *string `json:"text"`
				HTML  *string `json:"html"`
			} `json:"renderedContent"`
		} `json:"request"`
		Response *struct {
			HTTPStatus int    `json:"httpStatus"`
			Body       string `json:"body"`
		} `json:"response"`
	} `json:"attempts"`
	Cursor  *string `json:"cursor"`
	HasNext bool    `json:"hasNext"`
}

func (b *bundle) attempts(t *testing.T, query string) attemptHistoryOut {
	t.Helper()
	r := b.dash(t, "GET", "/v1/attempts"+query, nil)
	require.Equal(t, http.StatusOK, r.Status, string(r.Body))
	var out attemptHistoryOut
	require.NoError(t, r.Decode(&out))
	return out
}

// emailMsg is an email send body.
func emailMsg(to, subject, text string) map[string]any {
	return map[string]any{"channel": "email", "recipient": map[string]any{"address": to},
		"content": map[string]any{"title": subject, "text": text}}
}

type cancelOut struct {
	RequestID string `json:"requestId"`
	Status    string `json:"status"`
	Canceled  bool   `json:"canceled"`
}

func (b *bundle) cancel(t *testing.T, id string) cancelOut {
	t.Helper()
	r := b.signed(t, "POST", "/v1/notifications/"+id+"/cancel", nil)
	require.Equal(t, http.StatusOK, r.Status, string(r.Body))
	var out cancelOut
	require.NoError(t, r.Data(&out))
	return out
}

type jobItem struct {
	ID                    string  `json:"id"`
	NotificationRequestID string  `json:"notificationRequestId"`
	Channel               string  `json:"channel"`
	Status                string  `json:"status"`
	ScheduledAt           *string `json:"scheduledAt"`
	EnqueuedAt            string  `json:"enqueuedAt"`
	AttemptCount          int     `json:"attemptCount"`
	MaxAttempts           int     `json:"maxAttempts"`
	NextRetryAt           *string `json:"nextRetryAt"`
}

// jobs lists the unfinished jobs (GET /v1/jobs).
func (b *bundle) jobs(t *testing.T) []jobItem {
	t.Helper()
	r := b.dash(t, "GET", "/v1/jobs", nil)
	require.Equal(t, http.StatusOK, r.Status, string(r.Body))
	var out struct {
		Jobs []jobItem `json:"jobs"`
	}
	require.NoError(t, r.Decode(&out))
	return out.Jobs
}

type deadLetterOut struct {
	Items []struct {
		JobID   string `json:"jobId"`
		JobName string `json:"jobName"`
		Data    struct {
			NotificationRequestID string `json:"notificationRequestId"`
			WorkspaceID           string `json:"workspaceId"`
			Channel               string `json:"channel"`
		} `json:"data"`
		FailedReason string `json:"failedReason"`
		FailedAt     string `json:"failedAt"`
		AttemptsMade int    `json:"attemptsMade"`
	} `json:"items"`
	Count int `json:"count"`
}

// deadLetters reads GET /v1/dead-letter.
func (b *bundle) deadLetters(t *testing.T) deadLetterOut {
	t.Helper()
	r := b.dash(t, "GET", "/v1/dead-letter", nil)
	require.Equal(t, http.StatusOK, r.Status, string(r.Body))
	var out deadLetterOut
	require.NoError(t, r.Decode(&out))
	return out
}

// breaker reads the stored circuit breaker of a provider account.
func (b *bundle) breaker(t *testing.T, accountID string) notify.BreakerRecord {
	t.Helper()
	var out notify.BreakerRecord
	require.NoError(t, b.env.Daemon.DB.View(ctx, func(tx notify.Tx) error {
		m, err := tx.FindBreakers(ctx, []string{accountID})
		if err != nil {
			return err
		}
		if br := m[accountID]; br != nil {
			out = *br
		} else {
			out = notify.BreakerRecord{ProviderAccountID: accountID, State: "CLOSED"}
		}
		return nil
	}))
	return out
}

// putBreaker stores a circuit breaker state directly.
func (b *bundle) putBreaker(t *testing.T, br *notify.BreakerRecord) {
	t.Helper()
	require.NoError(t, b.env.Daemon.DB.Update(ctx, func(tx notify.Tx) error { return tx.PutBreaker(ctx, br) }))
}

type metricsOut struct {
	From            string         `json:"from"`
	To              string         `json:"to"`
	TotalRequests   int            `json:"totalRequests"`
	ByStatus        map[string]int `json:"byStatus"`
	ByChannel       map[string]int `json:"byChannel"`
	TotalAttempts   int            `json:"totalAttempts"`
	SuccessAttempts int            `json:"successAttempts"`
	FailedAttempts  int            `json:"failedAttempts"`
}

// metrics reads GET /v1/metrics with query (including the leading "?").
func (b *bundle) metrics(t *testing.T, query string) metricsOut {
	t.Helper()
	r := b.dash(t, "GET", "/v1/metrics"+query, nil)
	require.Equal(t, http.StatusOK, r.Status, string(r.Body))
	var out metricsOut
	require.NoError(t, r.Decode(&out))
	return out
}
