package newsletter

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/notifyd/notifyd/internal/notify"
	"github.com/notifyd/notifyd/internal/usecase"
)

// Campaign limits (SPEC "Other constants").
const (
	MaxCampaignName        = 200
	MaxCampaignSubject     = 200
	MaxCampaignText        = 100_000
	MaxCampaignHTML        = 500_000
	MaxCampaignFilterBytes = 64 << 10
)

// DetailAudienceAttributes is the fail-closed detail of SPEC's audience rule.
const DetailAudienceAttributes = "audienceFilter.attributes must contain at least one string/number/boolean value"

// CampaignInput is the body of create and update; nil is absent.
// AudienceFilter is the raw JSON object; "" with AudienceFilterSet removes
// it. ClearSchedule is scheduledAt: null on update.
type CampaignInput struct {
	Name               *string
	Channel            *string
	Subject            *string
	ContentText        *string
	ContentHTML        *string
	IsAdvertisement    *bool
	IncludeUnsubscribe *bool
	AudienceFilter     *string
	ScheduledAt        *string
	ClearSchedule      bool
}

// CampaignDetail is a campaign with its live figures.
type CampaignDetail struct {
	Campaign      *notify.Campaign
	AudienceSize  int
	DeliveryStats map[string]int
	// EstimatedFinishAt is when a sending campaign is expected to end
	// (estimate.go); nil otherwise.
	EstimatedFinishAt *time.Time
}

// CampaignSendResult is the answer of a send.
type CampaignSendResult struct {
	CampaignID   string
	Status       string
	AudienceSize int
	ScheduledAt  *time.Time
	FanoutJobID  string
}

// ParseAudience applies SPEC's audience rule to a stored filter: no filter
// or no attributes key targets everyone (nil); attributes holding no
// string, number or boolean value is 400 (fail-closed). Numbers and
// booleans compare as their string forms. A condition with a null, array
// or object value can match no subscriber (string attributes), so it
// makes the audience empty rather than being ignored.
func ParseAudience(raw string) (*notify.Audience, error) {
	if raw == "" {
		return nil, nil
	}
	var f map[string]json.RawMessage
	if err := json.Unmarshal([]byte(raw), &f); err != nil {
		return nil, notify.Invalid("audienceFilter must be an object")
	}
	attrs, ok := f["attributes"]
	if !ok {
		return nil, nil
	}
	var conds map[string]json.RawMessage
	if t := bytes.TrimSpace(attrs); len(t) == 0 || t[0] != '{' || json.Unmarshal(t, &conds) != nil {
		return nil, notify.Invalid(DetailAudienceAttributes)
	}
	aud := &notify.Audience{Conds: map[string]string{}}
	for k, v := range conds {
		if s, ok := scalarString(v); ok {
			aud.Conds[k] = s
		} else {
			aud.Never = true
		}
	}
	if len(aud.Conds) == 0 {
		return nil, notify.Invalid(DetailAudienceAttributes)
	}
	return aud, nil
}

// scalarString renders a JSON string, number or boolean as the string it
// is compared as (numbers as JavaScript's String() does for usual values).
func scalarString(v json.RawMessage) (string, bool) {
	t := bytes.TrimSpace(v)
	if len(t) == 0 {
		return "", false
	}
	switch c := t[0]; {
	case c == '"':
		var s string
		return s, json.Unmarshal(t, &s) == nil
	case string(t) == "true" || string(t) == "false":
		return string(t), true
	case c == '-' || c >= '0' && c <= '9':
		f, err := strconv.ParseFloat(string(t), 64)
		if err != nil || math.IsInf(f, 0) {
			return "", false
		}
		if math.Abs(f) < 1e21 {
			return strconv.FormatFloat(f, 'f', -1, 64), true
		}
		return strconv.FormatFloat(f, 'g', -1, 64), true
	}
	return "", false
}

