// Package newsletter is the room of newsletters: subscribers (import,
// consent, double opt-in, unsubscribe), campaigns (create, schedule,
// send, pause, resume, retry of failed recipients, cancel, preview) and
// the fan-out that turns a campaign into one request per recipient. It
// writes the requests through the store's AcceptRequests verb, the one
// the API's sends use, so delivery treats both alike.
package newsletter

import (
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/notifyd/notifyd/internal/mailcheck"
	"github.com/notifyd/notifyd/internal/notify"
	"github.com/notifyd/notifyd/internal/usecase"
)

// Options are what the room is built with.
type Options struct {
	Store  notify.Store
	Now    func() time.Time
	Logger *slog.Logger
	// JobAttempts is the attempt budget of the requests the room writes
	// (SVC_QUEUE_JOB_ATTEMPTS); default 3.
	JobAttempts int
	// OptInKey signs the double opt-in confirmation links (optin.go);
	// default a random per-process key.
	OptInKey []byte
	// BaseURL is the public base URL (NOTIFYD_BASE_URL) confirmation
	// links start with: one value for every path that mails one (API,
	// console), so no caller can leave it out.
	BaseURL string
	// MailCheck checks subscriber domains by DNS; nil skips the check.
	MailCheck *mailcheck.Checker
	// FanoutWriters is how many batches of a campaign's fan-out may be
	// written at once; default 1. On PostgreSQL two overlap their COPYs
	// and round trips (docs/BENCHMARKS.md, session 11); SQLite has one
	// writer, so more would only wait.
	FanoutWriters int
}

// Service is the newsletter room.
type Service struct {
	usecase.Kit
	jobAttempts int
	optInKey    []byte
	baseURL     string // public base URL, without a trailing slash
	mailCheck   *mailcheck.Checker

	fanoutMu      sync.Mutex
	fanoutFault   FanoutFault // tests: SetFanoutFault
	fanoutWriters int         // batches of a fan-out written at once (fanout.go)
	fanoutResume  sync.Map    // fan-out job ID → the cursor its next run starts after (fanout.go)
}

// New builds the room.
func New(o Options) *Service {
	s := &Service{Kit: usecase.NewKit(o.Store, o.Now, o.Logger), jobAttempts: o.JobAttempts, optInKey: o.OptInKey,
		baseURL: strings.TrimRight(o.BaseURL, "/"), mailCheck: o.MailCheck, fanoutWriters: max(o.FanoutWriters, 1)}
	if s.jobAttempts == 0 {
		s.jobAttempts = 3
	}
	if len(s.optInKey) == 0 {
		s.optInKey = usecase.RandomKey()
	}
	return s
}
