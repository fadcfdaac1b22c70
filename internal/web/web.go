// Package web is the browser side of notifyd: the web console (issue 18)
// and the public HTML pages (OTP link, unsubscribe). Pages are
// server-rendered html/template with a little same-origin JavaScript;
// templates and assets are embedded (go:embed), so the binary is the
// whole set-up. The console calls the service layer with the member's
// role, never the store: every console route is one entry of the route
// table (Routes), whose roles a test checks. See docs/CONSOLE.md.
package web

import (
	"context"
	"embed"
	"errors"
	"html/template"
	"io/fs"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"github.com/notifyd/notifyd/internal/notify"
	"github.com/notifyd/notifyd/internal/redact"
	"github.com/notifyd/notifyd/internal/rooms"
	"github.com/notifyd/notifyd/internal/usecase"
)

//go:embed templates/*.html
var templateFS embed.FS

//go:embed static
var staticFS embed.FS

// Options configure the console.
type Options struct {
	// Rooms are the use cases whose pages the console serves.
	Rooms rooms.Set
	// BaseURL is the public base URL; https makes the cookies Secure and
	// __Host- named.
	BaseURL string
	// LoginKey signs the login form's tokens (LoginKeyLabel derives it
	// from the master key); empty, a random key of this console's own.
	LoginKey []byte
	Logger   *slog.Logger
	// ClientAddr is the address the login throttle counts a request
	// under: the API's (trusted proxies), so both logins count alike.
	ClientAddr func(*http.Request) string
}

// Console serves the console and the public pages.
type Console struct {
	rooms      rooms.Set
	baseURL    string // public base URL (a campaign's unsubscribe links)
	log        *slog.Logger
	secure     bool
	loginKey   []byte
	clientAddr func(*http.Request) string
	pages      map[string]*template.Template
	table      []Route                  // routes() and the sections not built yet
	allowed    map[string][]notify.Role // "METHOD /path" -> roles, for Page.Allowed
}

// Auth says what a console route needs of its caller.
type Auth int

const (
	// Public routes need nothing (login form, assets, public pages).
	Public Auth = iota
	// Session routes need a logged-in user, workspace or not
	// (workspace selection, logout).
	Session
	// Member routes need a selected workspace and a role in Roles.
	Member
)

// Route is one entry of the console's route table.
type Route struct {
	Method, Path string
	Auth         Auth
	Roles        []notify.Role // Member routes: the roles allowed
	// Raw routes write their own answer (public pages, assets): no
	// session lookup, no CSRF check, no console security headers.
	Raw http.Handler
	h   func(x *Ctx) error
}

// Pattern is the route's ServeMux pattern.
func (rt Route) Pattern() string { return rt.Method + " " + rt.Path }

// New builds the console.
func New(o Options) *Console {
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	if o.ClientAddr == nil {
		o.ClientAddr = func(r *http.Request) string { return r.RemoteAddr }
	}
	if len(o.LoginKey) == 0 {
		o.LoginKey = []byte(randomToken())
	}
	c := &Console{rooms: o.Rooms, baseURL: o.BaseURL, log: o.Logger, secure: strings.HasPrefix(strings.ToLower(o.BaseURL), "https://"),
		loginKey: o.LoginKey, clientAddr: o.ClientAddr, pages: parsePages(), allowed: map[string][]notify.Role{}}
	c.table = c.routes()
	have := map[string]bool{}
	for _, rt := range c.table {
		have[rt.Pattern()] = true
	}
	// A nav section no group serves yet answers a short page.
	for _, s := range Sections {
		path := s.Path
		if path == "/" {
			path = "/{$}" // "/" alone would take every path the API does not
		}
		if rt := (Route{Method: "GET", Path: path, Auth: Member, Roles: notify.RolesAll, h: c.notBuilt(s)}); !have[rt.Pattern()] {
			c.table = append(c.table, rt)
		}
	}
	for _, rt := range c.table {
		c.allowed[rt.Pattern()] = rt.Roles
	}
	return c
}

// Routes is the route table (for the role test).
func (c *Console) Routes() []Route { return c.table }

// Handlers are the console's and public pages' handlers by ServeMux
// pattern, for the root mux (server.Options.Extra).
func (c *Console) Handlers() map[string]http.Handler {
	out := make(map[string]http.Handler, len(c.table))
	for _, rt := range c.table {
		out[rt.Pattern()] = c.wrap(rt)
	}
	return out
}

// staticHandler serves the embedded assets under /static/: files only,
// a directory (/static/ itself) is 404, not a listing.
func staticHandler() http.Handler {
	sub, err := fs.Sub(staticFS, "static")
	if err != nil {
		panic(err)
	}
	files := http.StripPrefix("/static/", http.FileServerFS(filesOnly{sub}))
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("X-Content-Type-Options", "nosniff")
		w.Header().Set("Cache-Control", "public, max-age=3600")
		files.ServeHTTP(w, r)
	})
}

// filesOnly is a file system whose directories do not exist, so that
// http.FileServer neither lists one nor serves its index.html.
type filesOnly struct{ fs.FS }

func (f filesOnly) Open(name string) (fs.File, error) {
	file, err := f.FS.Open(name)
	if err != nil {
		return nil, err
	}
	if st, err := file.Stat(); err != nil || st.IsDir() {
		_ = file.Close()
		return nil, fs.ErrNotExist
	}
	return file, nil
}

// staticRoutes serve the embedded assets.
func staticRoutes() []Route {
	return []Route{{Method: "GET", Path: "/static/", Auth: Public, Raw: staticHandler()}}
}

// Ctx is one console request as a page handler sees it.
type Ctx struct {
	c *Console
	W http.ResponseWriter
	R *http.Request
	// Actor is the logged-in member (nil on Public routes).
	Actor *usecase.Actor
	// CSRF is the session's form token (every POST form carries it).
	CSRF  string
	route Route
}