// validFilterShape checks at create and update that audienceFilter is an
// object; its content is judged at send and lookup (SPEC).
func validFilterShape(raw string) error {
	if len(raw) > MaxCampaignFilterBytes {
		return notify.Invalid("audienceFilter must be at most %d bytes", MaxCampaignFilterBytes)
	}
	if err := usecase.ValidText("audienceFilter", raw); err != nil {
		return err
	}
	var f map[string]any
	if err := json.Unmarshal([]byte(raw), &f); err != nil {
		return notify.Invalid("audienceFilter must be an object")
	}
	if jsonHasNUL(f) {
		// An escaped NUL (the console's filter is marshalled from its form)
		// would reach PostgreSQL as a lookup parameter.
		return notify.Invalid("audienceFilter" + usecase.DetailNotText)
	}
	return nil
}

// jsonHasNUL reports whether a decoded JSON value holds a NUL in a key or
// a string.
func jsonHasNUL(v any) bool {
	switch x := v.(type) {
	case string:
		return strings.IndexByte(x, 0) >= 0
	case map[string]any:
		for k, e := range x {
			if strings.IndexByte(k, 0) >= 0 || jsonHasNUL(e) {
				return true
			}
		}
	case []any:
		for _, e := range x {
			if jsonHasNUL(e) {
				return true
			}
		}
	}
	return false
}

func (in *CampaignInput) validate() error {
	// Console forms reach here as raw bytes (issue 29, finding 8).
	for _, f := range []struct {
		name string
		v    *string
	}{{"name", in.Name}, {"subject", in.Subject}, {"contentText", in.ContentText}, {"contentHtml", in.ContentHTML}} {
		if f.v != nil {
			if err := usecase.ValidText(f.name, *f.v); err != nil {
				return err
			}
		}
	}
	if in.Name != nil && (strings.TrimSpace(*in.Name) == "" || len([]rune(*in.Name)) > MaxCampaignName) {
		return notify.Invalid("name must be 1 to %d characters", MaxCampaignName)
	}
	if in.Subject != nil {
		if err := usecase.MaxLen("subject", *in.Subject, MaxCampaignSubject); err != nil {
			return err
		}
		if err := usecase.OneLine("subject", *in.Subject); err != nil {
			return err
		}
	}
	if in.ContentText != nil && (*in.ContentText == "" || len([]rune(*in.ContentText)) > MaxCampaignText) {
		return notify.Invalid("contentText must be 1 to %d characters", MaxCampaignText)
	}
	if in.ContentHTML != nil {
		if err := usecase.MaxLen("contentHtml", *in.ContentHTML, MaxCampaignHTML); err != nil {
			return err
		}
	}
	if in.AudienceFilter != nil && *in.AudienceFilter != "" {
		if err := validFilterShape(*in.AudienceFilter); err != nil {
			return err
		}
	}
	return nil
}

// apply copies the present fields onto c and checks the rules that span
// fields: an email campaign needs a subject, an advertisement always
// carries the unsubscribe footer (API-DECISIONS section 8).
func (in *CampaignInput) apply(c *notify.Campaign, now time.Time) error {
	if in.Name != nil {
		c.Name = *in.Name
	}
	if in.Subject != nil {
		c.Subject = *in.Subject
	}
	if in.ContentText != nil {
		c.ContentText = *in.ContentText
	}
	if in.ContentHTML != nil {
		c.ContentHTML = *in.ContentHTML
	}
	if in.IsAdvertisement != nil {
		c.IsAdvertisement = *in.IsAdvertisement
	}
	if in.IncludeUnsubscribe != nil {
		c.IncludeUnsubscribe = *in.IncludeUnsubscribe
	}
	if in.AudienceFilter != nil {
		c.AudienceFilter = *in.AudienceFilter
	}
	if in.ClearSchedule {
		c.ScheduledAt = nil
	}
	if in.ScheduledAt != nil {
		t, err := usecase.ParseScheduledAt(*in.ScheduledAt, now)
		if err != nil {
			return err
		}
		c.ScheduledAt = &t
	}
	if c.Channel == notify.ChannelEmail && strings.TrimSpace(c.Subject) == "" {
		return notify.Invalid("subject is required for email campaigns")
	}
	if c.IsAdvertisement && !c.IncludeUnsubscribe {
		return notify.Invalid("includeUnsubscribe cannot be false for an advertisement (isAdvertisement: true)")
	}
	return nil
}

func campaignPayload(c *notify.Campaign) map[string]any {
	return map[string]any{"name": c.Name, "channel": c.Channel, "status": c.Status, "isAdvertisement": c.IsAdvertisement}
}

