// Package rooms names every use-case room once: the daemon builds a Set,
// and the API and the console take it whole, so adding a room touches
// this list and the rooms that serve it, not every constructor.
package rooms

import (
	"github.com/notifyd/notifyd/internal/accounts"
	"github.com/notifyd/notifyd/internal/categories"
	"github.com/notifyd/notifyd/internal/engagement"
	"github.com/notifyd/notifyd/internal/identities"
	"github.com/notifyd/notifyd/internal/inboundhooks"
	"github.com/notifyd/notifyd/internal/inbox"
	"github.com/notifyd/notifyd/internal/limits"
	"github.com/notifyd/notifyd/internal/newsletter"
	"github.com/notifyd/notifyd/internal/providers"
	"github.com/notifyd/notifyd/internal/receipts"
	"github.com/notifyd/notifyd/internal/recipients"
	"github.com/notifyd/notifyd/internal/retention"
	"github.com/notifyd/notifyd/internal/sends"
	"github.com/notifyd/notifyd/internal/suppressions"
	"github.com/notifyd/notifyd/internal/templates"
	"github.com/notifyd/notifyd/internal/verification"
	"github.com/notifyd/notifyd/internal/webhooks"
	"github.com/notifyd/notifyd/internal/windows"
	"github.com/notifyd/notifyd/internal/workflows"
)

// Set is one of each room.
type Set struct {
	Accounts     *accounts.Service     // workspaces, logins, sessions, members, API keys
	Categories   *categories.Service   // message categories and recipients' preferences
	Engagement   *engagement.Service   // e-mail open and click tracking, campaign statistics
	Windows      *windows.Service      // send windows
	Identities   *identities.Service   // sending identities and their DNS check
	InboundHooks *inboundhooks.Service // inbound hooks: other tools' payloads as sends
	Inbox        *inbox.Service        // the in-app inbox: recipients' messages, states and streams
	Limits       *limits.Service       // rate-limit policies and dispatch limits
	Newsletter   *newsletter.Service   // subscribers, campaigns, fan-out
	Providers    *providers.Service    // provider accounts, routes, test-sends
	Receipts     *receipts.Service     // delivery receipts: vendor reports, their events and fallback
	Recipients   *recipients.Service   // recipient profiles
	Retention    *retention.Service    // deletion of old data
	Sends        *sends.Service        // sends, lookups, cancel, dead letters
	Suppressions *suppressions.Service // the suppression list and bounce intake
	Templates    *templates.Service    // templates, versions, preview, layouts
	Verification *verification.Service // OTP and its fraud guard
	Webhooks     *webhooks.Service     // outbound webhooks
	Workflows    *workflows.Service    // workflows: definitions, triggers, runs
}
