package suppressions

import (
	"context"
	"errors"
	"net/mail"
	"strings"

	"github.com/notifyd/notifyd/internal/notify"
	"github.com/notifyd/notifyd/internal/usecase"
)

// normalizeSuppressionAddress trims and lower-cases an address and checks
// it is one bare email address: the dispatch pre-block compares the
// lower-cased recipient with the stored address exactly.
func normalizeSuppressionAddress(address string) (string, error) {
	e := strings.ToLower(strings.TrimSpace(address))
	if e == "" {
		return "", notify.Invalid("address is required")
	}
	if len(e) > 320 {
		return "", notify.Invalid("address must be at most 320 characters")
	}
	if !usecase.Storable(e) {
		return "", notify.Invalid("address is not a valid email address")
	}
	a, err := mail.ParseAddress(e)
	if err != nil || a.Address != e {
		return "", notify.Invalid("address is not a valid email address")
	}
	return e, nil
}

// SuppressionPage is one page of the suppression list.
type SuppressionPage struct {
	Suppressions []*notify.Suppression
	Cursor       *notify.Cursor
	HasNext      bool
}

// ListSuppressions pages the workspace's suppression list newest first;
// address filters to that one address (trimmed, lower-cased).
func (s *Service) ListSuppressions(ctx context.Context, a *usecase.Actor, f notify.SuppressionFilter) (*SuppressionPage, error) {
	if f.Limit == 0 {
		f.Limit = 100
	}
	if f.Limit < 1 || f.Limit > 200 {
		return nil, notify.Invalid("limit must be between 1 and 200")
	}
	f.Address = strings.ToLower(strings.TrimSpace(f.Address))
	if len(f.Address) > 320 || !usecase.Storable(f.Address) {
		return nil, notify.Invalid("address must be at most 320 characters of text")
	}
	want := f.Limit
	f.Limit++
	p := &SuppressionPage{}
	err := s.Store.View(ctx, func(tx notify.Tx) (err error) {
		p.Suppressions, err = tx.FindSuppressions(ctx, a.WorkspaceID, f)
		return err
	})
	if err != nil {
		return nil, err
	}
	if p.Suppressions == nil {
		p.Suppressions = []*notify.Suppression{}
	}
	p.Suppressions, p.Cursor, p.HasNext = usecase.Trim(p.Suppressions, want, func(x *notify.Suppression) notify.Cursor {
		return notify.Cursor{At: x.CreatedAt, ID: x.Address}
	})
	return p, nil
}

// AddSuppression puts an address on the list (audit suppression.create).
// An address already listed keeps its createdAt and takes the new reason,
// as PutSuppression does for bounces and unsubscribes.
func (s *Service) AddSuppression(ctx context.Context, a *usecase.Actor, address, reason string) (*notify.Suppression, error) {
	addr, err := normalizeSuppressionAddress(address)
	if err != nil {
		return nil, err
	}
	if !notify.ValidSuppressionReason(reason) {
		return nil, notify.Invalid("reason must be one of unsubscribe, hard_bounce, complaint, manual")
	}
	var out *notify.Suppression
	err = s.Store.Update(ctx, func(tx notify.Tx) error {
		if err := tx.PutSuppression(ctx, a.WorkspaceID, addr, reason, s.Now()); err != nil {
			return err
		}
		var err error
		if out, err = tx.FindSuppression(ctx, a.WorkspaceID, addr); err != nil {
			return err
		}
		return s.Audit(ctx, tx, a, a.WorkspaceID, "suppression.create", "suppression", addr, map[string]any{"reason": reason})
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// RemoveSuppression takes an address off the list (audit
// suppression.delete); 404 when it is not listed.
func (s *Service) RemoveSuppression(ctx context.Context, a *usecase.Actor, address string) error {
	addr := strings.ToLower(strings.TrimSpace(address))
	if addr == "" || len(addr) > 320 || !usecase.Storable(addr) {
		return notify.NotFound("Suppression")
	}
	return s.Store.Update(ctx, func(tx notify.Tx) error {
		prev, err := tx.FindSuppression(ctx, a.WorkspaceID, addr)
		if err != nil {
			return usecase.NotFound(err, "Suppression")
		}
		if err := tx.DeleteSuppression(ctx, a.WorkspaceID, addr); err != nil {
			if errors.Is(err, notify.ErrNotFound) {
				return notify.NotFound("Suppression")
			}
			return err
		}
		return s.Audit(ctx, tx, a, a.WorkspaceID, "suppression.delete", "suppression", addr, map[string]any{"reason": prev.Reason})
	})
}
