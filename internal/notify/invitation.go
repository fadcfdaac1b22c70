package notify

import (
	"context"
	"time"
)

// Invitation is a pending offer of a role in a workspace to an existing
// user. Adding a user who already has an account makes one instead of a
// membership: the user's consent (accept) is what makes the membership.
type Invitation struct {
	ID            string
	WorkspaceID   string
	WorkspaceName string
	UserID        string
	Email         string
	Role          Role
	// InvitedBy is the inviting user's id and InvitedByEmail their email;
	// both empty when the inviter is unknown.
	InvitedBy      string
	InvitedByEmail string
	CreatedAt      time.Time
	ExpiresAt      time.Time
}

// InvitationTx holds the store verbs of workspace invitations. Reads take
// the invited user's id and filter by it (another user's invitation is
// ErrNotFound), and an expired invitation is never found.
type InvitationTx interface {
	// PutInvitation creates the user's invitation to the workspace or
	// replaces its role, inviter and times; a replaced one keeps its id,
	// which PutInvitation sets in inv.
	PutInvitation(ctx context.Context, inv *Invitation) error
	FindInvitation(ctx context.Context, userID, id string, now time.Time) (*Invitation, error)
	// FindInvitationsOfUser lists the user's unexpired invitations, oldest first.
	FindInvitationsOfUser(ctx context.Context, userID string, now time.Time) ([]*Invitation, error)
	// DeleteInvitation removes the user's invitation to the workspace,
	// expired or not; ErrNotFound when there is none.
	DeleteInvitation(ctx context.Context, workspaceID, userID string) error
	// DeleteInvitationByID removes invitation id of the workspace;
	// ErrNotFound when there is none.
	DeleteInvitationByID(ctx context.Context, workspaceID, id string) error
	DeleteExpiredInvitations(ctx context.Context, now time.Time) (int, error)
}