// CreateCampaign creates a draft (audit campaign.create).
func (s *Service) CreateCampaign(ctx context.Context, a *usecase.Actor, in CampaignInput) (*notify.Campaign, error) {
	if in.Name == nil {
		return nil, notify.Invalid("name is required")
	}
	if in.Channel == nil || *in.Channel == "" {
		return nil, notify.Invalid("channel is required")
	}
	if notify.Channel(*in.Channel) != notify.ChannelEmail {
		return nil, notify.Invalid("channel must be email")
	}
	if in.ContentText == nil {
		return nil, notify.Invalid("contentText is required")
	}
	if err := in.validate(); err != nil {
		return nil, err
	}
	now := s.Now()
	c := &notify.Campaign{ID: usecase.NewID(), WorkspaceID: a.WorkspaceID, Channel: notify.ChannelEmail, Status: notify.CampaignDraft,
		IsAdvertisement: true, IncludeUnsubscribe: true, CreatedAt: now, UpdatedAt: now}
	if err := in.apply(c, now); err != nil {
		return nil, err
	}
	err := s.Store.Update(ctx, func(tx notify.Tx) error {
		if err := tx.CreateCampaign(ctx, c); err != nil {
			return err
		}
		return s.Audit(ctx, tx, a, a.WorkspaceID, "campaign.create", "campaign", c.ID, campaignPayload(c))
	})
	if err != nil {
		return nil, err
	}
	return c, nil
}

// ListCampaigns returns a page (limit 1 to 200, default 50), newest first.
func (s *Service) ListCampaigns(ctx context.Context, a *usecase.Actor, status string, limit, offset int) ([]*notify.Campaign, int, int, error) {
	if limit == 0 {
		limit = 50
	}
	if limit < 1 || limit > 200 {
		return nil, 0, 0, notify.Invalid("limit must be between 1 and 200")
	}
	if offset < 0 {
		return nil, 0, 0, notify.Invalid("offset must be 0 or greater")
	}
	if status != "" && !notify.CampaignStatus(status).Valid() {
		return nil, 0, 0, notify.Invalid("status must be one of draft, scheduled, sending, paused, sent, canceled, failed")
	}
	var out []*notify.Campaign
	var total int
	err := s.Store.View(ctx, func(tx notify.Tx) (err error) {
		out, total, err = tx.FindCampaigns(ctx, a.WorkspaceID, notify.CampaignStatus(status), limit, offset)
		return err
	})
	return out, total, limit, err
}

// findCampaign loads a campaign of the actor's workspace (404 otherwise).
func findCampaign(ctx context.Context, tx notify.Tx, ws, id string) (*notify.Campaign, error) {
	c, err := tx.FindCampaign(ctx, ws, id)
	return c, usecase.NotFound(err, "Campaign")
}

// lockCampaignIn loads a campaign of the workspace (404 otherwise) and,
// when its status is one of statuses, takes its row's lock (a conditional
// no-op move) and reads it again under the lock, so a concurrent send,
// cancel or edit is either seen here or waits for this transaction. ok is
// false when the status is none of statuses (the caller answers 409).
// Taking the campaign's lock first keeps the order a cancel and a fan-out
// batch use; locking it last deadlocked against them on PostgreSQL.
func lockCampaignIn(ctx context.Context, tx notify.Tx, ws, id string, statuses []notify.CampaignStatus, now time.Time) (*notify.Campaign, bool, error) {
	for {
		c, err := findCampaign(ctx, tx, ws, id)
		if err != nil {
			return nil, false, err
		}
		if !slices.Contains(statuses, c.Status) {
			return c, false, nil
		}
		ok, err := tx.MoveCampaign(ctx, ws, id, []notify.CampaignStatus{c.Status}, c.Status, now)
		if err != nil {
			return nil, false, err
		}
		if ok {
			c, err = findCampaign(ctx, tx, ws, id)
			return c, err == nil, err
		}
		// The status changed between the read and the lock: read again.
	}
}

