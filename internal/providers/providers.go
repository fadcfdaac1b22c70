package providers

import (
	"context"
	"sort"
	"strings"
	"sync"

	"github.com/notifyd/notifyd/internal/notify"
	"github.com/notifyd/notifyd/internal/usecase"
)

// ProviderView is a provider account as the API shows it: never configJson.
type ProviderView struct {
	Account *notify.ProviderAccount
	Quota   *notify.Quota
}

// ProviderInput is the body of register and update.
type ProviderInput struct {
	ProviderKind string
	DisplayName  *string
	ConfigJSON   map[string]string
	SetConfig    bool
	Enabled      *bool
}

// kindChannel is the channel of the provider kind id, when the delivery
// engine knows that kind.
func (s *Service) kindChannel(id string) (notify.Channel, bool) {
	if s.engine == nil {
		return "", false
	}
	return s.engine.KindChannel(id)
}

// kindIDs lists the known provider kinds, sorted.
func (s *Service) kindIDs() []string {
	if s.engine == nil {
		return nil
	}
	return s.engine.KindIDs()
}

// ProviderKind is a provider kind the delivery engine knows, with the
// channel it sends on.
type ProviderKind struct {
	ID      string
	Channel notify.Channel
}

// ProviderKinds lists the known provider kinds, sorted by id (the
// console's register form).
func (s *Service) ProviderKinds() []ProviderKind {
	ids := s.kindIDs()
	out := make([]ProviderKind, 0, len(ids))
	for _, id := range ids {
		ch, _ := s.kindChannel(id)
		out = append(out, ProviderKind{ID: id, Channel: ch})
	}
	return out
}

// ProviderConfig checks a configJson object (SPEC: an object of string
// to string, at most 100 keys) and answers it as strings. Decoding into
// map[string]string would take null as "" and name no key on a wrong
// type, so callers decode into map[string]any.
func ProviderConfig(v map[string]any) (map[string]string, error) {
	if len(v) > 100 {
		return nil, notify.Invalid("configJson must hold at most 100 keys")
	}
	names := make([]string, 0, len(v))
	for k := range v {
		names = append(names, k)
	}
	sort.Strings(names)
	cfg := make(map[string]string, len(names))
	for _, k := range names {
		s, ok := v[k].(string)
		if len(k) > 100 || (ok && len(s) > 64<<10) {
			return nil, notify.Invalid("configJson keys must be at most 100 and values at most 65536 characters")
		}
		if !ok {
			return nil, notify.Invalid("configJson.%s must be a string", k)
		}
		cfg[k] = s
	}
	return cfg, nil
}

func validDisplayName(n string) error {
	if strings.TrimSpace(n) == "" {
		return notify.Invalid("displayName must not be empty")
	}
	if len([]rune(n)) > 120 {
		return notify.Invalid("displayName must be at most 120 characters")
	}
	if !usecase.Storable(n) {
		return notify.Invalid("displayName must be text without NUL characters")
	}
	return nil
}

// CreateProvider registers a provider account (audit provider.create).
// Config keys are not validated here (SPEC), except the dispatch_* batching
// overrides (batch.go): a send with a missing key
// fails that attempt with invalid_request.
func (s *Service) CreateProvider(ctx context.Context, a *usecase.Actor, in ProviderInput) (*notify.ProviderAccount, error) {
	channel, ok := s.kindChannel(in.ProviderKind)
	if !ok {
		return nil, notify.Invalid("providerKind must be one of %s", strings.Join(s.kindIDs(), ", "))
	}
	if in.DisplayName == nil {
		return nil, notify.Invalid("displayName is required")
	}
	if err := validDisplayName(*in.DisplayName); err != nil {
		return nil, err
	}
	now := s.Now()
	p := &notify.ProviderAccount{ID: usecase.NewID(), WorkspaceID: a.WorkspaceID, ProviderKind: in.ProviderKind, Channel: channel,
		DisplayName: *in.DisplayName, Enabled: in.Enabled == nil || *in.Enabled, CreatedAt: now, UpdatedAt: now}
	enc, err := usecase.SealProviderConfig(s.box, p.ID, in.ConfigJSON)
	if err != nil {
		return nil, err
	}
	p.ConfigEnc = enc
	err = s.Store.Update(ctx, func(tx notify.Tx) error {
		if err := tx.CreateProviderAccount(ctx, p); err != nil {
			return err
		}
		return s.Audit(ctx, tx, a, a.WorkspaceID, "provider.create", "provider", p.ID,
			map[string]any{"providerKind": p.ProviderKind, "displayName": p.DisplayName, "enabled": p.Enabled, "configKeys": keysOf(in.ConfigJSON)})
	})
	if err != nil {
		return nil, err
	}
	return p, nil
}

