package api

import (
	"html/template"
	"net/http"

	"github.com/notifyd/notifyd/internal/service"
)

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
	h := w.Header()
	h.Set("Content-Type", "text/html; charset=utf-8")
	h.Set("Cache-Control", "no-store")
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("X-Frame-Options", "DENY")
	h.Set("Content-Security-Policy", "default-src 'none'; style-src 'unsafe-inline'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'")
	w.WriteHeader(status)
	if r.Method != http.MethodHead {
		_ = publicPage.Execute(w, d)
	}
}

func (a *API) otpLinkHandler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		token := r.PathValue("linkToken")
		var state service.OTPLinkState
		var err error
		switch r.Method {
		case http.MethodGet, http.MethodHead:
			state, err = a.svc.OTPLinkLanding(r.Context(), token)
		case http.MethodPost:
			state, err = a.svc.OTPLinkComplete(r.Context(), token)
		default:
			w.Header().Set("Allow", "GET, HEAD, POST")
			http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
			return
		}
		d := pageData{}
		status := http.StatusOK
		switch {
		case err != nil:
			a.log.ErrorContext(r.Context(), "otp link", "err", err)
			status = http.StatusInternalServerError
			d.Title, d.Message = "Verification unavailable", "Something went wrong. Please try again later."
		case state == service.OTPLinkVerified:
			d.Title, d.Message = "Verified", "Your verification is complete. You can close this page and return to the app."
		case state == service.OTPLinkPending && r.Method != http.MethodPost:
			d.Title, d.Message, d.Form, d.Action = "Confirm verification", "Press the button to complete your verification.", true, r.URL.Path
			d.Button = "Complete verification"
		default:
			status = http.StatusNotFound
			d.Title, d.Message = "Link invalid or expired", "This verification link is invalid or has expired. Please request a new one."
		}
		writePage(w, r, status, d)
	})
}
