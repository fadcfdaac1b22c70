package web

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"html/template"
	"io/fs"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/notifyd/notifyd/internal/notify"
)

// Section is one entry of the console's navigation (issue 18's list).
type Section struct {
	Name, Path string
}

// Sections is the navigation, in order. A section whose GET path no page
// group serves answers a "not built yet" page.
var Sections = []Section{
	{"Overview", "/"},
	{"Messages", "/messages"},
	{"Providers & routes", "/providers"},
	{"Templates", "/templates"},
	{"API keys", "/api-keys"},
	{"Members", "/members"},
	{"Limits", "/limits"},
	{"Webhooks", "/webhooks"},
	{"Suppressions", "/suppressions"},
	{"Jobs", "/jobs"},
	{"Dead letters", "/dead-letters"},
	{"Newsletter", "/newsletter"},
	{"Recipients", "/recipients"},
	{"Categories", "/categories"},
	{"Inbox", "/inbox"},
	{"Workflows", "/workflows"},
	{"Audit log", "/audit-log"},
}

// Flash is a one-time message shown on the next page (after a redirect).
type Flash struct {
	Kind string // "info" or "error"
	Text string
}

// Page is what every console template gets: the layout reads Title,
// Section, Actor, CSRF, Flash and Problem; the page's own template reads
// Data.
type Page struct {
	Title string
	// Section is the nav entry shown as current (its Path).
	Section string
	Flash   []Flash
	// Problem is a service error to show (status, title, detail).
	Problem *notify.Error
	Data    any

	x *Ctx
}

// CSRF is the token every POST form carries in the field "csrf"
// ({{template "csrf" .}} writes the hidden input).
func (p *Page) CSRF() string { return p.x.CSRF }

// Email and Role describe the logged-in member ("" when none).
func (p *Page) Email() string {
	if p.x.Actor == nil {
		return ""
	}
	return p.x.Actor.Email
}

func (p *Page) Role() string {
	if p.x.Actor == nil {
		return ""
	}
	return string(p.x.Actor.Role)
}

// LoggedIn reports whether a member is logged in with a workspace.
func (p *Page) LoggedIn() bool { return p.x.Actor != nil && p.x.Actor.WorkspaceID != "" }

// Allowed reports whether the member's role may use the console route
// "METHOD /path" (as registered): pages show a write control only when
// its route allows the role, from the same table that refuses it.
func (p *Page) Allowed(pattern string) bool {
	roles, ok := p.x.c.allowed[pattern]
	return ok && p.x.Actor != nil && p.x.Actor.Role.Allowed(roles)
}

// Sections is the navigation.
func (p *Page) Sections() []Section { return Sections }

// Render writes the page template name (a file of templates/) inside the
// layout with status.
func (x *Ctx) Render(status int, name string, p *Page) error {
	t := x.c.pages[name]
	if t == nil {
		panic("web: no template " + name)
	}
	p.x = x
	if p.Section == "" && x.route.Method == "GET" {
		p.Section = x.route.Path
	}
	p.Flash = append(takeFlash(x), p.Flash...)
	var buf bytes.Buffer
	if err := t.ExecuteTemplate(&buf, "layout", p); err != nil {
		return err
	}
	x.W.Header().Set("Content-Type", "text/html; charset=utf-8")
	x.W.WriteHeader(status)
	if x.R.Method != http.MethodHead {
		_, _ = x.W.Write(buf.Bytes())
	}
	return nil
}

// Redirect answers 303 See Other to path with flash messages for the next
// page (post/redirect/get).
func (x *Ctx) Redirect(path string, flash ...Flash) error {
	if len(flash) > 0 {
		b, _ := json.Marshal(flash)
		x.c.setCookie(x.W, flashCookie, base64.RawURLEncoding.EncodeToString(b), time.Now().Add(time.Minute))
	}
	http.Redirect(x.W, x.R, path, http.StatusSeeOther)
	return nil
}

// takeFlash reads and clears the flash cookie.
func takeFlash(x *Ctx) []Flash {
	v := x.c.cookie(x.R, flashCookie)
	if v == "" {
		return nil
	}
	x.c.setCookie(x.W, flashCookie, "", time.Unix(0, 0))
	b, err := base64.RawURLEncoding.DecodeString(v)
	var out []Flash
	if err != nil || json.Unmarshal(b, &out) != nil || len(out) > 5 {
		return nil
	}
	return out
}

// Pager is the list paging and filter helper: the current filters (the
// query string) and the link to the next page.
type Pager struct {
	query url.Values
	// Next is the next page's URL ("" on the last page).
	Next string
}

// NewPager reads the list filters of r's query string.
func NewPager(r *http.Request) *Pager { return &Pager{query: r.URL.Query()} }

// Get is a filter's value.
func (p *Pager) Get(name string) string { return p.query.Get(name) }

// SetNext links the next page: the same path and filters with cursor.
func (p *Pager) SetNext(path string, cursor *notify.Cursor, hasNext bool) {
	if !hasNext || cursor == nil {
		return
	}
	q := url.Values{}
	for k, v := range p.query {
		q[k] = v
	}
	q.Set("cursor", *notify.EncodeCursor(cursor))
	p.Next = path + "?" + q.Encode()
}

// Paged reports whether this is not the first page.
func (p *Pager) Paged() bool { return p.query.Get("cursor") != "" }

// funcs are the template helpers every page may use.
var funcs = template.FuncMap{
	"time": func(t time.Time) string {
		if t.IsZero() {
			return ""
		}
		return t.UTC().Format("2006-01-02 15:04:05Z")
	},
	"timeptr": func(t *time.Time) string {
		if t == nil {
			return ""
		}
		return t.UTC().Format("2006-01-02 15:04:05Z")
	},
	"ms": func(a, b time.Time) int64 { return b.Sub(a).Milliseconds() },
	// prettyJSON indents stored JSON text; other text stays as it is.
	"prettyJSON": func(s string) string {
		var buf bytes.Buffer
		if json.Indent(&buf, []byte(s), "", "  ") != nil {
			return s
		}
		return buf.String()
	},
}

// parsePages parses each page template of templates/ with the layout.
func parsePages() map[string]*template.Template {
	base := template.Must(template.New("layout.html").Funcs(funcs).ParseFS(templateFS, "templates/layout.html"))
	entries, err := fs.ReadDir(templateFS, "templates")
	if err != nil {
		panic(err)
	}
	out := map[string]*template.Template{}
	for _, e := range entries {
		if e.Name() == "layout.html" || !strings.HasSuffix(e.Name(), ".html") {
			continue
		}
		out[e.Name()] = template.Must(template.Must(base.Clone()).ParseFS(templateFS, "templates/"+e.Name()))
	}
	return out
}

// notBuilt is the page of a section not built yet.
func (c *Console) notBuilt(s Section) func(x *Ctx) error {
	return func(x *Ctx) error {
		return x.Render(http.StatusOK, "notbuilt.html", &Page{Title: s.Name, Data: s})
	}
}