// keysOf lists config key names for the audit log, never values.
func keysOf(m map[string]string) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// UpdateProvider changes displayName, enabled or the whole configJson
// (audit provider.update).
func (s *Service) UpdateProvider(ctx context.Context, a *usecase.Actor, id string, in ProviderInput) (*notify.ProviderAccount, error) {
	if in.DisplayName != nil {
		if err := validDisplayName(*in.DisplayName); err != nil {
			return nil, err
		}
	}
	if !usecase.Storable(id) {
		return nil, notify.NotFound("Provider")
	}
	var p *notify.ProviderAccount
	err := s.Store.Update(ctx, func(tx notify.Tx) error {
		var err error
		if p, err = tx.FindProviderAccount(ctx, a.WorkspaceID, id); err != nil {
			return usecase.NotFound(err, "Provider")
		}
		payload := map[string]any{}
		if in.DisplayName != nil {
			p.DisplayName = *in.DisplayName
			payload["displayName"] = p.DisplayName
		}
		if in.Enabled != nil {
			p.Enabled = *in.Enabled
			payload["enabled"] = p.Enabled
		}
		if in.SetConfig {
			if p.ConfigEnc, err = usecase.SealProviderConfig(s.box, p.ID, in.ConfigJSON); err != nil {
				return err
			}
			payload["configKeys"] = keysOf(in.ConfigJSON)
		}
		p.UpdatedAt = s.Now()
		if err := tx.UpdateProviderAccount(ctx, p); err != nil {
			return err
		}
		return s.Audit(ctx, tx, a, a.WorkspaceID, "provider.update", "provider", p.ID, payload)
	})
	if err != nil {
		return nil, err
	}
	if s.engine != nil {
		s.engine.ForgetQuota(p.ID)
	}
	return p, nil
}

// GetProvider returns one provider account with its quota.
func (s *Service) GetProvider(ctx context.Context, a *usecase.Actor, id string) (*ProviderView, error) {
	if !usecase.Storable(id) {
		return nil, notify.NotFound("Provider")
	}
	var p *notify.ProviderAccount
	err := s.Store.View(ctx, func(tx notify.Tx) (err error) {
		p, err = tx.FindProviderAccount(ctx, a.WorkspaceID, id)
		return usecase.NotFound(err, "Provider")
	})
	if err != nil {
		return nil, err
	}
	return &ProviderView{Account: p, Quota: s.quota(ctx, p)}, nil
}

// ListProviders lists accounts in creation order with quotas, looked up
// concurrently (each cached 60 s; a failed lookup omits the quota).
func (s *Service) ListProviders(ctx context.Context, a *usecase.Actor) ([]*ProviderView, error) {
	var ps []*notify.ProviderAccount
	err := s.Store.View(ctx, func(tx notify.Tx) (err error) {
		ps, err = tx.FindProviderAccounts(ctx, a.WorkspaceID)
		return err
	})
	if err != nil {
		return nil, err
	}
	out := make([]*ProviderView, len(ps))
	var wg sync.WaitGroup
	for i, p := range ps {
		out[i] = &ProviderView{Account: p}
		wg.Add(1)
		go func() {
			defer wg.Done()
			out[i].Quota = s.quota(ctx, p)
		}()
	}
	wg.Wait()
	return out, nil
}

