package newsletter

import (
	"context"
	"time"

	"github.com/notifyd/notifyd/internal/dispatch"
	"github.com/notifyd/notifyd/internal/notify"
)

// Estimated finish of a sending campaign (issue 31, item 2).
//
// A campaign's deliveries are bulk work: its queue jobs carry up to 100
// messages each and go out at the pace of the dispatch limits of the
// provider account they will use (the first usable route of the
// campaign's channel) and of the workspace, less what transactional sends
// take first. The estimate is the messages not yet ended divided by the
// lowest of those limits, counted from now, so it moves as the campaign
// runs. Without a limit the pace is the campaign's own so far (ended
// messages since it started), and there is no estimate before the first
// message ends.

// budget is the lowest enabled dispatch limit a delivery of campaign c
// draws on, in messages per second; 0 when none applies.
func budget(ctx context.Context, tx notify.Tx, c *notify.Campaign) (float64, error) {
	limits, err := tx.FindDispatchLimits(ctx, c.WorkspaceID)
	if err != nil || len(limits) == 0 {
		return 0, err
	}
	routes, err := tx.FindRoutes(ctx, c.WorkspaceID)
	if err != nil {
		return 0, err
	}
	accounts, err := tx.FindProviderAccounts(ctx, c.WorkspaceID)
	if err != nil {
		return 0, err
	}
	enabled := map[string]bool{}
	for _, a := range accounts {
		enabled[a.ID] = a.Enabled
	}
	var usable []*notify.Route
	for _, r := range routes {
		if r.Channel == c.Channel && r.Enabled && enabled[r.ProviderAccountID] {
			usable = append(usable, r)
		}
	}
	usable = dispatch.Order(usable, func(r *notify.Route) string { return r.ProviderAccountID },
		func(r *notify.Route) int { return r.Priority }, nil)
	account := ""
	if len(usable) > 0 {
		account = usable[0].ProviderAccountID
	}
	rate := 0.0
	for _, l := range limits {
		applies := l.Scope == notify.DispatchScopeWorkspace || (l.Scope == notify.DispatchScopeProvider && l.TargetID == account)
		if l.Enabled && applies && l.RatePerSecond > 0 && (rate == 0 || float64(l.RatePerSecond) < rate) {
			rate = float64(l.RatePerSecond)
		}
	}
	return rate, nil
}

// estimateFinish is when a campaign with left messages not yet ended
// will end at rate messages per second (the budget), or, without one, at
// the pace of the done messages ended since started. Nil when it cannot
// be told.
func estimateFinish(now time.Time, left, done int, rate float64, started *time.Time) *time.Time {
	if left <= 0 {
		return nil
	}
	if rate <= 0 {
		if started == nil || done <= 0 || !now.After(*started) {
			return nil
		}
		rate = float64(done) / now.Sub(*started).Seconds()
	}
	at := now.Add(time.Duration(float64(left) / rate * float64(time.Second))).UTC()
	return &at
}
