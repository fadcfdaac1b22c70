package usecase

import "github.com/notifyd/notifyd/internal/notify"

// Actor is an authenticated dashboard user acting in a workspace.
type Actor struct {
	UserID      string
	Email       string
	WorkspaceID string // empty when none is selected
	Role        notify.Role
	TokenHash   string
}

// RequireWorkspace returns 403 when no workspace is selected.
func RequireWorkspace(a *Actor) error {
	if a == nil || a.WorkspaceID == "" {
		return notify.Forbidden("No workspace selected")
	}
	return nil
}
