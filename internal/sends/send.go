package sends

import (
	"context"
	"errors"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/notifyd/notifyd/internal/compose"
	"github.com/notifyd/notifyd/internal/gate"
	"github.com/notifyd/notifyd/internal/notify"
	"github.com/notifyd/notifyd/internal/usecase"
)

// SendInput is one notification as the API received it (already decoded
// strictly: unknown fields and wrong types were refused).
type SendInput struct {
	Channel          string
	RecipientAddress *string
	// RecipientID names a recipient profile in place of RecipientAddress
	// (issue 32): the address for the channel is the profile's.
	RecipientID                 *string
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
	// ChannelFallback is the cross-channel fallback chain (nil: none).
	ChannelFallback *[]*FallbackInput
	// Locale chooses the template version (issue 21); nil when absent.
	// validateSend replaces it with its canonical form.
	Locale *string
	// Category names one of the workspace's categories (issue 32): the
	// preferences of the recipient and the workspace decide the send.
	Category *string
	// SendWindow is the send's own window and Urgent exempts it from
	// every window (issue 32, item 5; window.go).
	SendWindow *WindowInput
	Urgent     bool
	// ActionURL and Data are the in-app message's (issue 33; inapp.go).
	ActionURL *string
	Data      map[string]any
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
	addr, err := checkRecipientChoice(f, in.RecipientAddress, in.RecipientID)
	if err != nil {
		return nil, err
	}
	for _, c := range []struct {
		name string
		v    string
		n    int
	}{
		{"recipient.address", addr, 320}, {"recipient.name", in.RecipientName, 120},
		{"content.templateCode", in.TemplateCode, 120}, {"idempotencyKey", in.IdempotencyKey, 120},
	} {
		if err := usecase.MaxLen(f(c.name), c.v, c.n); err != nil {
			return nil, err
		}
	}
	if err := compose.CheckContent(f, in.Title, in.Text, in.HTML, in.TemplateVariables); err != nil {
		return nil, err
	}
	if err := usecase.CheckRecipient(f, notify.Channel(in.Channel), addr, in.RecipientName, in.Title); err != nil {
		return nil, err
	}
	if err := compose.CheckMetadata(f("metadata"), in.Metadata); err != nil {
		return nil, err
	}
	if err := checkCategory(f, in.Category); err != nil {
		return nil, err
	}
	if err := checkWindow(f, in.SendWindow); err != nil {
		return nil, err
	}
	if err := checkInApp(f, in); err != nil {
		return nil, err
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
	if err := validateFallback(in, prefix); err != nil {
		return nil, err
	}
	if in.Locale != nil {
		canon, err := compose.ParseLocale(f("locale"), *in.Locale)
		if err != nil {
			return nil, err
		}
		*in.Locale = canon
	}
	if in.ScheduledAt != nil {
		t, err := usecase.ParseScheduledAt(*in.ScheduledAt, now)
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
// content, naming fields after prefix (a bulk item's). Failures here are
// acceptance failures (bulk leaves them out), but for a rendering over its
// bound (compose.RenderedTooLarge).
func (s *Service) buildRequest(ctx context.Context, tx notify.Tx, ws string, key *notify.APIKey, in *SendInput, sched *time.Time, now time.Time, prefix string) (*notify.Request, error) {
	ch := notify.Channel(in.Channel)
	var prof *notify.Recipient
	addr, name, locale := "", in.RecipientName, ""
	if in.Locale != nil {
		locale = *in.Locale
	}
	sc, err := sendContext(ctx, tx, ws, in)
	if err != nil {
		return nil, err
	}
	if in.RecipientID != nil {
		if prof, err = findProfile(sc, *in.RecipientID, prefix); err != nil {
			return nil, err
		}
		if addr, err = profileAddress(prof, ch, in.RecipientName, in.Title, prefix+"recipient."); err != nil {
			return nil, err
		}
		if name == "" {
			name = prof.Name
		}
		if locale == "" {
			// The profile's locale picks the template's version when the
			// send names none; a missing version falls back to the default.
			locale = prof.Locale
		}
	} else {
		addr = strings.TrimSpace(*in.RecipientAddress)
	}
	r := &notify.Request{ID: usecase.NewID(), WorkspaceID: ws, Source: notify.SourceAPI, Channel: ch, Status: notify.StatusQueued,
		RecipientAddress: addr, RecipientName: name, TemplateCode: in.TemplateCode,
		TemplateVariables: in.TemplateVariables, Metadata: in.Metadata, PreferredProviderIDs: in.PreferredProviderAccountIDs,
		IdempotencyKey: in.IdempotencyKey, RequestedAt: now, ScheduledAt: sched, UpdatedAt: now}
	if key != nil {
		r.APIKeyID, r.Test = key.ID, key.Test
	}
	if prof != nil {
		r.RecipientID = prof.ExternalID
		r.Decisions = append(r.Decisions, addressDecision(prof, ch, now))
	}
	if ch == notify.ChannelEmail {
		r.RecipientAddress = strings.ToLower(r.RecipientAddress)
	}
	var base compose.Message
	var layout *notify.Layout
	if in.TemplateCode != "" {
		t, v, err := compose.ResolveTemplate(ctx, tx, ws, key, in.TemplateCode, ch, locale)
		if err != nil {
			return nil, err
		}
		if layout, err = compose.VersionLayout(ctx, tx, ws, v); err != nil {
			return nil, err
		}
		base = compose.Message{Title: v.Title, Text: v.Text, HTML: v.HTML}
		r.VendorTemplateID, r.SenderProfileKey = t.VendorTemplateID, t.SenderProfileKey
	}
	vars, link := s.profileVariables(ws, prof, in, now)
	c, err := compose.Overlay(base, layout, in.Title, in.Text, in.HTML, in.TemplateCode != "", vars, prefix)
	if err != nil {
		return nil, err
	}
	r.Title, r.Text, r.HTML = c.Title, c.Text, c.HTML
	r.InApp = inAppContent(in)
	for _, id := range in.PreferredProviderAccountIDs {
		if _, err := tx.FindProviderAccount(ctx, ws, id); err != nil {
			if notify.IsNotFound(err) {
				return nil, notify.Invalid("preferredProviderAccountIds: provider account %s does not belong to this workspace", id)
			}
			return nil, err
		}
	}
	if err := s.buildFallback(ctx, tx, key, in, r, prof, locale, prefix); err != nil {
		return nil, err
	}
	if in.Category != nil {
		r.Category = *in.Category
	}
	var cat *notify.Category
	if r.Category != "" || prof != nil {
		if err := decidePreferences(r, sc, prefix); err != nil {
			return nil, err
		}
		cat = sc.Category
	}
	r.Headers = listUnsubscribe(r, cat, link)
	if !r.Status.Terminal() {
		if err := holdForWindows(r, sc, in, now, prefix); err != nil {
			return nil, err
		}
	}
	deliverAtAcceptance(r, prof, cat)
	return r, nil
}

// prepareOne validates and builds the request of one send for c; a
// refusal is set on c (and answers a nil request).
func (s *Service) prepareOne(ctx context.Context, c *acceptCall, in *SendInput) (*notify.Request, error) {
	now := s.Now()
	sched, err := s.validateSend(in, "", now)
	if err != nil {
		c.refuse = err
		return nil, nil
	}
	rs, err := s.buildRequests(ctx, c.Key, []*SendInput{in}, []*time.Time{sched}, now, false)
	if err != nil {
		return nil, err
	}
	c.refuse = rs[0].err
	if c.refuse != nil {
		return nil, nil
	}
	return rs[0].req, nil
}

// Send accepts one notification: its request row, job row and queue job
// are committed together with its nonce and its request-limit count, in
// the send group commit (accept.go), deduplicated by idempotency key
// within the workspace.
func (s *Service) Send(ctx context.Context, key *notify.APIKey, nonce *gate.Nonce, in *SendInput) (*SendResult, error) {
	var acc *notify.Accept
	err := s.submit(ctx, key, nonce, func(c *acceptCall) error {
		r, err := s.prepareOne(ctx, c, in)
		if err != nil || r == nil {
			return err
		}
		acc = &notify.Accept{Request: r, MaxAttempts: s.jobAttempts, Final: r.Status.Terminal()}
		c.accepts = []*notify.Accept{acc}
		return nil
	})
	if err != nil {
		return nil, err
	}
	res := acceptResult(acc)
	return &res, nil
}

// RefuseSend answers a send refused before its use case ran (a body that
// does not decode): like an accepted send it counts toward the request
// limits and records its nonce, in the send group commit, and answers
// err unless a limit answers 429 first.
func (s *Service) RefuseSend(ctx context.Context, key *notify.APIKey, nonce *gate.Nonce, err error) error {
	return s.submit(ctx, key, nonce, func(c *acceptCall) error {
		c.refuse = err
		return nil
	})
}

// submit prepares a send call with prepare (outside any transaction) and
// runs it in the send group commit. A call whose cached API key turns out
// to have changed wrote nothing: it is verified again against the stored
// key and prepared anew (the key's template list may differ).
func (s *Service) submit(ctx context.Context, key *notify.APIKey, nonce *gate.Nonce, prepare func(*acceptCall) error) error {
	nonce.Take()
	for try := 0; ; try++ {
		c := &acceptCall{Call: gate.Call{Key: key, Nonce: nonce}, ctx: ctx}
		if err := prepare(c); err != nil {
			return err
		}
		err := s.accept.do(c)
		if !errors.Is(err, gate.ErrStaleKey) {
			return err
		}
		if try == 2 {
			return notify.Unauthorized(gate.DetailInvalidKey)
		}
		if key, nonce, err = s.gate.Reverify(ctx, nonce); err != nil {
			return err
		}
		if err := gate.RequireScope(key, notify.ScopeNotificationsSend); err != nil {
			return s.gate.RefuseWithNonce(ctx, nonce, err)
		}
	}
}

// built is one send's request, or the 4xx that refuses it.
type built struct {
	req *notify.Request
	err error
}

// buildRequests resolves templates and renders each send (the items of a
// bulk send when bulk). The reads it needs (templates, preferred accounts,
// profiles, preferences, windows) run outside a transaction, and a plain
// text send needs none. A failure
// of one send is its own; an error of the database fails all.
func (s *Service) buildRequests(ctx context.Context, key *notify.APIKey, ins []*SendInput, scheds []*time.Time, now time.Time, bulk bool) ([]built, error) {
	return s.buildRequestsOf(ctx, key.WorkspaceID, key, ins, scheds, now, bulk)
}

// buildRequestsOf is buildRequests for workspace ws, with or without an
// API key (an inbound hook's sends have none).
func (s *Service) buildRequestsOf(ctx context.Context, ws string, key *notify.APIKey, ins []*SendInput, scheds []*time.Time, now time.Time, bulk bool) ([]built, error) {
	out := make([]built, len(ins))
	build := func(tx notify.Tx) error {
		if tx != nil && len(ins) > 1 {
			m := newTemplateMemo(tx)
			if err := m.prefetch(ctx, ws, ins); err != nil {
				return err
			}
			tx = m
		}
		for i, in := range ins {
			prefix := ""
			if bulk {
				prefix = itemPrefix(i)
			}
			r, err := s.buildRequest(ctx, tx, ws, key, in, scheds[i], now, prefix)
			if _, ok := notify.AsError(err); err != nil && !ok {
				return err
			}
			out[i] = built{req: r, err: err}
		}
		return nil
	}
	reads := false
	for _, in := range ins {
		reads = reads || in.TemplateCode != "" || in.RecipientID != nil || in.Category != nil || in.SendWindow != nil ||
			len(in.PreferredProviderAccountIDs) > 0 || fallbackReads(in)
	}
	if !reads {
		return out, build(nil)
	}
	// Without a transaction where the backend allows (Lookup): these reads
	// need no common snapshot, and on PostgreSQL a read transaction's BEGIN
	// and COMMIT were two of a send by recipient id's six round trips.
	return out, s.Store.Lookup(ctx, build)
}

func acceptResult(a *notify.Accept) SendResult {
	if a.Existing != nil {
		res := SendResult{RequestID: a.Existing.ID, Status: string(a.Existing.Status), Deduplicated: true, ScheduledAt: a.Existing.ScheduledAt}
		if a.ExistingJob != nil && a.ExistingJob.QueueJobID != 0 {
			id := itoa(a.ExistingJob.QueueJobID)
			res.QueueJobID = &id
		}
		return res
	}
	if a.Job == nil { // accepted in a final state: no job
		return SendResult{RequestID: a.Request.ID, Status: string(a.Request.Status), ScheduledAt: a.Request.ScheduledAt}
	}
	id := itoa(a.Job.QueueJobID)
	return SendResult{RequestID: a.Request.ID, Status: string(a.Request.Status), QueueJobID: &id, ScheduledAt: a.Request.ScheduledAt}
}

// itemPrefix names the fields of item i of a bulk send.
func itemPrefix(i int) string { return "items[" + itoa(int64(i)) + "]." }

// MaxBulkItems is the most items one bulk send may hold.
const MaxBulkItems = 500

// CheckBulkSize refuses a bulk send of more than MaxBulkItems items. The
// API checks it before decoding the items, so an oversized call answers
// this rule rather than a bad item's.
func CheckBulkSize(n int) error {
	if n > MaxBulkItems {
		return notify.Invalid("items must hold at most %d items", MaxBulkItems)
	}
	return nil
}

// SendBulk validates every item (one bad item refuses the call), then
// accepts the valid items together; items failing acceptance (template
// resolution) are left out. The call counts once toward the limits. A
// lane of notify.LaneBulk marks the items as bulk work, delivered behind
// transactional sends as a campaign's (issue 31, item 2).
func (s *Service) SendBulk(ctx context.Context, key *notify.APIKey, nonce *gate.Nonce, items []*SendInput, lane notify.Lane) (*BulkResult, error) {
	var accs []*notify.Accept
	err := s.submit(ctx, key, nonce, func(c *acceptCall) error {
		accs = nil
		if len(items) == 0 {
			c.refuse = notify.Invalid("items must hold at least one item")
			return nil
		}
		if err := CheckBulkSize(len(items)); err != nil {
			c.refuse = err
			return nil
		}
		now := s.Now()
		scheds := make([]*time.Time, len(items))
		for i, in := range items {
			sched, err := s.validateSend(in, itemPrefix(i), now)
			if err != nil {
				c.refuse = err
				return nil
			}
			scheds[i] = sched
		}
		rs, err := s.buildRequests(ctx, c.Key, items, scheds, now, true)
		if err != nil {
			return err
		}
		for _, b := range rs {
			// An item rendered over a bound fails a field rule: the whole
			// call is refused, as for an item failing validation.
			if tl := (*compose.RenderedTooLarge)(nil); errors.As(b.err, &tl) {
				c.refuse = tl.Err
				return nil
			}
		}
		for _, b := range rs {
			if b.err == nil { // an acceptance failure leaves its item out
				b.req.MarkedLane = lane
				accs = append(accs, &notify.Accept{Request: b.req, MaxAttempts: s.jobAttempts, Final: b.req.Status.Terminal()})
			}
		}
		c.accepts = accs
		return nil
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
	// Inbox is the inbox message of a request delivered on inapp (issue
	// 33), with its read, seen and archived times; nil otherwise, or once
	// the recipient deleted it.
	Inbox *notify.InboxMessage
	// DeliveryStatus is the request's delivery receipt (issue 35), and
	// AttemptReceipts each accepted attempt's, by attempt id.
	DeliveryStatus  notify.ReceiptView
	AttemptReceipts map[string]notify.ReceiptView
	// Receipts are the receipts themselves, oldest first (the console's
	// timeline).
	Receipts []*notify.Receipt
	// Engagement is an e-mail request's opens and clicks when tracked
	// (issue 35); nil when none were recorded.
	Engagement *notify.RequestEngagement
}

// GetRequest is the status lookup.
func (s *Service) GetRequest(ctx context.Context, ws, id string) (*RequestDetail, error) {
	if _, err := uuid.Parse(id); err != nil || len(id) != 36 {
		return nil, notify.Invalid("requestId must be a UUID")
	}
	d := &RequestDetail{}
	err := s.Store.View(ctx, func(tx notify.Tx) error {
		var err error
		if d.Request, err = tx.FindRequest(ctx, ws, id); err != nil {
			return usecase.NotFound(err, "Notification request")
		}
		if d.Job, err = tx.FindJobByRequest(ctx, ws, id); err != nil && !notify.IsNotFound(err) {
			return err
		}
		if d.Attempts, err = tx.FindAttemptsOfRequest(ctx, ws, id); err != nil {
			return err
		}
		if err := s.readReceipts(ctx, tx, d); err != nil {
			return err
		}
		if d.Request.Channel == notify.ChannelEmail || d.Request.DeliveredChannel() == notify.ChannelEmail {
			e, err := tx.FindRequestEngagement(ctx, ws, id)
			if err != nil && !notify.IsNotFound(err) {
				return err
			}
			d.Engagement = e
		}
		if d.Request.DeliveredChannel() == notify.ChannelInApp {
			ms, err := tx.FindInboxMessagesOfRequest(ctx, ws, id)
			if len(ms) > 0 {
				d.Inbox = ms[0]
			}
			return err
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return d, nil
}

// readReceipts fills d's delivery receipts (issue 35).
func (s *Service) readReceipts(ctx context.Context, tx notify.Tx, d *RequestDetail) error {
	rs, err := tx.FindReceiptsOfRequest(ctx, d.Request.WorkspaceID, d.Request.ID)
	if err != nil {
		return err
	}
	now := s.Now()
	d.Receipts = rs
	d.DeliveryStatus = notify.RequestReceipt(d.Request, rs, now)
	d.AttemptReceipts = make(map[string]notify.ReceiptView, len(rs))
	for _, rc := range rs {
		d.AttemptReceipts[rc.AttemptID] = rc.ViewAt(now)
	}
	return nil
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
	err := s.Store.Update(ctx, func(tx notify.Tx) error {
		r, err := tx.LockRequest(ctx, ws, id)
		if err != nil {
			return usecase.NotFound(err, "Notification request")
		}
		res = CancelResult{RequestID: r.ID, Status: string(r.Status)}
		if r.Status.Terminal() {
			return nil
		}
		now := s.Now()
		if err := s.cancelInTx(ctx, tx, r, now); err != nil {
			return err
		}
		res.Status, res.Canceled = string(r.Status), true
		return nil
	})
	if err != nil {
		return nil, err
	}
	return &res, nil
}

func (s *Service) cancelInTx(ctx context.Context, tx notify.Tx, r *notify.Request, now time.Time) error {
	if err := r.MoveTo(notify.StatusCanceled, now); err != nil {
		return err
	}
	r.FinalErrorCode, r.FinalErrorMessage = "canceled_by_api", "Canceled through the API"
	if err := tx.UpdateRequest(ctx, r); err != nil {
		return err
	}
	j, err := tx.FindJobByRequest(ctx, r.WorkspaceID, r.ID)
	if err == nil {
		wasProcessing := j.Status == notify.JobProcessing
		if err := j.MoveTo(notify.JobCanceled); err != nil {
			return err
		}
		j.FinishedAt = &now
		if err := tx.UpdateJob(ctx, j); err != nil {
			return err
		}
		// The queue job is removed when no other request still needs it
		// (one queue job carries the sends of a group commit).
		if !wasProcessing {
			open, err := tx.FindJobsOfQueueJob(ctx, j.QueueJobID)
			if err != nil {
				return err
			}
			if len(open) == 0 {
				if err := tx.CancelScheduledWork(ctx, j.QueueJobID); err != nil {
					return err
				}
			}
		}
	} else if !notify.IsNotFound(err) {
		return err
	}
	return usecase.Event(ctx, tx, notify.EventCanceled, r, now)
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
