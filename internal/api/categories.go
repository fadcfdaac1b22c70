package api

import (
	"net/http"

	"github.com/notifyd/notifyd/internal/categories"
	"github.com/notifyd/notifyd/internal/notify"
)

// categoriesAPI serves categories and preferences (issue 32, item 3).
// Reads answer on both APIs (signed: recipients:read); categories and the
// workspace default are written from the dashboard only, a recipient's
// preferences on both (signed: recipients:write), with the roles of
// templates and subscribers.
type categoriesAPI struct {
	*API
	room *categories.Service
}

func (a categoriesAPI) routes() []Route {
	all, op, admin := notify.RolesAll, notify.RolesOperator, notify.RolesAdmin
	read, write := notify.ScopeRecipientsRead, notify.ScopeRecipientsWrite
	return []Route{
		{Method: "GET", Path: "/v1/categories", auth: authEither, Roles: all, Scope: read, h: a.handleList},
		{Method: "POST", Path: "/v1/categories", auth: authDashboard, Roles: op, h: a.handleCreate},
		{Method: "GET", Path: "/v1/categories/{key}", auth: authEither, Roles: all, Scope: read, h: a.handleGet},
		{Method: "PATCH", Path: "/v1/categories/{key}", auth: authDashboard, Roles: op, h: a.handleUpdate},
		{Method: "DELETE", Path: "/v1/categories/{key}", auth: authDashboard, Roles: admin, h: a.handleDelete},
		{Method: "GET", Path: "/v1/recipients/{externalId}/preferences", auth: authEither, Roles: all, Scope: read, h: a.handlePrefsGet},
		{Method: "PUT", Path: "/v1/recipients/{externalId}/preferences", auth: authEither, Roles: op, Scope: write, h: a.handlePrefsPut},
		{Method: "POST", Path: "/v1/recipients/{externalId}/preference-link", auth: authEither, Roles: op, Scope: write, h: a.handlePrefsLink},
		{Method: "GET", Path: "/v1/preferences/default", auth: authEither, Roles: all, Scope: read, h: a.handleDefaultGet},
		{Method: "PUT", Path: "/v1/preferences/default", auth: authDashboard, Roles: admin, h: a.handleDefaultPut},
	}
}

// categoryJSON is a category as both APIs show it.
type categoryJSON struct {
	Key             string   `json:"key"`
	Name            string   `json:"name"`
	Description     *string  `json:"description"`
	Required        bool     `json:"required"`
	DefaultChannels []string `json:"defaultChannels"`
	Advertising     bool     `json:"advertising"`
	// FrequencyCap is null when the category has none.
	FrequencyCap *notify.FrequencyCap `json:"frequencyCap"`
	CreatedAt    string               `json:"createdAt"`
	UpdatedAt    string               `json:"updatedAt"`
}

func categoryBody(c *notify.Category) categoryJSON {
	chans := make([]string, len(c.DefaultChannels))
	for i, ch := range c.DefaultChannels {
		chans[i] = string(ch)
	}
	return categoryJSON{Key: c.Key, Name: c.Name, Description: strOrNil(c.Description), Required: c.Required,
		DefaultChannels: chans, Advertising: c.Advertising, FrequencyCap: c.FrequencyCap, CreatedAt: Timestamp(c.CreatedAt), UpdatedAt: Timestamp(c.UpdatedAt)}
}

// categoryIn is the body of a create (with key) and of a patch.
type categoryIn struct {
	Name            Optional[string]              `json:"name"`
	Description     Optional[string]              `json:"description"`
	Required        Optional[bool]                `json:"required"`
	DefaultChannels Optional[[]string]            `json:"defaultChannels"`
	Advertising     Optional[bool]                `json:"advertising"`
	FrequencyCap    Optional[notify.FrequencyCap] `json:"frequencyCap"`
}

// notNull maps a present field onto a pointer; null is refused.
func notNull[T any](field, kind string, o Optional[T]) (*T, error) {
	switch {
	case !o.Set:
		return nil, nil
	case o.Null:
		return nil, notify.Invalid("%s must be %s", field, kind)
	}
	return &o.Value, nil
}

// fields: null clears the description, the default channels (every
// channel) and the frequency cap; name, required and advertising cannot
// be null.
func (in categoryIn) fields() (categories.Fields, error) {
	f := categories.Fields{Description: clearable(in.Description), DefaultChannels: present(in.DefaultChannels, []string{})}
	if in.FrequencyCap.Set {
		var fc *notify.FrequencyCap
		if !in.FrequencyCap.Null {
			v := in.FrequencyCap.Value
			fc = &v
		}
		f.FrequencyCap = &fc
	}
	var err error
	if f.Name, err = notNull("name", "a string", in.Name); err != nil {
		return f, err
	}
	if f.Required, err = notNull("required", "a boolean", in.Required); err != nil {
		return f, err
	}
	f.Advertising, err = notNull("advertising", "a boolean", in.Advertising)
	return f, err
}

func (a categoriesAPI) handleCreate(c *call) error {
	var in struct {
		Key *string `json:"key"`
		categoryIn
	}
	if err := c.decode(&in); err != nil {
		return err
	}
	if in.Key == nil {
		return notify.Invalid("key is required")
	}
	f, err := in.fields()
	if err != nil {
		return err
	}
	cat, err := a.room.Create(c.ctx, c.caller(), *in.Key, f)
	if err != nil {
		return err
	}
	return c.ok(http.StatusCreated, map[string]any{"category": categoryBody(cat)})
}

