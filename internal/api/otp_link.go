package api

import (
	"html/template"
	"net/http"

	"github.com/notifyd/notifyd/internal/service"
)

// otpPage is the one HTML template of the link pages: no script, no
// external resources, a same-origin form.
var otpPage = template.Must(template.New("otp").Parse(`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="robots" content="noindex, nofollow"><title>{{.Title}}</title>
<style>body{font-family:system-ui,sans-serif;max-width:32rem;margin:4rem auto;padding:0 1rem;text-align:center}button{font-size:1.1rem;padding:.6rem 1.4rem}</style>
</head><body><h1>{{.Title}}</h1><p>{{.Message}}</p>
{{if .Form}}<form method="post" action="{{.Action}}"><button type="submit">Complete verification</button></form>{{end}}
</body></html>
`))

type otpPageData struct {
	Title, Message string
	Form           bool
	Action         string
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
		h := w.Header()
		h.Set("Content-Type", "text/html; charset=utf-8")
		h.Set("Cache-Control", "no-store")
		h.Set("Referrer-Policy", "no-referrer")
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("X-Frame-Options", "DENY")
		h.Set("Content-Security-Policy", "default-src 'none'; style-src 'unsafe-inline'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'")
		d := otpPageData{}
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
		default:
			status = http.StatusNotFound
			d.Title, d.Message = "Link invalid or expired", "This verification link is invalid or has expired. Please request a new one."
		}
		w.WriteHeader(status)
		if r.Method != http.MethodHead {
			_ = otpPage.Execute(w, d)
		}
	})
}
