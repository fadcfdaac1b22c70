package notify

import "time"

// ProviderAccount is a workspace's credentials for one sending service.
// ConfigEnc holds configJson encrypted as a whole; it never leaves the
// service layer in clear.
type ProviderAccount struct {
	ID           string
	WorkspaceID  string
	ProviderKind string
	Channel      Channel
	DisplayName  string
	Enabled      bool
	ConfigEnc    string
	CreatedAt    time.Time
	UpdatedAt    time.Time
}

// Route ties a provider account to a channel with a priority.
type Route struct {
	ID                string
	WorkspaceID       string
	Channel           Channel
	ProviderAccountID string
	Priority          int
	Enabled           bool
	CreatedAt         time.Time
}

// Quota is a provider account's remaining balance (SPEC "Provider
// account"), as its adapter's balance lookup reports it.
type Quota struct {
	Period          string   `json:"period"`
	Limit           *float64 `json:"limit"`
	Used            float64  `json:"used"`
	RemainingCredit float64  `json:"remainingCredit"`
	Currency        string   `json:"currency"`
}
