// Package limits is the room of the limits a workspace sets: SPEC's
// request rate-limit policies (the counting itself is the gate's) and the
// dispatch limits toward providers (the token buckets are the delivery
// engine's, told through the Engine port once a change commits).
package limits

import (
	"context"
	"log/slog"
	"time"

	"github.com/notifyd/notifyd/internal/notify"
	"github.com/notifyd/notifyd/internal/usecase"
)

// Engine is the delivery engine as this room sees it: it caches each
// workspace's dispatch limits.
type Engine interface {
	// ForgetLimits drops what the engine cached of a workspace's
	// dispatch limits, so a change applies to its next send.
	ForgetLimits(workspaceID string)
}

// Options are what the room is built with.
type Options struct {
	Store  notify.Store
	Now    func() time.Time
	Logger *slog.Logger
	// Engine is told of dispatch-limit changes; nil tells nobody.
	Engine Engine
}

// Service is the limits room.
type Service struct {
	usecase.Kit
	engine Engine
}

// New builds the room.
func New(o Options) *Service {
	return &Service{Kit: usecase.NewKit(o.Store, o.Now, o.Logger), engine: o.Engine}
}

// RateLimitInput is the body of the rate-limit PUTs; the API checks the
// fields are present.
type RateLimitInput struct {
	WindowSeconds int
	MaxRequests   int
	Enabled       *bool
}

func (in RateLimitInput) validate() error {
	if in.WindowSeconds < 1 || in.WindowSeconds > 3600 {
		return notify.Invalid("windowSeconds must be between 1 and 3600")
	}
	if in.MaxRequests < 1 || in.MaxRequests > 1_000_000 {
		return notify.Invalid("maxRequests must be between 1 and 1000000")
	}
	return nil
}

// DispatchLimitInput is the body of the dispatch-limit PUT.
type DispatchLimitInput struct {
	Scope         string
	TargetID      string
	RatePerSecond int
	Enabled       *bool
}

// RateLimitPolicies returns the workspace policy (nil when none) and the
// API key policies.
func (s *Service) RateLimitPolicies(ctx context.Context, a *usecase.Actor) (*notify.RateLimitPolicy, []*notify.RateLimitPolicy, error) {
	var ws *notify.RateLimitPolicy
	keys := []*notify.RateLimitPolicy{}
	err := s.Store.View(ctx, func(tx notify.Tx) error {
		ps, err := tx.FindRateLimitPolicies(ctx, a.WorkspaceID)
		if err != nil {
			return err
		}
		for _, p := range ps {
			if p.APIKeyID == "" {
				ws = p
			} else {
				keys = append(keys, p)
			}
		}
		return nil
	})
	return ws, keys, err
}

// PutWorkspaceRateLimit stores the workspace policy (audit
// rate_limit.workspace.upsert).
func (s *Service) PutWorkspaceRateLimit(ctx context.Context, a *usecase.Actor, in RateLimitInput) (*notify.RateLimitPolicy, error) {
	return s.putRateLimit(ctx, a, "", in)
}

// PutAPIKeyRateLimit stores one API key's policy (audit
// rate_limit.api_key.upsert); a key of another workspace is 404.
func (s *Service) PutAPIKeyRateLimit(ctx context.Context, a *usecase.Actor, keyID string, in RateLimitInput) (*notify.RateLimitPolicy, error) {
	if !usecase.Storable(keyID) || keyID == "" {
		return nil, notify.NotFound("API key")
	}
	return s.putRateLimit(ctx, a, keyID, in)
}

func (s *Service) putRateLimit(ctx context.Context, a *usecase.Actor, keyID string, in RateLimitInput) (*notify.RateLimitPolicy, error) {
	if err := in.validate(); err != nil {
		return nil, err
	}
	p := &notify.RateLimitPolicy{ID: usecase.NewID(), WorkspaceID: a.WorkspaceID, APIKeyID: keyID, WindowSeconds: in.WindowSeconds,
		MaxRequests: in.MaxRequests, Enabled: in.Enabled == nil || *in.Enabled, UpdatedAt: s.Now()}
	err := s.Store.Update(ctx, func(tx notify.Tx) error {
		action, targetType, targetID := "rate_limit.workspace.upsert", "workspace", a.WorkspaceID
		if keyID != "" {
			if _, err := tx.FindAPIKey(ctx, a.WorkspaceID, keyID); err != nil {
				return usecase.NotFound(err, "API key")
			}
			action, targetType, targetID = "rate_limit.api_key.upsert", "api_key", keyID
		}
		if err := tx.PutRateLimitPolicy(ctx, p); err != nil {
			return err
		}
		return s.Audit(ctx, tx, a, a.WorkspaceID, action, targetType, targetID, map[string]any{
			"policyId": p.ID, "windowSeconds": p.WindowSeconds, "maxRequests": p.MaxRequests, "enabled": p.Enabled})
	})
	if err != nil {
		return nil, err
	}
	return p, nil
}

