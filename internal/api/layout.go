package api

import (
	"net/http"

	"github.com/notifyd/notifyd/internal/notify"
	"github.com/notifyd/notifyd/internal/service"
)

// Template and campaign previews and email layouts (issue 21,
// docs/DECISIONS.md "Template preview, layouts and locales").

func (a *API) previewLayoutRoutes() []Route {
	all, op := notify.RolesAll, notify.RolesOperator
	return []Route{
		{Method: "POST", Path: "/v1/templates/{id}/preview", auth: authDashboard, Roles: all, h: a.handleTemplatePreview},
		{Method: "POST", Path: "/v1/newsletter/campaigns/{id}/preview", auth: authDashboard, Roles: all, h: a.handleCampaignPreview},
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
func (c *call) layoutInput() (service.LayoutInput, error) {
	var in layoutIn
	if err := c.decode(&in); err != nil {
		return service.LayoutInput{}, err
	}
	name, err := required("name", in.Name)
	return service.LayoutInput{Name: name, HTML: clearable(in.HTML), Text: clearable(in.Text)}, err
}

func (a *API) handleLayoutCreate(c *call) error {
	input, err := c.layoutInput()
	if err != nil {
		return err
	}
	l, err := a.svc.CreateLayout(c.ctx, c.actor, input)
	if err != nil {
		return err
	}
	return c.ok(http.StatusCreated, map[string]any{"layout": layoutBody(l)})
}

func (a *API) handleLayoutList(c *call) error {
	ls, err := a.svc.ListLayouts(c.ctx, c.actor)
	if err != nil {
		return err
	}
	out := make([]layoutJSON, len(ls))
	for i, l := range ls {
		out[i] = layoutBody(l)
	}
	return c.ok(http.StatusOK, map[string]any{"layouts": out})
}

func (a *API) handleLayoutGet(c *call) error {
	l, err := a.svc.GetLayout(c.ctx, c.actor, c.r.PathValue("id"))
	if err != nil {
		return err
	}
	return c.ok(http.StatusOK, map[string]any{"layout": layoutBody(l)})
}

func (a *API) handleLayoutUpdate(c *call) error {
	input, err := c.layoutInput()
	if err != nil {
		return err
	}
	l, err := a.svc.UpdateLayout(c.ctx, c.actor, c.r.PathValue("id"), input)
	if err != nil {
		return err
	}
	return c.ok(http.StatusOK, map[string]any{"layout": layoutBody(l)})
}

func (a *API) handleLayoutDelete(c *call) error {
	if err := decodeNone(c.body); err != nil {
		return err
	}
	if err := a.svc.DeleteLayout(c.ctx, c.actor, c.r.PathValue("id")); err != nil {
		return err
	}
	return c.noContent()
}

func (a *API) handleTemplatePreview(c *call) error {
	var in struct {
		Version   *int              `json:"version"`
		Locale    *string           `json:"locale"`
		Variables map[string]string `json:"variables"`
	}
	if err := c.decode(&in); err != nil {
		return err
	}
	p, err := a.svc.PreviewTemplate(c.ctx, c.actor, c.r.PathValue("id"),
		service.PreviewInput{Version: in.Version, Locale: in.Locale, Variables: in.Variables})
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

func (a *API) handleCampaignPreview(c *call) error {
	var in struct {
		Attributes map[string]string `json:"attributes"`
	}
	if err := c.decode(&in); err != nil {
		return err
	}
	p, err := a.svc.PreviewCampaign(c.ctx, c.actor, c.r.PathValue("id"), in.Attributes, a.baseURL)
	if err != nil {
		return err
	}
	return c.ok(http.StatusOK, map[string]any{"preview": map[string]any{
		"subject": p.Subject, "text": p.Text, "html": strOrNil(p.HTML), "missingVariables": p.MissingVariables}})
}
