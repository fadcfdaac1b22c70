package notify

import (
	"context"
	"time"
)

// RetentionTx holds the verbs of data retention. Each deletes a bounded
// number of rows, so a purge is many short transactions that never hold
// the database (SQLite's one writer) for long.
type RetentionTx interface {
	// WorkspaceIDs lists every workspace id.
	WorkspaceIDs(ctx context.Context) ([]string, error)
	// PurgeRequests deletes up to limit terminal requests of the workspace
	// accepted and last changed before before, with their job rows and
	// attempts. A request whose job is in the dead-letter queue stays. The
	// deleted requests and attempts are first added to the rollups that
	// CountActivity and CampaignRequestCounts read, so those figures do not
	// change.
	PurgeRequests(ctx context.Context, workspaceID string, before time.Time, limit int) (PurgedRequests, error)
	// PurgeEvents deletes up to limit outbox events created before before
	// that no relay took (dispatched ones go after a week with the webhook
	// history).
	PurgeEvents(ctx context.Context, before time.Time, limit int) (int, error)
	// PurgeCampaignRecipients deletes up to limit fan-out records of
	// campaigns that ended (sent, canceled, failed) before before; the
	// campaign's counters are kept on its row.
	PurgeCampaignRecipients(ctx context.Context, before time.Time, limit int) (int, error)
	// PurgeInboxEvents deletes up to limit entries of the inbox streams'
	// event logs created before before: they serve a reconnecting stream,
	// not history (a stream asked to resume before the log resets).
	PurgeInboxEvents(ctx context.Context, before time.Time, limit int) (int, error)
	// PurgeInboxMessages deletes up to limit in-app inbox messages stored
	// before before, read or not: the inbox keeps what the data retention
	// keeps of the requests that delivered them.
	PurgeInboxMessages(ctx context.Context, before time.Time, limit int) (int, error)
	// PurgeAudit deletes up to limit audit entries created before before.
	PurgeAudit(ctx context.Context, before time.Time, limit int) (int, error)
}

// PurgedRequests counts the rows one PurgeRequests deleted.
type PurgedRequests struct {
	Requests, Jobs, Attempts int
}

// Retention is what a purge keeps: data (terminal requests with their job
// rows and attempts, stale outbox events, fan-out records of ended
// campaigns, in-app inbox messages) for Data, audit entries for Audit. Zero keeps forever.
type Retention struct {
	Data, Audit time.Duration
	// Budget bounds one run's work; what is left waits for the next run.
	// Zero works until done.
	Budget time.Duration
	// Batch is the rows per statement; zero is the service's default.
	Batch int
}
