package notify

import (
	"context"
	"fmt"
	"slices"
	"time"
)

// Category is a workspace's kind of message (issue 32, item 3): what a
// send names in `category` and what preferences are kept per. Key is its
// name in the API and never changes; ID is notifyd's own key of the row,
// never shown (preferences refer to it, and go with it).
type Category struct {
	ID          string
	WorkspaceID string
	Key         string
	Name        string
	Description string
	// Required: messages a person cannot opt out of (security notices);
	// preferences are ignored for them.
	Required bool
	// DefaultChannels are the channels on for a person who has chosen
	// nothing for this category; empty means every channel.
	DefaultChannels []Channel
	// Advertising marks messages that need the recipient's consent
	// (정보통신망법 제50조); send windows (item 5) read it.
	Advertising bool
	// FrequencyCap bounds how many messages of the category one recipient
	// profile is sent in a window (issue 32, item 6); nil: no cap.
	FrequencyCap *FrequencyCap
	CreatedAt    time.Time
	UpdatedAt    time.Time
}

// A FrequencyCap lets at most Max messages of a category leave for one
// recipient profile in any WindowSeconds; a send past it is dropped
// (CapDrop: it ends canceled, frequency_capped) or deferred (CapDefer:
// it waits until the oldest counted send leaves the window). Sends are
// counted when they are dispatched.
type FrequencyCap struct {
	Max           int    `json:"max"`
	WindowSeconds int    `json:"windowSeconds"`
	Mode          string `json:"mode"`
}

// MaxCapWindowSeconds bounds a frequency cap's window (31 days): a log
// whose newest send is older counts nothing.
const MaxCapWindowSeconds = 31 * 86400

// Frequency cap modes.
const (
	CapDrop  = "drop"
	CapDefer = "defer"
)

// Window is the cap's window as a duration.
func (c *FrequencyCap) Window() time.Duration { return time.Duration(c.WindowSeconds) * time.Second }

// Rule names the cap in a decision: "cap 3 per 86400s".
func (c *FrequencyCap) Rule() string {
	return fmt.Sprintf("cap %d per %ds", c.Max, c.WindowSeconds)
}

// CapRoom applies a cap of max sends per window at now to a pair's
// counted sends (in time order): kept are those still counting (a send
// at s counts while s > now-window), ok says whether one more fits, and
// when not, until is when the oldest send in the way leaves the window.
func CapRoom(sent []time.Time, max int, window time.Duration, now time.Time) (kept []time.Time, ok bool, until time.Time) {
	from := now.Add(-window)
	kept = make([]time.Time, 0, len(sent)+1)
	for _, s := range sent {
		if s.After(from) {
			kept = append(kept, s)
		}
	}
	if ok = len(kept) < max; !ok {
		until = kept[len(kept)-max].Add(window)
	}
	return kept, ok, until
}

// CapTx holds the store verb of frequency caps.
type CapTx interface {
	// TakeCapRoom counts one send at now for the recipient profile
	// (notifyd's row id) and category (row id) against a cap of max sends
	// in window, under a lock on the pair held until the transaction ends,
	// so that processes counting at once are exact. Sends counted at or
	// before now-window no longer count. With fewer than max counted, now
	// is counted and ok is true; otherwise nothing is counted and until is
	// when the oldest counted send leaves the window. The count goes with
	// the profile or the category.
	TakeCapRoom(ctx context.Context, workspaceID, recipientID, categoryID string, max int, window time.Duration,
		now time.Time) (ok bool, until time.Time, err error)
	// FindCapLog reads the pair's counted sends, in time order (none when
	// nothing was counted), without taking its lock: what a dry run shows.
	FindCapLog(ctx context.Context, workspaceID, recipientID, categoryID string) ([]time.Time, error)
	// DeleteCapLogs deletes the logs of pairs whose newest counted send is
	// before before: with before a longest window ago, none counts any
	// more.
	DeleteCapLogs(ctx context.Context, before time.Time) (int, error)
}

// Preferences are one person's choices, or the workspace's defaults for
// everyone: a switch per channel, and per category a switch per channel.
// An absent channel (or category) is no choice: the next rule decides.
type Preferences struct {
	Channels   map[Channel]bool
	Categories map[string]map[Channel]bool
}

// categoryChannel is p's choice for the category and channel, if any.
func (p *Preferences) categoryChannel(key string, ch Channel) (on, set bool) {
	if p == nil || key == "" {
		return false, false
	}
	on, set = p.Categories[key][ch]
	return on, set
}

// channel is p's switch of ch, if any.
func (p *Preferences) channel(ch Channel) (on, set bool) {
	if p == nil {
		return false, false
	}
	on, set = p.Channels[ch]
	return on, set
}

// PreferenceRule names the rule that decided a send.
type PreferenceRule string

// The rules, in the order DecidePreference tries them.
const (
	RuleRequired                 PreferenceRule = "required"
	RuleRecipientCategoryChannel PreferenceRule = "recipient.category_channel"
	RuleRecipientChannel         PreferenceRule = "recipient.channel"
	RuleWorkspaceCategoryChannel PreferenceRule = "workspace.category_channel"
	RuleWorkspaceChannel         PreferenceRule = "workspace.channel"
	RuleCategoryDefaultChannels  PreferenceRule = "category.default_channels"
	RuleDefault                  PreferenceRule = "default"
)

