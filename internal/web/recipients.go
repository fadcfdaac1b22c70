package web

import (
	"net/http"
	"net/url"

	"github.com/notifyd/notifyd/internal/categories"
	"github.com/notifyd/notifyd/internal/inbox"
	"github.com/notifyd/notifyd/internal/notify"
	"github.com/notifyd/notifyd/internal/recipients"
)

// recipientPages serve the recipients and categories pages (issue 32,
// item 4): views of the Dashboard API's profiles, consents, preferences
// and categories, with the API's roles (internal/api/recipients.go,
// internal/api/categories.go); editing a profile's name, addresses, zone
// and locale, erasing it, creating and deleting categories, and minting a
// profile's preference link. Each goes through the same room call, and
// the same audit entry, as the API's.
type recipientPages struct{ *Console }

func (c recipientPages) routes() []Route {
	return []Route{
		{Method: "GET", Path: "/recipients", Auth: Member, Roles: notify.RolesAll, h: c.recipientsPage},
		{Method: "GET", Path: "/recipients/{externalId}", Auth: Member, Roles: notify.RolesAll, h: c.recipientPage},
		{Method: "POST", Path: "/recipients/{externalId}/preference-link", Auth: Member, Roles: notify.RolesOperator, h: c.mintLink},
		{Method: "POST", Path: "/recipients/{externalId}", Auth: Member, Roles: notify.RolesOperator, h: c.updateRecipient},
		{Method: "POST", Path: "/recipients/{externalId}/delete", Auth: Member, Roles: notify.RolesAdmin, h: c.deleteRecipient},
		{Method: "GET", Path: "/categories", Auth: Member, Roles: notify.RolesAll, h: c.categoriesPage},
		{Method: "POST", Path: "/categories", Auth: Member, Roles: notify.RolesOperator, h: c.createCategory},
		{Method: "POST", Path: "/categories/{key}/delete", Auth: Member, Roles: notify.RolesAdmin, h: c.deleteCategory},
	}
}

type recipientsData struct {
	Search     string
	Recipients []*notify.Recipient
	Next       string
	First      bool
}

// recipientsPage is the list: newest first, searched by a substring of
// the external id, name, email or phone, 50 a page by the API's cursor.
func (c recipientPages) recipientsPage(x *Ctx) error {
	q := x.R.URL.Query()
	d := recipientsData{Search: q.Get("q"), First: q.Get("cursor") == ""}
	p, err := c.rooms.Recipients.List(x.Context(), recipients.Caller{Actor: x.Actor},
		recipients.Query{Search: d.Search, Cursor: q.Get("cursor")})
	if err != nil {
		return err
	}
	d.Recipients = p.Recipients
	if cur := notify.EncodeCursor(p.Cursor); p.HasNext && cur != nil {
		v := url.Values{"cursor": {*cur}}
		if d.Search != "" {
			v.Set("q", d.Search)
		}
		d.Next = "/recipients?" + v.Encode()
	}
	return x.Render(http.StatusOK, "recipients.html", &Page{Title: "Recipients", Section: "/recipients", Data: d})
}

// prefRowView is one row of a stored preferences table; each cell is
// "on", "off", "required", or "" (no choice: the next rule decides).
type prefRowView struct {
	Name  string
	Cells []string
}

type recipientData struct {
	R        *notify.Recipient
	Consents []*notify.RecipientConsent
	Channels []notify.Channel
	Prefs    []prefRowView
	Link     string
	LinkExp  string
	// Inbox is the newest page of the profile's inbox (issue 33).
	Inbox *inbox.Page
}

func choice(m map[notify.Channel]bool, ch notify.Channel) string {
	on, ok := m[ch]
	switch {
	case !ok:
		return ""
	case on:
		return "on"
	}
	return "off"
}

func (c recipientPages) recipientPage(x *Ctx) error {
	return c.renderRecipient(x, "", "")
}

