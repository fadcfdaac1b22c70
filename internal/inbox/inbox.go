package inbox

import (
	"context"
	"time"

	"github.com/notifyd/notifyd/internal/notify"
	"github.com/notifyd/notifyd/internal/usecase"
)

// profile is the row id of the reader's profile; a reader whose profile
// does not exist (erased, or never created) has no inbox: 404.
func profile(ctx context.Context, tx notify.Tx, r Reader) (string, error) {
	p, err := tx.FindRecipient(ctx, r.WorkspaceID, r.RecipientID)
	if err != nil {
		return "", usecase.NotFound(err, "Recipient")
	}
	return p.ID, nil
}

// Page bounds of the list.
const (
	DefaultLimit = 20
	MaxLimit     = 100
)

// Page is one page of an inbox, with the badge figures.
type Page struct {
	Messages []*notify.InboxMessage
	Next     *notify.Cursor
	Counts   notify.InboxCounts
}

// List reads a page of the reader's inbox, newest first.
func (s *Service) List(ctx context.Context, r Reader, f notify.InboxFilter) (*Page, error) {
	if f.Limit <= 0 {
		f.Limit = DefaultLimit
	}
	if f.Limit > MaxLimit {
		return nil, notify.Invalid("limit must be between 1 and %d", MaxLimit)
	}
	want := f.Limit
	f.Limit++
	var p Page
	err := s.Store.View(ctx, func(tx notify.Tx) error {
		id, err := profile(ctx, tx, r)
		if err != nil {
			return err
		}
		ms, err := tx.FindInboxMessages(ctx, r.WorkspaceID, id, f)
		if err != nil {
			return err
		}
		p.Messages, p.Next, _ = usecase.Trim(ms, want, func(m *notify.InboxMessage) notify.Cursor {
			return notify.Cursor{At: m.CreatedAt, ID: m.ID}
		})
		p.Counts, err = tx.CountInbox(ctx, r.WorkspaceID, id)
		return err
	})
	if err != nil {
		return nil, err
	}
	return &p, nil
}

// Counts answers the reader's badge figures.
func (s *Service) Counts(ctx context.Context, r Reader) (notify.InboxCounts, error) {
	var c notify.InboxCounts
	err := s.Store.View(ctx, func(tx notify.Tx) error {
		id, err := profile(ctx, tx, r)
		if err != nil {
			return err
		}
		c, err = tx.CountInbox(ctx, r.WorkspaceID, id)
		return err
	})
	return c, err
}

// Change applies op to message id of the reader's inbox, or to every
// message op changes when id is "" (read, seen, archive), and answers the
// badge figures after it. A message of another inbox is 404, as one that
// does not exist. Doing what is done already changes nothing and
// appends no event.
func (s *Service) Change(ctx context.Context, r Reader, op notify.InboxOp, id string) (notify.InboxCounts, error) {
	var c notify.InboxCounts
	if id == "" && op != notify.InboxRead && op != notify.InboxSeen && op != notify.InboxArchive {
		return c, notify.Invalid("%s names one message", op)
	}
	if id != "" && !usecase.IsUUID(id) {
		return c, notify.NotFound("Message")
	}
	err := s.Store.Update(ctx, func(tx notify.Tx) error {
		pid, err := profile(ctx, tx, r)
		if err != nil {
			return err
		}
		now := s.Now()
		ms, err := tx.ChangeInbox(ctx, r.WorkspaceID, pid, notify.InboxChange{Op: op, MessageID: id, At: now})
		if err != nil {
			return usecase.NotFound(err, "Message")
		}
		if err := s.outbound(ctx, tx, r, op, ms, now); err != nil {
			return err
		}
		c, err = tx.CountInbox(ctx, r.WorkspaceID, pid)
		return err
	})
	return c, err
}

// outbound writes the webhook events of a change (notification.read,
// .seen, .archived; one per message changed) in its transaction, for
// the workspace's webhooks that subscribe to them.
func (s *Service) outbound(ctx context.Context, tx notify.Tx, r Reader, op notify.InboxOp, ms []*notify.InboxMessage, now time.Time) error {
	typ := op.OutboundEvent()
	if typ == "" || len(ms) == 0 {
		return nil
	}
	es := make([]*notify.Event, len(ms))
	for i, m := range ms {
		es[i] = notify.InboxChangeEvent(usecase.NewID(), typ, r.RecipientID, m, now)
	}
	es, err := notify.Subscribed(ctx, tx, es)
	if err != nil || len(es) == 0 {
		return err
	}
	return tx.CreateEvents(ctx, es)
}
