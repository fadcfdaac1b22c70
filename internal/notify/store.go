package notify

import (
	"context"
	"time"
)

// Store is the persistence boundary. Every use case runs in one
// transaction: Update for writes (serialized on SQLite), View for reads.
// Both backends (SQLite and PostgreSQL) implement it and pass the same
// conformance suite.
type Store interface {
	Update(ctx context.Context, fn func(Tx) error) error
	View(ctx context.Context, fn func(Tx) error) error
	// Lookup is View for fn whose reads need no common snapshot (one
	// statement, or several that may each see the latest commit): where
	// the backend allows, it runs without a transaction (on PostgreSQL
	// that saves two round trips on every signed request).
	Lookup(ctx context.Context, fn func(Tx) error) error
	// UpdateUrgent is Update for a caller that answers a client now (the
	// send group commit): on a backend with one writer (SQLite) it goes
	// before the background writers waiting for it (delivery runs).
	UpdateUrgent(ctx context.Context, fn func(Tx) error) error
	// Batch is Update that may share its transaction with concurrent
	// callers (group commit). Each fn runs in its own savepoint, so an
	// error undoes only that fn's writes. fn may run after the caller's ctx
	// is done; it must not assume it is the transaction's only writer.
	Batch(ctx context.Context, fn func(Tx) error) error
	// BatchUrgent is Batch for callers that answer a client now (a
	// vendor's delivery callback): on a backend with one writer its
	// shared transaction ranks as UpdateUrgent's.
	BatchUrgent(ctx context.Context, fn func(Tx) error) error
	OutcomeNotes
	// Ping reports whether the database answers and the schema is current.
	Ping(ctx context.Context) error
	Close() error
}

// Tx is the set of store verbs available inside one transaction. Every
// verb that reads or writes workspace records takes the workspace id and
// filters by it; a record of another workspace is ErrNotFound. A verb
// that fails with ErrConflict (a unique key) ends the transaction: the
// caller must return its error, as PostgreSQL has aborted the transaction.
type Tx interface {
	// Workspaces and users.
	CreateWorkspace(ctx context.Context, w *Workspace) error
	FindWorkspace(ctx context.Context, id string) (*Workspace, error)
	UpdateWorkspaceName(ctx context.Context, id, name string, now time.Time) error
	// LockWorkspace serializes read-check-write use cases of one workspace
	// (route replace, owner changes): it holds the workspace row's write
	// lock until the transaction ends.
	LockWorkspace(ctx context.Context, id string) error
	CountWorkspaces(ctx context.Context) (int, error)
	CreateUser(ctx context.Context, u *User) error
	FindUserByEmail(ctx context.Context, email string) (*User, error)
	FindUser(ctx context.Context, id string) (*User, error)
	SetUserPassword(ctx context.Context, userID, hash string) error

	// Memberships.
	PutMember(ctx context.Context, m *Member) error
	FindMember(ctx context.Context, workspaceID, userID string) (*Member, error)
	FindMembers(ctx context.Context, workspaceID string) ([]*Member, error)
	FindMembershipsOfUser(ctx context.Context, userID string) ([]*Member, error)
	DeleteMember(ctx context.Context, workspaceID, userID string) error
	CountOwners(ctx context.Context, workspaceID string) (int, error)

	// Dashboard sessions.
	CreateSession(ctx context.Context, s *Session) error
	FindSession(ctx context.Context, tokenHash string, now time.Time) (*Session, error)
	DeleteSession(ctx context.Context, tokenHash string) error
	DeleteExpiredSessions(ctx context.Context, now time.Time) (int, error)
	AuthTx

	// API keys and replay protection.
	CreateAPIKey(ctx context.Context, k *APIKey) error
	FindAPIKey(ctx context.Context, workspaceID, id string) (*APIKey, error)
	FindAPIKeyByKeyID(ctx context.Context, keyID string) (*APIKey, error)
	FindAPIKeys(ctx context.Context, workspaceID string) ([]*APIKey, error)
	UpdateAPIKey(ctx context.Context, k *APIKey) error
	TouchAPIKey(ctx context.Context, id string, at time.Time) error
	// UseNonce records a nonce for a key; ErrConflict when it was seen
	// before and has not expired.
	UseNonce(ctx context.Context, keyID, nonce string, now, expiresAt time.Time) error
	// UseNonces records many nonces in one statement and reports which
	// were new (an unexpired duplicate is a replay). A nonce repeated in
	// uses is new at most at its first place.
	UseNonces(ctx context.Context, uses []NonceUse, now time.Time) ([]bool, error)
	DeleteExpiredNonces(ctx context.Context, now time.Time) (int, error)

	// Audit log.
	CreateAudit(ctx context.Context, e *AuditEntry) error
	// CreateAudits writes many entries in bulk (a bulk action's items).
	CreateAudits(ctx context.Context, es []*AuditEntry) error
	FindAudit(ctx context.Context, workspaceID string, f AuditFilter) ([]*AuditEntry, error)

	// Provider accounts and routes.
	CreateProviderAccount(ctx context.Context, p *ProviderAccount) error
	FindProviderAccount(ctx context.Context, workspaceID, id string) (*ProviderAccount, error)
	FindProviderAccounts(ctx context.Context, workspaceID string) ([]*ProviderAccount, error)
	UpdateProviderAccount(ctx context.Context, p *ProviderAccount) error
	ReplaceRoutes(ctx context.Context, workspaceID string, routes []*Route) error
	FindRoutes(ctx context.Context, workspaceID string) ([]*Route, error)

	PipelineTx
	OTPTx
	LimitTx
	SubscriberTx
	RecipientTx
	ConsentTx
	WindowTx
	CategoryTx
	PreferenceTx
	SendContextTx
	CapTx
	CampaignTx
	WebhookTx
	SuppressionTx
	IdentityTx
	SealedTx
	InvitationTx
	RetentionTx
	DeadLetterTx
	OptInTx
	OTPFraudGuardTx
	InboundHookTx
	InboxTx
	ReceiptTx
	EngagementTx
	ReceiptStatsTx
	WorkflowTx
}

