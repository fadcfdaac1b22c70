// Package engagement is the room of email engagement (issue 35, item 4):
// opt-in open and click tracking. When a workspace, a category or a
// campaign turns it on (and NOTIFYD_TRACKING does not turn it off
// everywhere), the delivery engine hands each outgoing e-mail's HTML to
// Instrument, which adds an open pixel and rewrites its http(s) links to
// the public base URL with signed tokens. The public endpoints verify a
// token in memory, answer at once (the pixel, or a redirect to the link's
// own URL, which the token carries under its signature), and queue the
// hit; a recorder writes the queued hits in batches, with the first open
// and click events of each request. The room also answers a campaign's
// statistics and a request's engagement for lookups.
package engagement

import (
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/notifyd/notifyd/internal/notify"
	"github.com/notifyd/notifyd/internal/usecase"
)

// SigningLabel derives the key of the tracking tokens from the master
// key: a purpose of its own, so no other token can pass for one.
const SigningLabel = "notifyd engagement tracking v1"

// Paths of the public endpoints (internal/web serves them).
const (
	OpenPath  = "/t/o/"
	ClickPath = "/t/c/"
)

// DefaultScannerWindow is how soon after the send a hit is taken for a
// link scanner's rather than a person's: security gateways fetch links
// and images as the mail arrives, people take longer.
const DefaultScannerWindow = 10 * time.Second

// settingsTTL is how long a process trusts its copy of a workspace's
// tracking settings: a change made through another process (an API node
// while a worker sends) applies within it.
const settingsTTL = 5 * time.Second

// Options are what the room is built with.
type Options struct {
	Store  notify.Store
	Now    func() time.Time
	Logger *slog.Logger
	// Key signs the tracking tokens (SigningLabel); default a random
	// per-process key.
	Key []byte
	// BaseURL is the public base URL (NOTIFYD_BASE_URL) the rewritten
	// links and the pixel start with.
	BaseURL string
	// Off is the global switch (NOTIFYD_TRACKING=off): nothing is tracked
	// whatever the settings say.
	Off bool
	// ScannerWindow: zero is DefaultScannerWindow.
	ScannerWindow time.Duration
}

// Service is the engagement room.
type Service struct {
	usecase.Kit
	key     []byte
	baseURL string
	off     bool
	window  time.Duration

	mu    sync.Mutex
	cache map[string]*cachedSettings // by workspace

	rec  *recorder
	macs sync.Pool // of hash.Hash: HMACs of key (token.go)
}

// New builds the room.
func New(o Options) *Service {
	s := &Service{Kit: usecase.NewKit(o.Store, o.Now, o.Logger), key: o.Key, baseURL: strings.TrimRight(o.BaseURL, "/"),
		off: o.Off, window: o.ScannerWindow, cache: map[string]*cachedSettings{}}
	if len(s.key) == 0 {
		s.key = usecase.RandomKey()
	}
	if s.window == 0 {
		s.window = DefaultScannerWindow
	}
	s.rec = newRecorder(s)
	return s
}

// Enabled reports whether tracking may happen at all (the global switch).
func (s *Service) Enabled() bool { return !s.off }