// PreferenceDecision is whether a send may go and the rule that said so.
type PreferenceDecision struct {
	Allowed bool
	Rule    PreferenceRule
}

// DecidePreference decides whether a send of category cat (nil: none) on
// channel ch may go, given the recipient's preferences rp and the
// workspace default def (either may be nil). The first rule with an
// answer decides, the most specific first:
//
//  1. a required category: allowed, whatever anyone chose;
//  2. the recipient's choice for the category on ch;
//  3. the recipient's switch of ch;
//  4. the workspace default for the category on ch;
//  5. the workspace default switch of ch;
//  6. the category's default channels, when it names any: allowed only on those;
//  7. allowed.
//
// A person's explicit choice wins over every default, and a choice for the
// category wins over one for the channel. Whether a send is evaluated at
// all (OTP is not; SPEC's sends by address without a category are not) is
// the caller's matter.
func DecidePreference(cat *Category, ch Channel, rp, def *Preferences) PreferenceDecision {
	key := ""
	if cat != nil {
		if cat.Required {
			return PreferenceDecision{Allowed: true, Rule: RuleRequired}
		}
		key = cat.Key
	}
	if on, ok := rp.categoryChannel(key, ch); ok {
		return PreferenceDecision{Allowed: on, Rule: RuleRecipientCategoryChannel}
	}
	if on, ok := rp.channel(ch); ok {
		return PreferenceDecision{Allowed: on, Rule: RuleRecipientChannel}
	}
	if on, ok := def.categoryChannel(key, ch); ok {
		return PreferenceDecision{Allowed: on, Rule: RuleWorkspaceCategoryChannel}
	}
	if on, ok := def.channel(ch); ok {
		return PreferenceDecision{Allowed: on, Rule: RuleWorkspaceChannel}
	}
	if cat != nil && len(cat.DefaultChannels) > 0 {
		return PreferenceDecision{Allowed: slices.Contains(cat.DefaultChannels, ch), Rule: RuleCategoryDefaultChannels}
	}
	return PreferenceDecision{Allowed: true, Rule: RuleDefault}
}

// SendPreferences is what deciding one send needs, loaded in one store
// call: the category (nil when the send names none), the recipient's
// preferences (nil when the send names no recipient) and the workspace
// default. The preferences hold only the channel they were loaded for.
type SendPreferences struct {
	Category  *Category
	Recipient *Preferences
	Default   *Preferences
	// RecipientRow is the recipient profile's row id (Recipient.ID), ""
	// when the send names none or it was erased.
	RecipientRow string
}

// Decide is DecidePreference of the loaded set on ch.
func (s *SendPreferences) Decide(ch Channel) PreferenceDecision {
	return DecidePreference(s.Category, ch, s.Recipient, s.Default)
}

// PreferenceQuery is one request's question to FindSendPreferencesMany.
type PreferenceQuery struct {
	RecipientExternalID string
	CategoryKey         string
	Channel             Channel
}

// CategoryTx holds the store verbs of categories.
type CategoryTx interface {
	// CreateCategory inserts c; ErrConflict when the workspace has a
	// category of c.Key already.
	CreateCategory(ctx context.Context, c *Category) error
	FindCategory(ctx context.Context, workspaceID, key string) (*Category, error)
	// FindCategories lists the workspace's categories by key.
	FindCategories(ctx context.Context, workspaceID string) ([]*Category, error)
	// UpdateCategory writes every field of c but its key, ID and CreatedAt.
	UpdateCategory(ctx context.Context, c *Category) error
	// DeleteCategory removes a category and every preference of it;
	// ErrNotFound when none matched.
	DeleteCategory(ctx context.Context, workspaceID, key string) error
}

// PreferenceTx holds the store verbs of preferences. recipientID is
// notifyd's own id of a profile (Recipient.ID); "" is the workspace
// default. A recipient's preferences go with the profile on erasure.
type PreferenceTx interface {
	// FindPreferences answers the stored preferences (empty maps when
	// none), categories by key.
	FindPreferences(ctx context.Context, workspaceID, recipientID string) (*Preferences, error)
	// ReplacePreferences replaces every preference of the recipient (or
	// the default) with p. Every category key of p must be one of the
	// workspace's (ErrNotFound otherwise); the categories named cannot be
	// deleted until the transaction ends.
	ReplacePreferences(ctx context.Context, workspaceID, recipientID string, p *Preferences) error
	// FindSendPreferencesMany loads what deciding many requests of one
	// workspace needs, each on its channel, in a fixed number of
	// statements (the dispatch of a whole job): each query names its recipient by external id ("" for
	// none; a profile erased since has no preferences: Recipient nil) and
	// its category by key (one deleted since is none: Category nil).
	FindSendPreferencesMany(ctx context.Context, workspaceID string, qs []PreferenceQuery) ([]*SendPreferences, error)
}

// Explain is the decision in words, for a request's final error message
// and its explanation: "sms is off for category marketing (rule
// recipient.category_channel)".
func (d PreferenceDecision) Explain(cat *Category, ch Channel) string {
	state := "on"
	if !d.Allowed {
		state = "off"
	}
	what := string(ch) + " is " + state
	if cat != nil {
		what += " for category " + cat.Key
	}
	return what + " (rule " + string(d.Rule) + ")"
}
