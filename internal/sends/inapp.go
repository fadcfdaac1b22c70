package sends

import (
	"encoding/json"
	"net/url"
	"strings"

	"github.com/notifyd/notifyd/internal/notify"
	"github.com/notifyd/notifyd/internal/usecase"
)

// Sends on channel inapp (issue 33): the inbox is a recipient profile's,
// so such a send names recipient.id, and a chain's inapp step takes the
// send's profile. content.actionUrl and content.data are the in-app
// message's link and the application's own data; they belong to a send
// with inapp as its channel or as a step, and are kept on the request
// for whichever step delivers to the inbox.

// Bounds of the in-app content.
const (
	maxActionURL = 2000
	maxInAppData = 4096 // bytes of the data object as JSON
)

// hasInApp reports whether in delivers to the inbox, as its channel or
// a step of its chain.
func hasInApp(in *SendInput) bool {
	if notify.Channel(in.Channel) == notify.ChannelInApp {
		return true
	}
	if in.ChannelFallback != nil {
		for _, st := range *in.ChannelFallback {
			if st != nil && notify.Channel(st.Channel) == notify.ChannelInApp {
				return true
			}
		}
	}
	return false
}

// checkInApp checks what a send on inapp needs (f names the fields).
func checkInApp(f func(string) string, in *SendInput) error {
	inapp := hasInApp(in)
	if !inapp {
		if in.ActionURL != nil || in.Data != nil {
			return notify.Invalid("%s and %s belong to a send with channel inapp (or an inapp step)", f("content.actionUrl"), f("content.data"))
		}
		return nil
	}
	if in.RecipientID == nil {
		if notify.Channel(in.Channel) == notify.ChannelInApp {
			return notify.Invalid("%s is required for channel inapp: the inbox is a recipient profile's", f("recipient.id"))
		}
		return notify.Invalid("%s is required for an inapp step: the inbox is a recipient profile's", f("recipient.id"))
	}
	if in.ChannelFallback != nil {
		for i, st := range *in.ChannelFallback {
			if st != nil && notify.Channel(st.Channel) == notify.ChannelInApp && st.HasRecipient {
				return notify.Invalid("%schannelFallback[%d].recipient: an inapp step delivers to the send's recipient.id", f(""), i)
			}
		}
	}
	if in.ActionURL != nil {
		u := *in.ActionURL
		if err := usecase.MaxLen(f("content.actionUrl"), u, maxActionURL); err != nil {
			return err
		}
		if err := usecase.OneLine(f("content.actionUrl"), u); err != nil {
			return err
		}
		if !actionURL(u) {
			return notify.Invalid("%s must be an http or https URL, or a path starting with /", f("content.actionUrl"))
		}
	}
	if in.Data != nil {
		b, err := json.Marshal(in.Data)
		if err != nil || len(b) > maxInAppData {
			return notify.Invalid("%s must be a JSON object of at most %d bytes", f("content.data"), maxInAppData)
		}
	}
	return nil
}

// actionURL reports whether u is an absolute http(s) URL or a path of the
// application's own (never a javascript: or data: URL a browser would
// run when the message is clicked).
func actionURL(u string) bool {
	if strings.HasPrefix(u, "/") && !strings.HasPrefix(u, "//") {
		return true
	}
	p, err := url.Parse(u)
	return err == nil && (p.Scheme == "http" || p.Scheme == "https") && p.Host != ""
}

// inAppContent is the request's in-app content of in, nil when none.
func inAppContent(in *SendInput) *notify.InAppContent {
	if in.ActionURL == nil && in.Data == nil {
		return nil
	}
	c := &notify.InAppContent{Data: in.Data}
	if in.ActionURL != nil {
		c.ActionURL = *in.ActionURL
	}
	return c
}

// deliverAtAcceptance marks an inapp send with nothing to wait for
// delivered in its acceptance's transaction (accept.go stores the
// message there): there is no vendor to call, so the queue, its claim
// and its settlement would only add writes and the time until the
// message shows on the person's open streams (docs/DECISIONS.md "inapp
// at acceptance"). A send that waits or may be stopped on the way keeps
// the engine: one scheduled or held by a send window, one with a channel
// fallback chain, one whose category has a frequency cap (counted when
// the engine claims it), and one its preferences already stopped.
func deliverAtAcceptance(r *notify.Request, prof *notify.Recipient, cat *notify.Category) {
	if r.Channel != notify.ChannelInApp || prof == nil || r.Status != notify.StatusQueued || r.ScheduledAt != nil ||
		r.Fallback != nil || (cat != nil && cat.FrequencyCap != nil) {
		return
	}
	r.Status, r.InboxAtAcceptance = notify.StatusSent, prof.ID
}
