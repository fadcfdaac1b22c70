package notify

import (
	"context"
	"time"
)

// Engagement events (issue 35, item 4; additions to SPEC's events,
// docs/WEBHOOKS.md): the first open and the first click of a request by a
// person (hits flagged as likely scanners fire none), once each.
const (
	EventOpened  = "notification.opened"
	EventClicked = "notification.clicked"
)

// EngagementEventTypes are the engagement events a webhook may subscribe to.
var EngagementEventTypes = []string{EventOpened, EventClicked}

// Tracking scopes: a setting of a campaign overrides its category's (a
// send's category), which overrides the workspace's.
const (
	TrackingWorkspace = "workspace"
	TrackingCategory  = "category"
	TrackingCampaign  = "campaign"
)

// TrackingSetting is a workspace's open and click tracking choice for one
// scope; a nil Opens or Clicks inherits from the wider scope.
type TrackingSetting struct {
	WorkspaceID string
	Scope       string
	Key         string // the category key or campaign id; "" for the workspace
	Opens       *bool
	Clicks      *bool
	UpdatedAt   time.Time
}

// Hit kinds.
const (
	HitOpen  = "open"
	HitClick = "click"
)

// RequestEngagement is the opens and clicks of one request. In a batch
// written by AddEngagement the counts are increments and the first times
// candidates (the earlier stored one is kept).
type RequestEngagement struct {
	WorkspaceID    string
	RequestID      string
	CampaignID     string
	Opens          int
	Clicks         int
	ScannerOpens   int
	ScannerClicks  int
	FirstOpenedAt  *time.Time
	FirstClickedAt *time.Time
	LastAt         time.Time
}

// LinkClicks is the clicks of one link of a campaign (increments in
// AddEngagement).
type LinkClicks struct {
	WorkspaceID   string
	CampaignID    string
	URLHash       string
	URL           string
	Index         int
	Clicks        int
	ScannerClicks int
}

// CampaignEngagement is what a campaign's statistics read of its
// engagement: requests opened and clicked by a person, requests only
// scanners touched, and the campaign's links by clicks.
type CampaignEngagement struct {
	Opened        int
	Clicked       int
	ScannerOpened int
	ScannerClick  int
	Links         []*LinkClicks
}

// EngagementTx holds the verbs of email engagement (issue 35, item 4).
type EngagementTx interface {
	FindTrackingSettings(ctx context.Context, workspaceID string) ([]*TrackingSetting, error)
	// PutTrackingSetting inserts or replaces the setting of its scope.
	PutTrackingSetting(ctx context.Context, s *TrackingSetting) error
	// DeleteTrackingSetting removes a scope's setting; ErrNotFound when
	// it has none.
	DeleteTrackingSetting(ctx context.Context, workspaceID, scope, key string) error
	// AddEngagement adds a batch of hits, aggregated by request and link
	// (each request and link at most once per call).
	AddEngagement(ctx context.Context, rs []*RequestEngagement, links []*LinkClicks) error
	// ClaimEngagementEvents marks the event of kind (HitOpen, HitClick) of
	// the given requests as written and answers those it was not yet
	// marked for, whose first time of that kind is set: each is claimed
	// once, whatever the processes racing.
	ClaimEngagementEvents(ctx context.Context, kind string, requestIDs []string) ([]string, error)
	// FindRequestEngagement is a request's engagement; ErrNotFound when
	// it has none.
	FindRequestEngagement(ctx context.Context, workspaceID, requestID string) (*RequestEngagement, error)
	FindCampaignEngagement(ctx context.Context, workspaceID, campaignID string) (*CampaignEngagement, error)
	// CampaignReceiptCounts counts the final delivery receipts of a
	// campaign's requests by status (a request with receipts of several
	// attempts counts by its newest).
	CampaignReceiptCounts(ctx context.Context, workspaceID, campaignID string) (map[string]int, error)
}

// EngagementEvent is the event of a request's first open or click by a
// person: the request's fields as every event carries them, and an
// engagement object with the time, the campaign, and for a click the
// link's URL.
func EngagementEvent(id, typ string, r *Request, at time.Time, url string, now time.Time) *Event {
	e := RequestEvent(id, typ, r, now)
	en := map[string]any{"at": at.UTC().Format("2006-01-02T15:04:05.000Z")}
	if r.CampaignID != "" {
		en["campaignId"] = r.CampaignID
	}
	if typ == EventClicked {
		en["url"] = url
	}
	e.Payload["engagement"] = en
	return e
}
