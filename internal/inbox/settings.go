package inbox

import (
	"context"
	"errors"
	"net/url"
	"slices"
	"strings"

	"github.com/notifyd/notifyd/internal/notify"
	"github.com/notifyd/notifyd/internal/usecase"
)

// MaxOrigins bounds a workspace's allowed origins.
const MaxOrigins = 50

// Settings answers the workspace's inbox settings (blank ones before the
// first change).
func (s *Service) Settings(ctx context.Context, a *usecase.Actor) (*notify.InboxSettings, error) {
	var set *notify.InboxSettings
	err := s.Store.Lookup(ctx, func(tx notify.Tx) (err error) {
		set, err = tx.FindInboxSettings(ctx, a.WorkspaceID)
		return err
	})
	if errors.Is(err, notify.ErrNotFound) {
		return &notify.InboxSettings{WorkspaceID: a.WorkspaceID, AllowedOrigins: []string{}}, nil
	}
	return set, err
}

// PutOrigins replaces the browser origins allowed to call the inbox API
// (audit inbox.settings_update). Each is scheme://host[:port], as a
// browser sends it in Origin; kept once each, lower-cased.
func (s *Service) PutOrigins(ctx context.Context, a *usecase.Actor, origins []string) (*notify.InboxSettings, error) {
	if len(origins) > MaxOrigins {
		return nil, notify.Invalid("allowedOrigins must hold at most %d origins", MaxOrigins)
	}
	clean := []string{}
	for i, o := range origins {
		c, ok := Origin(o)
		if !ok {
			return nil, notify.Invalid("allowedOrigins[%d] must be an origin such as https://app.example.com (scheme, host and port only)", i)
		}
		if !slices.Contains(clean, c) {
			clean = append(clean, c)
		}
	}
	var set *notify.InboxSettings
	err := s.Store.Update(ctx, func(tx notify.Tx) (err error) {
		if set, err = s.lockSettings(ctx, tx, a.WorkspaceID); err != nil {
			return err
		}
		set.AllowedOrigins, set.UpdatedAt = clean, s.Now()
		if err := tx.PutInboxSettings(ctx, set); err != nil {
			return err
		}
		return s.Audit(ctx, tx, a, a.WorkspaceID, "inbox.settings_update", "workspace", a.WorkspaceID,
			map[string]any{"allowedOrigins": clean})
	})
	return set, err
}

// Origin is o in the form a browser's Origin header has it, and whether
// o is one: http or https, a host, an optional port, nothing else.
func Origin(o string) (string, bool) {
	u, err := url.Parse(strings.TrimSpace(o))
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.User != nil ||
		(u.Path != "" && u.Path != "/") || u.RawQuery != "" || u.Fragment != "" || len(o) > 300 {
		return "", false
	}
	return strings.ToLower(u.Scheme + "://" + u.Host), true
}

// Allowed reports whether a browser at origin may call the inbox API of
// a workspace allowing origins.
func Allowed(origins []string, origin string) bool {
	o, ok := Origin(origin)
	return ok && slices.Contains(origins, o)
}
