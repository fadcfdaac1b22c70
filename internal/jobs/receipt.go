package jobs

// QueueReceipts holds the delivery-report polls (issue 35): slow vendor
// lookups that never take a send's slot.
const QueueReceipts = "receipts"

// ReceiptPoll looks up the delivery report of one accepted attempt at its
// vendor until the report is final or the receipt's deadline passes. The
// poll schedule is the service's (the worker snoozes, which River does
// not count as an attempt); River's attempts cover unexpected errors.
type ReceiptPoll struct {
	WorkspaceID string `json:"wid"`
	AttemptID   string `json:"aid"`
}

// Kind implements river.JobArgs.
func (ReceiptPoll) Kind() string { return "receipt_poll" }

// ReceiptPollMaxAttempts bounds River's retries of unexpected errors.
const ReceiptPollMaxAttempts = 10
