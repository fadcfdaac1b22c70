package web

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/notifyd/notifyd/internal/accounts"
	"github.com/notifyd/notifyd/internal/notify"
)

// Cookies. The session cookie carries the dashboard access token itself
// (the same token POST /v1/auth/login answers), HttpOnly and
// SameSite=Strict. Under an https base URL every cookie is Secure and
// named with the __Host- prefix, which browsers keep only when it is
// Secure, has Path=/ and no Domain: a sibling host (or a plain-http page
// of the same host) cannot set or shadow it. Under a plain http base URL
// (local use) the names are bare, since browsers refuse Secure cookies
// there.
const (
	sessionCookie = "notifyd_session"
	// loginCookie holds the login form's pre-session nonce, to which the
	// form's CSRF token is bound (loginToken).
	loginCookie = "notifyd_login"
	flashCookie = "notifyd_flash"
	hostPrefix  = "__Host-"
	// csrfField is the form field (or X-CSRF-Token header) of the token.
	csrfField = "csrf"
)

// cookieName is a cookie's name on this console: __Host-name under https.
func (c *Console) cookieName(name string) string {
	if c.secure {
		return hostPrefix + name
	}
	return name
}

// cookie is the value of the request's cookie name ("" when absent).
func (c *Console) cookie(r *http.Request, name string) string {
	ck, err := r.Cookie(c.cookieName(name))
	if err != nil {
		return ""
	}
	return ck.Value
}

// setCookie sets cookie name; an empty value with a past expiry deletes it.
func (c *Console) setCookie(w http.ResponseWriter, name, value string, expires time.Time) {
	ck := &http.Cookie{Name: c.cookieName(name), Value: value, Path: "/", HttpOnly: true, Secure: c.secure, SameSite: http.SameSiteStrictMode}
	if !expires.IsZero() {
		ck.Expires = expires
		if value == "" {
			ck.MaxAge = -1
		}
	}
	http.SetCookie(w, ck)
}

