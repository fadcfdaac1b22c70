package api

import (
	"errors"
	"io"
	"mime"
	"net/http"

	"github.com/notifyd/notifyd/internal/newsletter"
	"github.com/notifyd/notifyd/internal/notify"
)

// The programmatic one-click unsubscribe (API-DECISIONS 5); the
// confirmation page and the form confirm are HTML pages of internal/web.
// The token is the only authorization.

const (
	unsubscribePath = "/v1/newsletter/unsubscribe"
	// maxUnsubscribeBody bounds the small form and JSON bodies.
	maxUnsubscribeBody = 16 << 10
)

// handleUnsubscribeOneClick is POST /v1/newsletter/unsubscribe/one-click:
// JSON {token} answered in the envelope, or the RFC 8058 one-click post
// (form body List-Unsubscribe=One-Click, token in the query string) that
// mailbox providers send for the List-Unsubscribe-Post header.
func (a newsletterAPI) handleUnsubscribeOneClick(w http.ResponseWriter, r *http.Request) {
	token, err := oneClickToken(w, r)
	if err != nil {
		a.writeError(w, r, err)
		return
	}
	v, err := a.room.Unsubscribe(r.Context(), token)
	if err != nil {
		a.writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, envelope{Data: map[string]bool{"unsubscribed": v.State == newsletter.UnsubscribeDone},
		Meta: envelopeMeta{Timestamp: Timestamp(a.now())}})
}

// oneClickToken reads the token of a one-click request; an empty token or
// one over 64 characters is 400, a body over maxUnsubscribeBody 413. It is
// the one public route that parses multipart/form-data: RFC 8058 says
// mailbox providers should post the one-click form that way.
func oneClickToken(w http.ResponseWriter, r *http.Request) (string, error) {
	r.Body = http.MaxBytesReader(w, r.Body, maxUnsubscribeBody)
	var token string
	mt, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type"))
	switch mt {
	case "application/x-www-form-urlencoded", "multipart/form-data":
		var err error
		if mt == "multipart/form-data" {
			err = r.ParseMultipartForm(maxUnsubscribeBody)
		} else {
			err = r.ParseForm()
		}
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			return "", err // 413, as on the JSON path
		}
		if err != nil {
			return "", notify.Invalid("Request body is not a valid form")
		}
		if r.PostForm.Get("List-Unsubscribe") != "One-Click" {
			return "", notify.Invalid("List-Unsubscribe must be One-Click")
		}
		token = r.URL.Query().Get("token")
		if token == "" {
			// Some senders put the token in the form instead of the URL.
			token = r.PostForm.Get("token")
		}
	default:
		body, err := io.ReadAll(r.Body)
		if err != nil {
			return "", err
		}
		var in struct {
			Token Optional[string] `json:"token"`
		}
		if err := decodeJSON(body, &in); err != nil {
			return "", err
		}
		if !in.Token.Set || in.Token.Null {
			return "", notify.Invalid("token is required")
		}
		token = in.Token.Value
	}
	if bad, _ := newsletter.UnsubscribeTokenShape(token); bad {
		if token == "" {
			return "", notify.Invalid("token is required")
		}
		return "", notify.Invalid("token must be at most %d characters", newsletter.MaxUnsubscribeToken)
	}
	return token, nil
}
