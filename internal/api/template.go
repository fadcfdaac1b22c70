package api

import (
	"net/http"
	"strconv"

	"github.com/notifyd/notifyd/internal/notify"
	"github.com/notifyd/notifyd/internal/templates"
)

// templatesAPI are the handlers of the templates room: templates, their
// versions, the preview and layouts.
type templatesAPI struct {
	*API
	room *templates.Service
}

// routes are the template routes (API-DECISIONS section 4), the preview's
// and the layouts'.
func (a templatesAPI) routes() []Route {
	all, op, admin := notify.RolesAll, notify.RolesOperator, notify.RolesAdmin
	return append([]Route{
		{Method: "POST", Path: "/v1/templates", auth: authDashboard, Roles: op, h: a.handleTemplateCreate},
		{Method: "GET", Path: "/v1/templates", auth: authDashboard, Roles: all, h: a.handleTemplateList},
		{Method: "GET", Path: "/v1/templates/{id}", auth: authDashboard, Roles: all, h: a.handleTemplateGet},
		{Method: "PATCH", Path: "/v1/templates/{id}", auth: authDashboard, Roles: op, h: a.handleTemplateUpdate},
		{Method: "POST", Path: "/v1/templates/{id}/versions", auth: authDashboard, Roles: op, h: a.handleTemplateVersionCreate},
		{Method: "GET", Path: "/v1/templates/{id}/versions", auth: authDashboard, Roles: all, h: a.handleTemplateVersionList},
		{Method: "DELETE", Path: "/v1/templates/{id}/versions/{version}", auth: authDashboard, Roles: op, h: a.handleTemplateVersionDelete},
		{Method: "POST", Path: "/v1/templates/{id}/versions/{version}/publish", auth: authDashboard, Roles: op, h: a.handleTemplateVersionPublish},
		{Method: "PUT", Path: "/v1/templates/{id}/review-status", auth: authDashboard, Roles: admin, h: a.handleTemplateReviewStatus},
	}, a.previewLayoutRoutes()...)
}

// Templates (API-DECISIONS section 4). Empty optional strings answer null.

type templateVersionJSON struct {
	Version     int     `json:"version"`
	Title       *string `json:"title"`
	Text        string  `json:"text"`
	HTML        *string `json:"html"`
	PublishedAt *string `json:"publishedAt"`
	CreatedAt   string  `json:"createdAt"`
	Locale      *string `json:"locale"`   // issue 21; null: the default locale
	LayoutID    *string `json:"layoutId"` // issue 21
}

type templateJSON struct {
	ID                     string         `json:"id"`
	Code                   string         `json:"code"`
	Channel                notify.Channel `json:"channel"`
	Name                   string         `json:"name"`
	Status                 string         `json:"status"`
	ReviewStatus           *string        `json:"reviewStatus"`
	ProviderAccountID      *string        `json:"providerAccountId"`
	VendorTemplateID       *string        `json:"vendorTemplateId"`
	SenderProfileKey       *string        `json:"senderProfileKey"`
	LatestPublishedVersion *int           `json:"latestPublishedVersion"`
	CreatedAt              string         `json:"createdAt"`
	UpdatedAt              string         `json:"updatedAt"`
}

// templateWithVersionsJSON is the answer of GET /v1/templates/{id}: the
// newest versions, and where the version list continues (issue 29).
type templateWithVersionsJSON struct {
	templateJSON
	Versions        []templateVersionJSON `json:"versions"`
	VersionsCursor  *string               `json:"versionsCursor"`
	VersionsHasNext bool                  `json:"versionsHasNext"`
}

func templateBody(t *notify.Template) templateJSON {
	out := templateJSON{ID: t.ID, Code: t.Code, Channel: t.Channel, Name: t.Name, Status: t.Status,
		ReviewStatus: strOrNil(t.ReviewStatus), ProviderAccountID: strOrNil(t.ProviderAccountID),
		VendorTemplateID: strOrNil(t.VendorTemplateID), SenderProfileKey: strOrNil(t.SenderProfileKey),
		CreatedAt: Timestamp(t.CreatedAt), UpdatedAt: Timestamp(t.UpdatedAt)}
	if t.LatestPublishedVersion > 0 {
		v := t.LatestPublishedVersion
		out.LatestPublishedVersion = &v
	}
	return out
}

