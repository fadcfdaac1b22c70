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

	"github.com/notifyd/notifyd/internal/gate"
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
	// CommitWorkflow builds the requests of sends outside any transaction,
	// then runs write and writes the requests write keeps in one
	// transaction of the send group commit; with door's key, that
	// transaction records the signed call's nonce and counts it toward the
	// request limits, as a signed send's does. write may run more than
	// once (a retried batch), each time on a fresh transaction.
	CommitWorkflow(ctx context.Context, ws string, door *Door, sends []Send, write Write) error
}

// Door is the signed call a trigger came through.
type Door struct {
	Key   *notify.APIKey
	Nonce *gate.Nonce
}

// Write is a transaction's own writes around sends built before it:
// requestIDs[i] is the request of sends[i], or "" when refusals[i] holds
// why it was refused; keep[i] false leaves that request unwritten.
type Write = func(ctx context.Context, tx notify.Tx, requestIDs, refusals []string) (keep []bool, err error)

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
