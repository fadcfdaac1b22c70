package web

import (
	"net/http"

	"github.com/notifyd/notifyd/internal/engagement"
)

// trackingPages are the public endpoints of e-mail tracking (issue 35,
// item 4): the open pixel and the click redirect. The signed token in
// the path is their only authorization; it is verified in memory and the
// hit is recorded after the answer (engagement's recorder), so both stay
// cheap. No client address is read or kept.
type trackingPages struct{ *Console }

func (c trackingPages) routes() []Route {
	return []Route{
		{Method: "GET", Path: engagement.OpenPath + "{token}", Auth: Public, Raw: http.HandlerFunc(c.handleOpen)},
		{Method: "GET", Path: engagement.ClickPath + "{token}", Auth: Public, Raw: http.HandlerFunc(c.handleClick)},
	}
}

// pixel is a 1×1 transparent GIF.
var pixel = []byte("GIF89a\x01\x00\x01\x00\x80\x00\x00\x00\x00\x00\xff\xff\xff!\xf9\x04\x01\x00\x00\x00\x00,\x00\x00\x00\x00\x01\x00\x01\x00\x00\x02\x02D\x01\x00;")

var pageBadTrackingLink = pageData{Title: "Link invalid",
	Message: "This link is invalid or was changed. Please use the link exactly as it appears in the email you received."}

// handleClick redirects to the link's own URL, the one the signed token
// carries: an altered token, or a URL that was not in the message, gets
// the 404 page and no redirect.
func (c trackingPages) handleClick(w http.ResponseWriter, r *http.Request) {
	target, ok := c.rooms.Engagement.Click(r.PathValue("token"), r.UserAgent(), r.Method == http.MethodHead)
	if !ok {
		writePage(w, r, http.StatusNotFound, pageBadTrackingLink)
		return
	}
	h := w.Header()
	h.Set("Location", target)
	h.Set("Cache-Control", "no-store")
	// The destination learns nothing of the token.
	h.Set("Referrer-Policy", "no-referrer")
	w.WriteHeader(http.StatusFound)
}

// handleOpen answers the pixel; a bad token gets a 404 and no image.
func (c trackingPages) handleOpen(w http.ResponseWriter, r *http.Request) {
	h := w.Header()
	h.Set("Cache-Control", "no-store, max-age=0")
	if !c.rooms.Engagement.Open(r.PathValue("token"), r.UserAgent()) {
		http.Error(w, "not found", http.StatusNotFound)
		return
	}
	h.Set("Content-Type", "image/gif")
	h.Set("X-Content-Type-Options", "nosniff")
	if r.Method != http.MethodHead {
		_, _ = w.Write(pixel)
	}
}
