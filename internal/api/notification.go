package api

import (
	"encoding/json"
	"net/http"

	"github.com/notifyd/notifyd/internal/notify"
	"github.com/notifyd/notifyd/internal/sends"
)

// sendsAPI are the handlers of the sends room.
type sendsAPI struct {
	*API
	room *sends.Service
}

// routes are the Notification API's send routes, the queue's jobs,
// attempts, dead letters and metrics, and the reads the console needs.
func (a sendsAPI) routes() []Route {
	all, op, admin := notify.RolesAll, notify.RolesOperator, notify.RolesAdmin
	send, read := notify.ScopeNotificationsSend, notify.ScopeNotificationsRead
	return append([]Route{
		// Notification API (HMAC-signed, enveloped).
		{Method: "POST", Path: "/v1/notifications", auth: authSigned, Scope: send, ownNonce: true, rateLimited: true, h: a.handleSend},
		{Method: "POST", Path: "/v1/notifications/bulk", auth: authSigned, Scope: send, ownNonce: true, rateLimited: true, h: a.handleSendBulk},
		{Method: "GET", Path: "/v1/notifications/{requestId}", auth: authSigned, Scope: read, rateLimited: true, h: a.handleRequestGet},
		{Method: "POST", Path: "/v1/notifications/{requestId}/cancel", auth: authSigned, Scope: send, rateLimited: true, h: a.handleRequestCancel},
		{Method: "GET", Path: "/v1/notifications/{requestId}/explanation", auth: authSigned, Scope: read, rateLimited: true, h: a.handleExplanation},

		// Queue jobs, attempts, dead letters, metrics.
		{Method: "GET", Path: "/v1/jobs", auth: authDashboard, Roles: all, h: a.handleJobList},
		{Method: "POST", Path: "/v1/jobs/{id}/cancel", auth: authDashboard, Roles: op, h: a.handleJobCancel},
		{Method: "GET", Path: "/v1/attempts", auth: authDashboard, Roles: all, h: a.handleAttemptList},
		{Method: "GET", Path: "/v1/dead-letter", auth: authDashboard, Roles: admin, h: a.handleDeadLetterList},
		{Method: "POST", Path: "/v1/dead-letter/replay", auth: authDashboard, Roles: op, h: a.handleDeadLetterReplaySet},
		{Method: "POST", Path: "/v1/dead-letter/{jobId}/replay", auth: authDashboard, Roles: op, h: a.handleDeadLetterReplay},
		{Method: "GET", Path: "/v1/metrics", auth: authDashboard, Roles: all, h: a.handleMetrics},
	}, a.requestRoutes()...)
}

// sendBody is the strict schema of SPEC "Send a notification", plus
// channelFallback (cross-channel fallback, docs/DECISIONS.md).
type sendBody struct {
	Channel                     string            `json:"channel"`
	Recipient                   *sendRecipient    `json:"recipient"`
	Content                     *sendContent      `json:"content"`
	IdempotencyKey              string            `json:"idempotencyKey"`
	ScheduledAt                 *string           `json:"scheduledAt"`
	PreferredProviderAccountIDs []string          `json:"preferredProviderAccountIds"`
	Metadata                    map[string]string `json:"metadata"`
	ChannelFallback             *[]*fallbackStep  `json:"channelFallback"`
	Locale                      *string           `json:"locale"`   // issue 21
	Category                    *string           `json:"category"` // issue 32
	SendWindow                  *windowIn         `json:"sendWindow"`
	Urgent                      bool              `json:"urgent"`
	// DryRun answers what the send would do and writes nothing of it.
	DryRun bool `json:"dryRun"`
}

type sendRecipient struct {
	Address *string `json:"address"`
	// ID names a recipient profile in place of Address (issue 32).
	ID   *string `json:"id"`
	Name string  `json:"name"`
}

type sendContent struct {
	Text              *string           `json:"text"`
	Title             *string           `json:"title"`
	HTML              *string           `json:"html"`
	TemplateCode      string            `json:"templateCode"`
	TemplateVariables map[string]string `json:"templateVariables"`
	// ActionURL and Data are an in-app message's (issue 33).
	ActionURL *string        `json:"actionUrl"`
	Data      map[string]any `json:"data"`
}

// fallbackStep is one step of channelFallback: a channel with, optionally,
// its own recipient and content in the send's shape.
type fallbackStep struct {
	Channel   string         `json:"channel"`
	Recipient *sendRecipient `json:"recipient"`
	Content   *sendContent   `json:"content"`
}

