package notifytest

import (
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/notifyd/notifyd/client"
)

// SMS is the body of an sms send of text to to.
func SMS(to, text string) map[string]any {
	return map[string]any{"channel": "sms", "recipient": map[string]any{"address": to}, "content": map[string]any{"text": text}}
}

// Email is the body of an email send of subject and text to to.
func Email(to, subject, text string) map[string]any {
	return map[string]any{"channel": "email", "recipient": map[string]any{"address": to},
		"content": map[string]any{"title": subject, "text": text}}
}

// Accepted is the answer to an accepted send (POST /v1/notifications).
type Accepted struct {
	Status       string  `json:"status"`
	RequestID    string  `json:"requestId"`
	QueueJobID   *string `json:"queueJobId"`
	Deduplicated bool    `json:"deduplicated"`
	ScheduledAt  *string `json:"scheduledAt"`
}

// Send posts body with the API key k and requires 201.
func Send(t testing.TB, k *client.Client, body map[string]any) Accepted {
	t.Helper()
	return Data[Accepted](t, Signed(t, k, "POST", "/v1/notifications", body), http.StatusCreated)
}

// Bulk posts items in one bulk send with k, requires every one accepted
// and answers their request ids in order.
func Bulk(t testing.TB, k *client.Client, items []any) []string {
	t.Helper()
	out := Data[struct {
		Items []struct {
			RequestID string `json:"requestId"`
		} `json:"items"`
	}](t, Signed(t, k, "POST", "/v1/notifications/bulk", map[string]any{"items": items}), http.StatusCreated)
	require.Len(t, out.Items, len(items))
	ids := make([]string, len(out.Items))
	for i, it := range out.Items {
		ids[i] = it.RequestID
	}
	return ids
}

// Request is the status lookup of a send (GET /v1/notifications/{id}):
// every field the e2e suites read.
type Request struct {
	RequestID                 string           `json:"requestId"`
	WorkspaceID               string           `json:"workspaceId"`
	Channel                   string           `json:"channel"`
	Status                    string           `json:"status"`
	RecipientAddress          string           `json:"recipientAddress"`
	RecipientID               *string          `json:"recipientId"`
	ScheduledAt               *string          `json:"scheduledAt"`
	SelectedProviderAccountID *string          `json:"selectedProviderAccountId"`
	SelectedProviderMessageID *string          `json:"selectedProviderMessageId"`
	FinalErrorCode            *string          `json:"finalErrorCode"`
	FinalErrorMessage         *string          `json:"finalErrorMessage"`
	DeliveredChannel          *string          `json:"deliveredChannel"`
	Attempts                  []Attempt        `json:"attempts"`
	ChannelFallback           *ChannelFallback `json:"channelFallback"`
	// Job is the request's job (zero when the answer has none).
	Job Job `json:"job"`
	// Test: signed with a test-mode key (issue 36).
	Test bool `json:"test"`
	// DeliveryStatus is the vendor's delivery report (issue 35).
	DeliveryStatus *DeliveryStatus `json:"deliveryStatus"`
}

// DeliveryStatus is a receipt of a Request or an Attempt (issue 35).
type DeliveryStatus struct {
	Status     string  `json:"status"`
	At         *string `json:"at"`
	VendorCode *string `json:"vendorCode"`
	VendorText *string `json:"vendorText"`
	Reason     string  `json:"reason"`
}

// Attempt is one provider attempt of a Request.
type Attempt struct {
	ProviderAccountID string     `json:"providerAccountId"`
	ProviderKind      string     `json:"providerKind"`
	Channel           string     `json:"channel"`
	Status            string     `json:"status"`
	FailureCode       *string    `json:"failureCode"`
	ProviderMessageID *string    `json:"providerMessageId"`
	StartedAt         string     `json:"startedAt"`
	FinishedAt        string     `json:"finishedAt"`
	DeliveryFeedback  []Feedback `json:"deliveryFeedback"`
	// DeliveryStatus is the receipt of an accepted attempt of a kind
	// that reports delivery (issue 35).
	DeliveryStatus *DeliveryStatus `json:"deliveryStatus"`
}

// Feedback is a bounce or complaint recorded on an Attempt.
type Feedback struct {
	Type       string  `json:"type"`
	BounceType *string `json:"bounceType"`
	Recipient  string  `json:"recipient"`
	Suppressed bool    `json:"suppressed"`
}

// ChannelFallback is the cross-channel chain of a Request.
type ChannelFallback struct {
	CurrentStep    int            `json:"currentStep"`
	CurrentChannel string         `json:"currentChannel"`
	Steps          []FallbackStep `json:"steps"`
}

// FallbackStep is one step of a ChannelFallback.
type FallbackStep struct {
	Step             int     `json:"step"`
	Channel          string  `json:"channel"`
	RecipientAddress string  `json:"recipientAddress"`
	TemplateCode     *string `json:"templateCode"`
	Status           string  `json:"status"`
}

// Job is the job of a Request.
type Job struct {
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
}

// Terminal reports whether a request of status is done: sent, failed or
// canceled.
func Terminal(status string) bool {
	return status == "sent" || status == "failed" || status == "canceled"
}

// Lookup reads the status of request id with k and requires 200.
func Lookup(t testing.TB, k *client.Client, id string) Request {
	t.Helper()
	return Data[Request](t, Signed(t, k, "GET", "/v1/notifications/"+id, nil), http.StatusOK)
}

// WaitTimeout bounds WaitFor and Wait: generous, since the suites run
// beside each other on small machines.
const WaitTimeout = 30 * time.Second

// WaitFor polls the status of request id with k until cond holds, and
// fails the test naming what after WaitTimeout.
func WaitFor(t testing.TB, k *client.Client, id, what string, cond func(Request) bool) Request {
	t.Helper()
	return waitUntil(t, k, id, what, WaitTimeout, cond)
}

// Wait polls the status of request id with k until it is Terminal.
func Wait(t testing.TB, k *client.Client, id string) Request {
	t.Helper()
	return WaitWithin(t, k, id, WaitTimeout)
}

// WaitWithin is Wait with a deadline of d instead of WaitTimeout (paced
// or multi-process runs).
func WaitWithin(t testing.TB, k *client.Client, id string, d time.Duration) Request {
	t.Helper()
	return waitUntil(t, k, id, "a final state", d, func(o Request) bool { return Terminal(o.Status) })
}

func waitUntil(t testing.TB, k *client.Client, id, what string, d time.Duration, cond func(Request) bool) Request {
	t.Helper()
	deadline := time.Now().Add(d)
	for {
		out := Lookup(t, k, id)
		if cond(out) {
			return out
		}
		require.True(t, time.Now().Before(deadline), "request %s: %s not reached (status %s): %+v", id, what, out.Status, out)
		time.Sleep(20 * time.Millisecond)
	}
}
