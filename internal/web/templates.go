package web

import (
	"net/http"
	"strconv"
	"strings"

	"github.com/notifyd/notifyd/internal/notify"
	"github.com/notifyd/notifyd/internal/providers"
	"github.com/notifyd/notifyd/internal/templates"
)

// templatePages serve the template pages.
type templatePages struct{ *Console }

// routes mirror the Dashboard API's template routes and roles
// (API-DECISIONS section 4).
func (c templatePages) routes() []Route {
	all, op, admin := notify.RolesAll, notify.RolesOperator, notify.RolesAdmin
	return []Route{
		{Method: "GET", Path: "/templates", Auth: Member, Roles: all, h: c.templatesPage},
		{Method: "POST", Path: "/templates", Auth: Member, Roles: op, h: c.createTemplate},
		{Method: "GET", Path: "/templates/{id}", Auth: Member, Roles: all, h: c.templatePage},
		{Method: "POST", Path: "/templates/{id}", Auth: Member, Roles: op, h: c.updateTemplate},
		{Method: "GET", Path: "/templates/{id}/compare", Auth: Member, Roles: all, h: c.compareVersions},
		// A preview changes nothing (all roles, as POST /v1/templates/{id}/preview).
		{Method: "POST", Path: "/templates/{id}/preview", Auth: Member, Roles: all, h: c.previewTemplate},
		{Method: "POST", Path: "/templates/{id}/versions", Auth: Member, Roles: op, h: c.createTemplateVersion},
		{Method: "POST", Path: "/templates/{id}/versions/{version}/publish", Auth: Member, Roles: op, h: c.publishTemplateVersion},
		{Method: "POST", Path: "/templates/{id}/versions/{version}/delete", Auth: Member, Roles: op, h: c.deleteTemplateVersion},
		{Method: "POST", Path: "/templates/{id}/review-status", Auth: Member, Roles: admin, h: c.setReviewStatus},
	}
}

type templatesData struct {
	Templates []*notify.Template
	Channels  []notify.Channel
	// Form is the create form's values, shown again with a problem.
	Form map[string]string
}

func (c templatePages) templatesPage(x *Ctx) error {
	return c.renderTemplates(x, http.StatusOK, nil, nil)
}

func (c templatePages) renderTemplates(x *Ctx, status int, problem *notify.Error, form map[string]string) error {
	ts, err := c.rooms.Templates.ListTemplates(x.Context(), x.Actor)
	if err != nil {
		return err
	}
	return x.Render(status, "templates.html", &Page{Title: "Templates", Section: "/templates", Problem: problem,
		Data: templatesData{Templates: ts, Channels: notify.AllChannels, Form: form}})
}

// formPtr is a form field as a service input pointer: nil when the form
// does not carry the field at all.
func formPtr(x *Ctx, name string) *string {
	if _, ok := x.R.PostForm[name]; !ok {
		return nil
	}
	v := x.R.PostFormValue(name)
	return &v
}

func (c templatePages) createTemplate(x *Ctx) error {
	in := templates.TemplateInput{Code: formPtr(x, "code"), Channel: formPtr(x, "channel"), Name: formPtr(x, "name")}
	t, err := c.rooms.Templates.CreateTemplate(x.Context(), x.Actor, in)
	if err != nil {
		return c.again(x, err, func(status int, e *notify.Error) error {
			return c.renderTemplates(x, status, e, map[string]string{"code": x.R.PostFormValue("code"),
				"channel": x.R.PostFormValue("channel"), "name": x.R.PostFormValue("name")})
		})
	}
	return x.Redirect("/templates/"+t.ID, Flash{Kind: "info", Text: "Template created. Add its first version below."})
}

type templateData struct {
	*templates.TemplateView
	// Latest is the newest version (nil when none): the new-version form
	// starts from its content.
	Latest *notify.TemplateVersion
	// Providers are the workspace's providers of the template's channel
	// (the binding choices).
	Providers    []*providers.ProviderView
	Statuses     []string
	ReviewValues []string
	// AlimTalk is true for msgr_alimtalk (messenger review applies).
	AlimTalk bool
	// Preview is the rendered preview (nil before one is asked for);
	// PreviewForm the preview form's values, shown again.
	Preview     *templates.Preview
	PreviewForm map[string]string
}

