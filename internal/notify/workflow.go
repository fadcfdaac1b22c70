package notify

import (
	"context"
	"time"
)

// Workflows (issue 34): a workspace's definitions of ordered steps (send,
// delay, branch, throttle, digest), versioned; runs of a published
// version for one recipient profile each; and the steps of each run,
// every pending one a queue job written in the transaction that made it
// pending. The policy (validation, evaluation) lives in internal/workflows.

// Workflow is a definition's head: its key, name and published version
// (0 while none is).
type Workflow struct {
	ID               string
	WorkspaceID      string
	Key              string
	Name             string
	PublishedVersion int
	CreatedAt        time.Time
	UpdatedAt        time.Time
}

// WorkflowVersion is one version of a definition's steps; a run keeps the
// version it started with.
type WorkflowVersion struct {
	WorkflowID  string
	WorkspaceID string
	Version     int
	Steps       []WorkflowStep
	CreatedAt   time.Time
	PublishedAt *time.Time
}

// WorkflowStep is one step as stored (JSON) and as the API shows it.
type WorkflowStep struct {
	Key  string `json:"key"`
	Type string `json:"type"`
	// send
	Channel      string   `json:"channel,omitempty"`
	Fallback     []string `json:"fallback,omitempty"`
	TemplateCode string   `json:"templateCode,omitempty"`
	Category     string   `json:"category,omitempty"`
	// delay: Duration, or Until (a payload field holding a time, read in
	// the recipient's time zone when it has no offset).
	Duration string `json:"duration,omitempty"`
	Until    string `json:"until,omitempty"`
	// branch: every condition holds → Then, else Else ("" is the next
	// step for Then and the end for Else; "end" ends the run).
	Conditions []WorkflowCondition `json:"conditions,omitempty"`
	Then       string              `json:"then,omitempty"`
	Else       string              `json:"else,omitempty"`
	// throttle: at most Limit runs per recipient (and KeyField's value)
	// per Window. digest: Window, KeyField, WindowType, MaxItems.
	Limit      int    `json:"limit,omitempty"`
	Window     string `json:"window,omitempty"`
	KeyField   string `json:"keyField,omitempty"`
	WindowType string `json:"windowType,omitempty"`
	MaxItems   int    `json:"maxItems,omitempty"`
}

// WorkflowCondition is one condition of a branch: on a payload field, a
// recipient attribute, or the message state of an earlier send step.
type WorkflowCondition struct {
	Payload   string `json:"payload,omitempty"`
	Attribute string `json:"attribute,omitempty"`
	Step      string `json:"step,omitempty"`
	Op        string `json:"op,omitempty"`
	Value     string `json:"value,omitempty"`
	State     string `json:"state,omitempty"`
}

// SourceWorkflow marks a request a workflow's send step made.
const SourceWorkflow = "workflow"

// The outbound events of workflow runs (beside SPEC's and the inbox's):
// a run started, a run ended (its status says how), a step ended.
const (
	EventWorkflowRunStarted = "workflow.run.started"
	EventWorkflowRunEnded   = "workflow.run.ended"
	EventWorkflowStepEnded  = "workflow.step.ended"
)

// WorkflowEventTypes are the workflow events a webhook may subscribe to.
var WorkflowEventTypes = []string{EventWorkflowRunStarted, EventWorkflowRunEnded, EventWorkflowStepEnded}

// Workflow step types.
const (
	StepSend     = "send"
	StepDelay    = "delay"
	StepBranch   = "branch"
	StepThrottle = "throttle"
	StepDigest   = "digest"
)

// Run and step states.
const (
	RunRunning   = "running"
	RunCompleted = "completed"
	RunCanceled  = "canceled"
	RunThrottled = "throttled"
	RunDigested  = "digested" // merged into another run's digest
	RunFailed    = "failed"

	// A run step is StepPending, RunStepDone, StepCanceled or StepFailed
	// (the first and the last two shared with fallback steps).
	RunStepDone = "done"
)

