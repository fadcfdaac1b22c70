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
// decision is added to the request's recorded decisions either way.

// checkPreferences decides each undecided run of runs that has a category
// or a recipient, and saves the decisions of those it decided.
func (e *Engine) checkPreferences(ctx context.Context, tx notify.Tx, runs []*run, now time.Time) error {
	var decided []*notify.Request
	rows := map[[2]string]string{} // (workspace, external id) -> profile row id ("" when erased)
	for _, rn := range runs {
		r := rn.req
		if rn.decided || (r.Category == "" && r.RecipientID == "") {
			continue
		}
		rowID, err := profileRow(ctx, tx, r, rows)
		if err != nil {
			return err
		}
		ch := rn.msg.Channel
		sp, err := tx.FindSendPreferences(ctx, r.WorkspaceID, r.Category, rowID, ch)
		if notify.IsNotFound(err) {
			// The category was deleted since acceptance: the send is
			// decided as one without a category.
			sp, err = tx.FindSendPreferences(ctx, r.WorkspaceID, "", rowID, ch)
		}
		if err != nil {
			return err
		}
		rn.cat, rn.profile = sp.Category, rowID
		d := sp.Decide(ch)
		out := notify.OutcomeAllowed
		if !d.Allowed {
			out = notify.OutcomeBlocked
			rn.decided = true
			rn.out = outcome{skip: true, final: true, code: notify.CodePreferenceOptOut, msg: "not delivered: " + d.Explain(sp.Category, ch)}
		}
		r.Decisions = append(r.Decisions, notify.Decision{Stage: notify.StageDispatch, At: now, Kind: notify.DecisionPreference,
			Channel: ch, Outcome: out, Rule: string(d.Rule), Detail: d.Explain(sp.Category, ch)})
		decided = append(decided, r)
	}
	if len(decided) == 0 {
		return nil
	}
	return tx.SaveDecisions(ctx, decided)
}

// profileRow is the row id of r's recipient profile, read once per
// profile and claim; "" for a send by address or a profile erased since
// (its preferences went with it).
func profileRow(ctx context.Context, tx notify.Tx, r *notify.Request, rows map[[2]string]string) (string, error) {
	if r.RecipientID == "" {
		return "", nil
	}
	k := [2]string{r.WorkspaceID, r.RecipientID}
	if id, ok := rows[k]; ok {
		return id, nil
	}
	p, err := tx.FindRecipient(ctx, r.WorkspaceID, r.RecipientID)
	switch {
	case notify.IsNotFound(err):
		rows[k] = ""
	case err != nil:
		return "", err
	default:
		rows[k] = p.ID
	}
	return rows[k], nil
}
