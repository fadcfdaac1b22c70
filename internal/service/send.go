package service

import (
	"context"
	"errors"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/notifyd/notifyd/internal/notify"
	"github.com/notifyd/notifyd/internal/render"
)

// SendInput is one notification as the API received it (already decoded
// strictly: unknown fields and wrong types were refused).
type SendInput struct {
	Channel                     string
	RecipientAddress            *string
	RecipientName               string
	Text                        *string
	Title                       *string
	HTML                        *string
	TemplateCode                string
	TemplateVariables           map[string]string
	IdempotencyKey              string
	ScheduledAt                 *string
	PreferredProviderAccountIDs []string
	Metadata                    map[string]string
}

// SendResult is the answer for one accepted (or deduplicated) request.
type SendResult struct {
	RequestID    string
	Status       string
	QueueJobID   *string
	Deduplicated bool
	ScheduledAt  *time.Time
}

// BulkResult is the answer of a bulk send.
type BulkResult struct {
	Items        []SendResult
	Total        int
	Queued       int
	Deduplicated int
}

// ParseScheduledAt parses a strict ISO 8601 date-time with a T separator
// and a zone, and requires it in the future.
func ParseScheduledAt(s string, now time.Time) (time.Time, error) {
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil || len(s) < 20 || (s[10] != 'T') {
		return time.Time{}, notify.Invalid("scheduledAt must be a strict ISO 8601 date-time, for example 2026-01-02T15:04:05Z")
	}
	if !t.After(now) {
		return time.Time{}, notify.Invalid("scheduledAt must be in the future")
	}
	return t.UTC(), nil
}

func maxLen(field, s string, n int) error {
	if len([]rune(s)) > n {
		return notify.Invalid("%s must be at most %d characters", field, n)
	}
	return nil
}

// validateSend checks the field rules of SPEC "Send a notification" that
// need no database. prefix names the item in bulk errors.
func (s *Service) validateSend(in *SendInput, prefix string, now time.Time) (*time.Time, error) {
	f := func(name string) string { return prefix + name }
	if in.Channel == "" {
		return nil, notify.Invalid("%s is required", f("channel"))
	}
	if !notify.Channel(in.Channel).Valid() {
		return nil, notify.Invalid("%s must be one of sms, msgr_alimtalk, email, push_mobile, chata_webhook, chatb_webhook, chata_bot, chatb_bot", f("channel"))
	}
	if in.RecipientAddress == nil || strings.TrimSpace(*in.RecipientAddress) == "" {
		return nil, notify.Invalid("%s is required", f("recipient.address"))
	}
	checks := []struct {
		name string
		v    string
		n    int
	}{
		{"recipient.address", *in.RecipientAddress, 320}, {"recipient.name", in.RecipientName, 120},
		{"content.templateCode", in.TemplateCode, 120}, {"idempotencyKey", in.IdempotencyKey, 120},
	}
	if in.Title != nil {
		checks = append(checks, struct {
			name string
			v    string
			n    int
		}{"content.title", *in.Title, 200})
	}
	for _, c := range checks {
		if err := maxLen(f(c.name), c.v, c.n); err != nil {
			return nil, err
		}
	}
	if in.TemplateCode == "" && (in.Text == nil || *in.Text == "") {
		return nil, notify.Invalid("%s is required when content.templateCode is absent", f("content.text"))
	}
	if len(in.PreferredProviderAccountIDs) > 10 {
		return nil, notify.Invalid("%s must hold at most 10 ids", f("preferredProviderAccountIds"))
	}
	for _, id := range in.PreferredProviderAccountIDs {
		if _, err := uuid.Parse(id); err != nil || len(id) != 36 {
			return nil, notify.Invalid("%s must hold UUIDs", f("preferredProviderAccountIds"))
		}
	}
	if in.ScheduledAt != nil {
		t, err := ParseScheduledAt(*in.ScheduledAt, now)
		if err != nil {
			e, _ := notify.AsError(err)
			if prefix != "" {
				e = notify.Invalid("%s%s", prefix, e.Detail)
			}
			return nil, e
		}
		return &t, nil
	}
	return nil, nil
}

