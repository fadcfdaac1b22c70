package notify

import (
	"context"
	"time"
)

// SendWindow is a window a workspace sets for its sends (issue 32, item
// 5): the hours and days a message may leave, read in the recipient's
// time zone (else TimeZone of the workspace's window, else UTC). A window
// with CategoryID "" is the workspace's own; one with a category applies
// to sends of that category (CategoryKey is filled by the reads).
type SendWindow struct {
	WorkspaceID string
	CategoryID  string
	CategoryKey string
	Hours       string   // "HH:MM-HH:MM" (internal/sendwindow)
	Days        []string // mon..sun; empty: every day
	TimeZone    string   // the workspace window's zone; "" on a category's
	UpdatedAt   time.Time
}

// WindowTx holds the store verbs of send windows.
type WindowTx interface {
	// PutSendWindow creates or replaces the window of its workspace and
	// category.
	PutSendWindow(ctx context.Context, w *SendWindow) error
	// DeleteSendWindow removes the window of the category (categoryID "":
	// the workspace's); ErrNotFound when there is none.
	DeleteSendWindow(ctx context.Context, workspaceID, categoryID string) error
	// FindSendWindows reads the workspace's window and, when categoryID is
	// not "", that category's; every window of the workspace when all.
	FindSendWindows(ctx context.Context, workspaceID, categoryID string, all bool) ([]*SendWindow, error)
}
