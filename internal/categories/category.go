package categories

import (
	"context"
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/notifyd/notifyd/internal/notify"
	"github.com/notifyd/notifyd/internal/usecase"
)

// Bounds of a category (docs/DECISIONS.md, "Categories and preferences").
const (
	MaxName        = 120
	MaxDescription = 1000
	// MaxCategories per workspace: a preference page lists them all, and
	// a person's preferences are bounded by categories × channels.
	MaxCategories = 100
	// MaxCapSends bounds a frequency cap's max: the sliding log of a
	// recipient and category keeps one time per counted send.
	MaxCapSends = 1000
	// MaxCapWindow bounds a frequency cap's window (31 days).
	MaxCapWindow = notify.MaxCapWindowSeconds
)

// keyPattern: a slug that needs no escaping in a path or a JSON key and
// reads the same in any case-insensitive tool (lower case only).
var keyPattern = regexp.MustCompile(`^[a-z0-9][a-z0-9_.-]{0,63}$`)

// CheckKey holds a category key to keyPattern.
func CheckKey(field, key string) error {
	if !keyPattern.MatchString(key) {
		return notify.Invalid("%s must be 1 to 64 characters of a-z, 0-9, _, . and -, starting with a letter or digit", field)
	}
	return nil
}

// channelList is the detail's list of the channel values.
func channelList() string {
	names := make([]string, len(notify.AllChannels))
	for i, ch := range notify.AllChannels {
		names[i] = string(ch)
	}
	return strings.Join(names, ", ")
}

// notAChannel is the 400 of a value that is no channel.
func notAChannel(field string) error {
	return notify.Invalid("%s must be one of %s", field, channelList())
}

// notFound is the 404 of a key the workspace has no category of.
func notFound(err error) error { return usecase.NotFound(err, "Category") }

// Fields are a category's fields as a caller gives them: on a create
// nil is the default (name is required), on a patch nil keeps the
// stored value.
type Fields struct {
	Name            *string
	Description     *string
	Required        *bool
	DefaultChannels *[]string
	Advertising     *bool
	// FrequencyCap: nil keeps (on a create: none), a pointer to nil
	// removes the cap.
	FrequencyCap **notify.FrequencyCap
}

// names lists the JSON names of the fields given, for the audit log.
func (in Fields) names() []string {
	var out []string
	for _, f := range []struct {
		name string
		set  bool
	}{
		{"name", in.Name != nil}, {"description", in.Description != nil}, {"required", in.Required != nil},
		{"defaultChannels", in.DefaultChannels != nil}, {"advertising", in.Advertising != nil},
		{"frequencyCap", in.FrequencyCap != nil},
	} {
		if f.set {
			out = append(out, f.name)
		}
	}
	return out
}

// apply checks in and writes what it gives onto c.
func apply(c *notify.Category, in Fields) error {
	if in.Name != nil {
		v := strings.TrimSpace(*in.Name)
		if err := usecase.ValidText("name", v); err != nil {
			return err
		}
		if v == "" {
			return notify.Invalid("name must not be empty")
		}
		if err := usecase.MaxLen("name", v, MaxName); err != nil {
			return err
		}
		if err := usecase.OneLine("name", v); err != nil {
			return err
		}
		c.Name = v
	}
	if in.Description != nil {
		v := strings.TrimSpace(*in.Description)
		if err := usecase.ValidText("description", v); err != nil {
			return err
		}
		if err := usecase.MaxLen("description", v, MaxDescription); err != nil {
			return err
		}
		c.Description = v
	}
	if in.Required != nil {
		c.Required = *in.Required
	}
	if in.Advertising != nil {
		c.Advertising = *in.Advertising
	}
	if in.DefaultChannels != nil {
		// Kept once each, in SPEC's order of the channels: the set is what
		// counts, and a stable order reads the same on every answer.
		given := *in.DefaultChannels
		for i, v := range given {
			if !notify.Channel(v).Valid() {
				return notAChannel(fmt.Sprintf("defaultChannels[%d]", i))
			}
		}
		c.DefaultChannels = []notify.Channel{}
		for _, ch := range notify.AllChannels {
			if slices.Contains(given, string(ch)) {
				c.DefaultChannels = append(c.DefaultChannels, ch)
			}
		}
	}
	if in.FrequencyCap != nil {
		fc, err := checkCap(*in.FrequencyCap)
		if err != nil {
			return err
		}
		c.FrequencyCap = fc
	}
	// A required category's messages (security notices) are never capped.
	if c.Required && c.FrequencyCap != nil {
		return notify.Invalid("A required category cannot have a frequency cap: its messages are never held back")
	}
	// Advertising needs the person's consent (정보통신망법 제50조): a kind
	// of message nobody can opt out of cannot be one.
	if c.Required && c.Advertising {
		return notify.Invalid("A category cannot be both required and advertising: advertising needs the recipient's consent")
	}
	return nil
}

