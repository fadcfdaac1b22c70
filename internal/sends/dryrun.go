package sends

import (
	"context"
	"fmt"
	"time"

	"github.com/notifyd/notifyd/internal/dispatch"
	"github.com/notifyd/notifyd/internal/gate"
	"github.com/notifyd/notifyd/internal/notify"
)

// A dry run (issue 32, item 7): POST /v1/notifications with "dryRun": true
// answers what the send would do, from the same validation, rendering,
// address resolution, preferences and windows an accepted send goes
// through, plus what dispatch would find (a suppressed address, the route
// order with each account's circuit, what the category's frequency cap
// would decide now), and writes no request, job or
// event. The call still records its nonce and counts toward the request
// limits, in the send group commit: those guard the signed API, whatever
// the call does.

// DryRunResult is what a send would do.
type DryRunResult struct {
	Request    *notify.Request // as it would be accepted (never stored)
	Suppressed bool            // the email address is on the suppression list
	Routes     []DryRunRoute   // the dispatch order on the channel it would start on
}

// DryRunRoute is one route dispatch would try, with its circuit.
type DryRunRoute struct {
	Account     *notify.ProviderAccount
	Priority    int
	Breaker     notify.BreakerState
	OpenedUntil *time.Time
}

// DryRun answers what Send would do with in, writing nothing of it.
func (s *Service) DryRun(ctx context.Context, key *notify.APIKey, nonce *gate.Nonce, in *SendInput) (*DryRunResult, error) {
	var r *notify.Request
	err := s.submit(ctx, key, nonce, func(c *acceptCall) (err error) {
		r, err = s.prepareOne(ctx, c, in)
		return err // no accepts: the commit records the nonce and the limits only
	})
	if err != nil {
		return nil, err
	}
	out := &DryRunResult{Request: r}
	if r.Status.Terminal() {
		return out, nil
	}
	target := r.Target()
	err = s.Store.View(ctx, func(tx notify.Tx) error {
		if err := capDecision(ctx, tx, r, s.Now()); err != nil {
			return err
		}
		if target.Channel == notify.ChannelEmail {
			sup, err := tx.FindSuppressed(ctx, r.WorkspaceID, []string{target.RecipientAddress})
			if err != nil {
				return err
			}
			out.Suppressed = sup[target.RecipientAddress]
		}
		routes, err := tx.FindRoutes(ctx, r.WorkspaceID)
		if err != nil {
			return err
		}
		accounts, err := tx.FindProviderAccounts(ctx, r.WorkspaceID)
		if err != nil {
			return err
		}
		byID := map[string]*notify.ProviderAccount{}
		for _, a := range accounts {
			byID[a.ID] = a
		}
		var usable []*notify.Route
		var ids []string
		for _, rt := range routes {
			if a := byID[rt.ProviderAccountID]; rt.Channel == target.Channel && rt.Enabled && a != nil && a.Enabled {
				usable = append(usable, rt)
				ids = append(ids, a.ID)
			}
		}
		usable = dispatch.Order(usable, func(rt *notify.Route) string { return rt.ProviderAccountID },
			func(rt *notify.Route) int { return rt.Priority }, r.PreferredProviderIDs)
		breakers, err := tx.FindBreakers(ctx, ids)
		if err != nil {
			return err
		}
		for _, rt := range usable {
			dr := DryRunRoute{Account: byID[rt.ProviderAccountID], Priority: rt.Priority, Breaker: notify.BreakerClosed}
			if b := breakers[rt.ProviderAccountID]; b != nil && b.State != "" {
				dr.Breaker = b.State
				if b.State == notify.BreakerOpen {
					until := b.OpenedUntil
					dr.OpenedUntil = &until
				}
			}
			out.Routes = append(out.Routes, dr)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// capDecision adds what the frequency cap of r's category would decide
// if r were dispatched at now, as dispatch decides it (delivery/cap.go)
// but without counting: the pair's log is read, not taken.
func capDecision(ctx context.Context, tx notify.Tx, r *notify.Request, now time.Time) error {
	if r.RecipientID == "" || r.Category == "" || r.Source == notify.SourceOTP {
		return nil
	}
	cat, err := tx.FindCategory(ctx, r.WorkspaceID, r.Category)
	if err != nil {
		return err
	}
	fc := cat.FrequencyCap
	if fc == nil || cat.Required {
		return nil
	}
	prof, err := tx.FindRecipient(ctx, r.WorkspaceID, r.RecipientID)
	if err != nil {
		return err
	}
	sent, err := tx.FindCapLog(ctx, r.WorkspaceID, prof.ID, cat.ID)
	if err != nil {
		return err
	}
	kept, ok, until := notify.CapRoom(sent, fc.Max, fc.Window(), now)
	d := notify.Decision{Stage: notify.StageDispatch, At: now, Kind: notify.DecisionCap, Channel: r.StepChannel(),
		Outcome: notify.OutcomeAllowed, Rule: fc.Rule(),
		Detail: fmt.Sprintf("frequency cap of category %s: %d of %d counted in the window", cat.Key, len(kept), fc.Max)}
	switch {
	case ok:
		d.Detail += "; this one would be counted"
	case fc.Mode == notify.CapDefer:
		d.Outcome, d.Until = notify.OutcomeDeferred, &until
		d.Detail += "; it would wait for room"
	default:
		d.Outcome = notify.OutcomeDropped
		d.Detail += "; it would be dropped"
	}
	r.Decisions = append(r.Decisions, d)
	return nil
}
