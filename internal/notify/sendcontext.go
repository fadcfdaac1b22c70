package notify

import "context"

// SendContextQuery asks for what accepting a send by recipient id, by
// category or with a window needs (issue 32): the profile, the category,
// both owners' preferences on the send's channels, the send windows and
// the profile's consents.
type SendContextQuery struct {
	RecipientExternalID string    // "" for a send by address
	CategoryKey         string    // "" for a send without a category
	Channels            []Channel // its own channel, then its fallback steps'
	Consents            bool      // read the profile's consents too
}

// SendContext answers a SendContextQuery. Recipient is nil when the query
// names none or the workspace has no such profile, Category likewise.
type SendContext struct {
	Recipient *Recipient
	Category  *Category
	// Preferences hold the workspace default and, when the profile
	// exists, its own choices, on the query's channels: the switches and
	// the category's choices.
	Preferences *SendPreferences
	// Windows are the workspace's window and the category's.
	Windows  []*SendWindow
	Consents []*RecipientConsent
}

// SendContextTx holds the acceptance read of sends by recipient and
// category.
type SendContextTx interface {
	// FindSendContext reads q's context in the workspace. Its reads do not
	// depend on one another, so a backend that can sends them in one round
	// trip.
	FindSendContext(ctx context.Context, workspaceID string, q SendContextQuery) (*SendContext, error)
	// FindSendContexts is FindSendContext for many queries (a batch of
	// sends by recipient id), answered in their order, in as few round
	// trips as the backend can.
	FindSendContexts(ctx context.Context, workspaceID string, qs []SendContextQuery) ([]*SendContext, error)
}