// checkCap checks a frequency cap as given (nil: none) and answers it
// with its mode filled in (drop when none is given).
func checkCap(in *notify.FrequencyCap) (*notify.FrequencyCap, error) {
	if in == nil {
		return nil, nil
	}
	fc := *in
	if fc.Max < 1 || fc.Max > MaxCapSends {
		return nil, notify.Invalid("frequencyCap.max must be an integer from 1 to %d", MaxCapSends)
	}
	if fc.WindowSeconds < 1 || fc.WindowSeconds > MaxCapWindow {
		return nil, notify.Invalid("frequencyCap.windowSeconds must be an integer from 1 to %d", MaxCapWindow)
	}
	switch fc.Mode {
	case "":
		fc.Mode = notify.CapDrop
	case notify.CapDrop, notify.CapDefer:
	default:
		return nil, notify.Invalid("frequencyCap.mode must be one of drop, defer")
	}
	return &fc, nil
}

// Create adds a category of key (audit category.create); 409 when the
// workspace has one of that key or already holds MaxCategories.
func (s *Service) Create(ctx context.Context, c Caller, key string, in Fields) (*notify.Category, error) {
	if err := CheckKey("key", key); err != nil {
		return nil, err
	}
	if in.Name == nil {
		return nil, notify.Invalid("name is required")
	}
	now := s.Now()
	cat := &notify.Category{ID: usecase.NewID(), WorkspaceID: c.Workspace(), Key: key, DefaultChannels: []notify.Channel{},
		CreatedAt: now, UpdatedAt: now}
	if err := apply(cat, in); err != nil {
		return nil, err
	}
	err := s.Store.Update(ctx, func(tx notify.Tx) error {
		// The count and the insert under the workspace's lock, so two
		// creates at once cannot pass the bound together.
		if err := tx.LockWorkspace(ctx, cat.WorkspaceID); err != nil {
			return err
		}
		cs, err := tx.FindCategories(ctx, cat.WorkspaceID)
		if err != nil {
			return err
		}
		if len(cs) >= MaxCategories {
			return notify.Conflict("A workspace holds at most %d categories", MaxCategories)
		}
		if err := tx.CreateCategory(ctx, cat); err != nil {
			return usecase.ConflictOr(err, "A category with key %s already exists", key)
		}
		return s.AuditAs(ctx, tx, c, "category.create", "category", key, map[string]any{"fields": in.names()})
	})
	if err != nil {
		return nil, err
	}
	return cat, nil
}

// Update changes the fields in gives (audit category.update); 400
// before 404.
func (s *Service) Update(ctx context.Context, c Caller, key string, in Fields) (*notify.Category, error) {
	if err := apply(&notify.Category{}, in); err != nil {
		return nil, err
	}
	if CheckKey("key", key) != nil {
		return nil, notify.NotFound("Category")
	}
	var cat *notify.Category
	err := s.Store.Update(ctx, func(tx notify.Tx) (err error) {
		if err := tx.LockWorkspace(ctx, c.Workspace()); err != nil {
			return err
		}
		if cat, err = tx.FindCategory(ctx, c.Workspace(), key); err != nil {
			return notFound(err)
		}
		if err := apply(cat, in); err != nil {
			return err
		}
		cat.UpdatedAt = s.Now()
		if err := tx.UpdateCategory(ctx, cat); err != nil {
			return notFound(err)
		}
		return s.AuditAs(ctx, tx, c, "category.update", "category", key, map[string]any{"fields": in.names()})
	})
	if err != nil {
		return nil, err
	}
	return cat, nil
}

// Get answers the workspace's category of key (404 otherwise).
func (s *Service) Get(ctx context.Context, c Caller, key string) (*notify.Category, error) {
	if CheckKey("key", key) != nil {
		return nil, notify.NotFound("Category")
	}
	var cat *notify.Category
	err := s.Store.Lookup(ctx, func(tx notify.Tx) (err error) {
		cat, err = tx.FindCategory(ctx, c.Workspace(), key)
		return notFound(err)
	})
	return cat, err
}

// List answers the workspace's categories by key.
func (s *Service) List(ctx context.Context, c Caller) ([]*notify.Category, error) {
	var cs []*notify.Category
	err := s.Store.View(ctx, func(tx notify.Tx) (err error) {
		cs, err = tx.FindCategories(ctx, c.Workspace())
		return err
	})
	return cs, err
}

// Delete removes the category and every preference of it, the
// recipients' and the workspace default's (audit category.delete).
func (s *Service) Delete(ctx context.Context, c Caller, key string) error {
	if CheckKey("key", key) != nil {
		return notify.NotFound("Category")
	}
	return s.Store.Update(ctx, func(tx notify.Tx) error {
		if err := tx.DeleteCategory(ctx, c.Workspace(), key); err != nil {
			return notFound(err)
		}
		return s.AuditAs(ctx, tx, c, "category.delete", "category", key, nil)
	})
}
