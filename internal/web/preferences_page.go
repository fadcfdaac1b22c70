package web

import (
	"errors"
	"fmt"
	"html/template"
	"mime"
	"net/http"
	"net/url"

	"github.com/notifyd/notifyd/internal/categories"
	"github.com/notifyd/notifyd/internal/notify"
)

// The recipient's preference page (issue 32, item 4; docs/DECISIONS.md
// "Preference page"): GET shows the person's categories × channels and
// changes nothing (mail scanners follow links); POST saves the form, or,
// as the RFC 8058 one-click POST of a category mail's List-Unsubscribe,
// turns that category off on email. The token in the query is the only
// authorization: no cookie, so a cross-site form cannot act without it.

type preferencePages struct{ *Console }

func (c preferencePages) routes() []Route {
	return []Route{
		{Method: "GET", Path: categories.PagePath, Auth: Public, Raw: http.HandlerFunc(c.handlePage)},
		{Method: "POST", Path: categories.PagePath, Auth: Public, Raw: http.HandlerFunc(c.handlePost)},
	}
}

var preferencePage = template.Must(template.New("prefs").Parse(`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="robots" content="noindex, nofollow"><title>{{.Title}}</title>
<style>body{font-family:system-ui,sans-serif;max-width:48rem;margin:3rem auto;padding:0 1rem}table{border-collapse:collapse;margin:1rem 0}th,td{padding:.4rem .7rem;border-bottom:1px solid #ddd;text-align:center}tbody th{text-align:left;font-weight:normal}small{color:#555}button{font-size:1.1rem;padding:.5rem 1.3rem}#saved{color:#176c2c}</style>
</head><body><main><h1>{{.Title}}</h1>
{{if .Saved}}<p id="saved" role="status">Your preferences are saved.</p>{{end}}
<p id="message">{{.Message}}</p>
{{if .Rows}}<form method="post" action="{{.Action}}">
<table><thead><tr><th scope="col">Kind of message</th>{{range .Channels}}<th scope="col">{{.}}</th>{{end}}</tr></thead>
<tbody>{{range .Rows}}<tr><th scope="row">{{.Name}}{{if .Description}}<br><small>{{.Description}}</small>{{end}}{{if .Required}}<br><small>Always sent: you cannot turn these off.</small>{{end}}</th>
{{range .Cells}}<td><input type="checkbox" name="{{.Field}}" aria-label="{{.Label}}"{{if .On}} checked{{end}}{{if .Disabled}} disabled{{end}}></td>{{end}}</tr>
{{end}}</tbody></table>
<input type="hidden" name="save" value="1"><button type="submit">Save preferences</button></form>{{end}}
</main></body></html>
`))

type prefCell struct {
	Field, Label string
	On, Disabled bool
}

type prefRow struct {
	Name, Description string
	Required          bool
	Cells             []prefCell
}

type prefPageData struct {
	Title, Message string
	Saved          bool
	Action         string
	Channels       []string
	Rows           []prefRow
}

// channelLabels name the channels for a person.
var channelLabels = map[notify.Channel]string{
	notify.ChannelSMS: "SMS", notify.ChannelAlimTalk: "KakaoTalk", notify.ChannelEmail: "Email",
	notify.ChannelPush: "Push", notify.ChannelChatAWebhook: "Chat A", notify.ChannelChatBWebhook: "Chat B",
	notify.ChannelChatABot: "Chat A bot", notify.ChannelChatBBot: "Chat B bot",
	notify.ChannelInApp: "In the app",
}

func channelLabel(ch notify.Channel) string {
	if l, ok := channelLabels[ch]; ok {
		return l
	}
	return string(ch)
}

