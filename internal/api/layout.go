package api

import (
	"net/http"

	"github.com/notifyd/notifyd/internal/notify"
	"github.com/notifyd/notifyd/internal/templates"
)

// Template previews and email layouts (issue 21,
// docs/DECISIONS.md "Template preview, layouts and locales").

func (a templatesAPI) previewLayoutRoutes() []Route {
	all, op := notify.RolesAll, notify.RolesOperator
	return []Route{
		{Method: "POST", Path: "/v1/templates/{id}/preview", auth: authDashboard, Roles: all, h: a.handleTemplatePreview},
		{Method: "POST", Path: "/v1/layouts", auth: authDashboard, Roles: op, h: a.handleLayoutCreate},
		{Method: "GET", Path: "/v1/layouts", auth: authDashboard, Roles: all, h: a.handleLayoutList},
		{Method: "GET", Path: "/v1/layouts/{id}", auth: authDashboard, Roles: all, h: a.handleLayoutGet},
		{Method: "PATCH", Path: "/v1/layouts/{id}", auth: authDashboard, Roles: op, h: a.handleLayoutUpdate},
		{Method: "DELETE", Path: "/v1/layouts/{id}", auth: authDashboard, Roles: op, h: a.handleLayoutDelete},
	}
}

type layoutJSON struct {
	ID        string  `json:"id"`
	Name      string  `json:"name"`
	HTML      *string `json:"html"`
	Text      *string `json:"text"`
	CreatedAt string  `json:"createdAt"`
	UpdatedAt string  `json:"updatedAt"`
}

func layoutBody(l *notify.Layout) layoutJSON {
	return layoutJSON{ID: l.ID, Name: l.Name, HTML: strOrNil(l.HTML), Text: strOrNil(l.Text),
		CreatedAt: Timestamp(l.CreatedAt), UpdatedAt: Timestamp(l.UpdatedAt)}
}

type layoutIn struct {
	Name Optional[string] `json:"name"`
	HTML Optional[string] `json:"html"`
	Text Optional[string] `json:"text"`
}

// layoutInput decodes a layout create or update body.
func (c *call) layoutInput() (templates.LayoutInput, error) {
	var in layoutIn
	if err := c.decode(&in); err != nil {
		return templates.LayoutInput{}, err
	}
	name, err := required("name", in.Name)
	return templates.LayoutInput{Name: name, HTML: clearable(in.HTML), Text: clearable(in.Text)}, err
}

func (a templatesAPI) handleLayoutCreate(c *call) error {
	input, err := c.layoutInput()
	if err != nil {
		return err
	}
	l, err := a.room.CreateLayout(c.ctx, c.actor, input)
	if err != nil {
		return err
	}
	return c.ok(http.StatusCreated, map[string]any{"layout": layoutBody(l)})
}

func (a templatesAPI) handleLayoutList(c *call) error {
	ls, err := a.room.ListLayouts(c.ctx, c.actor)
	if err != nil {
		return err
	}
	out := make([]layoutJSON, len(ls))
	for i, l := range ls {
		out[i] = layoutBody(l)
	}
	return c.ok(http.StatusOK, map[string]any{"layouts": out})
}

func (a templatesAPI) handleLayoutGet(c *call) error {
	l, err := a.room.GetLayout(c.ctx, c.actor, c.r.PathValue("id"))
	if err != nil {
		return err
	}
	return c.ok(http.StatusOK, map[string]any{"layout": layoutBody(l)})
}

func (a templatesAPI) handleLayoutUpdate(c *call) error {
	input, err := c.layoutInput()
	if err != nil {
		return err
	}
	l, err := a.room.UpdateLayout(c.ctx, c.actor, c.r.PathValue("id"), input)
	if err != nil {
		return err
	}
	return c.ok(http.StatusOK, map[string]any{"layout": layoutBody(l)})
}

func (a templatesAPI) handleLayoutDelete(c *call) error {
	if err := decodeNone(c.body); err != nil {
		return err
	}
	if err := a.room.DeleteLayout(c.ctx, c.actor, c.r.PathValue("id")); err != nil {
		return err
	}
	return c.noContent()
}

func (a templatesAPI) handleTemplatePreview(c *call) error {
	var in struct {
		Version   *int              `json:"version"`
		Locale    *string           `json:"locale"`
		Variables map[string]string `json:"variables"`
	}
	if err := c.decode(&in); err != nil {
		return err
	}
	p, err := a.room.PreviewTemplate(c.ctx, c.actor, c.r.PathValue("id"),
		templates.PreviewInput{Version: in.Version, Locale: in.Locale, Variables: in.Variables})
	if err != nil {
		return err
	}
	var layoutID *string
	if p.Layout != nil {
		layoutID = &p.Layout.ID
	}
	return c.ok(http.StatusOK, map[string]any{"preview": map[string]any{
		"templateId": p.Template.ID, "version": p.Version.Version, "locale": strOrNil(p.Version.Locale), "layoutId": layoutID,
		"title": strOrNil(p.Title), "text": p.Text, "html": strOrNil(p.HTML), "missingVariables": p.MissingVariables}})
}
