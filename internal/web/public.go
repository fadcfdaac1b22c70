package web

import (
	"errors"
	"fmt"
	"html/template"
	"net/http"

	"github.com/notifyd/notifyd/internal/newsletter"
	"github.com/notifyd/notifyd/internal/notify"
	"github.com/notifyd/notifyd/internal/otp"
	"github.com/notifyd/notifyd/internal/verification"
)

// The public HTML pages (moved here from internal/api, paths and answers
// unchanged): the OTP link page and the newsletter unsubscribe page and
// form. The token in the link is the only authorization. The RFC 8058
// one-click POST answers JSON and stays in the API
// (api.PublicHandlers).

const unsubscribePath = "/v1/newsletter/unsubscribe"

// publicPages serve the public OTP link and unsubscribe pages.
type publicPages struct{ *Console }

// routes are mounted on the root mux by pattern: their paths
// overlap API patterns that one ServeMux cannot hold together
// (POST /v1/otp/link/{t} and POST /v1/otp/{id}/verify both match
// /v1/otp/link/verify).
func (c publicPages) routes() []Route {
	link := c.otpLinkHandler()
	return []Route{
		{Method: "GET", Path: "/v1/otp/link/{linkToken}", Auth: Public, Raw: link},
		{Method: "POST", Path: "/v1/otp/link/{linkToken}", Auth: Public, Raw: link},
		{Method: "GET", Path: unsubscribePath, Auth: Public, Raw: http.HandlerFunc(c.handleUnsubscribePage)},
		{Method: "POST", Path: unsubscribePath, Auth: Public, Raw: http.HandlerFunc(c.handleUnsubscribeForm)},
		// A mail client without one-click support opens the
		// List-Unsubscribe URL in a browser: it gets the confirmation
		// page, which changes nothing (RFC 8058: no unsubscribe on GET).
		{Method: "GET", Path: unsubscribePath + "/one-click", Auth: Public, Raw: http.HandlerFunc(c.handleUnsubscribePage)},
	}
}

// publicPage is the one HTML template of the public pages (OTP link,
// unsubscribe): no script, no external resources, at most one same-origin
// form with one button.
var publicPage = template.Must(template.New("page").Parse(`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="robots" content="noindex, nofollow"><title>{{.Title}}</title>
<style>body{font-family:system-ui,sans-serif;max-width:32rem;margin:4rem auto;padding:0 1rem;text-align:center}button{font-size:1.1rem;padding:.6rem 1.4rem}</style>
</head><body><main><h1>{{.Title}}</h1><p id="message">{{.Message}}</p>
{{if .Form}}<form method="post" action="{{.Action}}" aria-describedby="message">{{if .Field}}<input type="hidden" name="{{.Field}}" value="{{.Value}}">{{end}}<button type="submit">{{.Button}}</button></form>{{end}}
</main></body></html>
`))

// pageData fills publicPage. With Form, the page holds one POST form to
// Action with the button Button and, when Field is set, one hidden field.
type pageData struct {
	Title, Message string
	Form           bool
	Action, Button string
	Field, Value   string
}

// writePage answers an HTML page with the headers every public page
// carries: never cached, no referrer leaking the token in its URL, and a
// Content-Security-Policy that allows only inline style and a same-origin
// form.
func writePage(w http.ResponseWriter, r *http.Request, status int, d pageData) {
	publicHeaders(w)
	w.WriteHeader(status)
	if r.Method != http.MethodHead {
		_ = publicPage.Execute(w, d)
	}
}

// publicHeaders are the headers of every public page (writePage).
func publicHeaders(w http.ResponseWriter) {
	h := w.Header()
	h.Set("Content-Type", "text/html; charset=utf-8")
	h.Set("Cache-Control", "no-store")
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("X-Frame-Options", "DENY")
	h.Set("Content-Security-Policy", "default-src 'none'; style-src 'unsafe-inline'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'")
}