func (a categoriesAPI) handleUpdate(c *call) error {
	var in categoryIn
	if err := c.decode(&in); err != nil {
		return err
	}
	f, err := in.fields()
	if err != nil {
		return err
	}
	cat, err := a.room.Update(c.ctx, c.caller(), c.r.PathValue("key"), f)
	if err != nil {
		return err
	}
	return c.ok(http.StatusOK, map[string]any{"category": categoryBody(cat)})
}

func (a categoriesAPI) handleGet(c *call) error {
	cat, err := a.room.Get(c.ctx, c.caller(), c.r.PathValue("key"))
	if err != nil {
		return err
	}
	return c.ok(http.StatusOK, map[string]any{"category": categoryBody(cat)})
}

func (a categoriesAPI) handleList(c *call) error {
	cs, err := a.room.List(c.ctx, c.caller())
	if err != nil {
		return err
	}
	out := make([]categoryJSON, len(cs))
	for i, cat := range cs {
		out[i] = categoryBody(cat)
	}
	return c.ok(http.StatusOK, map[string]any{"categories": out})
}

func (a categoriesAPI) handleDelete(c *call) error {
	if err := decodeNone(c.body); err != nil {
		return err
	}
	if err := a.room.Delete(c.ctx, c.caller(), c.r.PathValue("key")); err != nil {
		return err
	}
	return c.noContent()
}

// preferencesJSON is a preferences document, in and out: a switch per
// channel, and per category key a switch per channel.
type preferencesJSON struct {
	Channels   map[string]bool            `json:"channels"`
	Categories map[string]map[string]bool `json:"categories"`
}

func preferencesBody(p *notify.Preferences) map[string]any {
	out := preferencesJSON{Channels: map[string]bool{}, Categories: map[string]map[string]bool{}}
	for ch, on := range p.Channels {
		out.Channels[string(ch)] = on
	}
	for k, m := range p.Categories {
		if len(m) == 0 {
			continue
		}
		out.Categories[k] = make(map[string]bool, len(m))
		for ch, on := range m {
			out.Categories[k][string(ch)] = on
		}
	}
	return map[string]any{"preferences": out}
}

// preferencesIn is a put's body: pointers, so that a null (which would
// decode as false, an opt-out nobody asked for) is refused.
type preferencesIn struct {
	Channels   map[string]*bool             `json:"channels"`
	Categories map[string]*map[string]*bool `json:"categories"`
}

const (
	detailChannelValues = "channels values must be booleans"
	detailCategories    = "categories must be an object of category keys to objects of channels to booleans"
)

// switches copies a map of switches, refusing a null.
func switches(in map[string]*bool, detail string) (map[string]bool, error) {
	out := make(map[string]bool, len(in))
	for k, v := range in {
		if v == nil {
			return nil, notify.Invalid("%s", detail)
		}
		out[k] = *v
	}
	return out, nil
}

// decodePreferences decodes a put's body, naming a wrong value as such
// (the decoder names the map, not the key, of a wrong element).
func (c *call) decodePreferences() (categories.Input, error) {
	var in preferencesIn
	if err := c.decode(&in); err != nil {
		if e, ok := notify.AsError(err); ok {
			switch e.Detail {
			case "channels must be a boolean":
				return categories.Input{}, notify.Invalid(detailChannelValues)
			case "categories must be a boolean", "categories must be an object":
				return categories.Input{}, notify.Invalid(detailCategories)
			}
		}
		return categories.Input{}, err
	}
	out := categories.Input{Categories: make(map[string]map[string]bool, len(in.Categories))}
	var err error
	if out.Channels, err = switches(in.Channels, detailChannelValues); err != nil {
		return out, err
	}
	for k, m := range in.Categories {
		if m == nil {
			return out, notify.Invalid(detailCategories)
		}
		if out.Categories[k], err = switches(*m, detailCategories); err != nil {
			return out, err
		}
	}
	return out, nil
}

func (a categoriesAPI) handlePrefsGet(c *call) error {
	p, err := a.room.Preferences(c.ctx, c.caller(), c.r.PathValue("externalId"))
	if err != nil {
		return err
	}
	return c.ok(http.StatusOK, preferencesBody(p))
}

// handlePrefsLink mints the recipient's preference link (issue 32, item
// 4): 200 {url, expiresAt}; nothing is stored but the audit entry.
func (a categoriesAPI) handlePrefsLink(c *call) error {
	if err := decodeNone(c.body); err != nil {
		return err
	}
	u, exp, err := a.room.PreferenceLink(c.ctx, c.caller(), c.r.PathValue("externalId"))
	if err != nil {
		return err
	}
	return c.ok(http.StatusOK, map[string]any{"url": u, "expiresAt": Timestamp(exp)})
}

func (a categoriesAPI) handlePrefsPut(c *call) error {
	in, err := c.decodePreferences()
	if err != nil {
		return err
	}
	p, err := a.room.PutPreferences(c.ctx, c.caller(), c.r.PathValue("externalId"), in)
	if err != nil {
		return err
	}
	return c.ok(http.StatusOK, preferencesBody(p))
}

func (a categoriesAPI) handleDefaultGet(c *call) error {
	p, err := a.room.DefaultPreferences(c.ctx, c.caller())
	if err != nil {
		return err
	}
	return c.ok(http.StatusOK, preferencesBody(p))
}

func (a categoriesAPI) handleDefaultPut(c *call) error {
	in, err := c.decodePreferences()
	if err != nil {
		return err
	}
	p, err := a.room.PutDefaultPreferences(c.ctx, c.caller(), in)
	if err != nil {
		return err
	}
	return c.ok(http.StatusOK, preferencesBody(p))
}
