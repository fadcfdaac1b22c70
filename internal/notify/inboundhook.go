package notify

import (
	"context"
	"time"
)

// Inbound hook formats (issue 36, item 3): the payloads other tools send.
const (
	HookAlertmanager = "alertmanager" // Prometheus Alertmanager webhook (version 4)
	HookGrafana      = "grafana"      // Grafana alerting webhook contact point
	HookNtfy         = "ntfy"         // ntfy's publish API (body plus Title, Priority, Tags)
	HookSlack        = "slack"        // Slack incoming-webhook JSON
	HookApprise      = "apprise"      // Apprise API's notify call (JSON or form)
)

// HookFormats lists the formats in the order the API names them.
var HookFormats = []string{HookAlertmanager, HookGrafana, HookNtfy, HookSlack, HookApprise}

// SourceHook marks a request accepted from an inbound hook.
const SourceHook = "hook"

// InboundHook is a workspace's receiving URL for one format: what arrives
// with its token becomes sends on Channel to the listed recipients, with
// TemplateCode (the payload's fields as its variables) and Category when
// set. The token is stored only as its SHA-256 hash.
type InboundHook struct {
	ID          string
	WorkspaceID string
	Name        string
	Format      string
	Channel     Channel
	// Addresses are recipient addresses, RecipientIDs external ids of
	// recipient profiles; a message goes to each of both.
	Addresses    []string
	RecipientIDs []string
	TemplateCode string
	Category     string
	// RateLimit is the most requests the hook takes per minute.
	RateLimit      int
	Enabled        bool
	TokenHash      string
	TokenRotatedAt time.Time
	CreatedAt      time.Time
	UpdatedAt      time.Time
}

// InboundHookTx holds the store verbs of inbound hooks.
type InboundHookTx interface {
	// CreateInboundHook stores a new hook; ErrConflict when the workspace
	// has a hook of that name.
	CreateInboundHook(ctx context.Context, h *InboundHook) error
	FindInboundHook(ctx context.Context, workspaceID, id string) (*InboundHook, error)
	// FindInboundHooks lists the workspace's hooks by name.
	FindInboundHooks(ctx context.Context, workspaceID string) ([]*InboundHook, error)
	// FindInboundHookByToken finds the hook whose token hashes to
	// tokenHash, in whichever workspace: the token is the only credential
	// of the receiving URL.
	FindInboundHookByToken(ctx context.Context, tokenHash string) (*InboundHook, error)
	// UpdateInboundHook writes every field of h but its id, workspace and
	// creation time; ErrConflict when another hook of the workspace has
	// its name, ErrNotFound when it is gone.
	UpdateInboundHook(ctx context.Context, h *InboundHook) error
	DeleteInboundHook(ctx context.Context, workspaceID, id string) error
}