// GetCampaign is the detail: counters, deliveryStats and the current
// audienceSize. A scheduled or sending campaign whose fan-out has finished
// and has no queued or processing request moves to sent here.
func (s *Service) GetCampaign(ctx context.Context, a *usecase.Actor, id string) (*CampaignDetail, error) {
	d := &CampaignDetail{}
	var due bool
	err := s.Store.View(ctx, func(tx notify.Tx) error {
		var err error
		if d.Campaign, err = findCampaign(ctx, tx, a.WorkspaceID, id); err != nil {
			return err
		}
		due, err = s.campaignFigures(ctx, tx, d)
		return err
	})
	if err != nil || !due {
		return d, err
	}
	// Under the campaign's lock: a cancel committing meanwhile is seen
	// (and the campaign stays canceled) rather than overwritten.
	now := s.Now()
	err = s.Store.Update(ctx, func(tx notify.Tx) error {
		var err error
		if d.Campaign, _, err = lockCampaignIn(ctx, tx, a.WorkspaceID, id,
			[]notify.CampaignStatus{notify.CampaignScheduled, notify.CampaignSending}, now); err != nil {
			return err
		}
		if due, err = s.campaignFigures(ctx, tx, d); err != nil {
			return err
		}
		if !due {
			return errNotDue // roll the lock's no-op move back
		}
		c := d.Campaign
		if err := c.MoveTo(notify.CampaignSent, now); err != nil {
			return err
		}
		c.FinishedAt = &now
		return tx.UpdateCampaign(ctx, c)
	})
	if errors.Is(err, errNotDue) {
		err = nil
	}
	return d, err
}

// errNotDue ends the detail's write transaction without a change.
var errNotDue = errors.New("campaign not due to become sent")

// campaignFigures fills the detail's figures and reports whether the
// campaign is due to become sent.
func (s *Service) campaignFigures(ctx context.Context, tx notify.Tx, d *CampaignDetail) (bool, error) {
	c := d.Campaign
	aud, err := ParseAudience(c.AudienceFilter)
	if err != nil {
		return false, err
	}
	if d.AudienceSize, err = tx.CountAudience(ctx, c.WorkspaceID, c.Channel, aud, ""); err != nil {
		return false, err
	}
	counts, err := tx.CampaignRequestCounts(ctx, c.WorkspaceID, c.ID)
	if err != nil {
		return false, err
	}
	d.DeliveryStats = map[string]int{}
	sum := 0
	for _, st := range notify.RequestStatuses {
		d.DeliveryStats[string(st)] = counts[st]
		sum += counts[st]
	}
	d.DeliveryStats["unknown"] = max(0, c.TotalRecipients-sum)
	if c.Status == notify.CampaignSending {
		total := c.TotalRecipients
		if c.FanoutDoneAt == nil {
			total = max(total, d.AudienceSize)
		}
		ended := 0
		for _, st := range notify.RequestStatuses {
			if st.Terminal() {
				ended += counts[st]
			}
		}
		rate, err := budget(ctx, tx, c)
		if err != nil {
			return false, err
		}
		d.EstimatedFinishAt = estimateFinish(s.Now(), total-ended, ended, rate, c.StartedAt)
	}
	open := c.Status == notify.CampaignScheduled || c.Status == notify.CampaignSending
	return open && c.FanoutDoneAt != nil && counts[notify.StatusQueued]+counts[notify.StatusProcessing] == 0, nil
}

// UpdateCampaign changes a draft (audit campaign.update); 409 otherwise.
func (s *Service) UpdateCampaign(ctx context.Context, a *usecase.Actor, id string, in CampaignInput) (*notify.Campaign, error) {
	if in.Channel != nil {
		return nil, notify.Invalid("channel cannot be changed")
	}
	if err := in.validate(); err != nil {
		return nil, err
	}
	var c *notify.Campaign
	err := s.Store.Update(ctx, func(tx notify.Tx) (err error) {
		now := s.Now()
		var ok bool
		if c, ok, err = lockCampaignIn(ctx, tx, a.WorkspaceID, id, []notify.CampaignStatus{notify.CampaignDraft}, now); err != nil {
			return err
		}
		if !ok {
			return notify.Conflict("Campaign is %s; only a draft campaign can be edited", c.Status)
		}
		if err := in.apply(c, now); err != nil {
			return err
		}
		c.UpdatedAt = now
		if err := tx.UpdateCampaign(ctx, c); err != nil {
			return err
		}
		return s.Audit(ctx, tx, a, a.WorkspaceID, "campaign.update", "campaign", c.ID, campaignPayload(c))
	})
	if err != nil {
		return nil, err
	}
	return c, nil
}