// buildRequest resolves the template (SPEC rules 3.1–3.6) and renders the
// content. Failures here are acceptance failures (bulk leaves them out).
func (s *Service) buildRequest(ctx context.Context, tx notify.Tx, ws string, key *notify.APIKey, in *SendInput, sched *time.Time, now time.Time) (*notify.Request, error) {
	ch := notify.Channel(in.Channel)
	r := &notify.Request{ID: newID(), WorkspaceID: ws, Source: notify.SourceAPI, Channel: ch, Status: notify.StatusQueued,
		RecipientAddress: strings.TrimSpace(*in.RecipientAddress), RecipientName: in.RecipientName, TemplateCode: in.TemplateCode,
		TemplateVariables: in.TemplateVariables, Metadata: in.Metadata, PreferredProviderIDs: in.PreferredProviderAccountIDs,
		IdempotencyKey: in.IdempotencyKey, RequestedAt: now, ScheduledAt: sched, UpdatedAt: now}
	if key != nil {
		r.APIKeyID = key.ID
	}
	if ch == notify.ChannelEmail {
		r.RecipientAddress = strings.ToLower(r.RecipientAddress)
	}
	if in.TemplateCode != "" {
		t, v, err := s.resolveTemplate(ctx, tx, ws, key, in.TemplateCode, ch)
		if err != nil {
			return nil, err
		}
		r.Title, r.Text, r.HTML = v.Title, v.Text, v.HTML
		r.VendorTemplateID, r.SenderProfileKey = t.VendorTemplateID, t.SenderProfileKey
	}
	if in.Text != nil {
		r.Text = *in.Text
	}
	if in.Title != nil {
		r.Title = *in.Title
	}
	if in.HTML != nil {
		r.HTML = *in.HTML
	}
	if in.TemplateCode != "" || len(in.TemplateVariables) > 0 {
		r.Title = render.Substitute(r.Title, in.TemplateVariables)
		r.Text = render.Substitute(r.Text, in.TemplateVariables)
		r.HTML = render.Substitute(r.HTML, render.HTMLEscapeVars(in.TemplateVariables))
	}
	for _, id := range in.PreferredProviderAccountIDs {
		if _, err := tx.FindProviderAccount(ctx, ws, id); err != nil {
			if notify.IsNotFound(err) {
				return nil, notify.Invalid("preferredProviderAccountIds: provider account %s does not belong to this workspace", id)
			}
			return nil, err
		}
	}
	return r, nil
}

// resolveTemplate applies SPEC rules 3.1, 3.2, 3.3 and 3.6.
func (s *Service) resolveTemplate(ctx context.Context, tx notify.Tx, ws string, key *notify.APIKey, code string, ch notify.Channel) (*notify.Template, *notify.TemplateVersion, error) {
	t, err := tx.FindTemplateByCode(ctx, ws, code, ch)
	if notify.IsNotFound(err) || (err == nil && t.Status != "active") {
		return nil, nil, notify.Invalid("Template %s is not an active template of channel %s", code, ch)
	}
	if err != nil {
		return nil, nil, err
	}
	if key != nil && !key.AllowsTemplate(code) {
		return nil, nil, notify.Forbidden("Template %s is not allowed for this API key", code)
	}
	if t.LatestPublishedVersion == 0 {
		return nil, nil, notify.Invalid("Template %s has no published version", code)
	}
	if ch == notify.ChannelAlimTalk && t.ReviewStatus != "APPROVED" {
		return nil, nil, notify.Invalid("Template %s is not approved", code)
	}
	vs, err := tx.FindTemplateVersions(ctx, t.ID)
	if err != nil {
		return nil, nil, err
	}
	for _, v := range vs {
		if v.Version == t.LatestPublishedVersion {
			return t, v, nil
		}
	}
	return nil, nil, notify.Invalid("Template %s has no published version", code)
}

