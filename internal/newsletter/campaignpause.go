package newsletter

import (
	"context"

	"github.com/notifyd/notifyd/internal/notify"
	"github.com/notifyd/notifyd/internal/usecase"
)

// Pause, resume and retry of failed recipients: additions to SPEC's
// campaign states (docs/DECISIONS.md, "Campaign pause, resume and retry").
// A paused campaign's fan-out job snoozes, and a dispatch run leaves the
// requests of a paused campaign queued (delivery.Engine.RunJob); nothing
// is re-made or re-queued at resume, so nothing is sent twice.

// CampaignPauseResult is the answer of a pause or a resume: held counts
// the campaign's queued requests (held while paused, going out after a
// resume); inFlight its requests a dispatch run had already taken when
// the pause committed, which finish.
type CampaignPauseResult struct {
	CampaignID string
	Status     string
	Queued     int
	InFlight   int
}

// CampaignRetryResult is the answer of a retry of failed recipients:
// Retried requests went back to queued; Skipped failed requests were
// left as they are because their subscriber is no longer in the
// campaign's audience (unsubscribed, suppressed, deleted, or no longer
// matching the filter); AlreadyRequeued ones were in the audience but
// another action (a dead-letter replay committing meanwhile) had queued
// them again first: they go out once, through it.
type CampaignRetryResult struct {
	CampaignID      string
	Status          string
	Retried         int
	Skipped         int
	AlreadyRequeued int
}

// PauseCampaign holds a sending campaign (audit campaign.pause): its
// fan-out stops after the batch in progress and its queued requests stay
// queued, undispatched, until a resume. 409 unless sending.
func (s *Service) PauseCampaign(ctx context.Context, a *usecase.Actor, id string) (*CampaignPauseResult, error) {
	return s.moveHeld(ctx, a, id, notify.CampaignSending, notify.CampaignPaused, "campaign.pause",
		"only a sending campaign can be paused")
}

// ResumeCampaign sends on a paused campaign (audit campaign.resume): an
// unfinished fan-out gets a new job, which skips everyone already handled,
// and the held requests go out as their dispatch jobs come back. 409
// unless paused.
func (s *Service) ResumeCampaign(ctx context.Context, a *usecase.Actor, id string) (*CampaignPauseResult, error) {
	return s.moveHeld(ctx, a, id, notify.CampaignPaused, notify.CampaignSending, "campaign.resume",
		"only a paused campaign can be resumed")
}

func (s *Service) moveHeld(ctx context.Context, a *usecase.Actor, id string, from, to notify.CampaignStatus, action, refusal string) (*CampaignPauseResult, error) {
	var res CampaignPauseResult
	// The wait for claims (LockQueuedCampaignRequests) can deadlock with a
	// claim taking the same rows in another order; PostgreSQL then ends
	// one of the two, and a pause that lost is made again.
	err := retryDeadlock(ctx, func() error {
		return s.Store.Update(ctx, func(tx notify.Tx) error {
			now := s.Now()
			// Under the campaign's lock: a fan-out batch, a cancel or a
			// detail lookup committing meanwhile is seen or waits.
			c, ok, err := lockCampaignIn(ctx, tx, a.WorkspaceID, id, []notify.CampaignStatus{from}, now)
			if err != nil {
				return err
			}
			if !ok {
				return notify.Conflict("Campaign is %s; %s", c.Status, refusal)
			}
			if err := c.MoveTo(to, now); err != nil {
				return err
			}
			if to == notify.CampaignSending && c.FanoutDoneAt == nil {
				// A new job rather than waiting for the snoozed one: the fan-out
				// goes on at once, and a job lost meanwhile is replaced.
				if c.FanoutRef != 0 {
					if err := tx.CancelScheduledWork(ctx, c.FanoutRef); err != nil {
						return err
					}
				}
				if c.FanoutRef, err = tx.ScheduleFanout(ctx, c.WorkspaceID, c.ID, nil); err != nil {
					return err
				}
			}
			if err := tx.UpdateCampaign(ctx, c); err != nil {
				return err
			}
			// A run claiming queued requests as the pause commits would take
			// them after the counts were read: wait for it first.
			if err := tx.LockQueuedCampaignRequests(ctx, c.WorkspaceID, c.ID); err != nil {
				return err
			}
			counts, err := tx.CampaignRequestCounts(ctx, c.WorkspaceID, c.ID)
			if err != nil {
				return err
			}
			res = CampaignPauseResult{CampaignID: c.ID, Status: string(to), Queued: counts[notify.StatusQueued], InFlight: counts[notify.StatusProcessing]}
			p := campaignPayload(c)
			p["queuedRequests"], p["inFlightRequests"] = res.Queued, res.InFlight
			return s.Audit(ctx, tx, a, a.WorkspaceID, action, "campaign", c.ID, p)
		})
	})
	if err != nil {
		return nil, err
	}
	return &res, nil
}