// CampaignAudience is the audience preview.
func (s *Service) CampaignAudience(ctx context.Context, a *usecase.Actor, id string) (int, error) {
	var n int
	err := s.Store.View(ctx, func(tx notify.Tx) error {
		c, err := findCampaign(ctx, tx, a.WorkspaceID, id)
		if err != nil {
			return err
		}
		aud, err := ParseAudience(c.AudienceFilter)
		if err != nil {
			return err
		}
		n, err = tx.CountAudience(ctx, c.WorkspaceID, c.Channel, aud, "")
		return err
	})
	return n, err
}

// SendCampaign validates a draft or scheduled campaign, enqueues its
// fan-out job (delayed to the schedule, if any) and returns at once
// (audit campaign.send). linkBase is the public base URL of the
// unsubscribe links. Sending a scheduled campaign again replaces its
// pending fan-out job.
func (s *Service) SendCampaign(ctx context.Context, a *usecase.Actor, id string, scheduledAt *string, linkBase string) (*CampaignSendResult, error) {
	now := s.Now()
	var sched *time.Time
	if scheduledAt != nil {
		t, err := usecase.ParseScheduledAt(*scheduledAt, now)
		if err != nil {
			return nil, err
		}
		sched = &t
	}
	var res CampaignSendResult
	err := s.Store.Update(ctx, func(tx notify.Tx) error {
		c, ok, err := lockCampaignIn(ctx, tx, a.WorkspaceID, id, []notify.CampaignStatus{notify.CampaignDraft, notify.CampaignScheduled}, now)
		if err != nil {
			return err
		}
		if !ok {
			return notify.Conflict("Campaign is %s; only a draft or scheduled campaign can be sent", c.Status)
		}
		if c.Channel == notify.ChannelEmail && strings.TrimSpace(c.Subject) == "" {
			return notify.Invalid("subject is required for email campaigns")
		}
		aud, err := ParseAudience(c.AudienceFilter)
		if err != nil {
			return err
		}
		if res.AudienceSize, err = tx.CountAudience(ctx, c.WorkspaceID, c.Channel, aud, ""); err != nil {
			return err
		}
		if res.AudienceSize == 0 {
			return notify.Invalid("The campaign audience is empty: no sendable subscriber matches it")
		}
		if sched == nil && c.ScheduledAt != nil && c.ScheduledAt.After(now) {
			sched = c.ScheduledAt
		}
		if c.FanoutRef != 0 {
			if err := tx.CancelScheduledWork(ctx, c.FanoutRef); err != nil {
				return err
			}
		}
		if c.FanoutRef, err = tx.ScheduleFanout(ctx, c.WorkspaceID, c.ID, sched); err != nil {
			return err
		}
		c.ScheduledAt, c.LinkBase = sched, strings.TrimRight(linkBase, "/")
		to := notify.CampaignSending
		if sched != nil {
			to = notify.CampaignScheduled
		}
		if err := c.MoveTo(to, now); err != nil {
			return err
		}
		if err := tx.UpdateCampaign(ctx, c); err != nil {
			return err
		}
		res = CampaignSendResult{CampaignID: c.ID, Status: string(c.Status), AudienceSize: res.AudienceSize, ScheduledAt: sched,
			FanoutJobID: strconv.FormatInt(c.FanoutRef, 10)}
		p := campaignPayload(c)
		p["audienceSize"], p["scheduledAt"] = res.AudienceSize, nil
		if sched != nil {
			// The API's timestamp form (API-DECISIONS 1), not Go's.
			p["scheduledAt"] = sched.UTC().Format("2006-01-02T15:04:05.000Z")
		}
		return s.Audit(ctx, tx, a, a.WorkspaceID, "campaign.send", "campaign", c.ID, p)
	})
	if err != nil {
		return nil, err
	}
	return &res, nil
}

