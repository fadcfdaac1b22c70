package notify

import (
	"context"
	"time"
)

// Delivery receipts (issue 35, docs/DECISIONS.md "Delivery receipts"):
// SPEC's status sent means the vendor accepted a message; a receipt is
// what the vendor reported later about its arrival, kept beside that
// status and never changing it. One receipt belongs to each accepted
// attempt of a kind that reports (the SMS and AlimTalk kinds by polling
// their result APIs, the e-mail kinds by their delivery callbacks); other
// kinds give no report, and their requests say so (ReceiptNotTracked).

// Receipt statuses.
const (
	ReceiptPending     = "pending"     // accepted, no final report yet
	ReceiptDelivered   = "delivered"   // the vendor reported arrival (handset, mailbox)
	ReceiptUndelivered = "undelivered" // the vendor reported it did not arrive
	ReceiptUnknown     = "unknown"     // no final report came before the deadline
	// ReceiptNotTracked is shown for a request whose kind gives no report
	// (push, chat, in-app) or that was sent directly (OTP, test-send).
	ReceiptNotTracked = "notTracked"
)

// Receipt events (additions to SPEC's events; docs/WEBHOOKS.md). SPEC's
// notification.delivered keeps its meaning (the vendor accepted).
const (
	EventArrived     = "notification.arrived"     // a vendor reported the message arrived
	EventUndelivered = "notification.undelivered" // a vendor reported the message did not arrive
)

// ReceiptEventTypes are the receipt events a webhook may subscribe to,
// beside SPEC's EventTypes.
var ReceiptEventTypes = []string{EventArrived, EventUndelivered}

// How a provider kind reports delivery (provider.Kind.Receipts).
const (
	ReceiptsPolled = "polled" // a per-message result API the service polls
	ReceiptsPushed = "pushed" // delivery callbacks the vendor posts
)

// Receipt is the delivery report state of one accepted attempt.
type Receipt struct {
	AttemptID         string
	WorkspaceID       string
	RequestID         string
	ProviderAccountID string
	ProviderKind      string
	ProviderMessageID string
	// Recipient is the address the attempt sent to (the result APIs list
	// per-number results of a message id shared by a batch).
	Recipient string
	Channel   Channel
	// FallbackStep is the request's step that sent the attempt.
	FallbackStep int
	Status       string
	Code, Text   string
	// ReportedAt is when the vendor says the final state was reached (or
	// when it was learnt); nil while pending.
	ReportedAt *time.Time
	// Polls counts the result-API lookups made so far.
	Polls     int
	CreatedAt time.Time
	// Deadline ends the wait: a receipt still pending then becomes unknown.
	Deadline time.Time
	// FellBack is set once an undelivered report moved the request on
	// along its channel fallback.
	FellBack bool
}

// Final reports whether the receipt's status no longer changes.
func (r *Receipt) Final() bool { return r.Status != ReceiptPending }

// VendorReport is one delivery report as an adapter or a callback read it.
type VendorReport struct {
	// Status is ReceiptPending (an intermediate report: still with the
	// carrier), ReceiptDelivered or ReceiptUndelivered.
	Status string
	Code   string
	Text   string
	At     time.Time
}

// ReportAPI looks up the delivery report of one accepted message at its
// vendor (adapters of ReceiptsPolled kinds).
type ReportAPI interface {
	Report(ctx context.Context, messageID, to string) (*VendorReport, error)
}

// MessageReport is a pushed report as SettleReceiptsOfMessages takes it:
// the final state C (Status, Code, Text, ReportedAt) for the newest
// receipt of the vendor message MessageID of Kind.
type MessageReport struct {
	Kind, MessageID string
	C               *Receipt
}

// SettledReceipt is a receipt SettleReceiptOfMessage settled, as written,
// with its request and the event lists of its workspace's webhooks (what
// Subscribed reads).
type SettledReceipt struct {
	Receipt *Receipt
	Request *Request
	Hooks   [][]string
}

