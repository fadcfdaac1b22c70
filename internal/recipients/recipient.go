package recipients

import (
	"context"
	"fmt"

	"github.com/notifyd/notifyd/internal/notify"
	"github.com/notifyd/notifyd/internal/usecase"
)

// notFound is the 404 of an external id the workspace has no profile of
// (an id of another workspace, or one no profile can have, alike).
func notFound(err error) error { return usecase.NotFound(err, "Recipient") }

// Put creates the profile of externalID or replaces every field of it
// (absent fields become empty), and reports whether it created it
// (audit recipient.create or recipient.replace).
func (s *Service) Put(ctx context.Context, c Caller, externalID string, in Fields) (*notify.Recipient, bool, error) {
	if err := CheckExternalID("externalId", externalID); err != nil {
		return nil, false, err
	}
	r := blank(c.Workspace(), externalID, s.Now())
	if err := apply(r, in, ""); err != nil {
		return nil, false, err
	}
	var created bool
	err := s.Store.Update(ctx, func(tx notify.Tx) (err error) {
		if created, err = tx.PutRecipient(ctx, r); err != nil {
			return err
		}
		action := "recipient.replace"
		if created {
			action = "recipient.create"
		}
		return s.audit(ctx, tx, c, action, externalID, map[string]any{"fields": in.names()})
	})
	if err != nil {
		return nil, false, err
	}
	return r, created, nil
}

// Patch changes the fields in gives and keeps the others (audit
// recipient.update); 404 when the workspace has no such profile.
func (s *Service) Patch(ctx context.Context, c Caller, externalID string, in Fields) (*notify.Recipient, error) {
	if CheckExternalID("externalId", externalID) != nil {
		return nil, notify.NotFound("Recipient")
	}
	if err := apply(&notify.Recipient{}, in, ""); err != nil { // 400 before 404, as a put
		return nil, err
	}
	var r *notify.Recipient
	err := s.Store.Update(ctx, func(tx notify.Tx) (err error) {
		if r, err = tx.LockRecipient(ctx, c.Workspace(), externalID); err != nil {
			return notFound(err)
		}
		if err := apply(r, in, ""); err != nil {
			return err
		}
		r.UpdatedAt = s.Now()
		if _, err := tx.PutRecipient(ctx, r); err != nil {
			return err
		}
		return s.audit(ctx, tx, c, "recipient.update", externalID, map[string]any{"fields": in.names()})
	})
	if err != nil {
		return nil, err
	}
	return r, nil
}

// Get answers the workspace's profile of externalID (404 otherwise).
func (s *Service) Get(ctx context.Context, c Caller, externalID string) (*notify.Recipient, error) {
	if CheckExternalID("externalId", externalID) != nil {
		return nil, notify.NotFound("Recipient")
	}
	var r *notify.Recipient
	err := s.Store.Lookup(ctx, func(tx notify.Tx) (err error) {
		r, err = tx.FindRecipient(ctx, c.Workspace(), externalID)
		return notFound(err)
	})
	return r, err
}

// Delete erases the profile of externalID with everything it holds
// (audit recipient.delete, which names only the external id); 404 when
// the workspace has none.
func (s *Service) Delete(ctx context.Context, c Caller, externalID string) error {
	if CheckExternalID("externalId", externalID) != nil {
		return notify.NotFound("Recipient")
	}
	return s.Store.Update(ctx, func(tx notify.Tx) error {
		if err := tx.DeleteRecipient(ctx, c.Workspace(), externalID); err != nil {
			return notFound(err)
		}
		return s.audit(ctx, tx, c, "recipient.delete", externalID, nil)
	})
}

// Query is a list request as the caller gives it.
type Query struct {
	Search string
	Limit  int // 0: 50
	Cursor string
}

// Page is one page of profiles, newest first.
type Page struct {
	Recipients []*notify.Recipient
	Cursor     *notify.Cursor
	HasNext    bool
}

// List answers a page of the workspace's profiles, newest first,
// searched by a substring of the external id, name, email or phone.
func (s *Service) List(ctx context.Context, c Caller, q Query) (*Page, error) {
	f := notify.RecipientFilter{Search: q.Search, Limit: q.Limit}
	if f.Limit == 0 {
		f.Limit = 50
	}
	if f.Limit < 1 || f.Limit > 200 {
		return nil, notify.Invalid("limit must be between 1 and 200")
	}
	if err := usecase.ValidText("q", f.Search); err != nil {
		return nil, err
	}
	if err := usecase.MaxLen("q", f.Search, MaxSearch); err != nil {
		return nil, err
	}
	var err error
	if f.Before, err = notify.DecodeCursor(q.Cursor); err != nil {
		return nil, err
	}
	want := f.Limit
	f.Limit++
	p := &Page{}
	err = s.Store.View(ctx, func(tx notify.Tx) (err error) {
		p.Recipients, err = tx.FindRecipients(ctx, c.Workspace(), f)
		return err
	})
	if err != nil {
		return nil, err
	}
	p.Recipients, p.Cursor, p.HasNext = usecase.Trim(p.Recipients, want, func(r *notify.Recipient) notify.Cursor {
		return notify.Cursor{At: r.CreatedAt, ID: r.ID}
	})
	return p, nil
}

// BulkItem is one profile of a bulk upsert: its external id and every
// field (a put).
type BulkItem struct {
	ExternalID *string
	Fields
}

// BulkResult counts a bulk upsert; Created+Updated = Total.
type BulkResult struct {
	Total, Created, Updated int
}

// CheckBulkSize holds a bulk upsert to 1 to MaxBulk items.
func CheckBulkSize(n int) error {
	if n < 1 || n > MaxBulk {
		return notify.Invalid("items must hold 1 to %d profiles", MaxBulk)
	}
	return nil
}

// BulkPut creates or replaces up to MaxBulk profiles in one transaction
// (one audit entry, recipient.bulk_upsert, with the counts). Every item is
// checked first: one invalid item, or an external id given twice,
// refuses the whole call with a detail naming the item (items[i].field).
func (s *Service) BulkPut(ctx context.Context, c Caller, items []BulkItem) (*BulkResult, error) {
	if err := CheckBulkSize(len(items)); err != nil {
		return nil, err
	}
	ws, now := c.Workspace(), s.Now()
	rs := make([]*notify.Recipient, len(items))
	seen := make(map[string]int, len(items))
	for i, it := range items {
		prefix := fmt.Sprintf("items[%d].", i)
		if it.ExternalID == nil {
			return nil, notify.Invalid("%sexternalId is required", prefix)
		}
		id := *it.ExternalID
		if err := CheckExternalID(prefix+"externalId", id); err != nil {
			return nil, err
		}
		if j, ok := seen[id]; ok {
			return nil, notify.Invalid("%sexternalId repeats items[%d].externalId", prefix, j)
		}
		seen[id] = i
		rs[i] = blank(ws, id, now)
		if err := apply(rs[i], it.Fields, prefix); err != nil {
			return nil, err
		}
	}
	res := &BulkResult{Total: len(rs)}
	err := s.Store.Update(ctx, func(tx notify.Tx) (err error) {
		if res.Created, err = tx.UpsertRecipients(ctx, rs); err != nil {
			return err
		}
		res.Updated = res.Total - res.Created
		return s.audit(ctx, tx, c, "recipient.bulk_upsert", "", map[string]any{"total": res.Total, "created": res.Created,
			"updated": res.Updated})
	})
	if err != nil {
		return nil, err
	}
	return res, nil
}
