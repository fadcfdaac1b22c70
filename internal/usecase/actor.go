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

// Caller is who acts on a route of both APIs (recipients, their
// preferences): a dashboard member (Actor) or a signed API key (Key). The
// route table has already checked the member's role or the key's scope.
// Page is the third kind: the recipient on the public preference page
// (issue 32, item 4), authorized by the link's signed token alone.
type Caller struct {
	Actor *Actor
	Key   *notify.APIKey
	Page  *PageActor
}

// PageActor is the recipient acting on the preference page: the
// workspace and the external id the link's token names.
type PageActor struct {
	WorkspaceID string
	ExternalID  string
}

// Workspace is the caller's workspace.
func (c Caller) Workspace() string {
	if c.Key != nil {
		return c.Key.WorkspaceID
	}
	if c.Actor != nil {
		return c.Actor.WorkspaceID
	}
	if c.Page != nil {
		return c.Page.WorkspaceID
	}
	return ""
}