func (f *fallbackStep) input() *sends.FallbackInput {
	if f == nil {
		return nil
	}
	in := &sends.FallbackInput{Channel: f.Channel}
	if f.Recipient != nil {
		in.HasRecipient, in.RecipientAddress, in.RecipientID, in.RecipientName = true, f.Recipient.Address, f.Recipient.ID, f.Recipient.Name
	}
	if c := f.Content; c != nil {
		in.HasContent, in.Text, in.Title, in.HTML = true, c.Text, c.Title, c.HTML
		in.HasInApp = c.ActionURL != nil || c.Data != nil
		in.TemplateCode, in.TemplateVariables = c.TemplateCode, c.TemplateVariables
	}
	return in
}

func (b *sendBody) input() *sends.SendInput {
	in := &sends.SendInput{Channel: b.Channel, IdempotencyKey: b.IdempotencyKey, ScheduledAt: b.ScheduledAt,
		PreferredProviderAccountIDs: b.PreferredProviderAccountIDs, Metadata: b.Metadata, Locale: b.Locale,
		Category: b.Category, Urgent: b.Urgent}
	if w := b.SendWindow; w != nil {
		in.SendWindow = &sends.WindowInput{Hours: w.Hours, Days: w.Days, TimeZone: w.TimeZone}
	}
	if b.Recipient != nil {
		in.RecipientAddress, in.RecipientID, in.RecipientName = b.Recipient.Address, b.Recipient.ID, b.Recipient.Name
	}
	if b.Content != nil {
		in.Text, in.Title, in.HTML = b.Content.Text, b.Content.Title, b.Content.HTML
		in.TemplateCode, in.TemplateVariables = b.Content.TemplateCode, b.Content.TemplateVariables
		in.ActionURL, in.Data = b.Content.ActionURL, b.Content.Data
	}
	if b.ChannelFallback != nil {
		steps := make([]*sends.FallbackInput, len(*b.ChannelFallback))
		for i, f := range *b.ChannelFallback {
			steps[i] = f.input()
		}
		in.ChannelFallback = &steps
	}
	return in
}

type sendJSON struct {
	Status       string  `json:"status"`
	RequestID    string  `json:"requestId"`
	QueueJobID   *string `json:"queueJobId"`
	Deduplicated bool    `json:"deduplicated"`
	ScheduledAt  *string `json:"scheduledAt"`
}

func sendResult(r sends.SendResult) sendJSON {
	return sendJSON{Status: r.Status, RequestID: r.RequestID, QueueJobID: r.QueueJobID, Deduplicated: r.Deduplicated,
		ScheduledAt: TimestampPtr(r.ScheduledAt)}
}

func (a sendsAPI) handleSend(c *call) error {
	var b sendBody
	if err := c.decode(&b); err != nil {
		return err
	}
	if b.DryRun {
		res, err := a.room.DryRun(c.ctx, c.key, c.nonce, b.input())
		if err != nil {
			return err
		}
		return c.ok(http.StatusOK, dryRunBody(res))
	}
	res, err := a.room.Send(c.ctx, c.key, c.nonce, b.input())
	if err != nil {
		return err
	}
	return c.ok(http.StatusCreated, sendResult(*res))
}

// dryRunBody is a dry run's answer: the explanation's fields for the
// request as it would be accepted, the suppression and the route order.
func dryRunBody(d *sends.DryRunResult) map[string]any {
	out := explanationBody(d.Request)
	delete(out, "requestId") // nothing was created
	out["dryRun"] = true
	out["startChannel"] = d.Request.StepChannel()
	out["suppressed"] = d.Suppressed
	routes := make([]map[string]any, len(d.Routes))
	for i, rt := range d.Routes {
		routes[i] = map[string]any{"providerAccountId": rt.Account.ID, "providerKind": rt.Account.ProviderKind,
			"displayName": rt.Account.DisplayName, "priority": rt.Priority, "breaker": rt.Breaker, "openedUntil": TimestampPtr(rt.OpenedUntil)}
	}
	out["routes"] = routes
	return out
}