// Context is the request's context.
func (x *Ctx) Context() context.Context { return x.R.Context() }

// Service is the service layer the page calls (with x.Actor).

// setSecurityHeaders sets the headers every console answer carries.
func setSecurityHeaders(h http.Header) {
	h.Set("Content-Security-Policy", "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; "+
		"connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("X-Frame-Options", "DENY")
	h.Set("Referrer-Policy", "same-origin")
	h.Set("Cache-Control", "no-store")
}

// Form size limits: a console form of a logged-in member; a public form
// (login, unsubscribe, confirmation), read before anything is known of its
// sender, gets what a login needs with room to spare, and no multipart
// parsing (file uploads are for members).
const (
	maxFormBody   = 1 << 20
	maxPublicForm = 16 << 10
)

func (c *Console) wrap(rt Route) http.Handler {
	if rt.Raw != nil {
		return rt.Raw
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		setSecurityHeaders(w.Header())
		x := &Ctx{c: c, W: w, R: r, route: rt}
		if err := c.serve(x, rt); err != nil {
			c.fail(x, err)
		}
	})
}

// errLogin sends the browser to the login page.
var errLogin = errors.New("login required")

// errNoWorkspace sends the browser to the workspace selection.
var errNoWorkspace = errors.New("no workspace selected")

func (c *Console) serve(x *Ctx, rt Route) error {
	r := x.R
	if rt.Auth == Public {
		if err := parseForm(x); err != nil {
			return err
		}
		return rt.h(x)
	}
	token := c.cookie(r, sessionCookie)
	if token == "" {
		return errLogin
	}
	actor, err := c.rooms.Accounts.Authenticate(r.Context(), token)
	if err != nil {
		if e, ok := notify.AsError(err); ok && e.Status() == http.StatusUnauthorized {
			c.clearSession(x.W)
			return errLogin
		}
		return err
	}
	x.Actor, x.CSRF = actor, csrfToken(token)
	// The form is read only once the caller is known, as the API reads
	// bodies.
	if err := parseForm(x); err != nil {
		return err
	}
	// The CSRF check comes before the role check: a forged cross-site
	// POST is refused whatever the role, and a member's own POST with a
	// valid token still meets the role check below.
	if r.Method != http.MethodGet && r.Method != http.MethodHead && !validCSRF(r, x.CSRF) {
		return notify.Forbidden("The form's CSRF token is missing or wrong; reload the page and try again")
	}
	if rt.Auth == Member {
		if actor.WorkspaceID == "" {
			return errNoWorkspace
		}
		if !actor.Role.Allowed(rt.Roles) {
			return notify.Forbidden("Role %s is not allowed to perform this operation", actor.Role)
		}
	}
	return rt.h(x)
}

// parseForm reads a POST's form, at most maxFormBody bytes
// (maxPublicForm on a public route, which takes no multipart form).
func parseForm(x *Ctx) error {
	if x.R.Method != http.MethodPost {
		return nil
	}
	public := x.route.Auth == Public
	if isMultipart(x.R) {
		if public {
			return notify.Invalid("This form takes no file upload: send it as application/x-www-form-urlencoded")
		}
		return parseMultipart(x) // kit_multipart.go
	}
	limit := int64(maxFormBody)
	if public {
		limit = maxPublicForm
	}
	x.R.Body = http.MaxBytesReader(x.W, x.R.Body, limit)
	if err := x.R.ParseForm(); err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			return err
		}
		return notify.Invalid("The form could not be read")
	}
	return nil
}

// fail answers a handler's error: a redirect to log in or pick a
// workspace, or an error page with the problem's status and detail.
func (c *Console) fail(x *Ctx, err error) {
	switch {
	case errors.Is(err, errLogin):
		if x.R.Method == http.MethodGet {
			http.Redirect(x.W, x.R, "/login", http.StatusSeeOther)
			return
		}
		err = notify.Unauthorized("Your session has ended; log in again")
	case errors.Is(err, errNoWorkspace):
		http.Redirect(x.W, x.R, "/workspaces", http.StatusSeeOther)
		return
	}
	e := problemOf(c.log, x.R, err)
	if e.RetryAfter > 0 {
		x.W.Header().Set("Retry-After", retryAfter(e.RetryAfter))
	}
	_ = x.Render(e.Status(), "error.html", &Page{Title: e.Title(), Problem: e})
}

// again renders a page again with a 4xx problem (the form's input kept),
// or answers err as the error page.
func (c *Console) again(x *Ctx, err error, render func(status int, e *notify.Error) error) error {
	e := problemOf(c.log, x.R, err)
	if e.Status() >= 500 || e.Status() == http.StatusNotFound || e.Status() == http.StatusForbidden {
		return err
	}
	return render(e.Status(), e)
}

// problemOf is err as a domain error; anything else is logged and shown
// as an internal error (never its text).
func problemOf(log *slog.Logger, r *http.Request, err error) *notify.Error {
	if e, ok := notify.AsError(err); ok {
		return e
	}
	var mbe *http.MaxBytesError
	if errors.As(err, &mbe) {
		return notify.Errorf(notify.CodePayloadTooLarge, "The form must be at most %d bytes", mbe.Limit)
	}
	if errors.Is(err, notify.ErrUnavailable) {
		e := notify.Errorf(notify.CodeUnavailable, "The database is unavailable; retry shortly")
		e.RetryAfter = 2 * time.Second
		return e
	}
	log.ErrorContext(r.Context(), "console error", "path", redact.Path(r.URL.Path), "err", err)
	return notify.Errorf(notify.CodeInternal, "An internal error occurred")
}