// ListDispatchLimits lists the workspace's dispatch limits.
func (s *Service) ListDispatchLimits(ctx context.Context, a *usecase.Actor) ([]*notify.DispatchLimit, error) {
	var out []*notify.DispatchLimit
	err := s.Store.View(ctx, func(tx notify.Tx) (err error) {
		out, err = tx.FindDispatchLimits(ctx, a.WorkspaceID)
		return err
	})
	return out, err
}

// PutDispatchLimit creates or updates the limit of (scope, targetId).
func (s *Service) PutDispatchLimit(ctx context.Context, a *usecase.Actor, in DispatchLimitInput) (*notify.DispatchLimit, error) {
	switch in.Scope {
	case notify.DispatchScopeWorkspace:
		if in.TargetID != "" {
			return nil, notify.Invalid("targetId must be omitted for scope workspace")
		}
	case notify.DispatchScopeProvider, notify.DispatchScopeAPIKey:
		if in.TargetID == "" {
			return nil, notify.Invalid("targetId is required for scope %s", in.Scope)
		}
		if len([]rune(in.TargetID)) > 64 {
			return nil, notify.Invalid("targetId must be at most 64 characters")
		}
		if !usecase.Storable(in.TargetID) {
			return nil, notify.Invalid("targetId must be text without NUL characters")
		}
	default:
		return nil, notify.Invalid("scope must be one of workspace, provider, apiKey")
	}
	if in.RatePerSecond < 1 || in.RatePerSecond > 1_000_000 {
		return nil, notify.Invalid("ratePerSecond must be between 1 and 1000000")
	}
	now := s.Now()
	l := &notify.DispatchLimit{ID: usecase.NewID(), WorkspaceID: a.WorkspaceID, Scope: in.Scope, TargetID: in.TargetID,
		RatePerSecond: in.RatePerSecond, Enabled: in.Enabled == nil || *in.Enabled, CreatedAt: now, UpdatedAt: now}
	err := s.Store.Update(ctx, func(tx notify.Tx) error {
		if err := foreignTarget(ctx, tx, a.WorkspaceID, l); err != nil {
			return err
		}
		if err := tx.PutDispatchLimit(ctx, l); err != nil {
			return err
		}
		return s.Audit(ctx, tx, a, a.WorkspaceID, "dispatch_limit.upsert", "dispatch_limit", l.ID, map[string]any{
			"scope": l.Scope, "targetId": limitTarget(l), "ratePerSecond": l.RatePerSecond, "enabled": l.Enabled})
	})
	if err != nil {
		return nil, err
	}
	s.forgetLimits(a.WorkspaceID)
	return l, nil
}

// foreignTarget answers 404 when a limit names another workspace's
// provider account or API key, as every cross-workspace id does (it was
// stored and limited nothing). A target that exists nowhere is still
// taken: SPEC holds targetId only to 64 characters, and a limit may be
// set before its provider or key exists.
func foreignTarget(ctx context.Context, tx notify.Tx, ws string, l *notify.DispatchLimit) error {
	if l.Scope == notify.DispatchScopeWorkspace {
		return nil
	}
	owner, err := tx.DispatchTargetWorkspace(ctx, l.Scope, l.TargetID)
	switch {
	case notify.IsNotFound(err):
		return nil
	case err != nil:
		return err
	case owner != ws && l.Scope == notify.DispatchScopeAPIKey:
		return notify.NotFound("API key")
	case owner != ws:
		return notify.NotFound("Provider")
	}
	return nil
}

// limitTarget is a limit's targetId as shown: null for the workspace scope.
func limitTarget(l *notify.DispatchLimit) any {
	if l.TargetID == "" {
		return nil
	}
	return l.TargetID
}

// DeleteDispatchLimit deletes a limit (audit dispatch_limit.delete);
// unknown or of another workspace is 404.
func (s *Service) DeleteDispatchLimit(ctx context.Context, a *usecase.Actor, id string) error {
	if !usecase.Storable(id) {
		return notify.NotFound("Dispatch limit")
	}
	defer s.forgetLimits(a.WorkspaceID)
	return s.Store.Update(ctx, func(tx notify.Tx) error {
		ls, err := tx.FindDispatchLimits(ctx, a.WorkspaceID)
		if err != nil {
			return err
		}
		var l *notify.DispatchLimit
		for _, c := range ls {
			if c.ID == id {
				l = c
			}
		}
		if l == nil {
			return notify.NotFound("Dispatch limit")
		}
		if err := tx.DeleteDispatchLimit(ctx, a.WorkspaceID, id); err != nil {
			return usecase.NotFound(err, "Dispatch limit")
		}
		return s.Audit(ctx, tx, a, a.WorkspaceID, "dispatch_limit.delete", "dispatch_limit", id, map[string]any{
			"scope": l.Scope, "targetId": limitTarget(l)})
	})
}

// forgetLimits tells the delivery engine of this process that workspace
// ws's dispatch limits changed (other processes read them again within
// seconds).
func (s *Service) forgetLimits(ws string) {
	if s.engine != nil {
		s.engine.ForgetLimits(ws)
	}
}
