package jobs

// QueueWebhooks holds webhook deliveries apart from sends, so slow
// receivers (each try may wait for its timeout) never hold up notifications.
const QueueWebhooks = "webhooks"

// WebhookDelivery makes the tries of one delivery. Its retry schedule is
// the service's (the worker snoozes, which River does not count as an
// attempt); River's own attempts only cover unexpected errors.
type WebhookDelivery struct {
	DeliveryID  string `json:"did"`
	WorkspaceID string `json:"wid"`
}

// Kind implements river.JobArgs.
func (WebhookDelivery) Kind() string { return "webhook_delivery" }

// WebhookDeliveryMaxAttempts bounds River's retries of unexpected errors
// (a database outage), not the delivery schedule.
const WebhookDeliveryMaxAttempts = 10
