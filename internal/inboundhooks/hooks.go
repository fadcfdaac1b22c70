// Package inboundhooks is the room of inbound hooks (issue 36, item 3):
// receiving URLs for the payloads other tools already send (Prometheus
// Alertmanager, Grafana, ntfy, Slack incoming webhooks, the Apprise API),
// each a workspace object with its own unguessable token, a format and a
// mapping to a channel, recipients, a template and a category. What
// arrives becomes sends through the sends room's acceptance path (the
// Acceptor port), so each message gets the queue, routes, failover,
// limits, preferences and the request history of a signed send.
//
// The room manages hooks (hooks.go), receives payloads (receive.go) and
// reads each format (format*.go).
package inboundhooks

import (
	"context"
	"crypto/rand"
	"encoding/base32"
	"log/slog"
	"slices"
	"strings"
	"time"

	"github.com/notifyd/notifyd/internal/gate"
	"github.com/notifyd/notifyd/internal/notify"
	"github.com/notifyd/notifyd/internal/secret"
	"github.com/notifyd/notifyd/internal/usecase"
)

// Send is one message a payload became, for one recipient: an address or
// the external id of a recipient profile. Title and Text are nil when the
// template gives them.
type Send struct {
	Channel      notify.Channel
	Address      string
	RecipientID  string
	Title, Text  *string
	TemplateCode string
	Variables    map[string]string
	Category     string
	Metadata     map[string]string
}

// Acceptor is the sends room's acceptance path as this room uses it: the
// sends of one payload, accepted together in workspace ws; it answers the
// request ids of those accepted.
type Acceptor interface {
	AcceptInbound(ctx context.Context, ws string, sends []Send) ([]string, error)
}

// Options are what the room is built with.
type Options struct {
	Store  notify.Store
	Now    func() time.Time
	Logger *slog.Logger
	// Accept is the sends room's acceptance path (wired by the daemon).
	Accept Acceptor
	// Gate sweeps the rate counters the hooks' limits share with the
	// request limits; nil sweeps nothing.
	Gate *gate.Gate
}

// Service is the inbound hooks room.
type Service struct {
	usecase.Kit
	accept Acceptor
	gate   *gate.Gate
}

// New builds the room.
func New(o Options) *Service {
	return &Service{Kit: usecase.NewKit(o.Store, o.Now, o.Logger), accept: o.Accept, gate: o.Gate}
}

// Bounds of a hook.
const (
	MaxName          = 120
	MaxRecipients    = 50
	DefaultRateLimit = 60
	MaxRateLimit     = 10_000
)

// Input is the body of create and update; nil means absent. On update a
// non-nil empty TemplateCode or Category removes it.
type Input struct {
	Name         *string
	Format       *string
	Channel      *string
	Addresses    *[]string
	RecipientIDs *[]string
	TemplateCode *string
	Category     *string
	RateLimit    *int
	Enabled      *bool
}

// WithToken is a hook with its token, shown at creation and rotation only.
type WithToken struct {
	Hook  *notify.InboundHook
	Token string
}

// tokenPrefix starts every hook token; the rest is 32 characters of
// lower-case base32 (160 random bits). Lower case and no padding keep the
// token a valid ntfy topic and Apprise key, both of which the token may
// have to be in those tools' settings.
const (
	tokenPrefix = "hk_"
	tokenLen    = len(tokenPrefix) + 32
)

var tokenEncoding = base32.NewEncoding("abcdefghijklmnopqrstuvwxyz234567").WithPadding(base32.NoPadding)

func newToken() string {
	b := make([]byte, 20)
	_, _ = rand.Read(b) // crypto/rand.Read never fails
	return tokenPrefix + tokenEncoding.EncodeToString(b)
}

// wellFormed reports whether s can be a hook token at all: anything else
// is refused before the store is asked.
func wellFormed(s string) bool {
	if len(s) != tokenLen || !strings.HasPrefix(s, tokenPrefix) {
		return false
	}
	for _, c := range s[len(tokenPrefix):] {
		if !(c >= 'a' && c <= 'z' || c >= '2' && c <= '7') {
			return false
		}
	}
	return true
}

