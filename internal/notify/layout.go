package notify

import (
	"context"
	"time"
)

// Layout is a workspace's email layout: a header and footer around a
// {{content}} slot, for the HTML part, the text part, or both (issue 21).
// A template version names at most one layout.
type Layout struct {
	ID                   string
	WorkspaceID          string
	Name                 string
	HTML                 string // "" when the layout does not wrap the HTML part
	Text                 string // "" when the layout does not wrap the text part
	CreatedAt, UpdatedAt time.Time
}

// LayoutTx holds the layout verbs. All are scoped by workspace.
type LayoutTx interface {
	CreateLayout(ctx context.Context, l *Layout) error
	UpdateLayout(ctx context.Context, l *Layout) error
	FindLayout(ctx context.Context, workspaceID, id string) (*Layout, error)
	FindLayoutByName(ctx context.Context, workspaceID, name string) (*Layout, error)
	FindLayouts(ctx context.Context, workspaceID string) ([]*Layout, error)
	DeleteLayout(ctx context.Context, workspaceID, id string) error
	// CountLayoutUses counts the template versions of the workspace that
	// name the layout.
	CountLayoutUses(ctx context.Context, workspaceID, id string) (int, error)
}
