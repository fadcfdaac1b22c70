package notify

import (
	"context"
	"time"
)

// The in-app inbox (issue 33). A send on channel inapp is delivered by
// storing an InboxMessage in the inbox of the recipient profile it names;
// every change of an inbox (a message stored, read, seen, archived,
// unarchived or deleted) appends an InboxEvent to the profile's event
// log, numbered by a sequence of its own. The log is what streams send
// and what a reconnecting stream resumes from (Last-Event-ID): an event
// is sent once, in order, with no gap, whatever process committed it.

// InboxMessage is one message of a recipient's inbox. RecipientID is the
// profile's row (Recipient.ID), never shown.
type InboxMessage struct {
	ID          string
	WorkspaceID string
	RecipientID string
	RequestID   string
	Category    string
	Title       string
	Body        string
	ActionURL   string
	Data        map[string]any
	CreatedAt   time.Time
	ReadAt      *time.Time
	SeenAt      *time.Time
	ArchivedAt  *time.Time
}

// InboxMessageOf is the inbox message that delivers r to the inbox of
// profile row profileRow.
func InboxMessageOf(r *Request, id, profileRow string, now time.Time) *InboxMessage {
	m := &InboxMessage{ID: id, WorkspaceID: r.WorkspaceID, RecipientID: profileRow, RequestID: r.ID,
		Category: r.Category, Title: r.Title, Body: r.Text, CreatedAt: now}
	if r.InApp != nil {
		m.ActionURL, m.Data = r.InApp.ActionURL, r.InApp.Data
	}
	return m
}

// InAppContent is what an inapp send carries beyond its title and text:
// the link the message opens and the application's own data.
type InAppContent struct {
	ActionURL string         `json:"actionUrl,omitempty"`
	Data      map[string]any `json:"data,omitempty"`
}

// InboxOp is a change a recipient makes to a message of the inbox, or to
// all of them.
type InboxOp string

// The changes of an inbox.
const (
	InboxRead      InboxOp = "read"
	InboxSeen      InboxOp = "seen"
	InboxArchive   InboxOp = "archive"
	InboxUnarchive InboxOp = "unarchive"
	InboxDelete    InboxOp = "delete"
)

// InboxEvent types: the event of a change names its message; the changes
// of every message at once (All) name none.
const (
	InboxEventCreated    = "message.created"
	InboxEventRead       = "message.read"
	InboxEventSeen       = "message.seen"
	InboxEventArchived   = "message.archived"
	InboxEventUnarchived = "message.unarchived"
	InboxEventDeleted    = "message.deleted"
	InboxEventAllRead    = "messages.read"
	InboxEventAllSeen    = "messages.seen"
	InboxEventAllArchive = "messages.archived"
)

// EventType is the log's event of op on one message, or on all of them.
func (op InboxOp) EventType(all bool) string {
	switch {
	case op == InboxRead && all:
		return InboxEventAllRead
	case op == InboxSeen && all:
		return InboxEventAllSeen
	case op == InboxArchive && all:
		return InboxEventAllArchive
	case op == InboxRead:
		return InboxEventRead
	case op == InboxSeen:
		return InboxEventSeen
	case op == InboxArchive:
		return InboxEventArchived
	case op == InboxUnarchive:
		return InboxEventUnarchived
	}
	return InboxEventDeleted
}

// The outbound events of a recipient's changes (issue 33, item 5), for
// webhooks: an application acts on "still unread after 10 minutes".
const (
	EventRead     = "notification.read"
	EventSeen     = "notification.seen"
	EventArchived = "notification.archived"
)

// InboxEventTypes are the events of inbox changes a webhook may subscribe
// to, beside SPEC's EventTypes.
var InboxEventTypes = []string{EventRead, EventSeen, EventArchived}

// OutboundEvent is the webhook event type of op, "" for a change that
// has none (unarchive, delete).
func (op InboxOp) OutboundEvent() string {
	switch op {
	case InboxRead:
		return EventRead
	case InboxSeen:
		return EventSeen
	case InboxArchive:
		return EventArchived
	}
	return ""
}

// InboxChangeEvent is the outbox event of message m changed by op: the
// request, the profile, the category and the message's times.
func InboxChangeEvent(id, typ, externalID string, m *InboxMessage, now time.Time) *Event {
	t := func(p *time.Time) any {
		if p == nil {
			return nil
		}
		return p.UTC().Format("2006-01-02T15:04:05.000Z")
	}
	return &Event{ID: id, WorkspaceID: m.WorkspaceID, Type: typ, RequestID: m.RequestID, CreatedAt: now,
		Payload: map[string]any{"requestId": m.RequestID, "workspaceId": m.WorkspaceID, "channel": ChannelInApp,
			"recipientId": externalID, "messageId": m.ID, "category": nilIfEmpty(m.Category),
			"readAt": t(m.ReadAt), "seenAt": t(m.SeenAt), "archivedAt": t(m.ArchivedAt)}}
}

