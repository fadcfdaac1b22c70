package sends

import (
	"context"
	"time"

	"github.com/notifyd/notifyd/internal/notify"
	"github.com/notifyd/notifyd/internal/usecase"
)

// RequestQuery is a request-list filter as a client wrote it (the query of
// GET /v1/requests or the console's Messages form); ListRequests
// validates it, so the API and the console refuse alike.
type RequestQuery struct {
	Status, Channel, From, To, Recipient, RequestID, Cursor string
	Limit                                                   int
	// Test is "true" (test traffic only), "false" (live only) or "" (both).
	Test string
}

// RequestPage is one page of requests, newest first.
type RequestPage struct {
	Requests []*notify.Request
	Cursor   *notify.Cursor
	HasNext  bool
}

// ListRequests pages the actor's workspace's requests newest first.
func (s *Service) ListRequests(ctx context.Context, a *usecase.Actor, q RequestQuery) (*RequestPage, error) {
	f, err := q.filter()
	if err != nil {
		return nil, err
	}
	want := f.Limit
	f.Limit++
	p := &RequestPage{}
	err = s.Store.View(ctx, func(tx notify.Tx) (err error) {
		p.Requests, err = tx.FindRequests(ctx, a.WorkspaceID, f)
		return err
	})
	if err != nil {
		return nil, err
	}
	p.Requests, p.Cursor, p.HasNext = usecase.Trim(p.Requests, want, func(r *notify.Request) notify.Cursor {
		return notify.Cursor{At: r.RequestedAt, ID: r.ID}
	})
	return p, nil
}

func (q RequestQuery) filter() (notify.RequestFilter, error) {
	f := notify.RequestFilter{Status: notify.RequestStatus(q.Status), Channel: notify.Channel(q.Channel), Recipient: q.Recipient, RequestID: q.RequestID, Limit: q.Limit}
	if f.Limit == 0 {
		f.Limit = 50
	}
	if f.Limit < 1 || f.Limit > 500 {
		return f, notify.Invalid("limit must be between 1 and 500")
	}
	if f.Status != "" && !f.Status.Valid() {
		return f, notify.Invalid("status must be one of queued, processing, sent, failed, canceled")
	}
	if f.Channel != "" && !f.Channel.Valid() {
		return f, notify.Invalid("channel is not a valid channel")
	}
	if f.RequestID != "" && !usecase.IsUUID(f.RequestID) {
		return f, notify.Invalid("requestId must be a UUID")
	}
	switch q.Test {
	case "":
	case "true", "false":
		b := q.Test == "true"
		f.Test = &b
	default:
		return f, notify.Invalid("test must be true or false")
	}
	if len(f.Recipient) > 320 || !usecase.Storable(f.Recipient) {
		return f, notify.Invalid("recipient must be at most 320 characters of text")
	}
	for _, t := range []struct {
		name, v string
		to      **time.Time
	}{{"from", q.From, &f.From}, {"to", q.To, &f.To}} {
		if t.v == "" {
			continue
		}
		at, err := time.Parse(time.RFC3339Nano, t.v)
		if err != nil {
			return f, notify.Invalid("%s must be an ISO 8601 date-time", t.name)
		}
		*t.to = &at
	}
	if f.From != nil && f.To != nil && f.From.After(*f.To) {
		return f, notify.Invalid("from must not be after to")
	}
	var err error
	f.Before, err = notify.DecodeCursor(q.Cursor)
	return f, err
}

// GetRequestOf is GetRequest in the actor's workspace (dashboard).
func (s *Service) GetRequestOf(ctx context.Context, a *usecase.Actor, id string) (*RequestDetail, error) {
	return s.GetRequest(ctx, a.WorkspaceID, id)
}

// CancelRequestOf is CancelRequest by a dashboard member, audited.
func (s *Service) CancelRequestOf(ctx context.Context, a *usecase.Actor, id string) (*CancelResult, error) {
	user := a.UserID
	res, err := s.CancelRequest(ctx, a.WorkspaceID, id, &user)
	if err != nil || !res.Canceled {
		return res, err
	}
	err = s.Store.Update(ctx, func(tx notify.Tx) error {
		return s.Audit(ctx, tx, a, a.WorkspaceID, "notification.cancel", "notification_request", id, nil)
	})
	return res, err
}

// Overview is the console's first page and GET /v1/overview.
type Overview struct {
	Day, Week *notify.Counts
	// DayReceipts (hourly) and WeekReceipts (daily) are the delivery
	// rates of the same ranges (issue 35).
	DayReceipts, WeekReceipts *notify.ReceiptStats
	// ProviderNames are the display names of the workspace's provider
	// accounts, by id.
	ProviderNames map[string]string
	// QueueDepth counts the open (not terminal) jobs, at most 1000.
	QueueDepth     int
	OpenBreakers   []*notify.ProviderAccount
	DeadLetters    int
	LatestFailures []*notify.Request
}

// overviewQueueCap bounds the open jobs Overview counts.
const overviewQueueCap = 1000

// Overview gathers the workspace's activity of the last 24 h and 7 days,
// its queue, open circuit breakers, dead letters and latest failures.
func (s *Service) Overview(ctx context.Context, a *usecase.Actor) (*Overview, error) {
	now := s.Now()
	o := &Overview{}
	ws := a.WorkspaceID
	err := s.Store.View(ctx, func(tx notify.Tx) (err error) {
		if o.Day, err = tx.CountActivity(ctx, ws, now.Add(-24*time.Hour), now); err != nil {
			return err
		}
		if o.Week, err = tx.CountActivity(ctx, ws, now.Add(-7*24*time.Hour), now); err != nil {
			return err
		}
		for _, r := range []struct {
			to       **notify.ReceiptStats
			span, by time.Duration
		}{{&o.DayReceipts, 24 * time.Hour, time.Hour}, {&o.WeekReceipts, 7 * 24 * time.Hour, 24 * time.Hour}} {
			rows, err := tx.CountReceipts(ctx, ws, now.Add(-r.span), now, now, r.by)
			if err != nil {
				return err
			}
			*r.to = notify.NewReceiptStats(rows, now.Add(-r.span), now, r.by)
		}
		jobs, err := tx.FindOpenJobs(ctx, ws, overviewQueueCap)
		if err != nil {
			return err
		}
		o.QueueDepth = len(jobs)
		if _, o.DeadLetters, err = tx.FindDeadLetters(ctx, ws, 1); err != nil {
			return err
		}
		if o.LatestFailures, err = tx.FindRequests(ctx, ws, notify.RequestFilter{Status: notify.StatusFailed, Limit: 10}); err != nil {
			return err
		}
		ps, err := tx.FindProviderAccounts(ctx, ws)
		if err != nil || len(ps) == 0 {
			return err
		}
		ids := make([]string, len(ps))
		o.ProviderNames = make(map[string]string, len(ps))
		for i, p := range ps {
			ids[i] = p.ID
			o.ProviderNames[p.ID] = p.DisplayName
		}
		bs, err := tx.FindBreakers(ctx, ids)
		for _, p := range ps {
			if b := bs[p.ID]; b != nil && b.State != notify.BreakerClosed {
				o.OpenBreakers = append(o.OpenBreakers, p)
			}
		}
		return err
	})
	return o, err
}
