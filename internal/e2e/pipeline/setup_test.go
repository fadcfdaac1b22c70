package pipeline_test

import (
	"context"
	"net/http"
	"testing"

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
	return &bundle{env: env, key: env.SendKey(t)}
}

// twoRoutes registers kinds k1 and k2 as sms providers with routes of
// priority 1 and 2 and returns their ids.
func (b *bundle) twoRoutes(t *testing.T, k1, k2 string) (string, string) {
	t.Helper()
	p1 := b.env.SimProvider(t, k1, k1+"-1", nil)
	p2 := b.env.SimProvider(t, k2, k2+"-2", nil)
	notifytest.PutRoutes(t, b.env.Owner, notifytest.Route{Channel: "sms", ProviderAccountID: p1, Priority: 1},
		notifytest.Route{Channel: "sms", ProviderAccountID: p2, Priority: 2})
	return p1, p2
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
	return notifytest.Decode[attemptHistoryOut](t, notifytest.Dash(t, b.env.Owner, "GET", "/v1/attempts"+query, nil), http.StatusOK)
}

type cancelOut struct {
	RequestID string `json:"requestId"`
	Status    string `json:"status"`
	Canceled  bool   `json:"canceled"`
}

func (b *bundle) cancel(t *testing.T, id string) cancelOut {
	t.Helper()
	return notifytest.Data[cancelOut](t, notifytest.Signed(t, b.key, "POST", "/v1/notifications/"+id+"/cancel", nil), http.StatusOK)
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
	return notifytest.Decode[struct {
		Jobs []jobItem `json:"jobs"`
	}](t, notifytest.Dash(t, b.env.Owner, "GET", "/v1/jobs", nil), http.StatusOK).Jobs
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
	return notifytest.Decode[deadLetterOut](t, notifytest.Dash(t, b.env.Owner, "GET", "/v1/dead-letter", nil), http.StatusOK)
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
	return notifytest.Decode[metricsOut](t, notifytest.Dash(t, b.env.Owner, "GET", "/v1/metrics"+query, nil), http.StatusOK)
}