// quota is a provider's balance, when its adapter has a balance API; the
// delivery engine looks it up and caches it 60 seconds per account.
func (s *Service) quota(ctx context.Context, p *notify.ProviderAccount) *notify.Quota {
	if s.engine == nil {
		return nil
	}
	return s.engine.Quota(ctx, p)
}

// RouteInput is one route of a replace.
type RouteInput struct {
	Channel           string
	ProviderAccountID string
	Priority          int
	Enabled           *bool
}

// ListRoutes lists by channel then priority.
func (s *Service) ListRoutes(ctx context.Context, a *usecase.Actor) ([]*notify.Route, error) {
	var out []*notify.Route
	err := s.Store.View(ctx, func(tx notify.Tx) (err error) {
		out, err = tx.FindRoutes(ctx, a.WorkspaceID)
		return err
	})
	return out, err
}

// ReplaceRoutes replaces every route atomically (audit route.replace).
func (s *Service) ReplaceRoutes(ctx context.Context, a *usecase.Actor, in []RouteInput) ([]*notify.Route, error) {
	if len(in) > 200 {
		return nil, notify.Invalid("routes must hold at most 200 routes")
	}
	now := s.Now()
	routes := make([]*notify.Route, len(in))
	seen := map[string]bool{}
	for i, r := range in {
		ch := notify.Channel(r.Channel)
		if !ch.Valid() {
			return nil, notify.Invalid("routes[%d].channel must be one of the channel values", i)
		}
		if ch == notify.ChannelInApp {
			return nil, notify.Invalid("routes[%d].channel: inapp takes no route, it is delivered to the recipient's inbox", i)
		}
		if r.ProviderAccountID == "" {
			return nil, notify.Invalid("routes[%d].providerAccountId is required", i)
		}
		if !usecase.Storable(r.ProviderAccountID) {
			return nil, notify.Invalid("routes[%d].providerAccountId does not name a provider of this workspace", i)
		}
		if r.Priority < 1 || r.Priority > 9999 {
			return nil, notify.Invalid("routes[%d].priority must be between 1 and 9999", i)
		}
		key := r.Channel + "\x00" + r.ProviderAccountID
		if seen[key] {
			return nil, notify.Invalid("routes[%d]: the same provider account is registered twice for channel %s", i, r.Channel)
		}
		seen[key] = true
		routes[i] = &notify.Route{ID: usecase.NewID(), WorkspaceID: a.WorkspaceID, Channel: ch, ProviderAccountID: r.ProviderAccountID,
			Priority: r.Priority, Enabled: r.Enabled == nil || *r.Enabled, CreatedAt: now}
	}
	var out []*notify.Route
	err := s.Store.Update(ctx, func(tx notify.Tx) error {
		if err := tx.LockWorkspace(ctx, a.WorkspaceID); err != nil {
			return err
		}
		for i, r := range routes {
			p, err := tx.FindProviderAccount(ctx, a.WorkspaceID, r.ProviderAccountID)
			if err != nil {
				if notify.IsNotFound(err) {
					return notify.Invalid("routes[%d].providerAccountId does not name a provider of this workspace", i)
				}
				return err
			}
			if p.Channel != r.Channel {
				return notify.Invalid("routes[%d]: provider %s sends on channel %s, not %s", i, p.ID, p.Channel, r.Channel)
			}
		}
		if err := tx.ReplaceRoutes(ctx, a.WorkspaceID, routes); err != nil {
			return err
		}
		var err error
		if out, err = tx.FindRoutes(ctx, a.WorkspaceID); err != nil {
			return err
		}
		return s.Audit(ctx, tx, a, a.WorkspaceID, "route.replace", "route", a.WorkspaceID, map[string]any{"count": len(routes)})
	})
	return out, err
}