func (c publicPages) otpLinkHandler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		token := r.PathValue("linkToken")
		var state verification.OTPLinkState
		var err error
		switch r.Method {
		case http.MethodGet, http.MethodHead:
			state, err = c.rooms.Verification.OTPLinkLanding(r.Context(), token)
		case http.MethodPost:
			state, err = c.rooms.Verification.OTPLinkComplete(r.Context(), token)
		default:
			w.Header().Set("Allow", "GET, HEAD, POST")
			http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
			return
		}
		d := pageData{}
		status := http.StatusOK
		switch {
		case err != nil:
			c.log.ErrorContext(r.Context(), "otp link", "err", err)
			status = http.StatusInternalServerError
			d.Title, d.Message = "Verification unavailable", "Something went wrong. Please try again later."
		case state == verification.OTPLinkVerified:
			d.Title, d.Message = "Verified", "Your verification is complete. You can close this page and return to the app."
		case state == verification.OTPLinkPending && r.Method != http.MethodPost:
			d.Title, d.Message, d.Form, d.Action = "Confirm verification", "Press the button to complete your verification.", true, r.URL.Path
			d.Button = "Complete verification"
		default:
			status = http.StatusNotFound
			d.Title, d.Message = "Link invalid or expired", "This verification link is invalid or has expired. Please request a new one."
		}
		writePage(w, r, status, d)
	})
}

var (
	pageInvalidLink = pageData{Title: "Link invalid",
		Message: "This unsubscribe link is invalid. Please use the link from the most recent email you received."}
	pageUnavailable = pageData{Title: "Unsubscribe unavailable", Message: "Something went wrong. Please try again later."}
)

func pageDone(address string) pageData {
	return pageData{Title: "Unsubscribed",
		Message: otp.Mask(notify.ChannelEmail, address) + " is unsubscribed and will receive no more newsletters from this sender."}
}

// readPublicForm reads the small form of a public page (at most
// maxPublicForm bytes; a multipart body is not parsed, so its fields are
// absent) and answers the error page itself when it cannot: 413 for a
// body too large, else 400.
func readPublicForm(w http.ResponseWriter, r *http.Request, what string) bool {
	r.Body = http.MaxBytesReader(w, r.Body, maxPublicForm)
	err := r.ParseForm()
	var mbe *http.MaxBytesError
	switch {
	case errors.As(err, &mbe):
		writePage(w, r, http.StatusRequestEntityTooLarge, pageData{Title: "Request too large",
			Message: fmt.Sprintf("The %s form must be at most %d bytes.", what, mbe.Limit)})
	case err != nil:
		writePage(w, r, http.StatusBadRequest, pageData{Title: "Bad request", Message: "The " + what + " form could not be read."})
	default:
		return true
	}
	return false
}

// handleUnsubscribePage is GET /v1/newsletter/unsubscribe?token=T: it
// shows a confirmation form and changes nothing, so link scanners that
// fetch it unsubscribe nobody.
func (c publicPages) handleUnsubscribePage(w http.ResponseWriter, r *http.Request) {
	token := r.URL.Query().Get("token")
	v, err := c.rooms.Newsletter.UnsubscribeLanding(r.Context(), token)
	switch {
	case err != nil:
		c.log.ErrorContext(r.Context(), "unsubscribe page", "err", err)
		writePage(w, r, http.StatusInternalServerError, pageUnavailable)
	case v.State == newsletter.UnsubscribePending:
		writePage(w, r, http.StatusOK, pageData{Title: "Unsubscribe",
			Message: "Unsubscribe " + otp.Mask(notify.ChannelEmail, v.Address) + " from this sender's newsletters?",
			Form:    true, Action: unsubscribePath, Button: "Unsubscribe", Field: "token", Value: token})
	case v.State == newsletter.UnsubscribeDone:
		writePage(w, r, http.StatusOK, pageDone(v.Address))
	default:
		writePage(w, r, http.StatusOK, pageInvalidLink)
	}
}

// handleUnsubscribeForm is POST /v1/newsletter/unsubscribe with the form
// field token: it unsubscribes and answers a result page.
func (c publicPages) handleUnsubscribeForm(w http.ResponseWriter, r *http.Request) {
	if !readPublicForm(w, r, "unsubscribe") {
		return
	}
	token := r.PostForm.Get("token")
	if bad, _ := newsletter.UnsubscribeTokenShape(token); bad {
		writePage(w, r, http.StatusBadRequest, pageData{Title: "Bad request",
			Message: "The unsubscribe token is missing or too long. Please use the link from your email."})
		return
	}
	v, err := c.rooms.Newsletter.Unsubscribe(r.Context(), token)
	switch {
	case err != nil:
		c.log.ErrorContext(r.Context(), "unsubscribe", "err", err)
		writePage(w, r, http.StatusInternalServerError, pageUnavailable)
	case v.State == newsletter.UnsubscribeDone:
		writePage(w, r, http.StatusOK, pageDone(v.Address))
	default:
		writePage(w, r, http.StatusOK, pageInvalidLink)
	}
}
