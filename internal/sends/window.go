package sends

import (
	"time"

	"github.com/notifyd/notifyd/internal/notify"
	"github.com/notifyd/notifyd/internal/sendwindow"
)

// Send windows at acceptance (issue 32, item 5). A send that names a
// recipient profile or a category, or gives its own sendWindow, leaves
// only when every window that applies is open: the workspace's, its
// category's, its own, and for advertising to a phone the Korean night
// rule (21:00 to 08:00 Asia/Seoul) unless the recipient gave the night
// consent. A send outside them is held, never dropped: its scheduledAt
// becomes the next common opening (its job waits in the queue, status
// scheduled) and the hold is recorded with the rule that held it last.
// Sends marked urgent and sends of a required category are exempt. A
// send by address without a category and without its own window keeps
// SPEC's behaviour.

// WindowInput is a send's own window.
type WindowInput struct {
	Hours    string
	Days     []string
	TimeZone string
}

// Rule names of the windows, as explanations show them.
const (
	windowWorkspace = "workspace"
	windowCategory  = "category"
	windowSend      = "send"
	windowKRNight   = "kr-night-advertising"
)

// checkWindow validates a send's own window.
func checkWindow(f func(string) string, in *WindowInput) error {
	if in == nil {
		return nil
	}
	if _, err := sendwindow.Parse(in.Hours, in.Days); err != nil {
		return notify.Invalid("%s%s", f("sendWindow."), err.Error())
	}
	if in.TimeZone != "" {
		if _, err := zone(in.TimeZone); err != nil {
			return notify.Invalid("%s must be an IANA time zone such as Asia/Seoul or America/New_York", f("sendWindow.timeZone"))
		}
	}
	return nil
}

func zone(name string) (*time.Location, error) { return sendwindow.Zone(name) }

// phoneChannels are the channels the Korean night rule covers.
func phoneChannel(ch notify.Channel) bool {
	return ch == notify.ChannelSMS || ch == notify.ChannelAlimTalk
}

// holdForWindows applies the windows of sc to r (accepted at now; sc is
// nil for a send that names no profile, category or window), moving its scheduledAt to the
// next common opening when a window is closed.
func holdForWindows(r *notify.Request, sc *notify.SendContext, in *SendInput, now time.Time, prefix string) error {
	if sc == nil {
		return nil
	}
	cat, prof, stored := sc.Category, sc.Recipient, sc.Windows
	// The zone: the recipient's, else the workspace window's, else UTC.
	loc := time.UTC
	for _, w := range stored {
		if w.CategoryID == "" && w.TimeZone != "" {
			if l, err := zone(w.TimeZone); err == nil {
				loc = l
			}
		}
	}
	if prof != nil && prof.TimeZone != "" {
		if l, err := zone(prof.TimeZone); err == nil {
			loc = l
		}
	}
	var rules []sendwindow.Rule
	for _, w := range stored {
		win, err := sendwindow.Parse(w.Hours, w.Days)
		if err != nil {
			continue // stored windows were checked when they were set
		}
		name := windowWorkspace
		if w.CategoryID != "" {
			name = windowCategory + ":" + w.CategoryKey
		}
		rules = append(rules, sendwindow.Rule{Name: name, Window: win, Loc: loc})
	}
	if sw := in.SendWindow; sw != nil {
		win, _ := sendwindow.Parse(sw.Hours, sw.Days) // checked by validateSend
		l := loc
		if sw.TimeZone != "" {
			l, _ = zone(sw.TimeZone)
		}
		rules = append(rules, sendwindow.Rule{Name: windowSend, Window: win, Loc: l})
	}
	ch := r.StepChannel()
	if cat != nil && cat.Advertising && phoneChannel(ch) {
		if !nightConsent(sc) {
			rules = append(rules, sendwindow.Rule{Name: windowKRNight, Window: sendwindow.KoreanAdDay, Loc: sendwindow.Seoul})
		}
	}
	if len(rules) == 0 {
		return nil
	}
	exempt := ""
	switch {
	case in.Urgent:
		exempt = "urgent"
	case cat != nil && cat.Required:
		exempt = "required"
	}
	if exempt != "" {
		r.Decisions = append(r.Decisions, notify.Decision{Stage: notify.StageAcceptance, At: now, Kind: notify.DecisionWindow,
			Channel: ch, Outcome: notify.OutcomeAllowed, Rule: exempt, Detail: "exempt from send windows"})
		return nil
	}
	from := now
	if r.ScheduledAt != nil {
		from = *r.ScheduledAt
	}
	at, by, ok := sendwindow.Earliest(from, rules)
	if !ok {
		return notify.Invalid("%ssendWindow: the windows of this send never open together", prefix)
	}
	if !at.After(from) {
		r.Decisions = append(r.Decisions, notify.Decision{Stage: notify.StageAcceptance, At: now, Kind: notify.DecisionWindow,
			Channel: ch, Outcome: notify.OutcomeAllowed, Rule: "open"})
		return nil
	}
	at = at.UTC()
	r.ScheduledAt = &at
	r.Decisions = append(r.Decisions, notify.Decision{Stage: notify.StageAcceptance, At: now, Kind: notify.DecisionWindow,
		Channel: ch, Outcome: notify.OutcomeHeld, Rule: by, Detail: "held until the window opens", Until: &at})
	return nil
}

// nightConsent reports whether the profile gave the Korean night
// advertising consent (a send by address has no profile to give it).
func nightConsent(sc *notify.SendContext) bool {
	if sc.Recipient == nil {
		return false
	}
	for _, c := range sc.Consents {
		if c.Kind == notify.ConsentNightAdvertising {
			return true
		}
	}
	return false
}
