// Package api is the JSON HTTP API: the Notification API (HMAC-signed,
// enveloped) and the Dashboard API (bearer token plus role, bare JSON).
// routes.go is the single route table; handlers decode, call one service
// use case, and encode.
package api

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/notifyd/notifyd/internal/gate"
	"github.com/notifyd/notifyd/internal/inbox"
	"github.com/notifyd/notifyd/internal/metrics"
	"github.com/notifyd/notifyd/internal/notify"
	"github.com/notifyd/notifyd/internal/redact"
	"github.com/notifyd/notifyd/internal/rooms"
	"github.com/notifyd/notifyd/internal/usecase"
)

// Body size limits: SPEC's 1 MB on the Notification API; the dashboard
// takes subscriber imports of 5,000 items; a public route (the login) is
// read before anything is known of its caller, so it gets what a login
// needs (320-character email, 256-character password) with room to spare.
const (
	maxNotificationBody = 1 << 20
	maxDashboardBody    = 8 << 20
	maxPublicBody       = 16 << 10
)

// Options configure the API.
type Options struct {
	// Rooms are the use cases whose handlers the API serves.
	Rooms rooms.Set
	// Gate checks the signature, nonce and request limits of signed
	// routes.
	Gate    *gate.Gate
	BaseURL string
	Logger  *slog.Logger
	// LimitMetrics counts 429 answers by code; nil counts nothing.
	LimitMetrics *metrics.Limits
	// TrustedProxies (NOTIFYD_TRUSTED_PROXIES) are the peers whose
	// X-Forwarded-For names the client of the login throttle.
	TrustedProxies TrustedProxies
}

// API serves the /v1 routes.
type API struct {
	rooms   rooms.Set
	gate    *gate.Gate
	baseURL string
	log     *slog.Logger
	now     func() time.Time
	mux     *http.ServeMux
	limits  *metrics.Limits
	proxies TrustedProxies
}

// New builds the API and registers every route.
func New(o Options) *API {
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	a := &API{rooms: o.Rooms, gate: o.Gate, baseURL: strings.TrimRight(o.BaseURL, "/"), log: o.Logger, now: time.Now,
		mux: http.NewServeMux(), limits: o.LimitMetrics, proxies: o.TrustedProxies}
	if o.Rooms.Sends != nil {
		a.now = o.Rooms.Sends.Now // the service clock (tests move it)
	}
	for _, rt := range a.routes() {
		a.mux.Handle(rt.Method+" "+rt.Path, a.wrap(rt))
	}
	return a
}

// ServeHTTP dispatches to the route table; unmatched paths and methods get
// problem+json instead of the mux's plain text.
func (a *API) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h, pattern := a.mux.Handler(r)
	if pattern == "" {
		rec := &statusOnly{header: http.Header{}}
		h.ServeHTTP(rec, r)
		if rec.status == http.StatusMethodNotAllowed {
			w.Header().Set("Allow", rec.header.Get("Allow"))
			a.WriteProblem(w, r, notify.Errorf(notify.CodeMethodNotAllowed, "Method %s is not allowed on this path", r.Method))
			return
		}
		a.WriteProblem(w, r, noRoute(r))
		return
	}
	a.mux.ServeHTTP(w, r)
}

// noRoute is the answer to a path no route takes, with any secret in
// the path redacted. A receiving route whose token finds nothing answers
// it too, so a wrong token looks like any unknown path.
func noRoute(r *http.Request) *notify.Error {
	return notify.Errorf(notify.CodeNotFound, "No route matches %s %s", r.Method, redact.Path(r.URL.Path))
}

type statusOnly struct {
	header http.Header
	status int
}

func (s *statusOnly) Header() http.Header         { return s.header }
func (s *statusOnly) Write(b []byte) (int, error) { return len(b), nil }
func (s *statusOnly) WriteHeader(code int)        { s.status = code }

// authKind says how a route authenticates.
type authKind int