// preferencePageOf is the page of a view, with its status: 200 shown,
// 400 invalid, 410 expired, 404 profile gone (the confirmation page's).
func preferencePageOf(v categories.PageView, token string) (int, prefPageData) {
	switch v.State {
	case categories.PageExpired:
		return http.StatusGone, prefPageData{Title: "Link expired",
			Message: "This preferences link has expired. Please use the link in a more recent message."}
	case categories.PageGone:
		return http.StatusNotFound, prefPageData{Title: "Preferences not found",
			Message: "There are no preferences for this link any more."}
	case categories.PageShown:
	default:
		return http.StatusBadRequest, prefPageData{Title: "Link invalid",
			Message: "This preferences link is invalid. Please use the link from the most recent message you received."}
	}
	d := prefPageData{Title: "Your notification preferences", Saved: v.Saved,
		Action: categories.PagePath + "?token=" + url.QueryEscape(token)}
	if v.Name != "" {
		d.Title = v.Name + ", your notification preferences"
	}
	for _, ch := range v.Channels {
		d.Channels = append(d.Channels, channelLabel(ch))
	}
	for _, cat := range v.Categories {
		row := prefRow{Name: cat.Name, Description: cat.Description, Required: cat.Required}
		for _, cell := range cat.Cells {
			row.Cells = append(row.Cells, prefCell{Field: cat.Key + ":" + string(cell.Channel),
				Label: cat.Name + " by " + channelLabel(cell.Channel), On: cell.On, Disabled: cat.Required})
		}
		d.Rows = append(d.Rows, row)
	}
	switch {
	case len(v.Channels) == 0 || len(v.Categories) == 0:
		d.Message = "There is nothing to choose here yet."
		d.Rows = nil
	default:
		d.Message = "Tick the messages you want to receive on each channel, then save."
	}
	return http.StatusOK, d
}

func writePreferencePage(w http.ResponseWriter, r *http.Request, status int, d prefPageData) {
	publicHeaders(w)
	w.WriteHeader(status)
	if r.Method != http.MethodHead {
		_ = preferencePage.Execute(w, d)
	}
}

var pagePreferencesUnavailable = pageData{Title: "Preferences unavailable", Message: "Something went wrong. Please try again later."}

// handlePage is GET /v1/preferences/page?token=T: it renders and
// changes nothing.
func (c preferencePages) handlePage(w http.ResponseWriter, r *http.Request) {
	token := r.URL.Query().Get("token")
	v, err := c.rooms.Categories.PageLanding(r.Context(), token)
	c.answer(w, r, v, err, token)
}

// answer writes the page of v, or the error page of err.
func (c preferencePages) answer(w http.ResponseWriter, r *http.Request, v categories.PageView, err error, token string) {
	if err != nil {
		c.log.ErrorContext(r.Context(), "preference page", "err", err)
		writePage(w, r, http.StatusInternalServerError, pagePreferencesUnavailable)
		return
	}
	status, d := preferencePageOf(v, token)
	writePreferencePage(w, r, status, d)
}

// handlePost is POST /v1/preferences/page?token=T: the page's form
// (save=1 and one field "category:channel" per box ticked) or the RFC
// 8058 one-click (List-Unsubscribe=One-Click, the category in the query).
// Anything else changes nothing and shows the page.
func (c preferencePages) handlePost(w http.ResponseWriter, r *http.Request) {
	if !readPreferenceForm(w, r) {
		return
	}
	q := r.URL.Query()
	token := q.Get("token")
	var v categories.PageView
	var err error
	switch {
	case r.PostForm.Get("List-Unsubscribe") == "One-Click" && q.Get("category") != "":
		v, err = c.rooms.Categories.PageOptOut(r.Context(), token, q.Get("category"))
	case r.PostForm.Get("save") == "1":
		on := map[string]bool{}
		for k, vals := range r.PostForm {
			on[k] = len(vals) > 0
		}
		v, err = c.rooms.Categories.PageSave(r.Context(), token, on)
	default:
		v, err = c.rooms.Categories.PageLanding(r.Context(), token)
	}
	c.answer(w, r, v, err, token)
}

// readPreferenceForm is readPublicForm, but a multipart body is parsed
// too (same bound): RFC 8058 says mailbox providers should post the
// one-click form as multipart/form-data.
func readPreferenceForm(w http.ResponseWriter, r *http.Request) bool {
	if mt, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type")); mt != "multipart/form-data" {
		return readPublicForm(w, r, "preferences")
	}
	r.Body = http.MaxBytesReader(w, r.Body, maxPublicForm)
	err := r.ParseMultipartForm(maxPublicForm)
	var mbe *http.MaxBytesError
	switch {
	case errors.As(err, &mbe):
		writePage(w, r, http.StatusRequestEntityTooLarge, pageData{Title: "Request too large",
			Message: fmt.Sprintf("The preferences form must be at most %d bytes.", mbe.Limit)})
	case err != nil:
		writePage(w, r, http.StatusBadRequest, pageData{Title: "Bad request", Message: "The preferences form could not be read."})
	default:
		return true // ParseMultipartForm fills r.PostForm
	}
	return false
}
