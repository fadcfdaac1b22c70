// Package verification is the room of one-time verification: OTP send,
// resend and verify in code and link mode (SPEC "OTP"), their per
// recipient limits, the link pages' use case, and the fraud guard against
// SMS pumping (docs/OTP.md). The primitives (codes, hashes, tokens, phone
// numbers, the policy) are internal/otp's; this room applies them with
// the store and hands each message to the delivery engine, whose answer
// the caller waits for.
package verification

import (
	"context"
	"log/slog"
	"strings"
	"time"

	"github.com/notifyd/notifyd/internal/notify"
	"github.com/notifyd/notifyd/internal/otp"
	"github.com/notifyd/notifyd/internal/usecase"
)

// Labels of the keys derived from the master key for OTP (secret.Derive).
const (
	SigningLabel = "notifyd otp signing secret v1"
	CodeLabel    = "notifyd otp code hash v1"
)

// Engine is the delivery engine as this room sees it: an OTP message is
// sent while its caller waits.
type Engine interface {
	// SendNow delivers a stored request whose caller waits for the
	// outcome; the caller records it in its own transaction.
	SendNow(ctx context.Context, d notify.DirectSend) notify.DirectOutcome
}

// Options are what the room is built with.
type Options struct {
	Store  notify.Store
	Now    func() time.Time
	Logger *slog.Logger
	// Secret signs verification tokens (OTP_SIGNING_SECRET); CodeKey keys
	// the code hashes. Both default to random per-process keys.
	Secret  []byte
	CodeKey []byte
	// BaseURL is the public base URL link-mode links start with.
	BaseURL string
	// Engine sends the messages.
	Engine Engine
}

// Service is the verification room.
type Service struct {
	usecase.Kit
	policy  otp.Policy
	secret  []byte
	codeKey []byte
	baseURL string // without a trailing slash
	engine  Engine
}

// New builds the room.
func New(o Options) *Service {
	s := &Service{Kit: usecase.NewKit(o.Store, o.Now, o.Logger), policy: otp.DefaultPolicy(), secret: o.Secret,
		codeKey: o.CodeKey, baseURL: strings.TrimRight(o.BaseURL, "/"), engine: o.Engine}
	if len(s.secret) == 0 {
		s.secret = usecase.RandomKey()
	}
	if len(s.codeKey) == 0 {
		s.codeKey = usecase.RandomKey()
	}
	return s
}