func templateVersionBody(v *notify.TemplateVersion) templateVersionJSON {
	return templateVersionJSON{Version: v.Version, Title: strOrNil(v.Title), Text: v.Text, HTML: strOrNil(v.HTML),
		PublishedAt: TimestampPtr(v.PublishedAt), CreatedAt: Timestamp(v.CreatedAt), Locale: strOrNil(v.Locale), LayoutID: strOrNil(v.LayoutID)}
}

type templateIn struct {
	Code              Optional[string] `json:"code"`
	Channel           Optional[string] `json:"channel"`
	Name              Optional[string] `json:"name"`
	Status            Optional[string] `json:"status"`
	ProviderAccountID Optional[string] `json:"providerAccountId"`
	VendorTemplateID  Optional[string] `json:"vendorTemplateId"`
	SenderProfileKey  Optional[string] `json:"senderProfileKey"`
}

// required maps a present field onto a pointer; null is a 400.
func required(field string, o Optional[string]) (*string, error) {
	if !o.Set {
		return nil, nil
	}
	if o.Null {
		return nil, notify.Invalid("%s must be a string", field)
	}
	return &o.Value, nil
}

// clearable maps a present field onto a pointer; null clears it ("").
func clearable(o Optional[string]) *string {
	if !o.Set {
		return nil
	}
	v := o.Value
	if o.Null {
		v = ""
	}
	return &v
}

func (in templateIn) input() (templates.TemplateInput, error) {
	var out templates.TemplateInput
	var err error
	for _, f := range []struct {
		name string
		o    Optional[string]
		dst  **string
	}{{"code", in.Code, &out.Code}, {"channel", in.Channel, &out.Channel}, {"name", in.Name, &out.Name}, {"status", in.Status, &out.Status}} {
		if *f.dst, err = required(f.name, f.o); err != nil {
			return out, err
		}
	}
	out.ProviderAccountID = clearable(in.ProviderAccountID)
	out.VendorTemplateID = clearable(in.VendorTemplateID)
	out.SenderProfileKey = clearable(in.SenderProfileKey)
	return out, nil
}

// createTemplateIn is the create body: no status (a template starts active).
type createTemplateIn struct {
	Code              Optional[string] `json:"code"`
	Channel           Optional[string] `json:"channel"`
	Name              Optional[string] `json:"name"`
	ProviderAccountID Optional[string] `json:"providerAccountId"`
	VendorTemplateID  Optional[string] `json:"vendorTemplateId"`
	SenderProfileKey  Optional[string] `json:"senderProfileKey"`
}

func (a templatesAPI) handleTemplateCreate(c *call) error {
	var in createTemplateIn
	if err := c.decode(&in); err != nil {
		return err
	}
	input, err := templateIn{Code: in.Code, Channel: in.Channel, Name: in.Name, ProviderAccountID: in.ProviderAccountID,
		VendorTemplateID: in.VendorTemplateID, SenderProfileKey: in.SenderProfileKey}.input()
	if err != nil {
		return err
	}
	t, err := a.room.CreateTemplate(c.ctx, c.actor, input)
	if err != nil {
		return err
	}
	return c.ok(http.StatusCreated, map[string]any{"template": templateBody(t)})
}

func (a templatesAPI) handleTemplateList(c *call) error {
	ts, err := a.room.ListTemplates(c.ctx, c.actor)
	if err != nil {
		return err
	}
	out := make([]templateJSON, len(ts))
	for i, t := range ts {
		out[i] = templateBody(t)
	}
	return c.ok(http.StatusOK, map[string]any{"templates": out})
}

func (a templatesAPI) handleTemplateGet(c *call) error {
	v, err := a.room.GetTemplate(c.ctx, c.actor, c.r.PathValue("id"))
	if err != nil {
		return err
	}
	body := templateWithVersionsJSON{templateJSON: templateBody(v.Template), Versions: templateVersionBodies(v.Versions),
		VersionsCursor: encodeCursor(v.Cursor), VersionsHasNext: v.HasNext}
	return c.ok(http.StatusOK, map[string]any{"template": body})
}

func templateVersionBodies(vs []*notify.TemplateVersion) []templateVersionJSON {
	out := make([]templateVersionJSON, len(vs))
	for i, x := range vs {
		out[i] = templateVersionBody(x)
	}
	return out
}