// RetryFailedCampaign re-sends a sent campaign to the recipients whose
// request failed (audit campaign.retry): each such request still in the
// campaign's audience goes back to queued with a fresh attempt budget,
// keeping its earlier attempts, and the campaign is sending again until
// they finish. A request that is not failed (sent, or queued by an
// earlier retry) is never taken, so a recipient gets the mail once; a
// second retry, once the campaign is sent again, takes only the requests
// that failed again. 409 unless sent (a sending campaign whose requests
// have all finished counts as sent, as at the detail lookup).
func (s *Service) RetryFailedCampaign(ctx context.Context, a *usecase.Actor, id string) (*CampaignRetryResult, error) {
	var res CampaignRetryResult
	// A dispatch recording results locks requests in its own order (see
	// CancelCampaign).
	err := retryDeadlock(ctx, func() error {
		return s.Store.Update(ctx, func(tx notify.Tx) error {
			var err error
			res, err = s.retryFailed(ctx, tx, a, id)
			return err
		})
	})
	if err != nil {
		return nil, err
	}
	return &res, nil
}

func (s *Service) retryFailed(ctx context.Context, tx notify.Tx, a *usecase.Actor, id string) (CampaignRetryResult, error) {
	now := s.Now()
	c, ok, err := lockCampaignIn(ctx, tx, a.WorkspaceID, id, []notify.CampaignStatus{notify.CampaignSent, notify.CampaignSending}, now)
	if err != nil {
		return CampaignRetryResult{}, err
	}
	if ok && c.Status == notify.CampaignSending {
		counts, err := tx.CampaignRequestCounts(ctx, c.WorkspaceID, c.ID)
		if err != nil {
			return CampaignRetryResult{}, err
		}
		ok = c.FanoutDoneAt != nil && counts[notify.StatusQueued]+counts[notify.StatusProcessing] == 0
	}
	if !ok {
		return CampaignRetryResult{}, notify.Conflict("Campaign is %s; only a sent campaign can retry its failed recipients", c.Status)
	}
	aud, err := ParseAudience(c.AudienceFilter)
	if err != nil {
		return CampaignRetryResult{}, err
	}
	failed, err := tx.FindFailedRecipients(ctx, c.WorkspaceID, c.ID)
	if err != nil {
		return CampaignRetryResult{}, err
	}
	var addrs []string
	for _, f := range failed {
		if f.Subscriber != nil {
			addrs = append(addrs, f.Subscriber.Address)
		}
	}
	suppressed := map[string]bool{}
	if len(addrs) > 0 {
		if suppressed, err = tx.FindSuppressed(ctx, c.WorkspaceID, addrs); err != nil {
			return CampaignRetryResult{}, err
		}
	}
	// The audience rule of the fan-out, applied again: a subscriber who
	// unsubscribed or bounced since is not mailed.
	var ids []string
	for _, f := range failed {
		x := f.Subscriber
		if x != nil && x.ConsentStatus == notify.ConsentSubscribed && !suppressed[x.Address] && aud.Match(x.Attributes) {
			ids = append(ids, f.RequestID)
		}
	}
	n, err := tx.RequeueFailedRequests(ctx, c.WorkspaceID, ids, s.jobAttempts, now)
	if err != nil {
		return CampaignRetryResult{}, err
	}
	if c.Status == notify.CampaignSending {
		// Due, as at the detail lookup.
		if err := c.MoveTo(notify.CampaignSent, now); err != nil {
			return CampaignRetryResult{}, err
		}
		c.FinishedAt = &now
	}
	if n > 0 {
		if err := c.MoveTo(notify.CampaignSending, now); err != nil {
			return CampaignRetryResult{}, err
		}
		c.FinishedAt = nil
	}
	c.UpdatedAt = now
	if err := tx.UpdateCampaign(ctx, c); err != nil {
		return CampaignRetryResult{}, err
	}
	res := CampaignRetryResult{CampaignID: c.ID, Status: string(c.Status), Retried: n, Skipped: len(failed) - len(ids),
		AlreadyRequeued: len(ids) - n}
	p := campaignPayload(c)
	p["retriedRequests"], p["skippedRequests"], p["alreadyRequeuedRequests"] = res.Retried, res.Skipped, res.AlreadyRequeued
	return res, s.Audit(ctx, tx, a, a.WorkspaceID, "campaign.retry", "campaign", c.ID, p)
}