func (a sendsAPI) handleSendBulk(c *call) error {
	var b struct {
		Items *[]json.RawMessage `json:"items"`
		// Lane "bulk" marks the items as bulk work (issue 31, item 2).
		Lane *string `json:"lane"`
	}
	if err := c.decode(&b); err != nil {
		return err
	}
	if b.Items == nil {
		return notify.Invalid("items is required")
	}
	lane := notify.LaneTransactional
	if b.Lane != nil {
		switch *b.Lane {
		case "transactional":
		case "bulk":
			lane = notify.LaneBulk
		default:
			return notify.Invalid(`lane must be "transactional" or "bulk"`)
		}
	}
	if err := sends.CheckBulkSize(len(*b.Items)); err != nil {
		return err
	}
	items := make([]*sends.SendInput, len(*b.Items))
	for i, raw := range *b.Items {
		var sb sendBody
		if err := decodeJSON(raw, &sb); err != nil {
			e, _ := notify.AsError(err)
			return notify.Invalid("items[%d]: %s", i, e.Detail)
		}
		items[i] = sb.input()
	}
	res, err := a.room.SendBulk(c.ctx, c.key, c.nonce, items, lane)
	if err != nil {
		return err
	}
	out := make([]sendJSON, len(res.Items))
	for i, r := range res.Items {
		out[i] = sendResult(r)
	}
	return c.ok(http.StatusCreated, map[string]any{"status": "queued", "total": res.Total, "queued": res.Queued,
		"deduplicated": res.Deduplicated, "items": out})
}

func (a sendsAPI) handleRequestGet(c *call) error {
	d, err := a.room.GetRequest(c.ctx, c.key.WorkspaceID, c.r.PathValue("requestId"))
	if err != nil {
		return err
	}
	return c.ok(http.StatusOK, requestBody(d))
}

// handleExplanation answers what was decided about a request and why
// (issue 32, item 7).
func (a sendsAPI) handleExplanation(c *call) error {
	d, err := a.room.GetRequest(c.ctx, c.key.WorkspaceID, c.r.PathValue("requestId"))
	if err != nil {
		return err
	}
	return c.ok(http.StatusOK, explanationBody(d.Request))
}

func explanationBody(r *notify.Request) map[string]any {
	ds := make([]map[string]any, len(r.Decisions))
	for i, d := range r.Decisions {
		ds[i] = map[string]any{"stage": d.Stage, "at": Timestamp(d.At), "kind": d.Kind, "channel": strOrNil(string(d.Channel)),
			"outcome": d.Outcome, "rule": strOrNil(d.Rule), "detail": strOrNil(d.Detail), "until": TimestampPtr(d.Until)}
	}
	return map[string]any{"requestId": r.ID, "status": r.Status, "channel": r.Channel, "recipientId": strOrNil(r.RecipientID),
		"recipientAddress": r.RecipientAddress, "category": strOrNil(r.Category), "scheduledAt": TimestampPtr(r.ScheduledAt),
		"finalErrorCode": strOrNil(r.FinalErrorCode), "finalErrorMessage": strOrNil(r.FinalErrorMessage), "decisions": ds}
}

func (a sendsAPI) handleRequestCancel(c *call) error {
	res, err := a.room.CancelRequest(c.ctx, c.key.WorkspaceID, c.r.PathValue("requestId"), nil)
	if err != nil {
		return err
	}
	return c.ok(http.StatusOK, map[string]any{"requestId": res.RequestID, "status": res.Status, "canceled": res.Canceled})
}