const (
	authPublic    authKind = iota // no authentication
	authSession                   // bearer token, no workspace needed
	authDashboard                 // bearer token, selected workspace and a role in Roles
	authSigned                    // HMAC-signed API key with Scope
	// authEither: a route of both APIs. A request carrying X-API-Key is
	// a signed one (Scope, enveloped answers, the Notification API's body
	// limit); any other is a dashboard one (bearer token and Roles).
	authEither
	// authRecipient: a recipient token of the inbox (issue 33), from a
	// browser at an origin its workspace allows (inbox.go).
	authRecipient
)

// Route is one entry of the route table.
type Route struct {
	Method string
	Path   string
	auth   authKind
	Roles  []notify.Role
	Scope  string
	// ownNonce: the handler's use case records the nonce, and counts the
	// request toward the limits, in the send group commit; the key may
	// come from a cache, which that commit confirms.
	ownNonce bool
	// rateLimited: the request counts toward the workspace and API key
	// request limits (SPEC "Request rate limits").
	rateLimited bool
	// ownBody: a public route whose handler reads the body itself, once it
	// has authenticated the caller by its own means (the vendor callbacks'
	// secret), up to the dashboard limit.
	ownBody bool
	h       func(c *call) error
}

// Routes lists method and path of every registered route (the OpenAPI
// test checks each is documented).
func (a *API) Routes() []Route { return a.routes() }

// call is one request as a handler sees it.
type call struct {
	a    *API
	w    http.ResponseWriter
	r    *http.Request
	ctx  context.Context
	body []byte
	// bodyRead and bodyErr: the body is read at most once (readBody).
	bodyRead bool
	bodyErr  error
	actor    *usecase.Actor
	key      *notify.APIKey
	nonce    *gate.Nonce
	signed   bool
	// reader is the inbox's reader of a recipient route.
	reader *inbox.Reader
}

// readBody reads the request body once, at most limit bytes. A body the
// client stopped sending is errClientGone: not the server's failure.
func (c *call) readBody(limit int64) error {
	if c.bodyRead || c.r.Body == nil {
		return c.bodyErr
	}
	c.bodyRead = true
	body, err := io.ReadAll(http.MaxBytesReader(c.w, c.r.Body, limit))
	var mbe *http.MaxBytesError
	if err != nil && !errors.As(err, &mbe) {
		err = fmt.Errorf("%w: %w", errClientGone, err)
	}
	c.body, c.bodyErr = body, err
	return err
}

// errClientGone marks a request whose client went away before it was
// answered (body cut short, connection closed): answered 499 and logged at
// debug, since nothing on the server failed.
var errClientGone = errors.New("client closed request")

// statusClientClosed is the status recorded for such requests
// (nginx's 499; no client sees it).
const statusClientClosed = 499

// clientGone reports whether err means the client went away: its body read
// failed, or the request context was canceled by the client's leaving.
func clientGone(r *http.Request, err error) bool {
	return errors.Is(err, errClientGone) ||
		(errors.Is(err, context.Canceled) && errors.Is(r.Context().Err(), context.Canceled))
}

// decode strictly decodes the request body into v.
func (c *call) decode(v any) error { return decodeJSON(c.body, v) }

// ok writes a success payload: enveloped on the Notification API, bare on
// the dashboard.
func (c *call) ok(status int, v any) error {
	if c.signed {
		v = envelope{Data: v, Meta: envelopeMeta{Timestamp: Timestamp(c.a.now())}}
	}
	writeJSON(c.w, status, v)
	return nil
}

func (c *call) noContent() error {
	c.w.WriteHeader(http.StatusNoContent)
	return nil
}

func (a *API) wrap(rt Route) http.Handler {
	limit := int64(maxDashboardBody)
	switch {
	case rt.auth == authSigned:
		limit = maxNotificationBody
	case rt.auth == authPublic && !rt.ownBody:
		limit = maxPublicBody
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rt, limit := rt, limit
		if rt.auth == authEither {
			rt.auth = authDashboard
			if r.Header.Get("X-API-Key") != "" {
				rt.auth, limit = authSigned, maxNotificationBody
			}
		}
		c := &call{a: a, w: w, r: r, ctx: r.Context(), signed: rt.auth == authSigned}
		if err := a.serve(c, rt, limit); err != nil {
			if clientGone(r, err) {
				a.log.DebugContext(r.Context(), "client closed request", "err", err)
				w.WriteHeader(statusClientClosed)
				return
			}
			a.writeError(w, r, err)
		}
	})
}

