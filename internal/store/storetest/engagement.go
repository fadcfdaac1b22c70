package storetest

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/notifyd/notifyd/internal/notify"
	"github.com/notifyd/notifyd/internal/store"
)

// Email engagement (issue 35, item 4): tracking settings per scope, hits
// added up by request and campaign link, each first-open and first-click
// event claimed once, and a campaign's figures.

func testEngagement(t *testing.T, open Opener) {
	runVerbs(t, open, []verb{
		{"FindTrackingSettings", testTrackingSettings, perWorkspace},
		{"PutTrackingSetting", testTrackingSettings, perWorkspace},
		{"DeleteTrackingSetting", testTrackingSettings, perWorkspace},
		{"AddEngagement", testAddEngagement, perWorkspace},
		{"FindRequestEngagement", testAddEngagement, perWorkspace},
		{"ClaimEngagementEvents", testClaimEngagementEvents, perWorkspace},
		{"FindCampaignEngagement", testCampaignEngagement, perWorkspace},
		{"CampaignReceiptCounts", testCampaignEngagement, perWorkspace},
	})
}

func bp(b bool) *bool { return &b }

func testTrackingSettings(t *testing.T, db *store.DB) {
	ws1, ws2 := Workspace(t, db), Workspace(t, db)
	w := &notify.TrackingSetting{WorkspaceID: ws1, Scope: notify.TrackingWorkspace, Opens: bp(true), Clicks: bp(false), UpdatedAt: t0}
	c := &notify.TrackingSetting{WorkspaceID: ws1, Scope: notify.TrackingCampaign, Key: id(), Clicks: bp(true), UpdatedAt: t0}
	update(t, db, func(ctx context.Context, tx notify.Tx) error {
		require.NoError(t, tx.PutTrackingSetting(ctx, w))
		require.NoError(t, tx.PutTrackingSetting(ctx, c))
		w2 := *w
		w2.Clicks, w2.UpdatedAt = bp(true), t0.Add(time.Second)
		require.NoError(t, tx.PutTrackingSetting(ctx, &w2), "replaces")
		w.Clicks, w.UpdatedAt = w2.Clicks, w2.UpdatedAt
		return nil
	})
	view(t, db, func(ctx context.Context, tx notify.Tx) error {
		got, err := tx.FindTrackingSettings(ctx, ws1)
		require.NoError(t, err)
		require.Equal(t, []*notify.TrackingSetting{c, w}, got, "by scope; nil inherits")
		got, err = tx.FindTrackingSettings(ctx, ws2)
		require.NoError(t, err)
		require.Empty(t, got, "another workspace")
		return nil
	})
	update(t, db, func(ctx context.Context, tx notify.Tx) error {
		require.ErrorIs(t, tx.DeleteTrackingSetting(ctx, ws2, c.Scope, c.Key), notify.ErrNotFound, "another workspace")
		require.NoError(t, tx.DeleteTrackingSetting(ctx, ws1, c.Scope, c.Key))
		require.ErrorIs(t, tx.DeleteTrackingSetting(ctx, ws1, c.Scope, c.Key), notify.ErrNotFound)
		return nil
	})
}

func testAddEngagement(t *testing.T, db *store.DB) {
	ws1, ws2 := Workspace(t, db), Workspace(t, db)
	req, camp := id(), id()
	t1, t2 := t0.Add(time.Minute), t0.Add(2*time.Minute)
	update(t, db, func(ctx context.Context, tx notify.Tx) error {
		return tx.AddEngagement(ctx, []*notify.RequestEngagement{{WorkspaceID: ws1, RequestID: req, CampaignID: camp, Opens: 1,
			ScannerClicks: 2, FirstOpenedAt: &t2, LastAt: t2}}, nil)
	})
	update(t, db, func(ctx context.Context, tx notify.Tx) error {
		return tx.AddEngagement(ctx, []*notify.RequestEngagement{{WorkspaceID: ws1, RequestID: req, CampaignID: camp, Opens: 2, Clicks: 1,
			ScannerOpens: 1, FirstOpenedAt: &t1, FirstClickedAt: &t1, LastAt: t1}}, nil)
	})
	view(t, db, func(ctx context.Context, tx notify.Tx) error {
		got, err := tx.FindRequestEngagement(ctx, ws1, req)
		require.NoError(t, err)
		require.Equal(t, &notify.RequestEngagement{WorkspaceID: ws1, RequestID: req, CampaignID: camp, Opens: 3, Clicks: 1, ScannerOpens: 1,
			ScannerClicks: 2, FirstOpenedAt: &t2, FirstClickedAt: &t1, LastAt: t2}, got, "counts add up; the stored first time stays")
		_, err = tx.FindRequestEngagement(ctx, ws2, req)
		require.ErrorIs(t, err, notify.ErrNotFound, "another workspace")
		_, err = tx.FindRequestEngagement(ctx, ws1, id())
		require.ErrorIs(t, err, notify.ErrNotFound)
		return nil
	})
}

