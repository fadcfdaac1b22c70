package notify

import "time"

// Request sources.
const (
	SourceAPI      = "api"
	SourceTest     = "test"
	SourceOTP      = "otp"
	SourceCampaign = "campaign"
)

// Request is one notification request with its rendered content.
type Request struct {
	ID               string
	WorkspaceID      string
	APIKeyID         string
	Source           string
	Channel          Channel
	Status           RequestStatus
	RecipientAddress string
	RecipientName    string
	// RecipientID is the external id of the recipient profile the send
	// named (issue 32), whose address for the channel is
	// RecipientAddress; "" for a send by address.
	RecipientID string
	// Category is the send's category key (issue 32), "" for none.
	Category string
	// Decisions are what was decided about the request and why, at its
	// acceptance and dispatch (issue 32, item 7); nil for a send by
	// address without a category.
	Decisions         []Decision
	Title, Text, HTML string
	// InApp is the action URL and data of an inapp send (issue 33), nil
	// when it has none; a chain's inapp step has the same.
	InApp *InAppContent
	// InboxAtAcceptance is the profile row (Recipient.ID) whose inbox an
	// inapp send is delivered to in its acceptance's transaction, ""
	// when the engine delivers it (docs/DECISIONS.md "inapp at
	// acceptance"). Not stored: it lives from the build to the commit.
	InboxAtAcceptance    string
	TemplateCode         string
	TemplateVariables    map[string]string
	VendorTemplateID     string
	SenderProfileKey     string
	Headers              map[string]string
	Metadata             map[string]string
	PreferredProviderIDs []string
	IdempotencyKey       string
	CampaignID           string
	// MarkedLane is the lane the caller of a bulk call gave (Lane).
	MarkedLane         Lane
	RequestedAt        time.Time
	ScheduledAt        *time.Time
	UpdatedAt          time.Time
	SelectedProviderID string
	SelectedMessageID  string
	FinalErrorCode     string
	FinalErrorMessage  string
	// Fallback is the cross-channel fallback chain (nil: none) and
	// FallbackStep the step being delivered (0: the request's own
	// channel); fallback.go.
	Fallback     *ChannelFallback
	FallbackStep int
	// Test: signed with a test-mode key (issue 36): delivered to the
	// in-process simulator only, out of live traffic's limits.
	Test bool
}

// Job is the service's record of a request's queue job.
type Job struct {
	ID                    string
	WorkspaceID           string
	RequestID             string
	QueueJobID            int64
	Status                JobStatus
	AttemptsMade          int
	MaxAttempts           int
	QueuedAt              time.Time
	ScheduledAt           *time.Time
	StartedAt             *time.Time
	FinishedAt            *time.Time
	NextRetryAt           *time.Time
	LastErrorCode         string
	LastErrorMessage      string
	LastProviderAccountID string
	// RunOwner is the worker process whose run claimed the job last
	// (delivery.Engine.WorkerID); empty before its first run.
	RunOwner string
	// TraceParent is not stored: it is the traceparent of the job's last
	// delivery span, which a queue job of its own (a retry, a later turn)
	// carries so the next delivery continues the trace; "" when tracing
	// is off.
	TraceParent string
}

// Attempt is one provider call.
type Attempt struct {
	ID                  string
	WorkspaceID         string
	RequestID           string
	JobID               string
	ProviderAccountID   string
	ProviderKind        string
	ProviderDisplayName string
	Channel             Channel
	Success             bool
	FailureCode         string
	FailureMessage      string
	ProviderMessageID   string
	StartedAt           time.Time
	FinishedAt          time.Time
	RequestJSON         string // the rendered request, secrets redacted
	ResponseJSON        string // the provider's answer as received
	// Feedback lists the bounces and complaints reported for this
	// attempt's message (filled by the attempt history reads).
	Feedback []*DeliveryFeedback
}

// Event types (SPEC "Events").
const (
	EventDelivered = "notification.delivered"
	EventFailed    = "notification.failed"
	EventCanceled  = "notification.canceled"
)

// Event is an outbox row written with the state change that caused it.
type Event struct {
	ID          string
	WorkspaceID string
	Type        string
	RequestID   string
	Payload     map[string]any
	CreatedAt   time.Time
}

// DeadLetter is a job that spent its attempts.
type DeadLetter struct {
	ID           string
	WorkspaceID  string
	JobID        string
	RequestID    string
	Channel      Channel
	FailedReason string
	FailedAt     time.Time
	AttemptsMade int
}

// Template is a reusable message with versions.
type Template struct {
	ID                     string
	WorkspaceID            string
	Code                   string
	Channel                Channel
	Name                   string
	Status                 string // active | inactive
	ReviewStatus           string // PENDING | APPROVED | REJECTED for msgr_alimtalk, else ""
	ProviderAccountID      string
	VendorTemplateID       string
	SenderProfileKey       string
	LatestPublishedVersion int // highest published version of the default locale (no locale), 0 when none
	CreatedAt, UpdatedAt   time.Time
}