// apply validates in and applies it to h, then checks the mapping h
// ends with (reading the template and category it names).
func (s *Service) apply(ctx context.Context, tx notify.Tx, h *notify.InboundHook, in Input) error {
	if in.Name != nil {
		name := strings.TrimSpace(*in.Name)
		if name == "" {
			return notify.Invalid("name must be 1 to %d characters", MaxName)
		}
		if err := usecase.MaxLen("name", name, MaxName); err != nil {
			return err
		}
		if err := usecase.OneLine("name", name); err != nil {
			return err
		}
		h.Name = name
	}
	if in.Format != nil {
		if !slices.Contains(notify.HookFormats, *in.Format) {
			return notify.Invalid("format must be one of %s", strings.Join(notify.HookFormats, ", "))
		}
		h.Format = *in.Format
	}
	if in.Channel != nil {
		if !notify.Channel(*in.Channel).Valid() {
			return notify.Invalid("channel must be one of sms, msgr_alimtalk, email, push_mobile, chata_webhook, chatb_webhook, chata_bot, chatb_bot")
		}
		h.Channel = notify.Channel(*in.Channel)
	}
	if in.Addresses != nil {
		h.Addresses = usecase.Dedupe(trimAll(*in.Addresses))
	}
	if in.RecipientIDs != nil {
		h.RecipientIDs = usecase.Dedupe(trimAll(*in.RecipientIDs))
	}
	if in.TemplateCode != nil {
		h.TemplateCode = strings.TrimSpace(*in.TemplateCode)
	}
	if in.Category != nil {
		h.Category = strings.TrimSpace(*in.Category)
	}
	if in.RateLimit != nil {
		if *in.RateLimit < 1 || *in.RateLimit > MaxRateLimit {
			return notify.Invalid("rateLimitPerMinute must be between 1 and %d", MaxRateLimit)
		}
		h.RateLimit = *in.RateLimit
	}
	if in.Enabled != nil {
		h.Enabled = *in.Enabled
	}
	return s.checkMapping(ctx, tx, h)
}

func trimAll(in []string) []string {
	out := make([]string, len(in))
	for i, v := range in {
		out[i] = strings.TrimSpace(v)
	}
	return out
}

// checkMapping holds the mapping to what a send needs: recipients the
// channel can take, and the template and category it names existing in
// the workspace (they are resolved again at every send, as for any send).
func (s *Service) checkMapping(ctx context.Context, tx notify.Tx, h *notify.InboundHook) error {
	n := len(h.Addresses) + len(h.RecipientIDs)
	if n > MaxRecipients {
		return notify.Invalid("addresses and recipientIds must hold at most %d recipients together", MaxRecipients)
	}
	if n == 0 && !webhookChannel(h.Channel) {
		return notify.Invalid("addresses or recipientIds must name at least one recipient for channel %s", h.Channel)
	}
	for _, a := range h.Addresses {
		if a == "" || usecase.HasControl(a) {
			return notify.Invalid("addresses must hold non-empty addresses without control characters")
		}
		if err := usecase.MaxLen("addresses", a, 320); err != nil {
			return err
		}
		if err := usecase.CheckAddress("addresses", h.Channel, a); err != nil {
			return err
		}
	}
	for _, id := range h.RecipientIDs {
		if err := notify.CheckExternalID("recipientIds", id); err != nil {
			return err
		}
	}
	if h.TemplateCode != "" {
		if !usecase.Storable(h.TemplateCode) {
			return notify.Invalid("templateCode: no such template on channel %s", h.Channel)
		}
		if _, err := tx.FindTemplateByCode(ctx, h.WorkspaceID, h.TemplateCode, h.Channel); err != nil {
			if notify.IsNotFound(err) {
				return notify.Invalid("templateCode: no template %q on channel %s", h.TemplateCode, h.Channel)
			}
			return err
		}
	}
	if h.Category != "" {
		if !usecase.Storable(h.Category) {
			return notify.Invalid("category: no such category")
		}
		if _, err := tx.FindCategory(ctx, h.WorkspaceID, h.Category); err != nil {
			if notify.IsNotFound(err) {
				return notify.Invalid("category: no category %q", h.Category)
			}
			return err
		}
	}
	return nil
}

// webhookChannel: the chat webhook channels post to the URL of their
// provider account; the recipient is only a label, which a hook may leave
// to its name.
func webhookChannel(ch notify.Channel) bool {
	return ch == notify.ChannelChatAWebhook || ch == notify.ChannelChatBWebhook
}

// auditPayload is what the audit log keeps of a hook (never its token).
func auditPayload(h *notify.InboundHook) map[string]any {
	return map[string]any{"name": h.Name, "format": h.Format, "channel": h.Channel, "addresses": h.Addresses,
		"recipientIds": h.RecipientIDs, "templateCode": h.TemplateCode, "category": h.Category,
		"rateLimitPerMinute": h.RateLimit, "enabled": h.Enabled}
}

// Create makes a hook and its token (audit inbound_hook.create).
func (s *Service) Create(ctx context.Context, a *usecase.Actor, in Input) (*WithToken, error) {
	if err := usecase.RequireWorkspace(a); err != nil {
		return nil, err
	}
	for _, f := range []struct {
		name string
		set  bool
	}{{"name", in.Name != nil}, {"format", in.Format != nil}, {"channel", in.Channel != nil}} {
		if !f.set {
			return nil, notify.Invalid("%s is required", f.name)
		}
	}
	now := s.Now()
	token := newToken()
	h := &notify.InboundHook{ID: usecase.NewID(), WorkspaceID: a.WorkspaceID, Addresses: []string{}, RecipientIDs: []string{},
		RateLimit: DefaultRateLimit, Enabled: true, TokenHash: secret.HashToken(token), TokenRotatedAt: now, CreatedAt: now, UpdatedAt: now}
	err := s.Store.Update(ctx, func(tx notify.Tx) error {
		if err := s.apply(ctx, tx, h, in); err != nil {
			return err
		}
		if err := tx.CreateInboundHook(ctx, h); err != nil {
			return usecase.ConflictOr(err, "An inbound hook named %s already exists", h.Name)
		}
		return s.Audit(ctx, tx, a, a.WorkspaceID, "inbound_hook.create", "inbound_hook", h.ID, auditPayload(h))
	})
	if err != nil {
		return nil, err
	}
	return &WithToken{Hook: h, Token: token}, nil
}

