package categories

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"

	"github.com/notifyd/notifyd/internal/notify"
	"github.com/notifyd/notifyd/internal/usecase"
)

// Input is a preferences document as a caller gives it: a switch per
// channel, and per category key a switch per channel. A put replaces the
// whole document: what it leaves out is no choice.
type Input struct {
	Channels   map[string]bool
	Categories map[string]map[string]bool
}

// quoted shows a caller's key in a detail, cut to 64 characters.
func quoted(k string) string {
	if r := []rune(k); len(r) > 64 {
		k = string(r[:64]) + "…"
	}
	return fmt.Sprintf("%q", k)
}

func channelSwitches(field string, in map[string]bool) (map[notify.Channel]bool, error) {
	out := make(map[notify.Channel]bool, len(in))
	// Sorted, so the first bad key named is the same on every call.
	for _, k := range slices.Sorted(maps.Keys(in)) {
		if !notify.Channel(k).Valid() {
			return nil, notify.Invalid("%s: %s is not a channel (one of %s)", field, quoted(k), channelList())
		}
		out[notify.Channel(k)] = in[k]
	}
	return out, nil
}

// check turns in into preferences, every channel checked and category
// keys in their form; whether the categories exist is knownCategories'
// to say.
func check(in Input) (*notify.Preferences, error) {
	chans, err := channelSwitches("channels", in.Channels)
	if err != nil {
		return nil, err
	}
	p := &notify.Preferences{Channels: chans, Categories: map[string]map[notify.Channel]bool{}}
	for _, k := range slices.Sorted(maps.Keys(in.Categories)) {
		if !keyPattern.MatchString(k) {
			return nil, notify.Invalid("categories: %s is not a category of this workspace", quoted(k))
		}
		m, err := channelSwitches("categories."+k, in.Categories[k])
		if err != nil {
			return nil, err
		}
		p.Categories[k] = m
	}
	return p, nil
}

// knownCategories refuses a key of p the workspace has no category of
// (one given with no channel too), then drops the categories with no
// channel: they hold no choice.
func knownCategories(ctx context.Context, tx notify.Tx, ws string, p *notify.Preferences) error {
	if len(p.Categories) == 0 {
		return nil
	}
	cs, err := tx.FindCategories(ctx, ws)
	if err != nil {
		return err
	}
	have := make(map[string]bool, len(cs))
	for _, c := range cs {
		have[c.Key] = true
	}
	for _, k := range slices.Sorted(maps.Keys(p.Categories)) {
		if !have[k] {
			return notify.Invalid("categories: %s is not a category of this workspace", quoted(k))
		}
		if len(p.Categories[k]) == 0 {
			delete(p.Categories, k)
		}
	}
	return nil
}

// categoryGone is the 409 of a category removed between the check of
// the keys and the write (the store reads them again under a lock).
func categoryGone(err error) error {
	if errors.Is(err, notify.ErrNotFound) {
		return notify.Conflict("A category of these preferences was deleted meanwhile; try again")
	}
	return err
}

// auditBody is a preferences document as the audit log records it.
func auditBody(p *notify.Preferences) map[string]any {
	return map[string]any{"channels": p.Channels, "categories": p.Categories}
}

// recipientNotFound is the 404 of an external id the workspace has no
// profile of; an id no profile can have is one of those.
func recipientNotFound(err error) error { return usecase.NotFound(err, "Recipient") }

func lookable(externalID string) bool {
	return externalID != "" && len(externalID) <= 200 && usecase.Storable(externalID)
}

// Preferences answers the preferences of the workspace's profile of externalID
// (empty when it has chosen nothing); 404 when there is no profile.
func (s *Service) Preferences(ctx context.Context, c Caller, externalID string) (*notify.Preferences, error) {
	if !lookable(externalID) {
		return nil, notify.NotFound("Recipient")
	}
	var p *notify.Preferences
	err := s.Store.View(ctx, func(tx notify.Tx) error {
		r, err := tx.FindRecipient(ctx, c.Workspace(), externalID)
		if err != nil {
			return recipientNotFound(err)
		}
		p, err = tx.FindPreferences(ctx, c.Workspace(), r.ID)
		return err
	})
	return p, err
}

// PutPreferences replaces the preferences of the profile of externalID (audit
// preference.replace, target the recipient, with the document). 400
// for a channel that is none before 404; 400 for an unknown category.
func (s *Service) PutPreferences(ctx context.Context, c Caller, externalID string, in Input) (*notify.Preferences, error) {
	p, err := check(in)
	if err != nil {
		return nil, err
	}
	if !lookable(externalID) {
		return nil, notify.NotFound("Recipient")
	}
	err = s.Store.Update(ctx, func(tx notify.Tx) error {
		// The profile's lock serializes two puts of one person's
		// preferences (each a delete and an insert).
		r, err := tx.LockRecipient(ctx, c.Workspace(), externalID)
		if err != nil {
			return recipientNotFound(err)
		}
		if err := knownCategories(ctx, tx, c.Workspace(), p); err != nil {
			return err
		}
		if err := tx.ReplacePreferences(ctx, c.Workspace(), r.ID, p); err != nil {
			return categoryGone(err)
		}
		return s.AuditAs(ctx, tx, c, "preference.replace", "recipient", externalID, auditBody(p))
	})
	if err != nil {
		return nil, err
	}
	return p, nil
}

// DefaultPreferences answers the workspace default.
func (s *Service) DefaultPreferences(ctx context.Context, c Caller) (*notify.Preferences, error) {
	var p *notify.Preferences
	err := s.Store.View(ctx, func(tx notify.Tx) (err error) {
		p, err = tx.FindPreferences(ctx, c.Workspace(), "")
		return err
	})
	return p, err
}

// PutDefaultPreferences replaces the workspace default (audit
// preference.default.replace, target the workspace).
func (s *Service) PutDefaultPreferences(ctx context.Context, c Caller, in Input) (*notify.Preferences, error) {
	p, err := check(in)
	if err != nil {
		return nil, err
	}
	ws := c.Workspace()
	err = s.Store.Update(ctx, func(tx notify.Tx) error {
		if err := tx.LockWorkspace(ctx, ws); err != nil {
			return err
		}
		if err := knownCategories(ctx, tx, ws, p); err != nil {
			return err
		}
		if err := tx.ReplacePreferences(ctx, ws, "", p); err != nil {
			return categoryGone(err)
		}
		return s.AuditAs(ctx, tx, c, "preference.default.replace", "workspace", ws, auditBody(p))
	})
	if err != nil {
		return nil, err
	}
	return p, nil
}
