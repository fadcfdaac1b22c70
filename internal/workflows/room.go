// Package workflows is the room of workflows (issue 34): definitions of
// ordered steps (send, delay, branch, throttle, digest), versioned and
// published; triggers that start one run per recipient profile; and the
// runs themselves, each reached step a queue job written with its row,
// so a crash neither loses a run nor repeats a step.
//
// A send step's message goes through the sends room's acceptance path
// (the Acceptor port, joined by the daemon) with an idempotency key made
// of the run and the step: a step run again after a crash finds its
// request instead of making a second one.
package workflows

import (
	"context"
	"log/slog"
	"time"

	"github.com/notifyd/notifyd/internal/notify"
	"github.com/notifyd/notifyd/internal/usecase"
)

// Send is the message of a send step for one recipient profile.
type Send struct {
	Channel        notify.Channel
	Fallback       []notify.Channel
	RecipientID    string
	TemplateCode   string
	Category       string
	Variables      map[string]string
	Metadata       map[string]string
	IdempotencyKey string
}

// Acceptor is the sends room's acceptance path as this room uses it: it
// answers the request of s, the existing one when its idempotency key
// was accepted before.
type Acceptor interface {
	AcceptWorkflowSend(ctx context.Context, ws string, s Send) (requestID string, err error)
}

// Options are what the room is built with.
type Options struct {
	Store  notify.Store
	Now    func() time.Time
	Logger *slog.Logger
	Accept Acceptor
}

// Service is the workflows room.
type Service struct {
	usecase.Kit
	accept Acceptor
}

// New builds the room.
func New(o Options) *Service {
	return &Service{Kit: usecase.NewKit(o.Store, o.Now, o.Logger), accept: o.Accept}
}
