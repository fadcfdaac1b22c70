package web

import (
	"net/http"

	"github.com/notifyd/notifyd/internal/newsletter"
	"github.com/notifyd/notifyd/internal/notify"
	"github.com/notifyd/notifyd/internal/otp"
)

// The double opt-in confirmation page (issue 21, item 5; docs/DECISIONS.md
// "Double opt-in"), built like the unsubscribe page: GET shows a confirm
// button and changes nothing, POST confirms. The token in the link is the
// only authorization.

// confirmPages serve the public double opt-in confirmation page.
type confirmPages struct{ *Console }

func (c confirmPages) routes() []Route {
	return []Route{
		{Method: "GET", Path: newsletter.ConfirmPath, Auth: Public, Raw: http.HandlerFunc(c.handleConfirmPage)},
		{Method: "POST", Path: newsletter.ConfirmPath, Auth: Public, Raw: http.HandlerFunc(c.handleConfirmForm)},
	}
}

// confirmPage is the page of a confirmation state, with its status: 200
// for a pending or confirmed subscriber, 4xx for a link that cannot
// confirm. token fills the form of a pending subscriber.
func confirmPage(v newsletter.ConfirmView, token string) (int, pageData) {
	who := otp.Mask(notify.ChannelEmail, v.Address)
	switch v.State {
	case newsletter.ConfirmPending:
		return http.StatusOK, pageData{Title: "Confirm your subscription",
			Message: "Press the button to confirm the newsletter subscription of " + who + ".",
			Form:    true, Action: newsletter.ConfirmPath, Button: "Confirm subscription", Field: "token", Value: token}
	case newsletter.ConfirmDone:
		return http.StatusOK, pageData{Title: "Subscription confirmed",
			Message: who + " is subscribed. You can unsubscribe at any time with the link in each newsletter."}
	case newsletter.ConfirmExpired:
		return http.StatusGone, pageData{Title: "Link expired",
			Message: "This confirmation link has expired. Please ask the sender for a new one."}
	case newsletter.ConfirmGone:
		return http.StatusNotFound, pageData{Title: "Subscription not found",
			Message: "This subscription no longer exists. Please subscribe again."}
	case newsletter.ConfirmRefused:
		return http.StatusConflict, pageData{Title: "Subscription cancelled",
			Message: who + " was unsubscribed after this link was sent, so the link no longer confirms anything."}
	}
	return http.StatusBadRequest, pageData{Title: "Link invalid",
		Message: "This confirmation link is invalid. Please use the link from the most recent email you received."}
}

var pageConfirmUnavailable = pageData{Title: "Confirmation unavailable", Message: "Something went wrong. Please try again later."}

// handleConfirmPage is GET /v1/newsletter/confirm?token=T: it shows the
// confirm button and changes nothing, so link scanners that fetch it
// confirm nobody.
func (c confirmPages) handleConfirmPage(w http.ResponseWriter, r *http.Request) {
	token := r.URL.Query().Get("token")
	v, err := c.rooms.Newsletter.ConfirmLanding(r.Context(), token)
	if err != nil {
		c.log.ErrorContext(r.Context(), "confirmation page", "err", err)
		writePage(w, r, http.StatusInternalServerError, pageConfirmUnavailable)
		return
	}
	status, d := confirmPage(v, token)
	writePage(w, r, status, d)
}

// handleConfirmForm is POST /v1/newsletter/confirm with the form field
// token: it confirms and answers a result page.
func (c confirmPages) handleConfirmForm(w http.ResponseWriter, r *http.Request) {
	if !readPublicForm(w, r, "confirmation") {
		return
	}
	token := r.PostForm.Get("token")
	v, err := c.rooms.Newsletter.Confirm(r.Context(), token)
	if err != nil {
		c.log.ErrorContext(r.Context(), "confirmation", "err", err)
		writePage(w, r, http.StatusInternalServerError, pageConfirmUnavailable)
		return
	}
	status, d := confirmPage(v, token)
	writePage(w, r, status, d)
}