func (c recipientPages) renderRecipient(x *Ctx, link, exp string) error {
	id := x.R.PathValue("externalId")
	caller := recipients.Caller{Actor: x.Actor}
	r, err := c.rooms.Recipients.Get(x.Context(), caller, id)
	if err != nil {
		return err
	}
	d := recipientData{R: r, Channels: notify.AllChannels, Link: link, LinkExp: exp}
	if d.Inbox, err = c.rooms.Inbox.List(x.Context(), inbox.Reader{WorkspaceID: x.Actor.WorkspaceID, RecipientID: id},
		notify.InboxFilter{}); err != nil {
		return err
	}
	if d.Consents, err = c.rooms.Recipients.Consents(x.Context(), caller, id); err != nil {
		return err
	}
	p, err := c.rooms.Categories.Preferences(x.Context(), categories.Caller{Actor: x.Actor}, id)
	if err != nil {
		return err
	}
	cats, err := c.rooms.Categories.List(x.Context(), categories.Caller{Actor: x.Actor})
	if err != nil {
		return err
	}
	row := prefRowView{Name: "Every category (channel switch)"}
	for _, ch := range d.Channels {
		row.Cells = append(row.Cells, choice(p.Channels, ch))
	}
	d.Prefs = append(d.Prefs, row)
	for _, cat := range cats {
		row := prefRowView{Name: cat.Name + " (" + cat.Key + ")"}
		for _, ch := range d.Channels {
			if cat.Required {
				row.Cells = append(row.Cells, "required")
				continue
			}
			row.Cells = append(row.Cells, choice(p.Categories[cat.Key], ch))
		}
		d.Prefs = append(d.Prefs, row)
	}
	return x.Render(http.StatusOK, "recipient.html", &Page{Title: "Recipient " + r.ExternalID, Section: "/recipients", Data: d})
}

// mintLink mints the profile's preference link, as POST
// /v1/recipients/{externalId}/preference-link does (audited), and shows
// it on the profile's page.
func (c recipientPages) mintLink(x *Ctx) error {
	link, exp, err := c.rooms.Categories.PreferenceLink(x.Context(), categories.Caller{Actor: x.Actor}, x.R.PathValue("externalId"))
	if err != nil {
		return err
	}
	return c.renderRecipient(x, link, exp.UTC().Format("2006-01-02 15:04Z"))
}

func (c recipientPages) categoriesPage(x *Ctx) error {
	cats, err := c.rooms.Categories.List(x.Context(), categories.Caller{Actor: x.Actor})
	if err != nil {
		return err
	}
	return x.Render(http.StatusOK, "categories.html", &Page{Title: "Categories", Section: "/categories", Data: cats})
}

// formField is a posted field, nil when the form did not send it.
func formField(x *Ctx, name string) *string {
	if _, ok := x.R.PostForm[name]; !ok {
		return nil
	}
	v := x.R.PostForm.Get(name)
	return &v
}

// refused turns a 400 of a form's room call into an error flash on the
// page at path; any other error is the page's.
func (c recipientPages) refused(x *Ctx, err error, path, what string) error {
	if e := problemOf(c.log, x.R, err); e.Status() == http.StatusBadRequest || e.Status() == http.StatusConflict {
		return x.Redirect(path, Flash{Kind: "error", Text: what + ": " + e.Detail})
	}
	return err
}

// updateRecipient saves the profile form (PATCH: the fields it shows).
func (c recipientPages) updateRecipient(x *Ctx) error {
	id := x.R.PathValue("externalId")
	in := recipients.Fields{Name: formField(x, "name"), Email: formField(x, "email"), Phone: formField(x, "phone"),
		TimeZone: formField(x, "timeZone"), Locale: formField(x, "locale")}
	if _, err := c.rooms.Recipients.Patch(x.Context(), recipients.Caller{Actor: x.Actor}, id, in); err != nil {
		return c.refused(x, err, "/recipients/"+url.PathEscape(id), "Not saved")
	}
	return x.Redirect("/recipients/"+url.PathEscape(id), Flash{Kind: "info", Text: "Profile saved."})
}

// deleteRecipient erases the profile, its preferences and consents.
func (c recipientPages) deleteRecipient(x *Ctx) error {
	if err := c.rooms.Recipients.Delete(x.Context(), recipients.Caller{Actor: x.Actor}, x.R.PathValue("externalId")); err != nil {
		return err
	}
	return x.Redirect("/recipients", Flash{Kind: "info", Text: "Profile erased."})
}

// createCategory creates a category from the form: key, name,
// description, required, advertising.
func (c recipientPages) createCategory(x *Ctx) error {
	required, advertising := x.R.PostForm.Get("required") == "on", x.R.PostForm.Get("advertising") == "on"
	in := categories.Fields{Name: formField(x, "name"), Description: formField(x, "description"), Required: &required,
		Advertising: &advertising}
	cat, err := c.rooms.Categories.Create(x.Context(), categories.Caller{Actor: x.Actor}, x.R.PostForm.Get("key"), in)
	if err != nil {
		return c.refused(x, err, "/categories", "Not created")
	}
	return x.Redirect("/categories", Flash{Kind: "info", Text: "Category " + cat.Key + " created."})
}

// deleteCategory deletes a category and the choices made for it.
func (c recipientPages) deleteCategory(x *Ctx) error {
	if err := c.rooms.Categories.Delete(x.Context(), categories.Caller{Actor: x.Actor}, x.R.PathValue("key")); err != nil {
		return err
	}
	return x.Redirect("/categories", Flash{Kind: "info", Text: "Category deleted."})
}
