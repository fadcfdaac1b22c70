package notify

import (
	"context"
	"time"
)

// Request rate-limit defaults (SPEC "Request rate limits").
const (
	DefaultRateWindowSeconds    = 60
	DefaultAPIKeyMaxRequests    = 600
	DefaultWorkspaceMaxRequests = 2000
)

// Dispatch limit scopes (SPEC "Dispatch limit").
const (
	DispatchScopeWorkspace = "workspace"
	DispatchScopeProvider  = "provider"
	DispatchScopeAPIKey    = "apiKey"
)

// RateLimitPolicy overrides the default request rate limit of a workspace
// (APIKeyID empty) or of one API key credential.
type RateLimitPolicy struct {
	ID            string
	WorkspaceID   string
	APIKeyID      string // "" for the workspace policy
	WindowSeconds int
	MaxRequests   int
	Enabled       bool
	UpdatedAt     time.Time
}

// DispatchLimit is a token-bucket limit on sends toward providers.
type DispatchLimit struct {
	ID            string
	WorkspaceID   string
	Scope         string
	TargetID      string // "" for the workspace scope
	RatePerSecond int
	Enabled       bool
	CreatedAt     time.Time
	UpdatedAt     time.Time
}

// DispatchWorker is the heartbeat row of one live worker process: its
// demand per dispatch-limit key in sends per second (pacing.Cluster).
// The table is global, not of a workspace: the keys name workspaces.
type DispatchWorker struct {
	ID          string
	Demand      map[string]float64
	HeartbeatAt time.Time
}

// LimitTx holds the store verbs of rate and dispatch limits.
type LimitTx interface {
	// PutRateLimitPolicy inserts or updates the policy of (WorkspaceID,
	// APIKeyID) and fills p with the stored row (an existing row keeps its id).
	PutRateLimitPolicy(ctx context.Context, p *RateLimitPolicy) error
	// FindRateLimitPolicy returns the policy of (workspaceID, apiKeyID);
	// apiKeyID "" is the workspace policy.
	FindRateLimitPolicy(ctx context.Context, workspaceID, apiKeyID string) (*RateLimitPolicy, error)
	// FindRateLimitPolicies lists the workspace's policies, the workspace
	// policy first, then key policies by key id.
	FindRateLimitPolicies(ctx context.Context, workspaceID string) ([]*RateLimitPolicy, error)

	// RateCount is the counter of scopeKey in the window starting at
	// windowStart (0 when none).
	RateCount(ctx context.Context, scopeKey string, windowStart time.Time) (int, error)
	// IncrementRate adds one to the counter of scopeKey in the window.
	IncrementRate(ctx context.Context, scopeKey string, windowStart time.Time) error
	// LockRateCount returns the counter of scopeKey in the window, creating
	// it at 0 when missing, and holds its row lock (PostgreSQL) until the
	// transaction ends: concurrent checkers of other processes wait.
	LockRateCount(ctx context.Context, scopeKey string, windowStart time.Time) (int, error)
	// SetRateCount sets a counter read by LockRateCount in this transaction.
	SetRateCount(ctx context.Context, scopeKey string, windowStart time.Time, n int) error
	// RateCounts reads the counters of many windows in one statement (0
	// for a window without one), in the order given.
	RateCounts(ctx context.Context, ws []RateWindow) ([]int, error)
	// AddRateCounts adds each window's N to its counter (creating it) in
	// one statement and returns the new counts, in the order given. It
	// holds the rows' locks only from here to the end of the transaction:
	// callers add last. The windows must be distinct.
	AddRateCounts(ctx context.Context, ws []RateWindow) ([]int, error)
	// DeleteRateCounters deletes counters of windows that started before.
	DeleteRateCounters(ctx context.Context, before time.Time) (int, error)

	// PutDispatchLimit upserts by (WorkspaceID, Scope, TargetID) and fills
	// l with the stored row (an existing row keeps its id and createdAt).
	PutDispatchLimit(ctx context.Context, l *DispatchLimit) error
	FindDispatchLimits(ctx context.Context, workspaceID string) ([]*DispatchLimit, error)
	DeleteDispatchLimit(ctx context.Context, workspaceID, id string) error
	// DispatchTargetWorkspace returns the workspace of the provider
	// account (scope provider) or API key (scope apiKey) whose id is
	// targetID, whichever workspace it is in; ErrNotFound when none.
	DispatchTargetWorkspace(ctx context.Context, scope, targetID string) (string, error)

	// PutDispatchWorker upserts a worker's heartbeat row by ID.
	PutDispatchWorker(ctx context.Context, w *DispatchWorker) error
	// DeleteDispatchWorker deletes one worker's row (clean shutdown); an
	// unknown id is not an error.
	DeleteDispatchWorker(ctx context.Context, id string) error
	// DeleteStaleDispatchWorkers deletes rows whose last heartbeat is
	// before the given time.
	DeleteStaleDispatchWorkers(ctx context.Context, before time.Time) (int, error)
	// FindDispatchWorkers lists the rows with a heartbeat at or after
	// since, by id.
	FindDispatchWorkers(ctx context.Context, since time.Time) ([]*DispatchWorker, error)
	// RescueQueueJobs makes running queue jobs fetched before
	// runningBefore available again when their worker process has no
	// heartbeat at or after liveSince, or when it is self and the job is
	// not in busy; it returns how many. A job of a dead process counts a
	// crash, which survives in the job (jobs.Crashes); at
	// jobs.IsolateAfterCrashes it moves to the isolated queue.
	RescueQueueJobs(ctx context.Context, liveSince, runningBefore time.Time, self string, busy []int64) (int, error)
	// FindRunningQueueJobs lists the ids of the queue jobs of queue that
	// are running under worker process owner, by id.
	FindRunningQueueJobs(ctx context.Context, queue, owner string) ([]int64, error)
}

// RateWindow names one request-limit counter: a scope key and the start of
// its fixed window; N is an amount to add.
type RateWindow struct {
	ScopeKey string
	Start    time.Time
	N        int
}
