// Package kinds lists every provider kind that ships: the one place an
// adapter is registered (no init() registration).
package kinds

import (
	"sort"

	"github.com/notifyd/notifyd/internal/provider"
	"github.com/notifyd/notifyd/internal/provider/aligo"
	"github.com/notifyd/notifyd/internal/provider/discord"
	"github.com/notifyd/notifyd/internal/provider/fcm"
	"github.com/notifyd/notifyd/internal/provider/postmark"
	"github.com/notifyd/notifyd/internal/provider/resend"
	"github.com/notifyd/notifyd/internal/provider/ses"
	"github.com/notifyd/notifyd/internal/provider/slack"
	"github.com/notifyd/notifyd/internal/provider/solapi"
)

// Registry maps a providerKind to its description.
type Registry map[string]provider.Kind

// All returns the twelve kinds of SPEC's provider table.
func All() Registry {
	r := Registry{}
	for _, k := range []provider.Kind{
		aligo.MsgrKind(), solapi.MsgrKind(), aligo.SMSKind(), solapi.SMSKind(),
		fcm.Kind(), resend.Kind(), ses.Kind(), postmark.Kind(),
		slack.WebhookKind(), slack.BotKind(), discord.WebhookKind(), discord.BotKind(),
	} {
		r[k.ID] = k
	}
	return r
}

// IDs lists the kind ids, sorted.
func (r Registry) IDs() []string {
	out := make([]string, 0, len(r))
	for id := range r {
		out = append(out, id)
	}
	sort.Strings(out)
	return out
}