// CancelCampaign cancels a scheduled or sending campaign (audit
// campaign.cancel): the pending fan-out job is removed and the campaign's
// queued and processing requests are canceled; mail already handed to a
// vendor is not recalled. It returns how many requests it canceled.
func (s *Service) CancelCampaign(ctx context.Context, a *usecase.Actor, id string) (int, error) {
	var n int
	// The dispatch records several requests' results in one shared
	// transaction, locking them in arrival order, so a cancel locking the
	// campaign's requests can meet a deadlock whatever order it takes;
	// PostgreSQL aborts one side, and the cancel then runs again.
	err := retryDeadlock(ctx, func() error { return s.cancelCampaign(ctx, a, id, &n) })
	return n, err
}

// deadlockRetries bounds how often a transaction PostgreSQL aborted to
// break a deadlock runs again.
const deadlockRetries = 5

// retryDeadlock runs fn again, after a short pause, when it failed
// because PostgreSQL chose its transaction as a deadlock's victim
// (SQLSTATE 40P01); the other side has gone on by then.
func retryDeadlock(ctx context.Context, fn func() error) error {
	for attempt := 1; ; attempt++ {
		err := fn()
		var se interface{ SQLState() string }
		if err == nil || attempt == deadlockRetries || !errors.As(err, &se) || se.SQLState() != "40P01" {
			return err
		}
		select {
		case <-ctx.Done():
			return err
		case <-time.After(time.Duration(attempt) * 20 * time.Millisecond):
		}
	}
}

func (s *Service) cancelCampaign(ctx context.Context, a *usecase.Actor, id string, n *int) error {
	return s.Store.Update(ctx, func(tx notify.Tx) error {
		c, err := findCampaign(ctx, tx, a.WorkspaceID, id)
		if err != nil {
			return err
		}
		now := s.Now()
		// The conditional move takes the campaign row's lock: a fan-out
		// batch committing meanwhile is either fully counted below or,
		// finding the campaign canceled, inserts nothing.
		ok, err := tx.MoveCampaign(ctx, c.WorkspaceID, c.ID, []notify.CampaignStatus{notify.CampaignScheduled, notify.CampaignSending, notify.CampaignPaused},
			notify.CampaignCanceled, now)
		if err != nil {
			return err
		}
		if !ok {
			return notify.Conflict("Campaign is %s; only a scheduled, sending or paused campaign can be canceled", c.Status)
		}
		if c.FanoutRef != 0 {
			if err := tx.CancelScheduledWork(ctx, c.FanoutRef); err != nil {
				return err
			}
		}
		canceled, err := tx.CancelCampaignRequests(ctx, c.WorkspaceID, c.ID, "canceled_by_api", "Campaign canceled", now)
		if err != nil {
			return err
		}
		// Each canceled request gets its notification.canceled event, as a
		// single cancel does (webhooks).
		for _, r := range canceled {
			if err := usecase.Event(ctx, tx, notify.EventCanceled, r, now); err != nil {
				return err
			}
		}
		*n = len(canceled)
		// The conditional move above made the move (c was read before it,
		// without the lock); the audit shows where it led.
		c.Status = notify.CampaignCanceled
		p := campaignPayload(c)
		p["canceledRequests"] = *n
		return s.Audit(ctx, tx, a, a.WorkspaceID, "campaign.cancel", "campaign", c.ID, p)
	})
}

// DeleteCampaign removes a draft, canceled or failed campaign (audit
// campaign.delete); its requests stay in the history.
func (s *Service) DeleteCampaign(ctx context.Context, a *usecase.Actor, id string) error {
	return s.Store.Update(ctx, func(tx notify.Tx) error {
		c, ok, err := lockCampaignIn(ctx, tx, a.WorkspaceID, id,
			[]notify.CampaignStatus{notify.CampaignDraft, notify.CampaignCanceled, notify.CampaignFailed}, s.Now())
		if err != nil {
			return err
		}
		if !ok {
			return notify.Conflict("Campaign is %s; only a draft, canceled or failed campaign can be deleted", c.Status)
		}
		if err := tx.DeleteCampaign(ctx, c.WorkspaceID, c.ID); err != nil {
			return usecase.NotFound(err, "Campaign")
		}
		return s.Audit(ctx, tx, a, a.WorkspaceID, "campaign.delete", "campaign", c.ID, campaignPayload(c))
	})
}
