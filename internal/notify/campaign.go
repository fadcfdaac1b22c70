package notify

import (
	"context"
	"time"
)

// Campaign is a newsletter campaign. AudienceFilter is the filter object
// as given (JSON text), empty when absent.
type Campaign struct {
	ID                 string
	WorkspaceID        string
	Name               string
	Channel            Channel
	Status             CampaignStatus
	Subject            string
	ContentText        string
	ContentHTML        string
	IsAdvertisement    bool
	IncludeUnsubscribe bool
	AudienceFilter     string
	ScheduledAt        *time.Time
	TotalRecipients    int
	QueuedCount        int
	FailedCount        int
	// FanoutRef names the current fan-out's scheduled work (0 before
	// send); the API shows it as fanoutJobId.
	FanoutRef int64
	// LinkBase is the public base URL of the unsubscribe links, fixed at send.
	LinkBase     string
	StartedAt    *time.Time
	FanoutDoneAt *time.Time
	FinishedAt   *time.Time
	CreatedAt    time.Time
	UpdatedAt    time.Time
}

// Audience is a parsed audience filter: a subscriber matches when every
// condition is among its attributes. Never marks a condition no value can
// meet (a null, array or object value), which matches nobody.
type Audience struct {
	Conds map[string]string
	Never bool
}

// Match reports whether a subscriber's attributes meet every condition.
func (a *Audience) Match(attrs map[string]string) bool {
	if a == nil {
		return true
	}
	if a.Never {
		return false
	}
	for k, v := range a.Conds {
		if got, ok := attrs[k]; !ok || got != v {
			return false
		}
	}
	return true
}

// CampaignRecipient is one subscriber handled by a fan-out; RequestID is
// empty when no request could be made for it.
type CampaignRecipient struct {
	SubscriberID string
	RequestID    string
}

// CampaignTx holds the store verbs of newsletter campaigns and their fan-out.
type CampaignTx interface {
	CreateCampaign(ctx context.Context, c *Campaign) error
	FindCampaign(ctx context.Context, workspaceID, id string) (*Campaign, error)
	// FindCampaigns returns one page, newest first, and the total; an empty
	// status does not filter.
	FindCampaigns(ctx context.Context, workspaceID string, status CampaignStatus, limit, offset int) ([]*Campaign, int, error)
	// UpdateCampaign writes every field except the fan-out counters.
	UpdateCampaign(ctx context.Context, c *Campaign) error
	// MoveCampaign changes the status from one of from to to, taking the
	// campaign row's write lock; false when the status was none of from.
	MoveCampaign(ctx context.Context, workspaceID, id string, from []CampaignStatus, to CampaignStatus, now time.Time) (bool, error)
	DeleteCampaign(ctx context.Context, workspaceID, id string) error
	// ScheduleFanout schedules the campaign's fan-out, at once or at at
	// when given, and returns its reference (Campaign.FanoutRef).
	ScheduleFanout(ctx context.Context, workspaceID, campaignID string, at *time.Time) (int64, error)

	// CountAudience counts the sendable subscribers of channel (subscribed,
	// not suppressed) that aud matches (nil: all); with exceptCampaign,
	// those not yet handled by that campaign's fan-out.
	CountAudience(ctx context.Context, workspaceID string, channel Channel, aud *Audience, exceptCampaign string) (int, error)
	// FindFanoutPage returns up to limit sendable subscribers of channel not
	// yet handled by the campaign, with ids above after, by id.
	FindFanoutPage(ctx context.Context, workspaceID, campaignID string, channel Channel, after string, limit int) ([]*Subscriber, error)
	// AddCampaignRecipients records handled subscribers; a subscriber
	// already recorded for the campaign is ErrConflict.
	AddCampaignRecipients(ctx context.Context, campaignID string, rs []CampaignRecipient) error
	CountCampaignRecipients(ctx context.Context, campaignID string) (int, error)
	// SetCampaignProgress sets totalRecipients and adds to the queued and
	// failed counters.
	SetCampaignProgress(ctx context.Context, workspaceID, id string, total, queued, failed int, now time.Time) error
	// CampaignRequestCounts counts the campaign's requests per status.
	CampaignRequestCounts(ctx context.Context, workspaceID, id string) (map[RequestStatus]int, error)
	// CancelCampaignRequests cancels the campaign's queued and processing
	// requests and their jobs (finalErrorCode code) and returns the
	// canceled requests (for their notification.canceled events).
	CancelCampaignRequests(ctx context.Context, workspaceID, id, code, message string, now time.Time) ([]*Request, error)

	// LockQueuedCampaignRequests waits until every transaction that took
	// one of the campaign's queued requests has ended (on PostgreSQL by
	// locking the queued rows; SQLite's single writer already orders
	// them), so counts read after it in the same transaction say what
	// really happened: a pause's in-flight count (issue 31, item 5).
	LockQueuedCampaignRequests(ctx context.Context, workspaceID, id string) error
	// FindPausedRequests answers which of the workspace's requests ids
	// belong to a paused campaign (their dispatch is held).
	FindPausedRequests(ctx context.Context, workspaceID string, ids []string) (map[string]bool, error)
	// FindFailedRecipients lists the campaign's recipients whose request
	// is failed, with their subscriber (nil when it was deleted).
	FindFailedRecipients(ctx context.Context, workspaceID, campaignID string) ([]*FailedRecipient, error)
	// RequeueFailedRequests puts the workspace's failed requests ids back
	// to queued, each job row in a new queue job with budget more attempts
	// than it has made (its attempt count goes on), and takes their dead
	// letters out of the queue. Only a request still failed moves (a
	// conditional update), so of two concurrent calls, or a call and a
	// dead-letter replay, exactly one re-queues it; it answers how many
	// moved.
	RequeueFailedRequests(ctx context.Context, workspaceID string, ids []string, budget int, now time.Time) (int, error)
}

// FailedRecipient is a campaign recipient whose request failed.
type FailedRecipient struct {
	RequestID  string
	Subscriber *Subscriber
}
