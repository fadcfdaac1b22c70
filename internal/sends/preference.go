package sends

import (
	"github.com/notifyd/notifyd/internal/notify"
	"github.com/notifyd/notifyd/internal/usecase"
)

// Preferences at acceptance (issue 32, item 3). A send that names a
// category or a recipient profile is decided on each channel it may use
// (its own, then its fallback steps): the request starts at the first
// channel the preferences allow, and when they forbid every one it is
// accepted in its final state, canceled with code preference_opt_out and
// the rule that applied, and no job. The engine decides again when it
// dispatches (delivery/preference.go), so a change in between counts. A
// send by address without a category decides nothing: SPEC's send.

// checkCategory holds a send's category key to the bound of a key; an
// unknown key is found when the preferences are read.
func checkCategory(f func(string) string, key *string) error {
	if key == nil {
		return nil
	}
	if *key == "" {
		return notify.Invalid("%s must not be empty", f("category"))
	}
	return usecase.MaxLen(f("category"), *key, 64)
}

// decidePreferences decides r on each of its channels with the
// preferences of sc, and sets it canceled when none is allowed.
func decidePreferences(r *notify.Request, sc *notify.SendContext, prefix string) error {
	if r.Category != "" && sc.Category == nil {
		return notify.Invalid("%scategory: no category %s in this workspace", prefix, r.Category)
	}
	channels := []notify.Channel{r.Channel}
	if r.Fallback != nil {
		for _, st := range r.Fallback.Steps {
			channels = append(channels, st.Channel)
		}
	}
	first := -1
	var last notify.PreferenceDecision
	sp := sc.Preferences
	for i, ch := range channels {
		d := sp.Decide(ch)
		out := notify.OutcomeAllowed
		if !d.Allowed {
			out = notify.OutcomeBlocked
		}
		r.Decisions = append(r.Decisions, notify.Decision{Stage: notify.StageAcceptance, At: r.RequestedAt, Kind: notify.DecisionPreference,
			Channel: ch, Outcome: out, Rule: string(d.Rule), Detail: d.Explain(sc.Category, ch)})
		if d.Allowed && first < 0 {
			first = i
		}
		if i == 0 || !d.Allowed {
			last = d
		}
	}
	switch {
	case first > 0:
		r.FallbackStep = first // the first channel allowed is where delivery starts
	case first < 0:
		r.Status, r.FinalErrorCode = notify.StatusCanceled, notify.CodePreferenceOptOut
		r.FinalErrorMessage = "not delivered: " + last.Explain(sc.Category, channels[len(channels)-1])
	}
	return nil
}
