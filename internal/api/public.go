package api

import "net/http"

// PublicHandlers are the API's handlers mounted on the root mux by
// pattern rather than through the route table: the RFC 8058 one-click
// unsubscribe, whose token is its only authorization and whose path sits
// beside the HTML unsubscribe pages of internal/web. Mail clients post it
// as a form or as JSON; it answers the envelope or problem+json.
func (a *API) PublicHandlers() map[string]http.Handler {
	return map[string]http.Handler{
		"POST " + unsubscribePath + "/one-click": http.HandlerFunc(newsletterAPI{a, a.rooms.Newsletter}.handleUnsubscribeOneClick),
	}
}
