package notify

// WebhookTx holds the store verbs of webhook endpoints, their deliveries and the event outbox.
type WebhookTx interface {
}
