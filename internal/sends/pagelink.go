package sends

import (
	"maps"
	"net/url"
	"strings"
	"time"

	"github.com/notifyd/notifyd/internal/notify"
)

// PreferencesVariable is the template variable holding the recipient's
// preference link (issue 32, item 4) on a send that names a profile.
const PreferencesVariable = "preferencesUrl"

// profileVariables are the template variables of a send: the caller's,
// plus preferencesUrl when the send names a profile (the caller's own
// value of that name wins). The variable is added only where the content
// is rendered anyway (a template, variables given, or the send's own
// content naming it), so a send by id with literal content renders
// exactly as before. link answers the profile's preference link ("" without a
// profile), for List-Unsubscribe; it is signed only when asked for, once.
func (s *Service) profileVariables(ws string, prof *notify.Recipient, in *SendInput, now time.Time) (map[string]string, func() string) {
	if prof == nil || s.preferenceLink == nil {
		return in.TemplateVariables, func() string { return "" }
	}
	var link *string
	linkOf := func() string {
		if link == nil {
			l, _ := s.preferenceLink(ws, prof, now)
			link = &l
		}
		return *link
	}
	if _, given := in.TemplateVariables[PreferencesVariable]; given {
		return in.TemplateVariables, linkOf
	}
	names := func(p *string) bool { return p != nil && strings.Contains(*p, PreferencesVariable) }
	if in.TemplateCode == "" && len(in.TemplateVariables) == 0 && !names(in.Text) && !names(in.HTML) && !names(in.Title) {
		return in.TemplateVariables, linkOf
	}
	vars := maps.Clone(in.TemplateVariables)
	if vars == nil {
		vars = map[string]string{}
	}
	vars[PreferencesVariable] = linkOf()
	return vars, linkOf
}

// listUnsubscribe is the RFC 8058 header pair of a category mail to a
// profile: the one-click POST to the preference link (its query names
// the token; category= is added here, rooms not importing each other)
// naming the category
// opts the person out of it on email. Only for email, a profile, and a
// category that is not required (nobody may opt out of one).
func listUnsubscribe(r *notify.Request, cat *notify.Category, linkOf func() string) map[string]string {
	if cat == nil || cat.Required || r.Channel != notify.ChannelEmail || r.Headers != nil {
		return r.Headers
	}
	link := linkOf()
	if link == "" {
		return r.Headers
	}
	return map[string]string{"List-Unsubscribe": "<" + link + "&category=" + url.QueryEscape(cat.Key) + ">",
		"List-Unsubscribe-Post": "List-Unsubscribe=One-Click"}
}
