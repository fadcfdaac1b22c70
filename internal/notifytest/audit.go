package notifytest

import (
	"net/http"
	"net/url"
	"testing"

	"github.com/notifyd/notifyd/client"
)

// AuditEntry is one entry of the workspace's audit log.
type AuditEntry struct {
	ID          string         `json:"id"`
	ActorUserID *string        `json:"actorUserId"`
	Action      string         `json:"action"`
	TargetType  string         `json:"targetType"`
	TargetID    string         `json:"targetId"`
	Payload     map[string]any `json:"payload"`
	CreatedAt   string         `json:"createdAt"`
}

// Audit lists the audit entries of action as c, newest first (at most
// 200).
func Audit(t testing.TB, c *client.Client, action string) []AuditEntry {
	t.Helper()
	r := Dash(t, c, "GET", "/v1/audit-logs?limit=200&action="+url.QueryEscape(action), nil)
	return Decode[struct {
		Logs []AuditEntry `json:"logs"`
	}](t, r, http.StatusOK).Logs
}