// PipelineTx holds the verbs of the send pipeline.
type PipelineTx interface {
	// AcceptRequests inserts requests and their queue jobs in this
	// transaction; an existing idempotency key fills Accept.Existing instead.
	AcceptRequests(ctx context.Context, accepts []*Accept, now time.Time) error
	// CreateDirectRequest stores a synchronously sent request and its job
	// row, with no queue job.
	CreateDirectRequest(ctx context.Context, r *Request, j *Job) error
	FindRequest(ctx context.Context, workspaceID, id string) (*Request, error)
	// LockRequest is FindRequest holding the row's write lock until the
	// transaction ends, for read-then-write status moves.
	LockRequest(ctx context.Context, workspaceID, id string) (*Request, error)
	UpdateRequest(ctx context.Context, r *Request) error
	FindJobByRequest(ctx context.Context, workspaceID, requestID string) (*Job, error)
	FindJob(ctx context.Context, workspaceID, id string) (*Job, error)
	UpdateJob(ctx context.Context, j *Job) error
	// CancelScheduledWork withdraws work not started yet: the dispatch of a
	// job row (its QueueJobID) or a campaign's fan-out (its FanoutRef).
	// A reference already gone is not an error.
	CancelScheduledWork(ctx context.Context, ref int64) error
	FindOpenJobs(ctx context.Context, workspaceID string, limit int) ([]*OpenJob, error)
	CreateAttempts(ctx context.Context, as []*Attempt) error
	FindAttemptsOfRequest(ctx context.Context, workspaceID, requestID string) ([]*Attempt, error)
	FindAttempts(ctx context.Context, workspaceID string, f AttemptFilter) ([]*Attempt, []*Request, error)
	// FindRequests pages a workspace's requests newest first (console and
	// GET /v1/requests).
	FindRequests(ctx context.Context, workspaceID string, f RequestFilter) ([]*Request, error)
	CreateEvent(ctx context.Context, e *Event) error
	// CreateDeadLetter records a dead letter, keeping the newest 10,000 per workspace.
	CreateDeadLetter(ctx context.Context, d *DeadLetter) error
	FindDeadLetters(ctx context.Context, workspaceID string, limit int) ([]*DeadLetter, int, error)
	CountActivity(ctx context.Context, workspaceID string, from, to time.Time) (*Counts, error)

	FindBreakers(ctx context.Context, accountIDs []string) (map[string]*BreakerRecord, error)
	PutBreaker(ctx context.Context, b *BreakerRecord) error

	DeliveryTx

	IsSuppressed(ctx context.Context, workspaceID, address string) (bool, error)
	PutSuppression(ctx context.Context, workspaceID, address, reason string, at time.Time) error

	CreateTemplate(ctx context.Context, t *Template) error
	UpdateTemplate(ctx context.Context, t *Template) error
	FindTemplate(ctx context.Context, workspaceID, id string) (*Template, error)
	FindTemplateByCode(ctx context.Context, workspaceID, code string, channel Channel) (*Template, error)
	FindTemplates(ctx context.Context, workspaceID string) ([]*Template, error)
	CreateTemplateVersion(ctx context.Context, v *TemplateVersion) error
	// FindTemplateVersions pages the versions of a template of the
	// workspace, newest first.
	FindTemplateVersions(ctx context.Context, workspaceID, templateID string, f TemplateVersionFilter) ([]*TemplateVersion, error)
	// FindTemplateVersion reads one version of a template of the workspace
	// (ErrNotFound when none).
	FindTemplateVersion(ctx context.Context, workspaceID, templateID string, version int) (*TemplateVersion, error)
	// FindPublishedTemplateVersion reads the version a send in a locale
	// uses, the only one whose bodies it reads: the highest published
	// version of the first of locales that has one, else the highest
	// published version of the default locale (no locale); ErrNotFound
	// when none.
	FindPublishedTemplateVersion(ctx context.Context, workspaceID, templateID string, locales []string) (*TemplateVersion, error)
	// CountTemplateVersions answers how many versions a template of the
	// workspace has and the highest version number (0 when none).
	CountTemplateVersions(ctx context.Context, workspaceID, templateID string) (n, highest int, err error)
	PublishTemplateVersion(ctx context.Context, templateID string, version int, at time.Time) error
	// DeleteTemplateVersion deletes a version; with draft, only while it
	// is unpublished. ErrNotFound when no row matched.
	DeleteTemplateVersion(ctx context.Context, templateID string, version int, draft bool) error
	LayoutTx
}