// handleTemplateVersionList pages a template's versions newest first
// (issue 29): {versions, cursor, hasNext}.
func (a templatesAPI) handleTemplateVersionList(c *call) error {
	q := c.r.URL.Query()
	limit, err := intParam(q.Get("limit"), "limit")
	if err != nil {
		return err
	}
	cursor, err := decodeCursor(q.Get("cursor"))
	if err != nil {
		return err
	}
	v, err := a.room.ListTemplateVersions(c.ctx, c.actor, c.r.PathValue("id"), limit, cursor)
	if err != nil {
		return err
	}
	return c.ok(http.StatusOK, map[string]any{"versions": templateVersionBodies(v.Versions), "cursor": encodeCursor(v.Cursor), "hasNext": v.HasNext})
}

func (a templatesAPI) handleTemplateUpdate(c *call) error {
	var in struct {
		Name              Optional[string] `json:"name"`
		Status            Optional[string] `json:"status"`
		ProviderAccountID Optional[string] `json:"providerAccountId"`
		VendorTemplateID  Optional[string] `json:"vendorTemplateId"`
		SenderProfileKey  Optional[string] `json:"senderProfileKey"`
	}
	if err := c.decode(&in); err != nil {
		return err
	}
	input, err := templateIn{Name: in.Name, Status: in.Status, ProviderAccountID: in.ProviderAccountID,
		VendorTemplateID: in.VendorTemplateID, SenderProfileKey: in.SenderProfileKey}.input()
	if err != nil {
		return err
	}
	t, err := a.room.UpdateTemplate(c.ctx, c.actor, c.r.PathValue("id"), input)
	if err != nil {
		return err
	}
	return c.ok(http.StatusOK, map[string]any{"template": templateBody(t)})
}

func (a templatesAPI) handleTemplateVersionCreate(c *call) error {
	var in struct {
		Title Optional[string] `json:"title"`
		Text  Optional[string] `json:"text"`
		HTML  Optional[string] `json:"html"`
		// Issue 21.
		Locale   *string          `json:"locale"`
		LayoutID Optional[string] `json:"layoutId"`
	}
	if err := c.decode(&in); err != nil {
		return err
	}
	text, err := required("text", in.Text)
	if err != nil {
		return err
	}
	v, err := a.room.CreateTemplateVersion(c.ctx, c.actor, c.r.PathValue("id"),
		templates.TemplateVersionInput{Title: clearable(in.Title), Text: text, HTML: clearable(in.HTML), Locale: in.Locale, LayoutID: clearable(in.LayoutID)})
	if err != nil {
		return err
	}
	return c.ok(http.StatusCreated, map[string]any{"version": templateVersionBody(v)})
}

// versionParam is the path's version; anything but a positive number is
// an unknown version.
func versionParam(c *call) (int, error) {
	n, err := strconv.Atoi(c.r.PathValue("version"))
	if err != nil || n < 1 {
		return 0, notify.NotFound("Template version")
	}
	return n, nil
}

func (a templatesAPI) handleTemplateVersionDelete(c *call) error {
	n, err := versionParam(c)
	if err != nil {
		return err
	}
	if err := a.room.DeleteTemplateVersion(c.ctx, c.actor, c.r.PathValue("id"), n); err != nil {
		return err
	}
	return c.noContent()
}

func (a templatesAPI) handleTemplateVersionPublish(c *call) error {
	n, err := versionParam(c)
	if err != nil {
		return err
	}
	v, err := a.room.PublishTemplateVersion(c.ctx, c.actor, c.r.PathValue("id"), n)
	if err != nil {
		return err
	}
	return c.ok(http.StatusOK, map[string]any{"version": templateVersionBody(v)})
}

func (a templatesAPI) handleTemplateReviewStatus(c *call) error {
	var in struct {
		ReviewStatus Optional[string] `json:"reviewStatus"`
	}
	if err := c.decode(&in); err != nil {
		return err
	}
	if !in.ReviewStatus.Set || in.ReviewStatus.Null {
		return notify.Invalid("reviewStatus is required")
	}
	t, err := a.room.SetReviewStatus(c.ctx, c.actor, c.r.PathValue("id"), in.ReviewStatus.Value)
	if err != nil {
		return err
	}
	return c.ok(http.StatusOK, map[string]any{"template": templateBody(t)})
}