func (c templatePages) templatePage(x *Ctx) error {
	return c.renderTemplate(x, http.StatusOK, nil)
}

func (c templatePages) renderTemplate(x *Ctx, status int, problem *notify.Error) error {
	return c.renderTemplateWith(x, status, problem, nil, nil)
}

func (c templatePages) renderTemplateWith(x *Ctx, status int, problem *notify.Error, preview *templates.Preview, form map[string]string) error {
	v, err := c.rooms.Templates.TemplateVersionSummaries(x.Context(), x.Actor, x.R.PathValue("id"))
	if err != nil {
		return err
	}
	d := templateData{TemplateView: v, Statuses: []string{templates.TemplateActive, templates.TemplateInactive},
		ReviewValues: []string{templates.ReviewPending, templates.ReviewApproved, templates.ReviewRejected},
		AlimTalk:     v.Template.Channel == notify.ChannelAlimTalk, Preview: preview, PreviewForm: form}
	if len(v.Versions) > 0 {
		// The table shows summaries; the form needs the newest's bodies.
		if _, d.Latest, err = c.rooms.Templates.GetTemplateVersion(x.Context(), x.Actor, v.Template.ID, v.Versions[0].Version); err != nil {
			return err
		}
	}
	ps, err := c.rooms.Providers.ListProviders(x.Context(), x.Actor)
	if err != nil {
		return err
	}
	for _, p := range ps {
		if p.Account.Channel == v.Template.Channel {
			d.Providers = append(d.Providers, p)
		}
	}
	return x.Render(status, "template.html", &Page{Title: "Template " + v.Template.Name, Section: "/templates", Problem: problem, Data: d})
}

// updateTemplate changes name, status and the vendor binding (PATCH
// /v1/templates/{id}); code and channel never change.
func (c templatePages) updateTemplate(x *Ctx) error {
	in := templates.TemplateInput{Name: formPtr(x, "name"), Status: formPtr(x, "status"), ProviderAccountID: formPtr(x, "providerAccountId"),
		VendorTemplateID: formPtr(x, "vendorTemplateId"), SenderProfileKey: formPtr(x, "senderProfileKey")}
	id := x.R.PathValue("id")
	if _, err := c.rooms.Templates.UpdateTemplate(x.Context(), x.Actor, id, in); err != nil {
		return c.again(x, err, func(status int, e *notify.Error) error { return c.renderTemplate(x, status, e) })
	}
	return x.Redirect("/templates/"+id, Flash{Kind: "info", Text: "Template saved."})
}

// createTemplateVersion adds a draft version (edit = a new version).
func (c templatePages) createTemplateVersion(x *Ctx) error {
	id := x.R.PathValue("id")
	in := templates.TemplateVersionInput{Title: formPtr(x, "title"), Text: formPtr(x, "text"), HTML: formPtr(x, "html")}
	v, err := c.rooms.Templates.CreateTemplateVersion(x.Context(), x.Actor, id, in)
	if err != nil {
		return c.again(x, err, func(status int, e *notify.Error) error { return c.renderTemplate(x, status, e) })
	}
	return x.Redirect("/templates/"+id, Flash{Kind: "info", Text: "Version " + strconv.Itoa(v.Version) + " created (a draft until published)."})
}

// previewTemplate renders a version with sample variables (POST
// /v1/templates/{id}/preview) and shows the template page with the result.
// Variables are key=value lines (spaces around both trimmed); version and locale are optional.
func (c templatePages) previewTemplate(x *Ctx) error {
	form := map[string]string{"variables": x.R.PostFormValue("variables"),
		"version": x.R.PostFormValue("version"), "locale": x.R.PostFormValue("locale")}
	in := templates.PreviewInput{Variables: map[string]string{}}
	again := func(err error) error {
		return c.again(x, err, func(status int, e *notify.Error) error {
			return c.renderTemplateWith(x, status, e, nil, form)
		})
	}
	for _, line := range strings.Split(form["variables"], "\n") {
		line = strings.TrimSpace(line)
		if line == "" {
			continue
		}
		k, v, ok := strings.Cut(line, "=")
		if k = strings.TrimSpace(k); !ok || k == "" {
			return again(notify.Invalid("variables are key=value lines"))
		}
		in.Variables[k] = strings.TrimSpace(v)
	}
	if s := strings.TrimSpace(form["version"]); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil {
			return again(notify.Invalid("version must be a positive integer"))
		}
		in.Version = &n
	}
	if s := strings.TrimSpace(form["locale"]); s != "" {
		in.Locale = &s
	}
	p, err := c.rooms.Templates.PreviewTemplate(x.Context(), x.Actor, x.R.PathValue("id"), in)
	if err != nil {
		return again(err)
	}
	return c.renderTemplateWith(x, http.StatusOK, nil, p, form)
}

