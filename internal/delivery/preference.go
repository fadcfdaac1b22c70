package delivery

import (
	"context"
	"time"

	"github.com/notifyd/notifyd/internal/notify"
)

// Preferences at dispatch (issue 32, item 3). A request that names a
// category or a recipient profile was decided when it was accepted; it is
// decided again here, in the claim's transaction, on the channel it is
// about to use, so a preference changed in between counts. A forbidden
// channel is skipped without a call: the next step of a channel fallback
// takes over, else the request ends canceled (settle, outcome.skip). The
// decision is added to the request's decisions either way, and saved with
// the run's settlement (SettleRequests) rather than by an UPDATE of every
// request row in the claim. A run that dies before its settlement decides
// again.

// checkPreferences decides each undecided run of runs that has a category
// or a recipient. The reads are a fixed number of statements per
// workspace of the claim (FindSendPreferencesMany), whatever the job's
// size: they run inside the claim's transaction, which on SQLite holds
// the one writer.
func (e *Engine) checkPreferences(ctx context.Context, tx notify.Tx, runs []*run, now time.Time) error {
	byWS := map[string][]*run{}
	var order []string
	for _, rn := range runs {
		r := rn.req
		if rn.decided || (r.Category == "" && r.RecipientID == "") {
			continue
		}
		if byWS[r.WorkspaceID] == nil {
			order = append(order, r.WorkspaceID)
		}
		byWS[r.WorkspaceID] = append(byWS[r.WorkspaceID], rn)
	}
	for _, ws := range order {
		group := byWS[ws]
		qs := make([]notify.PreferenceQuery, len(group))
		for i, rn := range group {
			qs[i] = notify.PreferenceQuery{RecipientExternalID: rn.req.RecipientID, CategoryKey: rn.req.Category, Channel: rn.msg.Channel}
		}
		sps, err := tx.FindSendPreferencesMany(ctx, ws, qs)
		if err != nil {
			return err
		}
		for i, rn := range group {
			// A category deleted since acceptance reads as none, a profile
			// erased since as one without preferences.
			ch, sp := rn.msg.Channel, sps[i]
			rn.cat, rn.profile = sp.Category, sp.RecipientRow
			d := sp.Decide(ch)
			out := notify.OutcomeAllowed
			if !d.Allowed {
				out = notify.OutcomeBlocked
				rn.decided = true
				rn.out = outcome{skip: true, final: true, code: notify.CodePreferenceOptOut, msg: "not delivered: " + d.Explain(sp.Category, ch)}
			}
			rn.req.Decisions = append(rn.req.Decisions, notify.Decision{Stage: notify.StageDispatch, At: now, Kind: notify.DecisionPreference,
				Channel: ch, Outcome: out, Rule: string(d.Rule), Detail: d.Explain(sp.Category, ch)})
		}
	}
	return nil
}