// Send accepts one notification: request row and queue job in one
// transaction, deduplicated by idempotency key within the workspace.
// nonce, when not nil, is recorded in the same transaction.
func (s *Service) Send(ctx context.Context, key *notify.APIKey, nonce *Nonce, in *SendInput) (*SendResult, error) {
	now := s.now()
	sched, err := s.validateSend(in, "", now)
	if err != nil {
		return nil, s.refuseWithNonce(ctx, nonce, err)
	}
	var acc *notify.Accept
	err = s.store.Batch(ctx, func(tx notify.Tx) error {
		if err := s.recordNonce(ctx, tx, nonce); err != nil {
			return err
		}
		r, err := s.buildRequest(ctx, tx, key.WorkspaceID, key, in, sched, now)
		if err != nil {
			return s.refuseInTx(ctx, tx, nonce, err)
		}
		acc = &notify.Accept{Request: r, MaxAttempts: s.jobAttempts}
		return tx.AcceptRequests(ctx, []*notify.Accept{acc}, now)
	})
	var rf *refusal
	if errors.As(err, &rf) {
		return nil, s.refuseWithNonce(ctx, rf.nonce, rf.err)
	}
	if err != nil {
		return nil, err
	}
	res := acceptResult(acc)
	return &res, nil
}

func acceptResult(a *notify.Accept) SendResult {
	if a.Existing != nil {
		res := SendResult{RequestID: a.Existing.ID, Status: a.Existing.Status, Deduplicated: true, ScheduledAt: a.Existing.ScheduledAt}
		if a.ExistingJob != nil && a.ExistingJob.QueueJobID != 0 {
			id := itoa(a.ExistingJob.QueueJobID)
			res.QueueJobID = &id
		}
		return res
	}
	id := itoa(a.Job.QueueJobID)
	return SendResult{RequestID: a.Request.ID, Status: a.Request.Status, QueueJobID: &id, ScheduledAt: a.Request.ScheduledAt}
}

// SendBulk validates every item (one bad item rejects the call), then
// accepts the valid items in one transaction; items failing acceptance
// (template resolution) are left out.
func (s *Service) SendBulk(ctx context.Context, key *notify.APIKey, nonce *Nonce, items []*SendInput) (*BulkResult, error) {
	if len(items) == 0 {
		return nil, s.refuseWithNonce(ctx, nonce, notify.Invalid("items must hold at least one item"))
	}
	if len(items) > 500 {
		return nil, s.refuseWithNonce(ctx, nonce, notify.Invalid("items must hold at most 500 items"))
	}
	now := s.now()
	scheds := make([]*time.Time, len(items))
	for i, in := range items {
		sched, err := s.validateSend(in, "items["+itoa(int64(i))+"].", now)
		if err != nil {
			return nil, s.refuseWithNonce(ctx, nonce, err)
		}
		scheds[i] = sched
	}
	var accs []*notify.Accept
	err := s.store.Batch(ctx, func(tx notify.Tx) error {
		if err := s.recordNonce(ctx, tx, nonce); err != nil {
			return err
		}
		accs = accs[:0]
		for i, in := range items {
			r, err := s.buildRequest(ctx, tx, key.WorkspaceID, key, in, scheds[i], now)
			if err != nil {
				if _, ok := notify.AsError(err); ok {
					continue // an acceptance failure leaves this item out
				}
				return err
			}
			accs = append(accs, &notify.Accept{Request: r, MaxAttempts: s.jobAttempts})
		}
		return tx.AcceptRequests(ctx, accs, now)
	})
	if err != nil {
		return nil, err
	}
	out := &BulkResult{Items: make([]SendResult, len(accs))}
	for i, a := range accs {
		out.Items[i] = acceptResult(a)
		if a.Existing != nil {
			out.Deduplicated++
		}
	}
	out.Total = len(accs)
	out.Queued = out.Total - out.Deduplicated
	return out, nil
}

// RequestDetail is a request with its job and attempts.
type RequestDetail struct {
	Request  *notify.Request
	Job      *notify.Job
	Attempts []*notify.Attempt
}

// GetRequest is the status lookup.
func (s *Service) GetRequest(ctx context.Context, ws, id string) (*RequestDetail, error) {
	if _, err := uuid.Parse(id); err != nil || len(id) != 36 {
		return nil, notify.Invalid("requestId must be a UUID")
	}
	d := &RequestDetail{}
	err := s.store.View(ctx, func(tx notify.Tx) error {
		var err error
		if d.Request, err = tx.FindRequest(ctx, ws, id); err != nil {
			return notFound(err, "Notification request")
		}
		if d.Job, err = tx.FindJobByRequest(ctx, ws, id); err != nil && !notify.IsNotFound(err) {
			return err
		}
		d.Attempts, err = tx.FindAttemptsOfRequest(ctx, ws, id)
		return err
	})
	if err != nil {
		return nil, err
	}
	return d, nil
}