// versionNumber is a path's version; anything but a positive number is
// unknown, as in the API.
func versionNumber(s string) (int, error) {
	n, err := strconv.Atoi(s)
	if err != nil || n < 1 {
		return 0, notify.NotFound("Template version")
	}
	return n, nil
}

func (c templatePages) publishTemplateVersion(x *Ctx) error {
	id := x.R.PathValue("id")
	n, err := versionNumber(x.R.PathValue("version"))
	if err != nil {
		return err
	}
	if _, err := c.rooms.Templates.PublishTemplateVersion(x.Context(), x.Actor, id, n); err != nil {
		return err
	}
	return x.Redirect("/templates/"+id, Flash{Kind: "info", Text: "Version " + strconv.Itoa(n) + " is published."})
}

// deleteTemplateVersion deletes a version no send uses (DELETE
// /v1/templates/{id}/versions/{version}); a refusal is shown on the page.
func (c templatePages) deleteTemplateVersion(x *Ctx) error {
	id := x.R.PathValue("id")
	n, err := versionNumber(x.R.PathValue("version"))
	if err != nil {
		return err
	}
	if err := c.rooms.Templates.DeleteTemplateVersion(x.Context(), x.Actor, id, n); err != nil {
		return c.again(x, err, func(status int, e *notify.Error) error { return c.renderTemplate(x, status, e) })
	}
	return x.Redirect("/templates/"+id, Flash{Kind: "info", Text: "Version " + strconv.Itoa(n) + " deleted."})
}

// setReviewStatus records the messenger vendor's review result of a
// msgr_alimtalk template (PUT /v1/templates/{id}/review-status).
func (c templatePages) setReviewStatus(x *Ctx) error {
	id := x.R.PathValue("id")
	if _, err := c.rooms.Templates.SetReviewStatus(x.Context(), x.Actor, id, x.R.PostFormValue("reviewStatus")); err != nil {
		return c.again(x, err, func(status int, e *notify.Error) error { return c.renderTemplate(x, status, e) })
	}
	return x.Redirect("/templates/"+id, Flash{Kind: "info", Text: "Review status saved."})
}

type compareData struct {
	Template *notify.Template
	Versions []*notify.TemplateVersion
	// Left and Right are the versions shown side by side.
	Left, Right *notify.TemplateVersion
}

// compareSide is one column of the side-by-side view.
type compareSide struct {
	Name string // "left" or "right"
	V    *notify.TemplateVersion
}

// Sides are the two columns, left first.
func (d compareData) Sides() []compareSide {
	return []compareSide{{"left", d.Left}, {"right", d.Right}}
}

// compareVersions shows two versions' bodies side by side (?a=&b=;
// by default the two newest).
func (c templatePages) compareVersions(x *Ctx) error {
	v, err := c.rooms.Templates.TemplateVersionSummaries(x.Context(), x.Actor, x.R.PathValue("id"))
	if err != nil {
		return err
	}
	d := compareData{Template: v.Template, Versions: v.Versions}
	// pick reads the bodies of the two versions shown, and only those.
	pick := func(param string, def int) (*notify.TemplateVersion, error) {
		s := strings.TrimSpace(x.R.URL.Query().Get(param))
		n := 0
		if s == "" {
			if def >= len(v.Versions) {
				return nil, nil
			}
			n = v.Versions[def].Version
		} else if n, err = versionNumber(s); err != nil {
			return nil, err
		}
		_, tv, err := c.rooms.Templates.GetTemplateVersion(x.Context(), x.Actor, v.Template.ID, n)
		return tv, err
	}
	// Versions are newest first: the older one on the left by default.
	if d.Left, err = pick("a", 1); err != nil {
		return err
	}
	if d.Right, err = pick("b", 0); err != nil {
		return err
	}
	return x.Render(http.StatusOK, "template_compare.html", &Page{Title: "Compare versions of " + v.Template.Name, Section: "/templates", Data: d})
}