// ReceiptTx holds the verbs of delivery receipts.
type ReceiptTx interface {
	// CreateReceipts inserts receipts in this transaction; each of polled
	// gets a poll job due after firstPoll (the job is written with the
	// receipt, so a report is never lost to a crash).
	CreateReceipts(ctx context.Context, rs []*Receipt, polled []bool, firstPoll time.Duration) error
	FindReceipt(ctx context.Context, workspaceID, attemptID string) (*Receipt, error)
	// FindReceiptByMessage finds the receipt of a vendor message id of
	// kind (callbacks name no workspace); ErrNotFound when none.
	FindReceiptByMessage(ctx context.Context, kind, messageID string) (*Receipt, error)
	FindReceiptsOfRequest(ctx context.Context, workspaceID, requestID string) ([]*Receipt, error)
	// SettleReceipt writes r's final state only if the stored receipt is
	// still pending, and reports whether it was: a report applied twice,
	// or a later one after a final state, changes nothing.
	SettleReceipt(ctx context.Context, r *Receipt) (bool, error)
	// SettleReceiptOfMessage writes c's final state (Status, Code, Text,
	// ReportedAt) to the newest receipt of a vendor message id of kind
	// (FindReceiptByMessage's), only if that receipt is still pending and
	// its request exists, and answers what an event of it needs; nil
	// when it wrote nothing (no receipt, a final one, or no request). One
	// statement on PostgreSQL: a pushed report's find, reads and write in
	// one round trip.
	SettleReceiptOfMessage(ctx context.Context, kind, messageID string, c *Receipt) (*SettledReceipt, error)
	// SettleReceiptsOfMessages is SettleReceiptOfMessage for many reports
	// (about distinct messages) at once: one answer a report, in order,
	// nil where it wrote nothing. One statement on PostgreSQL: a batch of
	// pushed reports is one round trip.
	SettleReceiptsOfMessages(ctx context.Context, rs []MessageReport) ([]*SettledReceipt, error)
	// CountReceiptPoll records one more lookup of a pending receipt.
	CountReceiptPoll(ctx context.Context, workspaceID, attemptID string) error
	// MarkReceiptFellBack sets FellBack unless it was set already, and
	// reports whether this call set it.
	MarkReceiptFellBack(ctx context.Context, workspaceID, attemptID string) (bool, error)
	// PutEarlyReport keeps a pushed report whose message has no receipt
	// yet (its send's record is not committed); CreateReceipts applies it.
	PutEarlyReport(ctx context.Context, kind, messageID string, rep *VendorReport, now time.Time) error
	// TakeEarlyReports reads and deletes the early reports of messageIDs
	// of kind.
	TakeEarlyReports(ctx context.Context, kind string, messageIDs []string) (map[string]*VendorReport, error)
}

// ReceiptEvent is the outbox event of a receipt that became final, about
// request r.
func ReceiptEvent(id, typ string, r *Request, rc *Receipt, now time.Time) *Event {
	e := RequestEvent(id, typ, r, now)
	e.Payload["deliveryStatus"] = rc.View()
	e.Payload["providerKind"] = rc.ProviderKind
	e.Payload["providerMessageId"] = nilIfEmpty(rc.ProviderMessageID)
	e.Payload["receiptChannel"] = rc.Channel
	return e
}

// ReceiptView is a receipt as lookups and events show it.
type ReceiptView struct {
	Status string `json:"status"`
	// At is when the final state was reached, RFC 3339 in UTC with
	// milliseconds as the API writes times; null while pending.
	At                *string `json:"at"`
	VendorCode        *string `json:"vendorCode"`
	VendorText        *string `json:"vendorText"`
	Reason            string  `json:"reason,omitempty"`
	ProviderKind      string  `json:"providerKind,omitempty"`
	ProviderMessageID string  `json:"providerMessageId,omitempty"`
}

// ViewAt is r as lookups show it at now: a receipt still pending after
// its deadline is unknown (the poll job settles it, but a pushed kind's
// receipt waits for no job).
func (r *Receipt) ViewAt(now time.Time) ReceiptView {
	if r.Status == ReceiptPending && !now.Before(r.Deadline) {
		c := *r
		c.Status = ReceiptUnknown
		return c.View()
	}
	return r.View()
}

