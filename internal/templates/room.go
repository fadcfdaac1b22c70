// Package templates is the room of message templates: templates and their
// versions (create, publish, page, delete, messenger review status), the
// layouts that wrap them, and the preview that renders a version with
// sample variables by the same code a send uses (internal/compose).
package templates

import (
	"log/slog"
	"time"

	"github.com/notifyd/notifyd/internal/notify"
	"github.com/notifyd/notifyd/internal/usecase"
)

// Options are what the room is built with.
type Options struct {
	Store  notify.Store
	Now    func() time.Time
	Logger *slog.Logger
}

// Service is the templates room.
type Service struct {
	usecase.Kit
}

// New builds the room.
func New(o Options) *Service {
	return &Service{Kit: usecase.NewKit(o.Store, o.Now, o.Logger)}
}