func testClaimEngagementEvents(t *testing.T, db *store.DB) {
	ws := Workspace(t, db)
	opened, scanned := id(), id()
	update(t, db, func(ctx context.Context, tx notify.Tx) error {
		return tx.AddEngagement(ctx, []*notify.RequestEngagement{
			{WorkspaceID: ws, RequestID: opened, Opens: 1, FirstOpenedAt: &t0, LastAt: t0},
			{WorkspaceID: ws, RequestID: scanned, ScannerOpens: 1, ScannerClicks: 1, LastAt: t0},
		}, nil)
	})
	update(t, db, func(ctx context.Context, tx notify.Tx) error {
		got, err := tx.ClaimEngagementEvents(ctx, notify.HitOpen, []string{opened, scanned, id()})
		require.NoError(t, err)
		require.Equal(t, []string{opened}, got, "only a request a person opened")
		got, err = tx.ClaimEngagementEvents(ctx, notify.HitOpen, []string{opened})
		require.NoError(t, err)
		require.Empty(t, got, "once")
		got, err = tx.ClaimEngagementEvents(ctx, notify.HitClick, []string{opened, scanned})
		require.NoError(t, err)
		require.Empty(t, got, "nobody clicked")
		got, err = tx.ClaimEngagementEvents(ctx, notify.HitClick, nil)
		require.NoError(t, err)
		require.Empty(t, got)
		return nil
	})
}

func testCampaignEngagement(t *testing.T, db *store.DB) {
	s := campaignFixture(t, db)
	c := s.a
	r1, _ := campaignRequest(t, db, c, "a@example.com")
	r2, _ := campaignRequest(t, db, c, "b@example.com")
	r3, _ := campaignRequest(t, db, c, "c@example.com")
	update(t, db, func(ctx context.Context, tx notify.Tx) error {
		d, u := newReceipt(s.ws1, r1.ID, "M-"+id()), newReceipt(s.ws1, r2.ID, "M-"+id())
		d.Status, u.Status = notify.ReceiptDelivered, notify.ReceiptUndelivered
		p := newReceipt(s.ws1, r3.ID, "M-"+id())
		require.NoError(t, tx.CreateReceipts(ctx, []*notify.Receipt{d, u, p}, []bool{false, false, false}, 0))
		require.NoError(t, tx.AddEngagement(ctx, []*notify.RequestEngagement{
			{WorkspaceID: s.ws1, RequestID: r1.ID, CampaignID: c.ID, Opens: 2, Clicks: 1, FirstOpenedAt: &t0, FirstClickedAt: &t0, LastAt: t0},
			{WorkspaceID: s.ws1, RequestID: r2.ID, CampaignID: c.ID, ScannerOpens: 1, ScannerClicks: 1, LastAt: t0},
		}, []*notify.LinkClicks{
			{WorkspaceID: s.ws1, CampaignID: c.ID, URLHash: "h1", URL: "https://a.example/1", Index: 1, Clicks: 1},
			{WorkspaceID: s.ws1, CampaignID: c.ID, URLHash: "h0", URL: "https://a.example/0", Index: 0, ScannerClicks: 1},
		}))
		// The same link again: counts add up.
		return tx.AddEngagement(ctx, nil, []*notify.LinkClicks{
			{WorkspaceID: s.ws1, CampaignID: c.ID, URLHash: "h1", URL: "https://a.example/1", Index: 1, Clicks: 2}})
	})
	view(t, db, func(ctx context.Context, tx notify.Tx) error {
		got, err := tx.FindCampaignEngagement(ctx, s.ws1, c.ID)
		require.NoError(t, err)
		require.Equal(t, &notify.CampaignEngagement{Opened: 1, Clicked: 1, ScannerOpened: 1, ScannerClick: 1, Links: []*notify.LinkClicks{
			{WorkspaceID: s.ws1, CampaignID: c.ID, URLHash: "h1", URL: "https://a.example/1", Index: 1, Clicks: 3},
			{WorkspaceID: s.ws1, CampaignID: c.ID, URLHash: "h0", URL: "https://a.example/0", Index: 0, ScannerClicks: 1},
		}}, got)
		got, err = tx.FindCampaignEngagement(ctx, s.ws2, c.ID)
		require.NoError(t, err)
		require.Equal(t, &notify.CampaignEngagement{}, got, "another workspace")
		counts, err := tx.CampaignReceiptCounts(ctx, s.ws1, c.ID)
		require.NoError(t, err)
		require.Equal(t, map[string]int{notify.ReceiptDelivered: 1, notify.ReceiptUndelivered: 1, notify.ReceiptPending: 1}, counts)
		counts, err = tx.CampaignReceiptCounts(ctx, s.ws2, c.ID)
		require.NoError(t, err)
		require.Empty(t, counts)
		return nil
	})
}
