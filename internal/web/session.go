package web

import (
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"net/http"
	"strconv"
	"time"

	"github.com/notifyd/notifyd/internal/notify"
	"github.com/notifyd/notifyd/internal/service"
)

// Cookies. The session cookie carries the dashboard access token itself
// (the same token POST /v1/auth/login answers), HttpOnly and
// SameSite=Strict, Secure when the base URL is https.
const (
	sessionCookie = "notifyd_session"
	// loginCookie is the login form's double-submit CSRF token (there is
	// no session yet to bind one to).
	loginCookie = "notifyd_login"
	flashCookie = "notifyd_flash"
	// csrfField is the form field (or X-CSRF-Token header) of the token.
	csrfField = "csrf"
)

func sessionToken(r *http.Request) string {
	ck, err := r.Cookie(sessionCookie)
	if err != nil {
		return ""
	}
	return ck.Value
}

func setCookie(w http.ResponseWriter, secure bool, name, value string, expires time.Time) {
	ck := &http.Cookie{Name: name, Value: value, Path: "/", HttpOnly: true, Secure: secure, SameSite: http.SameSiteStrictMode}
	if !expires.IsZero() {
		ck.Expires = expires
		if value == "" {
			ck.MaxAge = -1
		}
	}
	http.SetCookie(w, ck)
}

func clearSession(w http.ResponseWriter, secure bool) {
	setCookie(w, secure, sessionCookie, "", time.Unix(0, 0))
}

// csrfToken is the session-bound CSRF token: a hash of the session token
// under its own label. Only a page of the console (which the browser
// shows the session's owner) holds it; another site can neither read
// the HttpOnly cookie nor derive the token, and every node of a cluster
// derives the same one without shared state. The stored session key is
// a different hash of the token, so the token never reveals it.
func csrfToken(sessionToken string) string {
	sum := sha256.Sum256([]byte("notifyd console csrf\x00" + sessionToken))
	return base64.RawURLEncoding.EncodeToString(sum[:])
}

// validCSRF compares the request's token (form field, else header) with want.
func validCSRF(r *http.Request, want string) bool {
	got := r.PostFormValue(csrfField)
	if got == "" {
		got = r.Header.Get("X-CSRF-Token")
	}
	return got != "" && want != "" && subtle.ConstantTimeCompare([]byte(got), []byte(want)) == 1
}

func randomToken() string {
	b := make([]byte, 32)
	_, _ = rand.Read(b)
	return base64.RawURLEncoding.EncodeToString(b)
}

func retryAfter(d time.Duration) string {
	return strconv.FormatInt(int64((d+time.Second-1)/time.Second), 10)
}

func init() { register(sessionRoutes) }

func sessionRoutes(c *Console) []Route {
	return []Route{
		{Method: "GET", Path: "/login", Auth: Public, h: c.loginPage},
		{Method: "POST", Path: "/login", Auth: Public, h: c.login},
		{Method: "GET", Path: "/workspaces", Auth: Session, h: c.workspacesPage},
		{Method: "POST", Path: "/workspaces", Auth: Session, h: c.selectWorkspace},
		{Method: "POST", Path: "/logout", Auth: Session, h: c.logout},
	}
}

type loginData struct{ Email string }

// loginPage shows the login form with a fresh double-submit token.
func (c *Console) loginPage(x *Ctx) error {
	if t := sessionToken(x.R); t != "" {
		if _, err := c.svc.Authenticate(x.Context(), t); err == nil {
			http.Redirect(x.W, x.R, "/", http.StatusSeeOther)
			return nil
		}
	}
	return c.renderLogin(x, http.StatusOK, "", nil)
}

func (c *Console) renderLogin(x *Ctx, status int, email string, problem *notify.Error) error {
	x.CSRF = randomToken()
	setCookie(x.W, c.secure, loginCookie, x.CSRF, time.Time{})
	return x.Render(status, "login.html", &Page{Title: "Log in", Problem: problem, Data: loginData{Email: email}})
}

// login is the dashboard login (service.Login: the same throttle and
// rules as POST /v1/auth/login) answered with the session cookie.
func (c *Console) login(x *Ctx) error {
	ck, err := x.R.Cookie(loginCookie)
	if err != nil || !validCSRF(x.R, ck.Value) {
		return notify.Forbidden("The form's CSRF token is missing or wrong; reload the page and try again")
	}
	email := x.R.PostFormValue("email")
	res, err := c.svc.Login(x.Context(), email, x.R.PostFormValue("password"), "", c.clientAddr(x.R))
	if err != nil {
		e := problemOf(c.log, x.R, err)
		if e.RetryAfter > 0 {
			x.W.Header().Set("Retry-After", retryAfter(e.RetryAfter))
		}
		return c.renderLogin(x, e.Status(), email, e)
	}
	setCookie(x.W, c.secure, loginCookie, "", time.Unix(0, 0))
	c.startSession(x, res)
	return nil
}

// startSession sets the session cookie of res and goes on: to the
// workspace selection when none is selected, else to the overview.
func (c *Console) startSession(x *Ctx, res *service.LoginResult) {
	setCookie(x.W, c.secure, sessionCookie, res.AccessToken, res.ExpiresAt)
	to := "/"
	if res.Workspace == nil {
		to = "/workspaces"
	}
	http.Redirect(x.W, x.R, to, http.StatusSeeOther)
}

func (c *Console) workspacesPage(x *Ctx) error {
	_, ws, err := c.svc.Me(x.Context(), x.Actor)
	if err != nil {
		return err
	}
	return x.Render(http.StatusOK, "workspaces.html", &Page{Title: "Choose a workspace", Data: ws})
}

func (c *Console) selectWorkspace(x *Ctx) error {
	res, err := c.svc.SelectWorkspace(x.Context(), x.Actor, x.R.PostFormValue("workspaceId"))
	if err != nil {
		return err
	}
	c.startSession(x, res)
	return nil
}

// logout ends the session server-side (service.Logout, as POST
// /v1/auth/logout) and clears the cookie.
func (c *Console) logout(x *Ctx) error {
	if err := c.svc.Logout(x.Context(), x.Actor); err != nil {
		return err
	}
	clearSession(x.W, c.secure)
	return x.Redirect("/login", Flash{Kind: "info", Text: "You are logged out."})
}