// TemplateVersion is one version of a template body.
type TemplateVersion struct {
	TemplateID  string
	Version     int
	Title       string
	Text        string
	HTML        string
	PublishedAt *time.Time
	CreatedAt   time.Time
	Locale      string // canonical BCP 47 tag; "" is the template's default locale
	LayoutID    string // layout wrapping the email body; "" is none
}

// TemplateVersionFilter pages a template's versions newest first.
type TemplateVersionFilter struct {
	Limit   int
	Before  int  // only versions numbered below it; 0: from the newest
	Summary bool // leave the bodies (Text, HTML) out
}

// Accept is one request to accept: the row, and the queue options of its
// job. After AcceptRequests, Existing is set when the idempotency key
// matched an earlier request (nothing was inserted), else Job is set but
// for a request accepted in a final state (Final), which has no job.
type Accept struct {
	Request     *Request
	MaxAttempts int
	// Final: the request is accepted in its final state (canceled: its
	// recipient's preferences forbid every channel, issue 32) and needs
	// no job.
	Final       bool
	Existing    *Request
	ExistingJob *Job // the existing request's job, when it has one
	Job         *Job
	// TraceParent is the W3C traceparent of the acceptance's span, which
	// the dispatch job carries so the delivery continues the request's
	// trace; "" when tracing is off.
	TraceParent string
}

// AttemptFilter pages attempt history newest first.
type AttemptFilter struct {
	RequestID string
	Limit     int
	Before    *Cursor
}

// RequestFilter pages requests newest first (requested_at, id), each
// field narrowing when set.
type RequestFilter struct {
	Status    RequestStatus
	Channel   Channel
	From, To  *time.Time
	Recipient string // exact recipient address
	RequestID string
	// Test: only test requests (true) or only live ones (false), issue 36.
	Test   *bool
	Limit  int
	Before *Cursor
}

// Counts are the metrics aggregates of a time range.
type Counts struct {
	TotalRequests int
	ByStatus      map[string]int
	ByChannel     map[string]int
	// ByChannelStatus counts requests per channel, then per status.
	ByChannelStatus map[string]map[string]int
	TotalAttempts   int
	SuccessAttempts int
	FailedAttempts  int
	// TestRequests and TestByStatus are the part of the request counts
	// signed with test-mode keys (issue 36); purged requests (hourly
	// rollups) count as live.
	TestRequests int
	TestByStatus map[string]int
}

// OpenJob is a non-terminal job with what the dashboard list shows.
type OpenJob struct {
	Job                 *Job
	Channel             Channel
	TemplateCode        string
	Recipient           string
	ProviderKind        string
	ProviderDisplayName string
}

// RequestEvent is the outbox event of type typ about r's current state,
// written in the transaction of the state change.
func RequestEvent(id, typ string, r *Request, now time.Time) *Event {
	e := &Event{ID: id, WorkspaceID: r.WorkspaceID, Type: typ, RequestID: r.ID, CreatedAt: now,
		Payload: map[string]any{
			"requestId": r.ID, "workspaceId": r.WorkspaceID, "channel": r.Channel, "status": string(r.Status),
			"recipientAddress": r.RecipientAddress, "selectedProviderAccountId": nilIfEmpty(r.SelectedProviderID),
			"selectedProviderMessageId": nilIfEmpty(r.SelectedMessageID), "finalErrorCode": nilIfEmpty(r.FinalErrorCode),
			"finalErrorMessage": nilIfEmpty(r.FinalErrorMessage), "metadata": r.Metadata,
			"deliveredChannel": nilIfEmpty(string(r.DeliveredChannel())), "fallbackStep": fallbackStep(r),
		}}
	// A send by recipient id or with a category (issue 32) says so; a send
	// by address without one keeps SPEC's payload exactly.
	if r.RecipientID != "" {
		e.Payload["recipientId"] = r.RecipientID
	}
	if r.Category != "" {
		e.Payload["category"] = r.Category
	}
	if r.Test {
		e.Payload["test"] = true
	}
	return e
}

// fallbackStep is the event's fallbackStep: null without a chain.
func fallbackStep(r *Request) any {
	if r.Fallback == nil {
		return nil
	}
	return r.FallbackStep
}

func nilIfEmpty(s string) any {
	if s == "" {
		return nil
	}
	return s
}

// AddRequests counts n requests of channel ch in status.
func (c *Counts) AddRequests(ch, status string, n int) {
	c.TotalRequests += n
	c.ByStatus[status] += n
	c.ByChannel[ch] += n
	if c.ByChannelStatus == nil {
		c.ByChannelStatus = map[string]map[string]int{}
	}
	if c.ByChannelStatus[ch] == nil {
		c.ByChannelStatus[ch] = map[string]int{}
	}
	c.ByChannelStatus[ch][status] += n
}
