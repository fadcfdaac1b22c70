package engagement

import (
	"context"
	"math"

	"github.com/notifyd/notifyd/internal/notify"
	"github.com/notifyd/notifyd/internal/usecase"
)

// CampaignStats are a campaign's numbers (issue 35, item 5). Sent counts
// the requests the vendor accepted (SPEC's sent); delivered and bounced
// the vendors' delivery reports (delivery receipts: delivered,
// undelivered); opened and clicked the requests a person opened or
// clicked at least once (a click counts as an open too); the scanner
// figures the requests only likely scanners touched. Every rate is of
// sent (docs/DECISIONS.md "Email engagement").
type CampaignStats struct {
	Campaign       *notify.Campaign
	Recipients     int
	Sent           int
	Failed         int
	Delivered      int
	Bounced        int
	Opened         int
	Clicked        int
	ScannerOpened  int
	ScannerClicked int
	Rates          Rates
	// TrackOpens and TrackClicks are the campaign's effective settings
	// now (false everywhere when tracking is off).
	TrackOpens, TrackClicks bool
	Links                   []*notify.LinkClicks
}

// Rates are shares of sent, rounded to four places; ClickToOpen is
// clicked of opened.
type Rates struct {
	Delivered, Bounced, Opened, Clicked, ClickToOpen float64
}

// Stats answers a campaign's statistics; 404 for a campaign of another
// workspace.
func (s *Service) Stats(ctx context.Context, a *usecase.Actor, id string) (*CampaignStats, error) {
	st := &CampaignStats{}
	err := s.Store.View(ctx, func(tx notify.Tx) error {
		c, err := tx.FindCampaign(ctx, a.WorkspaceID, id)
		if err != nil {
			return usecase.NotFound(err, "Campaign")
		}
		st.Campaign, st.Recipients = c, c.TotalRecipients
		counts, err := tx.CampaignRequestCounts(ctx, a.WorkspaceID, id)
		if err != nil {
			return err
		}
		st.Sent, st.Failed = counts[notify.StatusSent], counts[notify.StatusFailed]
		rc, err := tx.CampaignReceiptCounts(ctx, a.WorkspaceID, id)
		if err != nil {
			return err
		}
		st.Delivered, st.Bounced = rc[notify.ReceiptDelivered], rc[notify.ReceiptUndelivered]
		e, err := tx.FindCampaignEngagement(ctx, a.WorkspaceID, id)
		if err != nil {
			return err
		}
		st.Opened, st.Clicked, st.ScannerOpened, st.ScannerClicked, st.Links = e.Opened, e.Clicked, e.ScannerOpened, e.ScannerClick, e.Links
		return nil
	})
	if err != nil {
		return nil, err
	}
	st.Rates = Rates{Delivered: rate(st.Delivered, st.Sent), Bounced: rate(st.Bounced, st.Sent), Opened: rate(st.Opened, st.Sent),
		Clicked: rate(st.Clicked, st.Sent), ClickToOpen: rate(st.Clicked, st.Opened)}
	if st.TrackOpens, st.TrackClicks, err = s.Decide(ctx, a.WorkspaceID, "", id); err != nil {
		return nil, err
	}
	if st.Links == nil {
		st.Links = []*notify.LinkClicks{}
	}
	return st, nil
}

func rate(n, of int) float64 {
	if of <= 0 {
		return 0
	}
	return math.Round(float64(n)/float64(of)*10000) / 10000
}

// ForRequest is a request's engagement for lookups; nil when it has none
// (not tracked, or nobody opened or clicked yet). The caller has checked
// the request is the workspace's.
func (s *Service) ForRequest(ctx context.Context, ws, requestID string) (*notify.RequestEngagement, error) {
	var out *notify.RequestEngagement
	err := s.Store.Lookup(ctx, func(tx notify.Tx) error {
		e, err := tx.FindRequestEngagement(ctx, ws, requestID)
		if notify.IsNotFound(err) {
			return nil
		}
		out = e
		return err
	})
	return out, err
}
