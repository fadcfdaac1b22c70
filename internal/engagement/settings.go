package engagement

import (
	"context"
	"time"

	"github.com/notifyd/notifyd/internal/notify"
	"github.com/notifyd/notifyd/internal/usecase"
)

// cachedSettings is a process's copy of a workspace's settings. One
// caller reads them again when they are stale; the others go on with the
// stale copy meanwhile (or, before the first read, wait for it), so a
// campaign's hundreds of sends in flight never read them all at once.
type cachedSettings struct {
	at      time.Time
	rows    []*notify.TrackingSetting
	loaded  bool
	loading chan struct{} // closed when the read in progress ends; nil: none
	err     error
}

// Decide answers whether opens and clicks of a message of the workspace,
// with category and campaign ("" for none), are tracked: the campaign's
// setting over the category's over the workspace's; nothing without any,
// and nothing when tracking is off everywhere.
func (s *Service) Decide(ctx context.Context, ws, category, campaign string) (opens, clicks bool, err error) {
	if s.off {
		return false, false, nil
	}
	rows, err := s.settings(ctx, ws)
	if err != nil {
		return false, false, err
	}
	opens, clicks = effective(rows, category, campaign)
	return opens, clicks, nil
}

// effective applies the scopes from the widest.
func effective(rows []*notify.TrackingSetting, category, campaign string) (opens, clicks bool) {
	apply := func(scope, key string) {
		for _, r := range rows {
			if r.Scope == scope && r.Key == key {
				if r.Opens != nil {
					opens = *r.Opens
				}
				if r.Clicks != nil {
					clicks = *r.Clicks
				}
			}
		}
	}
	apply(notify.TrackingWorkspace, "")
	if category != "" {
		apply(notify.TrackingCategory, category)
	}
	if campaign != "" {
		apply(notify.TrackingCampaign, campaign)
	}
	return opens, clicks
}

// settings is the workspace's settings, from the cache while fresh.
func (s *Service) settings(ctx context.Context, ws string) ([]*notify.TrackingSetting, error) {
	now := time.Now()
	s.mu.Lock()
	c := s.cache[ws]
	if c == nil {
		c = &cachedSettings{}
		s.cache[ws] = c
	}
	if c.loaded && (now.Sub(c.at) < settingsTTL || c.loading != nil) {
		rows := c.rows
		s.mu.Unlock()
		return rows, nil
	}
	if wait := c.loading; wait != nil {
		s.mu.Unlock()
		select {
		case <-wait:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
		s.mu.Lock()
		defer s.mu.Unlock()
		return c.rows, c.err
	}
	done := make(chan struct{})
	c.loading = done
	s.mu.Unlock()
	var rows []*notify.TrackingSetting
	err := s.Store.Lookup(ctx, func(tx notify.Tx) error {
		var err error
		rows, err = tx.FindTrackingSettings(ctx, ws)
		return err
	})
	s.mu.Lock()
	c.loading, c.err = nil, err
	if err == nil {
		c.rows, c.at, c.loaded = rows, now, true
	}
	close(done)
	s.mu.Unlock()
	return rows, err
}

// forget drops a workspace's cached settings after a change here.
func (s *Service) forget(ws string) {
	s.mu.Lock()
	delete(s.cache, ws)
	s.mu.Unlock()
}

// Settings is a workspace's tracking settings as the API shows them.
type Settings struct {
	// Enabled is false when NOTIFYD_TRACKING=off turns tracking off
	// everywhere, whatever the settings.
	Enabled   bool
	Workspace *notify.TrackingSetting // never nil (false, false when unset)
	Scoped    []*notify.TrackingSetting
}

// List answers the workspace's settings.
func (s *Service) List(ctx context.Context, a *usecase.Actor) (*Settings, error) {
	off := false
	out := &Settings{Enabled: !s.off, Workspace: &notify.TrackingSetting{WorkspaceID: a.WorkspaceID, Scope: notify.TrackingWorkspace,
		Opens: &off, Clicks: &off}}
	err := s.Store.Lookup(ctx, func(tx notify.Tx) error {
		rows, err := tx.FindTrackingSettings(ctx, a.WorkspaceID)
		for _, r := range rows {
			if r.Scope == notify.TrackingWorkspace {
				out.Workspace.UpdatedAt = r.UpdatedAt
				o, c := effective([]*notify.TrackingSetting{r}, "", "")
				out.Workspace.Opens, out.Workspace.Clicks = &o, &c
				continue
			}
			out.Scoped = append(out.Scoped, r)
		}
		return err
	})
	return out, err
}

// Put sets the setting of a scope (audit tracking.put): the workspace's
// (key "", both values required), a category's (by key) or a campaign's
// (by id); a nil value inherits.
func (s *Service) Put(ctx context.Context, a *usecase.Actor, scope, key string, opens, clicks *bool) (*notify.TrackingSetting, error) {
	if scope == notify.TrackingWorkspace && (opens == nil || clicks == nil) {
		return nil, notify.Invalid("opens and clicks are required booleans for the workspace")
	}
	set := &notify.TrackingSetting{WorkspaceID: a.WorkspaceID, Scope: scope, Key: key, Opens: opens, Clicks: clicks, UpdatedAt: s.Now()}
	err := s.Store.Update(ctx, func(tx notify.Tx) error {
		if err := s.checkScope(ctx, tx, a.WorkspaceID, scope, key); err != nil {
			return err
		}
		if err := tx.PutTrackingSetting(ctx, set); err != nil {
			return err
		}
		return s.Audit(ctx, tx, a, a.WorkspaceID, "tracking.put", "tracking", scopeName(scope, key),
			map[string]any{"opens": opens, "clicks": clicks})
	})
	if err != nil {
		return nil, err
	}
	s.forget(a.WorkspaceID)
	return set, nil
}

// Delete removes a category's or campaign's setting, so it inherits
// again (audit tracking.delete); 404 when it has none.
func (s *Service) Delete(ctx context.Context, a *usecase.Actor, scope, key string) error {
	err := s.Store.Update(ctx, func(tx notify.Tx) error {
		if err := s.checkScope(ctx, tx, a.WorkspaceID, scope, key); err != nil {
			return err
		}
		if err := tx.DeleteTrackingSetting(ctx, a.WorkspaceID, scope, key); err != nil {
			return usecase.NotFound(err, "Tracking setting")
		}
		return s.Audit(ctx, tx, a, a.WorkspaceID, "tracking.delete", "tracking", scopeName(scope, key), nil)
	})
	if err == nil {
		s.forget(a.WorkspaceID)
	}
	return err
}

// checkScope answers 404 for a category or campaign the workspace does
// not have.
func (s *Service) checkScope(ctx context.Context, tx notify.Tx, ws, scope, key string) error {
	switch scope {
	case notify.TrackingCategory:
		_, err := tx.FindCategory(ctx, ws, key)
		return usecase.NotFound(err, "Category")
	case notify.TrackingCampaign:
		if !usecase.IsUUID(key) {
			return notify.NotFound("Campaign")
		}
		_, err := tx.FindCampaign(ctx, ws, key)
		return usecase.NotFound(err, "Campaign")
	}
	return nil
}

// scopeName names a setting in the audit log.
func scopeName(scope, key string) string {
	if key == "" {
		return scope
	}
	return scope + ":" + key
}