// WorkflowRun is one run of a workflow version for one recipient.
type WorkflowRun struct {
	ID              string
	WorkspaceID     string
	WorkflowID      string
	WorkflowKey     string
	Version         int
	RecipientID     string // the profile's external id
	Payload         map[string]any
	IdempotencyKey  string
	CancellationKey string
	Status          string
	// Digest holds the items a digest step released into this run.
	Digest    *WorkflowDigestResult
	CreatedAt time.Time
	UpdatedAt time.Time
	EndedAt   *time.Time
	// Steps are the run's step rows, in the order they were reached (set
	// by the verbs that read runs).
	Steps []*WorkflowRunStep
}

// WorkflowDigestResult is what a released digest gives the run's later
// steps: how many triggers it collected and (up to its bound) their
// payloads.
type WorkflowDigestResult struct {
	Count int              `json:"count"`
	Items []map[string]any `json:"items"`
}

// WorkflowRunStep is one reached step of a run: pending (its queue job
// waits), or ended.
type WorkflowRunStep struct {
	RunID       string
	WorkspaceID string
	Index       int
	Key         string
	Type        string
	Status      string
	Outcome     string // what the step decided: "sent", "then", "else", "passed", "throttled", "released", ...
	RequestID   string
	DueAt       time.Time
	QueueJobID  int64
	CreatedAt   time.Time
	EndedAt     *time.Time
}

// WorkflowRunFilter selects a page of runs, newest first.
type WorkflowRunFilter struct {
	WorkflowID  string
	RecipientID string
	Limit       int
	Before      *Cursor
}

// WorkflowRunStart is one run to create with its first step.
type WorkflowRunStart struct {
	Run   *WorkflowRun
	First *WorkflowRunStep
	// Then, when set, is a second step row: First ended at once (a
	// leading send step whose request the trigger's transaction writes)
	// and the run went on to Then.
	Then *WorkflowRunStep
}

// WorkflowDigest is an open (or released) digest window of one workflow,
// recipient and digest key.
type WorkflowDigest struct {
	ID          string
	WorkspaceID string
	WorkflowID  string
	RecipientID string
	DigestKey   string
	RunID       string // the run that goes on with the digest
	Count       int
	WindowEnd   time.Time
	Released    bool
}

