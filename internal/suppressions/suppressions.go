// Package suppressions is the room of the email suppression list and of
// what feeds it from the vendors: bounce and complaint callbacks (SES
// over SNS, Resend, Postmark), authenticated by each provider account's
// callback secret and the vendor's own signature, and the rotation of that
// secret. It reads payloads through the pure internal/bounce; the one
// thing that needs the network, SNS certificate fetches and subscription
// confirmations, is the SNS port the daemon wires (internal/bounce/snshttp).
package suppressions

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/notifyd/notifyd/internal/bounce"
	"github.com/notifyd/notifyd/internal/groupcommit"
	"github.com/notifyd/notifyd/internal/notify"
	"github.com/notifyd/notifyd/internal/secret"
	"github.com/notifyd/notifyd/internal/usecase"
)

// SNS verifies and confirms the SNS messages of SES callbacks: it fetches
// signing certificates and visits subscription URLs, over HTTP. Its errors
// wrap bounce.ErrSignature (401) or bounce.ErrFetch (502).
type SNS interface {
	// Verify checks m's signature with the certificate at SigningCertURL.
	Verify(ctx context.Context, m *bounce.SNSMessage) error
	// Confirm visits a verified SubscriptionConfirmation's SubscribeURL.
	Confirm(ctx context.Context, m *bounce.SNSMessage) error
}

// Options are what the room is built with.
type Options struct {
	Store  notify.Store
	Box    *secret.Box // opens provider configs (Resend's webhook secret, SES's topic)
	Now    func() time.Time
	Logger *slog.Logger
	// SNS verifies SES callbacks: the daemon builds it with the
	// SSRF-guarded client, the trusted certificate hosts beside
	// sns.<region>.amazonaws.com (NOTIFYD_SNS_CERT_HOSTS) and whether they
	// may use plain http (private targets allowed: tests, demo). Nil
	// refuses every SES callback as unsigned.
	SNS SNS
	// Receipts takes the delivery reports the callbacks carry (issue 35):
	// deliveries and permanent bounces; nil ignores them.
	Receipts Receipts
}

// Receipts applies a delivery report a vendor pushed about its message
// (the receipts room, wired by the daemon).
type Receipts interface {
	Apply(ctx context.Context, kind, messageID string, rep *notify.VendorReport) (bool, error)
}

// Service is the suppressions room.
type Service struct {
	usecase.Kit
	box      *secret.Box
	sns      SNS
	receipts Receipts
	// senders gathers the callbacks' account lookups (findSender).
	senders *groupcommit.Queue[*senderCall]
}

// New builds the room.
func New(o Options) *Service {
	s := &Service{Kit: usecase.NewKit(o.Store, o.Now, o.Logger), box: o.Box, sns: o.SNS, receipts: o.Receipts}
	if s.sns == nil {
		s.sns = noSNS{}
	}
	s.senders = groupcommit.New(senderReaders, senderBatch, s.lookupSenders)
	return s
}

// noSNS is the SNS port of a room built without one: nothing verifies.
type noSNS struct{}

var errNoSNS = fmt.Errorf("%w: no SNS verifier is configured", bounce.ErrSignature)

func (noSNS) Verify(context.Context, *bounce.SNSMessage) error  { return errNoSNS }
func (noSNS) Confirm(context.Context, *bounce.SNSMessage) error { return errNoSNS }
