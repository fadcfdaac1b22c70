// Package inbox is the room of the in-app inbox (issue 33): what a
// recipient reads and changes in the inbox that channel inapp delivers
// to (the delivery engine stores the messages, internal/delivery), its
// event log, and the streams that follow it. A recipient is known by a
// recipient token the application mints for one profile of one
// workspace; every call reads and writes that profile's inbox only.
package inbox

import (
	"log/slog"
	"time"

	"github.com/notifyd/notifyd/internal/notify"
	"github.com/notifyd/notifyd/internal/secret"
	"github.com/notifyd/notifyd/internal/usecase"
)

// Options are what the room is built with.
type Options struct {
	Store  notify.Store
	Now    func() time.Time
	Logger *slog.Logger
	// Box seals the workspaces' inbox secrets.
	Box *secret.Box
	// Heartbeat is how often an idle stream sends a heartbeat (0:
	// DefaultHeartbeat).
	Heartbeat time.Duration
}

// Service is the inbox room.
type Service struct {
	usecase.Kit
	box       *secret.Box
	hub       *hub
	heartbeat time.Duration
}

// New builds the room.
func New(o Options) *Service {
	if o.Heartbeat <= 0 {
		o.Heartbeat = DefaultHeartbeat
	}
	return &Service{Kit: usecase.NewKit(o.Store, o.Now, o.Logger), box: o.Box, hub: newHub(), heartbeat: o.Heartbeat}
}

// Reader is the recipient who reads an inbox: a profile (its external
// id) of one workspace, as a recipient token names them.
type Reader struct {
	WorkspaceID string
	RecipientID string
}
