package delivery

import (
	"cmp"
	"context"
	"slices"
	"sync/atomic"
	"time"

	"github.com/notifyd/notifyd/internal/dispatch"
	"github.com/notifyd/notifyd/internal/notify"
)

// Frequency caps at dispatch (issue 32, item 6). A request that names a
// recipient profile and a category with a cap is counted against the cap
// in the claim's transaction, after its preferences let it through
// (checkPreferences loaded the category and the profile's row). The count
// is a store verb that locks the pair's log until the claim commits, so
// two processes claiming at once count exactly. A request is counted
// once: its recorded decisions say whether it was (a retry or a fallback
// step is the same message, and a cap is per person, not per channel).
// Past the cap, mode drop skips the request without a call and ends it
// canceled (frequency_capped) without its fallback; mode defer halts it
// before any call, back to queued until the oldest counted send leaves
// the window. Required categories and OTP are exempt: a security notice
// is never held back by a cap.

// checkCaps counts each undecided run of runs against its category's
// cap, and saves the decisions of those it counted or stopped.
func (e *Engine) checkCaps(ctx context.Context, tx notify.Tx, runs []*run, now time.Time) error {
	var capped []*run
	for _, rn := range runs {
		r, c := rn.req, rn.cat
		// Test requests (issue 36) reach nobody, so a person's cap neither
		// counts nor holds them.
		if rn.decided || rn.profile == "" || c == nil || c.FrequencyCap == nil || c.Required ||
			r.Source == notify.SourceOTP || r.Test || counted(r) {
			continue
		}
		capped = append(capped, rn)
	}
	if len(capped) == 0 {
		return nil
	}
	// One lock order for every process, so two claims never wait on each
	// other's pairs in a cycle.
	slices.SortStableFunc(capped, func(a, b *run) int {
		return cmp.Or(cmp.Compare(a.req.WorkspaceID, b.req.WorkspaceID), cmp.Compare(a.profile, b.profile),
			cmp.Compare(a.cat.ID, b.cat.ID))
	})
	decided := make([]*notify.Request, 0, len(capped))
	for _, rn := range capped {
		r, fc := rn.req, rn.cat.FrequencyCap
		ok, until, err := tx.TakeCapRoom(ctx, r.WorkspaceID, rn.profile, rn.cat.ID, fc.Max, fc.Window(), now)
		if err != nil {
			return err
		}
		d := notify.Decision{Stage: notify.StageDispatch, At: now, Kind: notify.DecisionCap, Channel: rn.msg.Channel,
			Outcome: notify.OutcomeAllowed, Rule: fc.Rule(), Detail: capDetail(rn.cat, "counted")}
		switch {
		case ok:
		case fc.Mode == notify.CapDefer:
			d.Outcome, d.Until, d.Detail = notify.OutcomeDeferred, &until, capDetail(rn.cat, "reached: waits for room")
			rn.decided = true
			rn.out = outcome{halt: &dispatch.SnoozeError{After: max(until.Sub(now), 0), Reason: "frequency cap of " + rn.cat.Key}}
		default:
			d.Outcome, d.Detail = notify.OutcomeDropped, capDetail(rn.cat, "reached")
			rn.decided = true
			rn.out = outcome{skip: true, final: true, whole: true, code: notify.CodeFrequencyCapped,
				msg: "not delivered: " + d.Detail + " (" + d.Rule + ")"}
		}
		r.Decisions = append(r.Decisions, d)
		decided = append(decided, r)
	}
	return tx.SaveDecisions(ctx, decided)
}

// lastCapSweep is when this process last swept stale cap logs (unix ms).
var lastCapSweep atomic.Int64

// sweepCapLogs deletes, at most once a minute per process and best
// effort, the logs of pairs not counted for longer than the longest
// window: they count nothing. It runs after a claim that had a capped
// category, in a transaction of its own (a delete in the claim could
// lock rows out of the claims' order), so a workspace without caps
// never pays for it.
func (e *Engine) sweepCapLogs(ctx context.Context, runs []*run, now time.Time) {
	if !slices.ContainsFunc(runs, func(rn *run) bool { return rn.cat != nil && rn.cat.FrequencyCap != nil }) {
		return
	}
	last := lastCapSweep.Load()
	if now.UnixMilli()-last < time.Minute.Milliseconds() || !lastCapSweep.CompareAndSwap(last, now.UnixMilli()) {
		return
	}
	err := e.store.Update(ctx, func(tx notify.Tx) error {
		_, err := tx.DeleteCapLogs(ctx, now.Add(-notify.MaxCapWindowSeconds*time.Second))
		return err
	})
	if err != nil {
		e.log.Warn("sweep of frequency cap logs failed", "error", err)
	}
}

// counted reports whether r was counted against its cap at an earlier
// dispatch.
func counted(r *notify.Request) bool {
	for _, d := range r.Decisions {
		if d.Stage == notify.StageDispatch && d.Kind == notify.DecisionCap && d.Outcome == notify.OutcomeAllowed {
			return true
		}
	}
	return false
}

// capDetail: "frequency cap of category marketing reached".
func capDetail(c *notify.Category, what string) string {
	return "frequency cap of category " + c.Key + " " + what
}
