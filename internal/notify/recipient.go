package notify

import (
	"context"
	"strings"
	"time"
)

// Recipient is a workspace's profile of one person, keyed by the
// application's own id (ExternalID; issue 32, item 1). ID is notifyd's
// own key of the row, the one later tables (preferences, consents) refer
// to; it is never shown. An empty string is an absent field. Phone is
// kept as the phone rule normalizes it, Email trimmed and lower-cased:
// both as a send to them would be recorded.
type Recipient struct {
	ID          string
	WorkspaceID string
	ExternalID  string
	Name        string
	// Phone is the address of sms and msgr_alimtalk.
	Phone string
	Email string
	// PushTokens are the device tokens of push_mobile, in the order given.
	PushTokens []string
	// ChatTargets are the bot channels' targets (chata_bot, chatb_bot).
	ChatTargets map[Channel]string
	// TimeZone is an IANA zone name, Locale a canonical BCP 47 tag.
	TimeZone   string
	Locale     string
	Attributes map[string]string
	CreatedAt  time.Time
	UpdatedAt  time.Time
}

// RecipientFilter selects a page of a workspace's recipients, newest
// first. Search is a case-insensitive substring of the external id, the
// name, the email address or the phone number; Before continues a page.
type RecipientFilter struct {
	Search string
	Limit  int
	Before *Cursor
}

// RecipientTx holds the store verbs of recipient profiles.
type RecipientTx interface {
	// PutRecipient creates r, or replaces every field of the workspace's
	// profile of r.ExternalID but its ID and CreatedAt, which it sets on
	// r from the stored row. It reports whether the profile was created.
	PutRecipient(ctx context.Context, r *Recipient) (created bool, err error)
	FindRecipient(ctx context.Context, workspaceID, externalID string) (*Recipient, error)
	// LockRecipient is FindRecipient holding the row's write lock until
	// the transaction ends, so a read-modify-write of it loses no update.
	LockRecipient(ctx context.Context, workspaceID, externalID string) (*Recipient, error)
	// FindRecipients reads one page of f (Limit rows at most).
	FindRecipients(ctx context.Context, workspaceID string, f RecipientFilter) ([]*Recipient, error)
	// DeleteRecipient erases a profile; ErrNotFound when none matched.
	DeleteRecipient(ctx context.Context, workspaceID, externalID string) error
	// UpsertRecipients is PutRecipient for many profiles in multi-row
	// statements (the rows of rs keep the ID and CreatedAt they were
	// given); rs must not repeat a workspace and external id. It answers
	// how many were created.
	UpsertRecipients(ctx context.Context, rs []*Recipient) (created int, err error)
}

// MaxExternalID is the longest external id of a recipient.
const MaxExternalID = 200

// CheckExternalID holds an external id to 1 to 200 printable ASCII
// characters without space, '/', '?', '#', '%' or '\': it is a path
// segment that needs no escaping, so the path a client signs is the path
// it means.
func CheckExternalID(field, id string) error {
	ok := id != "" && len(id) <= MaxExternalID
	for i := 0; ok && i < len(id); i++ {
		c := id[i]
		ok = c > ' ' && c <= '~' && !strings.ContainsRune(`/?#%\`, rune(c))
	}
	if !ok {
		return Invalid(`%s must be 1 to %d printable ASCII characters without space, /, ?, #, %% or \`, field, MaxExternalID)
	}
	return nil
}

// AddressFor is the profile's address for a send on ch, "" when it has
// none: the phone for sms and msgr_alimtalk, the email address, the first
// push token (the application lists its newest device first), the chat
// target of a bot channel. The webhook channels have no per-person
// address.
func (r *Recipient) AddressFor(ch Channel) string {
	switch ch {
	case ChannelSMS, ChannelAlimTalk:
		return r.Phone
	case ChannelEmail:
		return r.Email
	case ChannelPush:
		if len(r.PushTokens) > 0 {
			return r.PushTokens[0]
		}
		return ""
	case ChannelChatABot, ChannelChatBBot:
		return r.ChatTargets[ch]
	case ChannelInApp:
		return r.ExternalID // the inbox is the profile's own
	}
	return ""
}

// AddressField names the profile field AddressFor reads for ch.
func AddressField(ch Channel) string {
	switch ch {
	case ChannelSMS, ChannelAlimTalk:
		return "phone"
	case ChannelEmail:
		return "email"
	case ChannelPush:
		return "pushTokens[0]"
	case ChannelChatABot, ChannelChatBBot:
		return "chatTargets." + string(ch)
	case ChannelInApp:
		return "id"
	}
	return ""
}
