package notify

// SubscriberTx holds the store verbs of newsletter subscribers and the unsubscribe flow.
type SubscriberTx interface {
}