// List lists the workspace's hooks by name (never their tokens).
func (s *Service) List(ctx context.Context, a *usecase.Actor) ([]*notify.InboundHook, error) {
	if err := usecase.RequireWorkspace(a); err != nil {
		return nil, err
	}
	var out []*notify.InboundHook
	err := s.Store.View(ctx, func(tx notify.Tx) (err error) {
		out, err = tx.FindInboundHooks(ctx, a.WorkspaceID)
		return err
	})
	return out, err
}

// find loads a hook of the workspace; a malformed id is as unknown as a
// missing one.
func find(ctx context.Context, tx notify.Tx, ws, id string) (*notify.InboundHook, error) {
	if !usecase.IsUUID(id) {
		return nil, notify.NotFound("Inbound hook")
	}
	h, err := tx.FindInboundHook(ctx, ws, id)
	return h, usecase.NotFound(err, "Inbound hook")
}

// Get reads one hook of the actor's workspace; another workspace's is 404.
func (s *Service) Get(ctx context.Context, a *usecase.Actor, id string) (*notify.InboundHook, error) {
	if err := usecase.RequireWorkspace(a); err != nil {
		return nil, err
	}
	var h *notify.InboundHook
	err := s.Store.View(ctx, func(tx notify.Tx) (err error) {
		h, err = find(ctx, tx, a.WorkspaceID, id)
		return err
	})
	return h, err
}

// Update changes a hook (audit inbound_hook.update); the token stays.
func (s *Service) Update(ctx context.Context, a *usecase.Actor, id string, in Input) (*notify.InboundHook, error) {
	if err := usecase.RequireWorkspace(a); err != nil {
		return nil, err
	}
	var h *notify.InboundHook
	err := s.Store.Update(ctx, func(tx notify.Tx) error {
		var err error
		if h, err = find(ctx, tx, a.WorkspaceID, id); err != nil {
			return err
		}
		if err := s.apply(ctx, tx, h, in); err != nil {
			return err
		}
		h.UpdatedAt = s.Now()
		if err := tx.UpdateInboundHook(ctx, h); err != nil {
			return usecase.ConflictOr(usecase.NotFound(err, "Inbound hook"), "An inbound hook named %s already exists", h.Name)
		}
		return s.Audit(ctx, tx, a, a.WorkspaceID, "inbound_hook.update", "inbound_hook", h.ID, auditPayload(h))
	})
	if err != nil {
		return nil, err
	}
	return h, nil
}

// Delete removes a hook (audit inbound_hook.delete); its URL answers 404
// at once.
func (s *Service) Delete(ctx context.Context, a *usecase.Actor, id string) error {
	if err := usecase.RequireWorkspace(a); err != nil {
		return err
	}
	return s.Store.Update(ctx, func(tx notify.Tx) error {
		h, err := find(ctx, tx, a.WorkspaceID, id)
		if err != nil {
			return err
		}
		if err := tx.DeleteInboundHook(ctx, a.WorkspaceID, h.ID); err != nil {
			return usecase.NotFound(err, "Inbound hook")
		}
		return s.Audit(ctx, tx, a, a.WorkspaceID, "inbound_hook.delete", "inbound_hook", h.ID, map[string]any{"name": h.Name})
	})
}

// Rotate gives a hook a new token (audit inbound_hook.rotate_token): the
// old one stops at once, so the tools posting to it must be given the new
// URL.
func (s *Service) Rotate(ctx context.Context, a *usecase.Actor, id string) (*WithToken, error) {
	if err := usecase.RequireWorkspace(a); err != nil {
		return nil, err
	}
	token := newToken()
	var h *notify.InboundHook
	err := s.Store.Update(ctx, func(tx notify.Tx) error {
		var err error
		if h, err = find(ctx, tx, a.WorkspaceID, id); err != nil {
			return err
		}
		now := s.Now()
		h.TokenHash, h.TokenRotatedAt, h.UpdatedAt = secret.HashToken(token), now, now
		if err := tx.UpdateInboundHook(ctx, h); err != nil {
			return usecase.NotFound(err, "Inbound hook")
		}
		return s.Audit(ctx, tx, a, a.WorkspaceID, "inbound_hook.rotate_token", "inbound_hook", h.ID, map[string]any{"name": h.Name})
	})
	if err != nil {
		return nil, err
	}
	return &WithToken{Hook: h, Token: token}, nil
}
