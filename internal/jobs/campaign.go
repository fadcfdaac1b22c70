package jobs

// QueueCampaign holds campaign fan-outs apart from sends: a fan-out of
// 100,000 subscribers never takes a dispatch worker, and two run at once.
const QueueCampaign = "campaign"

// Fanout turns a campaign into one notification request per targeted
// subscriber, in batches. It is idempotent: a retried or resumed run skips
// the subscribers already queued.
type Fanout struct {
	CampaignID  string `json:"cid"`
	WorkspaceID string `json:"wid"`
}

// Kind implements river.JobArgs.
func (Fanout) Kind() string { return "campaign_fanout" }

// FanoutMaxAttempts is how many failed runs make the campaign failed.
const FanoutMaxAttempts = 5
