package api

import "net/http"

// PublicHandlers are the public HTML pages (OTP link, unsubscribe), mounted
// on the root mux by pattern: their paths overlap API patterns that one
// ServeMux cannot hold together (POST /v1/otp/link/{t} and
// POST /v1/otp/{id}/verify both match /v1/otp/link/verify).
func (a *API) PublicHandlers() map[string]http.Handler {
	link := a.otpLinkHandler()
	return map[string]http.Handler{
		"GET /v1/otp/link/{linkToken}":           link,
		"POST /v1/otp/link/{linkToken}":          link,
		"GET " + unsubscribePath:                 http.HandlerFunc(a.handleUnsubscribePage),
		"POST " + unsubscribePath:                http.HandlerFunc(a.handleUnsubscribeForm),
		"POST " + unsubscribePath + "/one-click": http.HandlerFunc(a.handleUnsubscribeOneClick),
		// A mail client without one-click support opens the
		// List-Unsubscribe URL in a browser: it gets the confirmation
		// page, which changes nothing (RFC 8058: no unsubscribe on GET).
		"GET " + unsubscribePath + "/one-click": http.HandlerFunc(a.handleUnsubscribePage),
	}
}
