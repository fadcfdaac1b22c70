package notify

// CampaignTx holds the store verbs of newsletter campaigns and their fan-out.
type CampaignTx interface {
}
