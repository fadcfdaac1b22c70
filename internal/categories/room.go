// Package categories is the room of message categories and recipients'
// preferences (issue 32, item 3): a workspace's kinds of message (security
// notices, marketing, ...), and per person and per workspace which
// channels each kind may use. The decision a send takes from them is the
// pure notify.DecidePreference; wiring it into sends is a later step.
package categories

import (
	"crypto/rand"
	"log/slog"
	"strings"
	"time"

	"github.com/notifyd/notifyd/internal/notify"
	"github.com/notifyd/notifyd/internal/usecase"
)

// Options are what the room is built with.
type Options struct {
	Store  notify.Store
	Now    func() time.Time
	Logger *slog.Logger
	// PageKey signs preference links (PageSigningLabel derives it from
	// the master key); BaseURL is the public base URL they start with.
	PageKey []byte
	BaseURL string
}

// Service is the categories room.
type Service struct {
	usecase.Kit
	pageKey []byte
	baseURL string
}

// New builds the room.
func New(o Options) *Service {
	if len(o.PageKey) == 0 {
		// A room built without a key (tests) signs with a key of its own.
		o.PageKey = make([]byte, 32)
		_, _ = rand.Read(o.PageKey)
	}
	return &Service{Kit: usecase.NewKit(o.Store, o.Now, o.Logger), pageKey: o.PageKey, baseURL: strings.TrimSuffix(o.BaseURL, "/")}
}

// Caller is who acts: a dashboard member or a signed API key.
type Caller = usecase.Caller