// View is r as events show it.
func (r *Receipt) View() ReceiptView {
	v := ReceiptView{Status: r.Status, ProviderKind: r.ProviderKind, ProviderMessageID: r.ProviderMessageID}
	if r.ReportedAt != nil {
		at := r.ReportedAt.UTC().Format("2006-01-02T15:04:05.000Z")
		v.At = &at
	}
	if r.Code != "" {
		v.VendorCode = &r.Code
	}
	if r.Text != "" {
		v.VendorText = &r.Text
	}
	if r.Status == ReceiptUnknown && r.Code == "" {
		v.Reason = "no report from the vendor before the deadline"
	}
	return v
}

// RequestReceipt is the deliveryStatus of request r whose receipts are
// rs: the receipt of the attempt that delivered it (its message id), or
// pending before it is sent, or notTracked when its delivering attempt
// has none.
func RequestReceipt(r *Request, rs []*Receipt, now time.Time) ReceiptView {
	switch r.Status {
	case StatusQueued, StatusProcessing:
		return ReceiptView{Status: ReceiptPending, Reason: "not sent yet"}
	case StatusFailed, StatusCanceled:
		if len(rs) == 0 {
			return ReceiptView{Status: ReceiptNotTracked, Reason: "the request was not sent"}
		}
	}
	var best *Receipt
	for _, rc := range rs {
		if r.SelectedMessageID != "" && rc.ProviderMessageID == r.SelectedMessageID {
			best = rc
			break
		}
		if best == nil || rc.CreatedAt.After(best.CreatedAt) {
			best = rc
		}
	}
	if best == nil {
		return ReceiptView{Status: ReceiptNotTracked, Reason: "no delivery report is tracked: the provider kind that sent it gives none, or it was sent directly (OTP, test-send)"}
	}
	return best.ViewAt(now)
}

// FallBackOnUndelivered moves request r, sent by the attempt of receipt rc
// that was reported undelivered, and its job j to the next step of its
// channel fallback (issue 35, item 3): only while r is still sent by that
// step, has a next step, and the report came within window of the send.
// It reports whether r moved; the caller saves r and j and schedules the
// job (the step's attempt budget is a fresh one, as for a failed step).
func FallBackOnUndelivered(r *Request, j *Job, rc *Receipt, window time.Duration, now time.Time) (bool, error) {
	if rc.Status != ReceiptUndelivered || rc.FellBack || r.Status != StatusSent || r.FallbackStep != rc.FallbackStep ||
		!r.HasNextStep() || (window > 0 && now.Sub(rc.CreatedAt) > window) {
		return false, nil
	}
	if err := r.MoveTo(StatusQueued, now); err != nil {
		return false, err
	}
	if err := j.MoveTo(JobQueued); err != nil {
		return false, err
	}
	r.FallbackStep++
	r.FinalErrorCode, r.FinalErrorMessage = "", ""
	j.FinishedAt, j.NextRetryAt, j.MaxAttempts = nil, nil, j.AttemptsMade+r.Fallback.Attempts
	j.LastErrorCode, j.LastErrorMessage = string(FailureUnknown), "the vendor reported the message undelivered: "+rc.Code+" "+rc.Text
	return true, nil
}

// ApplyReport sets rc's state from a final report (an intermediate one,
// or rc already final, changes nothing) and reports whether it did.
func ApplyReport(rc *Receipt, rep *VendorReport, now time.Time) bool {
	if rc.Final() || rep == nil || rep.Status == ReceiptPending {
		return false
	}
	at := rep.At
	if at.IsZero() {
		at = now
	}
	rc.Status, rc.Code, rc.Text, rc.ReportedAt = rep.Status, rep.Code, rep.Text, &at
	return true
}

// ReceiptEventType is the event of a final receipt, "" for unknown
// (nothing was reported, so nothing is announced).
func ReceiptEventType(rc *Receipt) string {
	switch rc.Status {
	case ReceiptDelivered:
		return EventArrived
	case ReceiptUndelivered:
		return EventUndelivered
	}
	return ""
}