// DeliveryTx holds the verbs of batch delivery: a queue job's requests are
// claimed, and their outcomes recorded, with a few multi-row statements
// whatever their number.
type DeliveryTx interface {
	// FindJobsOfQueueJob lists the open job rows (scheduled, queued,
	// retrying, processing) that queue job queueJobID carries.
	FindJobsOfQueueJob(ctx context.Context, queueJobID int64) ([]*Job, error)
	// ClaimRequests moves the requests of js to processing unless they
	// reached a final state meanwhile, and their job rows to processing
	// with one more attempt started at now by worker process owner. It
	// answers the claimed requests and their updated job rows, in the
	// same order.
	ClaimRequests(ctx context.Context, js []*Job, now time.Time, owner string) ([]*Request, []*Job, error)
	// SettleRequests saves the state of each request that is still
	// processing and reports which were; one canceled meanwhile stays so.
	SettleRequests(ctx context.Context, rs []*Request) ([]bool, error)
	// SaveDecisions saves the Decisions of each request of rs (issue 32,
	// item 7), whatever its status.
	SaveDecisions(ctx context.Context, rs []*Request) error
	// MoveFallbackSteps saves the FallbackStep of each request of rs and
	// the MaxAttempts of its job js[i] (the cross-channel fallback moved
	// them to their next channel, with an attempt budget of its own).
	MoveFallbackSteps(ctx context.Context, rs []*Request, js []*Job) error
	// UpdateJobs saves many job rows, queue job id included.
	UpdateJobs(ctx context.Context, js []*Job) error
	// CreateEvents writes outbox rows in bulk.
	CreateEvents(ctx context.Context, es []*Event) error
	// ScheduleDispatch gives each job row a queue job of its own in the
	// queue of lanes[i], due at at[i] (at once when zero), and sets
	// QueueJobID; the caller saves the rows with UpdateJobs.
	ScheduleDispatch(ctx context.Context, js []*Job, at []time.Time, lanes []Lane) error
	// IsolateDispatch gives each job row a queue job of its own, due at
	// once, that runs one at a time per worker process and starts with
	// crashes counted (a run of several requests that kept crashing its
	// process is split so the one to blame can be found), and saves the
	// rows' new queue job ids.
	IsolateDispatch(ctx context.Context, js []*Job, crashes int) error
	// FindSuppressed answers which of addrs the workspace suppresses.
	FindSuppressed(ctx context.Context, workspaceID string, addrs []string) (map[string]bool, error)
	// CloseBreakers closes the circuits of accountIDs, writing only rows
	// not already closed with no failures.
	CloseBreakers(ctx context.Context, accountIDs []string, now time.Time) error
	// LockBreakers reads circuit states holding their rows' locks until
	// the transaction ends.
	LockBreakers(ctx context.Context, accountIDs []string) (map[string]*BreakerRecord, error)
}
