package notify

// Role is a dashboard member's role in a workspace.
type Role string

// The four dashboard roles, strongest first.
const (
	RoleOwner    Role = "owner"
	RoleAdmin    Role = "admin"
	RoleOperator Role = "operator"
	RoleViewer   Role = "viewer"
)

// Valid reports whether r is one of the four roles.
func (r Role) Valid() bool {
	switch r {
	case RoleOwner, RoleAdmin, RoleOperator, RoleViewer:
		return true
	}
	return false
}

// Role sets used by the route table; SPEC names the roles per endpoint.
var (
	RolesAll      = []Role{RoleOwner, RoleAdmin, RoleOperator, RoleViewer}
	RolesOperator = []Role{RoleOwner, RoleAdmin, RoleOperator}
	RolesAdmin    = []Role{RoleOwner, RoleAdmin}
	RolesOwner    = []Role{RoleOwner}
)

// Allowed reports whether r is in roles.
func (r Role) Allowed(roles []Role) bool {
	for _, x := range roles {
		if x == r {
			return true
		}
	}
	return false
}

// API key scopes of SPEC "Authentication".
const (
	ScopeNotificationsSend = "notifications:send"
	ScopeNotificationsRead = "notifications:read"
	ScopeOTPSend           = "otp:send"
	ScopeOTPVerify         = "otp:verify"
	// Recipient profiles (issue 32): reading them, and writing (create,
	// replace, update, erase, bulk upsert).
	ScopeRecipientsRead  = "recipients:read"
	ScopeRecipientsWrite = "recipients:write"
)

// Scopes lists every API key scope.
var Scopes = []string{ScopeNotificationsSend, ScopeNotificationsRead, ScopeOTPSend, ScopeOTPVerify,
	ScopeRecipientsRead, ScopeRecipientsWrite}