// WorkflowTx holds the store verbs of workflows.
type WorkflowTx interface {
	// CreateWorkflow stores a definition; ErrConflict when the key is taken.
	CreateWorkflow(ctx context.Context, w *Workflow) error
	FindWorkflowByKey(ctx context.Context, workspaceID, key string) (*Workflow, error)
	FindWorkflows(ctx context.Context, workspaceID string) ([]*Workflow, error)
	CreateWorkflowVersion(ctx context.Context, v *WorkflowVersion) error
	FindWorkflowVersion(ctx context.Context, workspaceID, workflowID string, version int) (*WorkflowVersion, error)
	FindWorkflowVersions(ctx context.Context, workspaceID, workflowID string) ([]*WorkflowVersion, error)
	PublishWorkflowVersion(ctx context.Context, workspaceID, workflowID string, version int, at time.Time) error
	// FindTriggerWorkflow reads, in one statement, the workflow of key
	// (ErrNotFound when none), its published version (nil when none is
	// published) and how many of recipients (distinct external ids) are
	// profiles of the workspace. The workflow and version answered may be
	// shared with other callers (a store may keep them in memory while
	// they are current): they are not to be changed.
	FindTriggerWorkflow(ctx context.Context, workspaceID, key string, recipients []string) (*Workflow, *WorkflowVersion, int, error)

	// StartWorkflowRuns inserts runs, their first step rows (and Then)
	// and the pending steps' queue jobs. A run whose idempotency key (per workflow and
	// recipient) exists is not inserted: Run.ID is set to the existing
	// run's id and the answer says false at its place.
	StartWorkflowRuns(ctx context.Context, starts []*WorkflowRunStart) ([]bool, error)
	// LockWorkflowRun reads a run with its steps, holding the run row's
	// write lock until the transaction ends.
	LockWorkflowRun(ctx context.Context, workspaceID, id string) (*WorkflowRun, error)
	FindWorkflowRun(ctx context.Context, workspaceID, id string) (*WorkflowRun, error)
	// ReadWorkflowRuns reads the runs of ids that exist, with their
	// steps, in no set order; with lock, holding each run row's write
	// lock until the transaction ends.
	ReadWorkflowRuns(ctx context.Context, workspaceID string, ids []string, lock bool) ([]*WorkflowRun, error)
	// LockWorkflowRunStates is ReadWorkflowRuns with lock for a caller
	// that read the runs before its transaction: it holds each run row's
	// write lock until the transaction ends and reads the run's id,
	// workspace, status and times with its steps, not its payload nor
	// digest (left empty).
	LockWorkflowRunStates(ctx context.Context, workspaceID string, ids []string) ([]*WorkflowRun, error)
	FindWorkflowRuns(ctx context.Context, workspaceID string, f WorkflowRunFilter) ([]*WorkflowRun, error)
	// UpdateWorkflowRun saves the run's status, digest and times.
	UpdateWorkflowRun(ctx context.Context, r *WorkflowRun) error
	// EndWorkflowRunStep saves a step's status, outcome, request, due
	// time and end.
	EndWorkflowRunStep(ctx context.Context, s *WorkflowRunStep) error
	// AddWorkflowRunStep inserts a step row and, when it is pending, its
	// queue job, due at s.DueAt, and sets s.QueueJobID. Delay and send
	// steps due at the same instant may share a job (jobs.WorkflowSteps).
	AddWorkflowRunStep(ctx context.Context, s *WorkflowRunStep) error
	// SaveWorkflowRunSteps writes many step rows at once (a batch of
	// step runs): each row is updated when its run and index exist, else
	// inserted with, when pending, its queue job (sets QueueJobID).
	SaveWorkflowRunSteps(ctx context.Context, steps []*WorkflowRunStep) error
	// SaveWorkflowRuns is UpdateWorkflowRun for many runs at once.
	SaveWorkflowRuns(ctx context.Context, runs []*WorkflowRun) error
	// FindRunningWorkflowRuns lists the running runs of a workflow with a
	// cancellation key.
	FindRunningWorkflowRuns(ctx context.Context, workspaceID, workflowID, cancellationKey string) ([]*WorkflowRun, error)

	// CountWorkflowThrottle counts the runs that passed a throttle of the
	// workflow for recipient and key since since; AddWorkflowThrottle
	// records one. The caller holds the recipient's lock.
	CountWorkflowThrottle(ctx context.Context, workspaceID, workflowID, recipientKey string, since time.Time) (int, error)
	AddWorkflowThrottle(ctx context.Context, workspaceID, workflowID, recipientKey, runID string, at time.Time) error

	// JoinWorkflowDigest adds the run's item to the open digest of d's
	// workflow, recipient and key, counting it; when none is open it
	// opens d (with d.RunID as the run that goes on). It answers the
	// digest the item joined, and whether it was opened by this call.
	JoinWorkflowDigest(ctx context.Context, d *WorkflowDigest, runID string, item map[string]any, at time.Time) (*WorkflowDigest, bool, error)
	// ReleaseWorkflowDigest closes the run's open digest and answers it
	// with its first maxItems items; released false when it was released
	// before.
	ReleaseWorkflowDigest(ctx context.Context, workspaceID, runID string, maxItems int) (*WorkflowDigest, []map[string]any, bool, error)

	// PutTopicSubscription subscribes a profile (external id) to a topic
	// and reports whether it was not subscribed before.
	PutTopicSubscription(ctx context.Context, workspaceID, topic, recipientID string, at time.Time) (bool, error)
	// DeleteTopicSubscription ends one; ErrNotFound when there was none.
	DeleteTopicSubscription(ctx context.Context, workspaceID, topic, recipientID string) error
	// FindTopicSubscribers lists a topic's subscribers by external id,
	// after after ("" from the first), limit at most.
	FindTopicSubscribers(ctx context.Context, workspaceID, topic, after string, limit int) ([]string, error)
}
