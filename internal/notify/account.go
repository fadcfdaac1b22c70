package notify

import "time"

// Workspace owns every other record.
type Workspace struct {
	ID        string
	Name      string
	CreatedAt time.Time
	UpdatedAt time.Time
}

// User is a dashboard login. A user may belong to several workspaces.
type User struct {
	ID           string
	Email        string
	PasswordHash string
	CreatedAt    time.Time
}

// Member is a user's role in one workspace.
type Member struct {
	WorkspaceID   string
	WorkspaceName string
	UserID        string
	Email         string
	Role          Role
	CreatedAt     time.Time
	// NoPassword: the account was added without a password and has none
	// yet (it cannot log in until an admin sets its first one).
	NoPassword bool
}

// Session is a dashboard access token, stored only as its SHA-256 hash.
type Session struct {
	TokenHash   string
	UserID      string
	WorkspaceID string // empty when no workspace is selected
	ExpiresAt   time.Time
	CreatedAt   time.Time
}

// API key statuses.
const (
	APIKeyActive    = "active"
	APIKeySuspended = "suspended"
	APIKeyRevoked   = "revoked"
)

// APIKey is a Notification API credential. The key secret is stored only
// as a hash; the HMAC secret is stored encrypted because verifying a
// signature needs it.
type APIKey struct {
	ID                   string
	WorkspaceID          string
	KeyID                string
	Name                 string
	Scopes               []string
	AllowedTemplateCodes []string // nil: every template allowed
	Status               string
	SecretHash           string
	HMACSecretEnc        string
	CreatedAt            time.Time
	UpdatedAt            time.Time
	LastUsedAt           *time.Time
	// Test: a test-mode key (issue 36); its key id starts TestKeyPrefix
	// and every request it signs is a test request (Request.Test).
	Test bool
}

// HasScope reports whether the key carries scope.
func (k *APIKey) HasScope(scope string) bool {
	for _, s := range k.Scopes {
		if s == scope {
			return true
		}
	}
	return false
}

// AllowsTemplate reports whether the key may send template code.
func (k *APIKey) AllowsTemplate(code string) bool {
	if k.AllowedTemplateCodes == nil {
		return true
	}
	for _, c := range k.AllowedTemplateCodes {
		if c == code {
			return true
		}
	}
	return false
}

// AuditEntry is one audit log record. ActorUserID nil means the system acted.
type AuditEntry struct {
	ID          string
	WorkspaceID string
	ActorUserID *string
	Action      string
	TargetType  string
	TargetID    string
	Payload     map[string]any
	CreatedAt   time.Time
}

// AuditFilter selects audit entries, newest first.
type AuditFilter struct {
	Action     string
	TargetType string
	Limit      int
	// Before continues a page: entries strictly older than this position.
	Before *Cursor
}

// Cursor is a keyset position: a creation time and an id to break ties.
type Cursor struct {
	At time.Time
	ID string
}

// NonceUse is one signed request's nonce to record.
type NonceUse struct {
	KeyID     string
	Nonce     string
	ExpiresAt time.Time
}
