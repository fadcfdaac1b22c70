package templates

import (
	"context"
	"strings"

	"github.com/notifyd/notifyd/internal/compose"
	"github.com/notifyd/notifyd/internal/notify"
	"github.com/notifyd/notifyd/internal/render"
	"github.com/notifyd/notifyd/internal/usecase"
)

// MaxLayouts bounds the layouts of one workspace.
const MaxLayouts = 100

// LayoutInput is the body of a layout create or update. A nil field is
// absent; on update a pointer to "" clears html or text.
type LayoutInput struct {
	Name *string
	HTML *string
	Text *string
}

// checkLayoutPart requires exactly one {{content}} slot in a non-empty
// html or text part of a layout.
func checkLayoutPart(field, s string, n int) error {
	if s == "" {
		return nil
	}
	if err := usecase.MaxLen(field, s, n); err != nil {
		return err
	}
	if _, _, slots := render.Slot(s, compose.LayoutSlot); slots != 1 {
		return notify.Invalid("%s must hold the slot {{%s}} exactly once", field, compose.LayoutSlot)
	}
	return nil
}

// applyLayoutInput copies in onto l and checks the result.
func applyLayoutInput(l *notify.Layout, in LayoutInput) error {
	if in.Name != nil {
		if strings.TrimSpace(*in.Name) == "" {
			return notify.Invalid("name must not be empty")
		}
		if err := usecase.MaxLen("name", *in.Name, 120); err != nil {
			return err
		}
		l.Name = *in.Name
	}
	if in.HTML != nil {
		l.HTML = *in.HTML
	}
	if in.Text != nil {
		l.Text = *in.Text
	}
	if err := checkLayoutPart("html", l.HTML, 500_000); err != nil {
		return err
	}
	if err := checkLayoutPart("text", l.Text, 100_000); err != nil {
		return err
	}
	if l.HTML == "" && l.Text == "" {
		return notify.Invalid("a layout needs html, text or both")
	}
	return nil
}

// layoutNameFree answers 409 when another layout of the workspace has
// the name (checked before writing: a unique violation aborts the
// transaction on PostgreSQL).
func layoutNameFree(ctx context.Context, tx notify.Tx, l *notify.Layout) error {
	other, err := tx.FindLayoutByName(ctx, l.WorkspaceID, l.Name)
	if err == nil && other.ID != l.ID {
		return notify.Conflict("A layout named %s already exists", l.Name)
	}
	if err != nil && !notify.IsNotFound(err) {
		return err
	}
	return nil
}

func layoutPayload(l *notify.Layout) map[string]any {
	return map[string]any{"name": l.Name, "html": l.HTML != "", "text": l.Text != ""}
}

// CreateLayout creates a layout (audit layout.create). Names are unique
// per workspace (409); a workspace holds at most MaxLayouts (409).
func (s *Service) CreateLayout(ctx context.Context, a *usecase.Actor, in LayoutInput) (*notify.Layout, error) {
	if in.Name == nil {
		return nil, notify.Invalid("name is required")
	}
	now := s.Now()
	l := &notify.Layout{ID: usecase.NewID(), WorkspaceID: a.WorkspaceID, CreatedAt: now, UpdatedAt: now}
	if err := applyLayoutInput(l, in); err != nil {
		return nil, err
	}
	err := s.Store.Update(ctx, func(tx notify.Tx) error {
		// The workspace lock orders creates (the count) and deletes
		// against version creates naming a layout.
		if err := tx.LockWorkspace(ctx, a.WorkspaceID); err != nil {
			return err
		}
		all, err := tx.FindLayouts(ctx, a.WorkspaceID)
		if err != nil {
			return err
		}
		if len(all) >= MaxLayouts {
			return notify.Conflict("A workspace holds at most %d layouts", MaxLayouts)
		}
		if err := layoutNameFree(ctx, tx, l); err != nil {
			return err
		}
		if err := tx.CreateLayout(ctx, l); err != nil {
			return usecase.ConflictOr(err, "A layout named %s already exists", l.Name)
		}
		return s.Audit(ctx, tx, a, a.WorkspaceID, "layout.create", "layout", l.ID, layoutPayload(l))
	})
	if err != nil {
		return nil, err
	}
	return l, nil
}

// ListLayouts lists the workspace's layouts in creation order.
func (s *Service) ListLayouts(ctx context.Context, a *usecase.Actor) ([]*notify.Layout, error) {
	var out []*notify.Layout
	err := s.Store.View(ctx, func(tx notify.Tx) (err error) {
		out, err = tx.FindLayouts(ctx, a.WorkspaceID)
		return err
	})
	return out, err
}

// GetLayout returns one layout.
func (s *Service) GetLayout(ctx context.Context, a *usecase.Actor, id string) (*notify.Layout, error) {
	var l *notify.Layout
	err := s.Store.View(ctx, func(tx notify.Tx) (err error) {
		l, err = tx.FindLayout(ctx, a.WorkspaceID, id)
		return usecase.NotFound(err, "Layout")
	})
	return l, err
}

// UpdateLayout changes name, html and text (audit layout.update). Sends
// through versions naming the layout use the new header and footer at
// once.
func (s *Service) UpdateLayout(ctx context.Context, a *usecase.Actor, id string, in LayoutInput) (*notify.Layout, error) {
	var l *notify.Layout
	err := s.Store.Update(ctx, func(tx notify.Tx) error {
		var err error
		if l, err = tx.FindLayout(ctx, a.WorkspaceID, id); err != nil {
			return usecase.NotFound(err, "Layout")
		}
		if err := applyLayoutInput(l, in); err != nil {
			return err
		}
		if err := layoutNameFree(ctx, tx, l); err != nil {
			return err
		}
		l.UpdatedAt = s.Now()
		if err := tx.UpdateLayout(ctx, l); err != nil {
			return usecase.NotFound(usecase.ConflictOr(err, "A layout named %s already exists", l.Name), "Layout")
		}
		return s.Audit(ctx, tx, a, a.WorkspaceID, "layout.update", "layout", l.ID, layoutPayload(l))
	})
	if err != nil {
		return nil, err
	}
	return l, nil
}

// DeleteLayout deletes a layout no template version names (409 while one
// does: versions do not change once created) (audit layout.delete).
func (s *Service) DeleteLayout(ctx context.Context, a *usecase.Actor, id string) error {
	return s.Store.Update(ctx, func(tx notify.Tx) error {
		if err := tx.LockWorkspace(ctx, a.WorkspaceID); err != nil {
			return err
		}
		l, err := tx.FindLayout(ctx, a.WorkspaceID, id)
		if err != nil {
			return usecase.NotFound(err, "Layout")
		}
		n, err := tx.CountLayoutUses(ctx, a.WorkspaceID, id)
		if err != nil {
			return err
		}
		if n > 0 {
			return notify.Conflict("Layout %s is used by %d template versions", l.Name, n)
		}
		if err := tx.DeleteLayout(ctx, a.WorkspaceID, id); err != nil {
			return usecase.NotFound(err, "Layout")
		}
		return s.Audit(ctx, tx, a, a.WorkspaceID, "layout.delete", "layout", id, map[string]any{"name": l.Name})
	})
}