func (c *Console) clearSession(w http.ResponseWriter) {
	c.setCookie(w, sessionCookie, "", time.Unix(0, 0))
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

// formToken is the request's CSRF token: the form field, else the header.
func formToken(r *http.Request) string {
	if got := r.PostFormValue(csrfField); got != "" {
		return got
	}
	return r.Header.Get("X-CSRF-Token")
}

// validCSRF compares the request's token with want.
func validCSRF(r *http.Request, want string) bool {
	got := formToken(r)
	return got != "" && want != "" && subtle.ConstantTimeCompare([]byte(got), []byte(want)) == 1
}

// LoginKeyLabel derives the key of the login form's tokens from the
// master key, so that every node of a cluster accepts a form another
// served.
const LoginKeyLabel = "notifyd console login v1"

// loginTokenTTL is how long a login form can be submitted.
const loginTokenTTL = time.Hour

// loginToken is the login form's CSRF token for the pre-session nonce of
// the login cookie, valid until exp (Unix seconds):
// "<exp>.<base64url(HMAC-SHA256(login key, label, nonce, exp))>". A plain
// double-submit value (cookie equal to field) can be forged by whoever can
// plant a cookie: they pick both. This one needs the server's key, and a
// pair it gave out expires.
func (c sessionPages) loginToken(nonce string, exp int64) string {
	e := strconv.FormatInt(exp, 10)
	m := hmac.New(sha256.New, c.loginKey)
	m.Write([]byte("notifyd console login\x00" + nonce + "\x00" + e))
	return e + "." + base64.RawURLEncoding.EncodeToString(m.Sum(nil))
}

// validLoginToken checks the request's login token against the login
// cookie's nonce: unexpired, and the very text loginToken makes.
func (c sessionPages) validLoginToken(r *http.Request) bool {
	nonce, got := c.cookie(r, loginCookie), formToken(r)
	e, _, ok := strings.Cut(got, ".")
	exp, err := strconv.ParseInt(e, 10, 64)
	if nonce == "" || !ok || err != nil || c.rooms.Accounts.Now().Unix() >= exp {
		return false
	}
	return subtle.ConstantTimeCompare([]byte(got), []byte(c.loginToken(nonce, exp))) == 1
}

func randomToken() string {
	b := make([]byte, 32)
	_, _ = rand.Read(b)
	return base64.RawURLEncoding.EncodeToString(b)
}

func retryAfter(d time.Duration) string {
	return strconv.FormatInt(int64((d+time.Second-1)/time.Second), 10)
}

// sessionPages serve login, workspace selection and logout.
type sessionPages struct{ *Console }

func (c sessionPages) routes() []Route {
	return []Route{
		{Method: "GET", Path: "/login", Auth: Public, h: c.loginPage},
		{Method: "POST", Path: "/login", Auth: Public, h: c.login},
		{Method: "GET", Path: "/workspaces", Auth: Session, h: c.workspacesPage},
		{Method: "POST", Path: "/workspaces", Auth: Session, h: c.selectWorkspace},
		{Method: "POST", Path: "/logout", Auth: Session, h: c.logout},
	}
}

type loginData struct{ Email string }

// loginPage shows the login form with a fresh login token.
func (c sessionPages) loginPage(x *Ctx) error {
	if t := c.cookie(x.R, sessionCookie); t != "" {
		if _, err := c.rooms.Accounts.Authenticate(x.Context(), t); err == nil {
			http.Redirect(x.W, x.R, "/", http.StatusSeeOther)
			return nil
		}
	}
	return c.renderLogin(x, http.StatusOK, "", nil)
}

func (c sessionPages) renderLogin(x *Ctx, status int, email string, problem *notify.Error) error {
	nonce := randomToken()
	c.setCookie(x.W, loginCookie, nonce, time.Time{})
	x.CSRF = c.loginToken(nonce, c.rooms.Accounts.Now().Add(loginTokenTTL).Unix())
	return x.Render(status, "login.html", &Page{Title: "Log in", Problem: problem, Data: loginData{Email: email}})
}

// login is the dashboard login (accounts.Login: the same throttle and
// rules as POST /v1/auth/login) answered with the session cookie.
func (c sessionPages) login(x *Ctx) error {
	if !c.validLoginToken(x.R) {
		return notify.Forbidden("The form's CSRF token is missing or wrong; reload the page and try again")
	}
	email := x.R.PostFormValue("email")
	res, err := c.rooms.Accounts.Login(x.Context(), email, x.R.PostFormValue("password"), "", c.clientAddr(x.R))
	if err != nil {
		e := problemOf(c.log, x.R, err)
		if e.RetryAfter > 0 {
			x.W.Header().Set("Retry-After", retryAfter(e.RetryAfter))
		}
		return c.renderLogin(x, e.Status(), email, e)
	}
	c.setCookie(x.W, loginCookie, "", time.Unix(0, 0))
	c.startSession(x, res)
	return nil
}

// startSession sets the session cookie of res and goes on: to the
// workspace selection when none is selected, else to the overview.
func (c sessionPages) startSession(x *Ctx, res *accounts.LoginResult) {
	c.setCookie(x.W, sessionCookie, res.AccessToken, res.ExpiresAt)
	to := "/"
	if res.Workspace == nil {
		to = "/workspaces"
	}
	http.Redirect(x.W, x.R, to, http.StatusSeeOther)
}

func (c sessionPages) workspacesPage(x *Ctx) error {
	_, ws, err := c.rooms.Accounts.Me(x.Context(), x.Actor)
	if err != nil {
		return err
	}
	return x.Render(http.StatusOK, "workspaces.html", &Page{Title: "Choose a workspace", Data: ws})
}

func (c sessionPages) selectWorkspace(x *Ctx) error {
	res, err := c.rooms.Accounts.SelectWorkspace(x.Context(), x.Actor, x.R.PostFormValue("workspaceId"))
	if err != nil {
		return err
	}
	c.startSession(x, res)
	return nil
}

// logout ends the session server-side (accounts.Logout, as POST
// /v1/auth/logout) and clears the cookie.
func (c sessionPages) logout(x *Ctx) error {
	if err := c.rooms.Accounts.Logout(x.Context(), x.Actor); err != nil {
		return err
	}
	c.clearSession(x.W)
	return x.Redirect("/login", Flash{Kind: "info", Text: "You are logged out."})
}
