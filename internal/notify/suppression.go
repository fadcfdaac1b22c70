package notify

// SuppressionTx holds the store verbs of the email suppression list and bounce/complaint intake.
type SuppressionTx interface {
}