func (a *API) serve(c *call, rt Route, limit int64) error {
	r := c.r
	// PostgreSQL refuses NUL and invalid UTF-8 in text parameters; catch
	// them here once for every route instead of answering 500.
	if !cleanText(r.URL.Path) || !cleanText(r.URL.RawQuery) || !cleanQuery(r) {
		return notify.Invalid("Path and query must be valid UTF-8 without NUL characters")
	}
	// The body is read only once the caller is known (or, on signed
	// routes, once every check but the signature's has passed): an
	// unauthenticated caller cannot make the server buffer megabytes.
	switch rt.auth {
	case authPublic:
		if rt.ownBody {
			break
		}
		if err := c.readBody(limit); err != nil {
			return err
		}
	case authSession, authDashboard:
		token, ok := bearer(r.Header.Get("Authorization"))
		if !ok {
			return notify.Unauthorized("Missing or malformed Authorization header")
		}
		actor, err := a.rooms.Accounts.Authenticate(c.ctx, token)
		if err != nil {
			return err
		}
		c.actor = actor
		if rt.auth == authDashboard {
			if actor.WorkspaceID == "" {
				return notify.Forbidden("No workspace selected")
			}
			if !actor.Role.Allowed(rt.Roles) {
				return notify.Forbidden("Role %s is not allowed to perform this operation", actor.Role)
			}
		}
		if err := c.readBody(limit); err != nil {
			return err
		}
	case authRecipient:
		if err := a.authenticateRecipient(c); err != nil {
			return err
		}
		if err := c.readBody(maxPublicBody); err != nil {
			return err
		}
	case authSigned:
		sr := gate.SignedRequest{
			APIKey: r.Header.Get("X-API-Key"), Timestamp: r.Header.Get("X-Timestamp"), Nonce: r.Header.Get("X-Nonce"),
			Signature: r.Header.Get("X-Signature"), Method: r.Method, Target: requestTarget(r),
			ReadBody: func() ([]byte, error) {
				err := c.readBody(limit)
				return c.body, err
			},
		}
		var key *notify.APIKey
		var err error
		if rt.ownNonce {
			key, c.nonce, err = a.gate.VerifySignatureCached(c.ctx, sr, rt.Scope)
		} else {
			key, err = a.gate.VerifySignature(c.ctx, sr)
		}
		if err != nil {
			return err
		}
		if err := gate.RequireScope(key, rt.Scope); err != nil {
			// Refused before its use: the nonce is recorded, the call not
			// counted toward the limits (the key may not send at all).
			return a.gate.RefuseSigned(c.ctx, c.nonce, err)
		}
		if rt.rateLimited && !rt.ownNonce {
			if err := a.gate.CheckRequestLimit(c.ctx, key); err != nil {
				return err // VerifySignature recorded the nonce
			}
		}
		c.key = key
	}
	err := rt.h(c)
	if err != nil && c.nonce.Pending() {
		// The handler refused the request before handing the nonce to its
		// use case (a body that does not decode): it still counts toward
		// the limits and records its nonce, as an accepted send does.
		return a.rooms.Sends.RefuseSend(c.ctx, c.key, c.nonce, err)
	}
	return err
}

func bearer(h string) (string, bool) {
	scheme, token, ok := strings.Cut(h, " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return "", false
	}
	token = strings.TrimSpace(token)
	return token, token != ""
}

// requestTarget is the request target exactly as the client sent it, which
// is what the client signed.
func requestTarget(r *http.Request) string {
	if r.RequestURI != "" {
		return r.RequestURI
	}
	return r.URL.RequestURI()
}

func cleanText(s string) bool {
	return utf8.ValidString(s) && !strings.ContainsRune(s, 0)
}

func cleanQuery(r *http.Request) bool {
	for k, vs := range r.URL.Query() {
		if !cleanText(k) {
			return false
		}
		for _, v := range vs {
			if !cleanText(v) {
				return false
			}
		}
	}
	return true
}