func strOrNil(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

func attemptBody(at *notify.Attempt) map[string]any {
	status := "failure"
	if at.Success {
		status = "success"
	}
	m := map[string]any{
		"notificationJobId": at.JobID, "providerAccountId": at.ProviderAccountID, "providerKind": at.ProviderKind,
		"providerDisplayName": at.ProviderDisplayName, "status": status, "failureCode": strOrNil(at.FailureCode),
		"failureMessage": strOrNil(at.FailureMessage), "providerMessageId": strOrNil(at.ProviderMessageID),
		"startedAt": Timestamp(at.StartedAt), "finishedAt": Timestamp(at.FinishedAt),
		// The channel of the call: a request's cross-channel fallback
		// sends through more than one.
		"channel": at.Channel,
	}
	if len(at.Feedback) > 0 {
		m["deliveryFeedback"] = feedbackBody(at.Feedback) // bounces and complaints reported later
	}
	return m
}

func jobBody(j *notify.Job) map[string]any {
	if j == nil {
		return nil
	}
	var lastErr any
	if j.LastErrorCode != "" {
		lastErr = map[string]any{"code": j.LastErrorCode, "message": j.LastErrorMessage}
	}
	return map[string]any{"id": j.ID, "queueJobId": itoa(j.QueueJobID), "status": j.Status, "attemptsMade": j.AttemptsMade,
		"maxAttempts": j.MaxAttempts, "queuedAt": Timestamp(j.QueuedAt), "scheduledAt": TimestampPtr(j.ScheduledAt),
		"startedAt": TimestampPtr(j.StartedAt), "finishedAt": TimestampPtr(j.FinishedAt), "lastError": lastErr}
}

func requestBody(d *sends.RequestDetail) map[string]any {
	r := d.Request
	attempts := make([]map[string]any, len(d.Attempts))
	for i, at := range d.Attempts {
		attempts[i] = attemptBody(at)
		// An accepted attempt of a kind that reports delivery shows its
		// receipt (issue 35).
		if rc, ok := d.AttemptReceipts[at.ID]; ok {
			attempts[i]["deliveryStatus"] = rc
		}
	}
	var job any
	if d.Job != nil {
		job = jobBody(d.Job)
	}
	out := map[string]any{
		"requestId": r.ID, "workspaceId": r.WorkspaceID, "channel": r.Channel, "status": r.Status,
		"recipientAddress": r.RecipientAddress, "recipientId": strOrNil(r.RecipientID), "requestedAt": Timestamp(r.RequestedAt), "scheduledAt": TimestampPtr(r.ScheduledAt),
		"selectedProviderAccountId": strOrNil(r.SelectedProviderID), "selectedProviderMessageId": strOrNil(r.SelectedMessageID),
		"finalErrorCode": strOrNil(r.FinalErrorCode), "finalErrorMessage": strOrNil(r.FinalErrorMessage),
		"job": job, "attempts": attempts,
		"deliveredChannel": strOrNil(string(r.DeliveredChannel())), "channelFallback": fallbackBody(r),
		// The vendor's delivery report, beside SPEC's status (issue 35).
		"deliveryStatus": d.DeliveryStatus,
		// Signed with a test-mode key (issue 36): delivered to the built-in
		// simulator only.
		"test": r.Test,
	}
	// An e-mail request shows its opens and clicks (issue 35, item 4):
	// null when tracking recorded none.
	if r.Channel == notify.ChannelEmail || r.DeliveredChannel() == notify.ChannelEmail {
		out["engagement"] = engagementBody(d.Engagement)
	}
	// A request delivered to the inbox (issue 33) shows its message's
	// states; null once the recipient deleted it. Other answers are SPEC's.
	if r.DeliveredChannel() == notify.ChannelInApp {
		var inbox any
		if m := d.Inbox; m != nil {
			inbox = map[string]any{"messageId": m.ID, "readAt": TimestampPtr(m.ReadAt), "seenAt": TimestampPtr(m.SeenAt),
				"archivedAt": TimestampPtr(m.ArchivedAt)}
		}
		out["inbox"] = inbox
	}
	return out
}

// fallbackBody is the progress of a request's cross-channel fallback: the
// step being (or last) delivered (0: the request's own channel) and each
// step with its status; null without a chain.
func fallbackBody(r *notify.Request) any {
	if r.Fallback == nil {
		return nil
	}
	steps := make([]map[string]any, len(r.Fallback.Steps))
	for i, st := range r.Fallback.Steps {
		steps[i] = map[string]any{"step": i + 1, "channel": st.Channel, "recipientAddress": st.RecipientAddress,
			"templateCode": strOrNil(st.TemplateCode), "status": r.StepStatus(i + 1)}
	}
	return map[string]any{"currentStep": r.FallbackStep, "currentChannel": r.StepChannel(), "steps": steps}
}

func itoa(n int64) string {
	b, _ := json.Marshal(n)
	return string(b)
}

// engagementBody is a request's engagement as lookups show it; nil when
// none was recorded.
func engagementBody(e *notify.RequestEngagement) any {
	if e == nil {
		return nil
	}
	return map[string]any{"opens": e.Opens, "clicks": e.Clicks, "firstOpenedAt": TimestampPtr(e.FirstOpenedAt),
		"firstClickedAt": TimestampPtr(e.FirstClickedAt), "likelyScannerOpens": e.ScannerOpens,
		"likelyScannerClicks": e.ScannerClicks, "lastAt": Timestamp(e.LastAt)}
}