// CancelResult is the answer of a cancel.
type CancelResult struct {
	RequestID string
	Status    string
	Canceled  bool
}

// CancelRequest cancels a request that is not yet terminal (SPEC request
// state table): the pending queue job is removed, finalErrorCode is
// canceled_by_api and a notification.canceled event is written.
func (s *Service) CancelRequest(ctx context.Context, ws, id string, actor *string) (*CancelResult, error) {
	if _, err := uuid.Parse(id); err != nil || len(id) != 36 {
		return nil, notify.Invalid("requestId must be a UUID")
	}
	var res CancelResult
	err := s.store.Update(ctx, func(tx notify.Tx) error {
		r, err := tx.LockRequest(ctx, ws, id)
		if err != nil {
			return notFound(err, "Notification request")
		}
		res = CancelResult{RequestID: r.ID, Status: r.Status}
		if notify.TerminalStatus(r.Status) {
			return nil
		}
		now := s.now()
		if err := s.cancelInTx(ctx, tx, r, now); err != nil {
			return err
		}
		res.Status, res.Canceled = r.Status, true
		return nil
	})
	if err != nil {
		return nil, err
	}
	return &res, nil
}

func (s *Service) cancelInTx(ctx context.Context, tx notify.Tx, r *notify.Request, now time.Time) error {
	r.Status, r.FinalErrorCode, r.FinalErrorMessage, r.UpdatedAt = notify.StatusCanceled, "canceled_by_api", "Canceled through the API", now
	if err := tx.UpdateRequest(ctx, r); err != nil {
		return err
	}
	j, err := tx.FindJobByRequest(ctx, r.WorkspaceID, r.ID)
	if err == nil {
		if j.Status != notify.JobProcessing {
			if err := tx.CancelQueueJob(ctx, j.QueueJobID); err != nil {
				return err
			}
		}
		j.Status, j.FinishedAt = notify.JobCanceled, &now
		if err := tx.UpdateJob(ctx, j); err != nil {
			return err
		}
	} else if !notify.IsNotFound(err) {
		return err
	}
	return s.event(ctx, tx, notify.EventCanceled, r, now)
}

// event writes an outbox row for r.
func (s *Service) event(ctx context.Context, tx notify.Tx, typ string, r *notify.Request, now time.Time) error {
	return tx.CreateEvent(ctx, &notify.Event{ID: newID(), WorkspaceID: r.WorkspaceID, Type: typ, RequestID: r.ID, CreatedAt: now,
		Payload: map[string]any{
			"requestId": r.ID, "workspaceId": r.WorkspaceID, "channel": r.Channel, "status": r.Status,
			"recipientAddress": r.RecipientAddress, "selectedProviderAccountId": nilIfEmpty(r.SelectedProviderID),
			"selectedProviderMessageId": nilIfEmpty(r.SelectedMessageID), "finalErrorCode": nilIfEmpty(r.FinalErrorCode),
			"finalErrorMessage": nilIfEmpty(r.FinalErrorMessage), "metadata": r.Metadata,
		}})
}

func nilIfEmpty(s string) any {
	if s == "" {
		return nil
	}
	return s
}

func itoa(n int64) string {
	var b [20]byte
	i := len(b)
	neg := n < 0
	if neg {
		n = -n
	}
	for {
		i--
		b[i] = byte('0' + n%10)
		n /= 10
		if n == 0 {
			break
		}
	}
	if neg {
		i--
		b[i] = '-'
	}
	return string(b[i:])
}

// refuseInTx answers a domain error found inside the send transaction. The
// savepoint rollback would undo the nonce too, so it is recorded again
// after the transaction: a replay of a refused request still answers 401.
func (s *Service) refuseInTx(ctx context.Context, tx notify.Tx, nonce *Nonce, err error) error {
	if _, ok := notify.AsError(err); !ok || nonce == nil {
		return err
	}
	return &refusal{err: err, nonce: nonce}
}

// refusal carries a refused request's error and nonce out of its transaction.
type refusal struct {
	err   error
	nonce *Nonce
}

func (r *refusal) Error() string { return r.err.Error() }
func (r *refusal) Unwrap() error { return r.err }