// InboxChange is one change of an inbox: op on message MessageID, or on
// every message the op changes when MessageID is "" (read, seen and
// archive only), at At.
type InboxChange struct {
	Op        InboxOp
	MessageID string
	At        time.Time
}

// InboxEvent is one entry of a recipient's event log. Message is the
// message it names as it is now (nil for an event of all messages, or
// when the message was deleted since).
type InboxEvent struct {
	Seq       int64
	Type      string
	MessageID string
	At        time.Time
	Message   *InboxMessage
}

// InboxLog are the bounds of a profile's event log: the oldest number it
// still holds and the last one given (both 0 for an empty log).
type InboxLog struct {
	Oldest, Newest int64
}

// InboxCounts are the figures of a recipient's badge: messages not read
// and not seen, archived ones left out.
type InboxCounts struct {
	Unread int
	Unseen int
}

// InboxFilter selects a page of an inbox, newest first. Archived lists
// the archived messages instead of the others; Unread and Unseen keep
// only those; Category keeps one category's ("" any).
type InboxFilter struct {
	Unread   bool
	Unseen   bool
	Archived bool
	Category string
	Limit    int
	Before   *Cursor
}

// InboxTx holds the store verbs of the inbox. recipientID is the
// profile's row (Recipient.ID). A transaction that appends to a log
// wakes the recipient's streams when it commits, on every process.
type InboxTx interface {
	// CreateInboxMessages stores each message and appends its
	// message.created event; a message whose request is in the inbox
	// already is left out (a delivery recorded twice stores once).
	CreateInboxMessages(ctx context.Context, ms []*InboxMessage) error
	// FindInboxMessages reads one page of an inbox (Limit rows at most).
	FindInboxMessages(ctx context.Context, workspaceID, recipientID string, f InboxFilter) ([]*InboxMessage, error)
	// CountInbox answers the badge figures of an inbox.
	CountInbox(ctx context.Context, workspaceID, recipientID string) (InboxCounts, error)
	// ChangeInbox applies c and appends its event when it changed
	// anything; it answers the messages it changed, as they are after it
	// (as they were, for a delete). A message that is not the
	// recipient's is ErrNotFound.
	ChangeInbox(ctx context.Context, workspaceID, recipientID string, c InboxChange) ([]*InboxMessage, error)
	// FollowInbox reads what a stream sends next: up to limit events of
	// the log after sequence number after, oldest first, with their
	// messages, and the inbox's counts. The two need no common snapshot
	// (counts a commit ahead are sent again with the events it added), so
	// PostgreSQL gets them in one round trip outside a transaction.
	FollowInbox(ctx context.Context, workspaceID, recipientID string, after int64, limit int) ([]*InboxEvent, InboxCounts, error)
	// FindInboxEvents reads the log after sequence number after, oldest
	// first (limit entries at most), and the numbers the log holds.
	FindInboxEvents(ctx context.Context, workspaceID, recipientID string, after int64, limit int) ([]*InboxEvent, InboxLog, error)
	// FindInboxMessagesOfRequest reads the inbox messages a request
	// delivered (the request lookup shows their states).
	FindInboxMessagesOfRequest(ctx context.Context, workspaceID, requestID string) ([]*InboxMessage, error)
	// HoldRecipientRows answers which of the profile rows ids exist, by
	// row id with its workspace, and keeps them from being erased until
	// the transaction ends (an inbox message is about to reference them).
	HoldRecipientRows(ctx context.Context, ids []string) (map[string]string, error)
	// FindInboxSettings reads a workspace's inbox settings; ErrNotFound
	// when it has none yet.
	FindInboxSettings(ctx context.Context, workspaceID string) (*InboxSettings, error)
	// PutInboxSettings creates or replaces a workspace's settings.
	PutInboxSettings(ctx context.Context, s *InboxSettings) error
}

// InboxSettings are a workspace's inbox settings: the sealed secret of
// its recipient tokens ("" before the first) and the browser origins
// allowed to call the inbox API.
type InboxSettings struct {
	WorkspaceID    string
	SecretSealed   string
	AllowedOrigins []string
	UpdatedAt      time.Time
}

// InboxFeed carries the wake-ups of inbox logs: a store that implements
// it calls fn with the profile row id of every log a committed
// transaction appended to, on every process that listens (PostgreSQL:
// LISTEN/NOTIFY; SQLite: in process). ListenInbox returns when ctx ends;
// fn must not block.
type InboxFeed interface {
	ListenInbox(ctx context.Context, fn func(recipientID string)) error
}
