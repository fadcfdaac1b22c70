package storetest

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/notifyd/notifyd/internal/jobs"
	"github.com/notifyd/notifyd/internal/notify"
	"github.com/notifyd/notifyd/internal/store"
)

func newCampaign(ws string, at time.Time) *notify.Campaign {
	return &notify.Campaign{ID: id(), WorkspaceID: ws, Name: "c", Channel: notify.ChannelEmail, Status: notify.CampaignDraft,
		Subject: "s", ContentText: "t", IsAdvertisement: true, IncludeUnsubscribe: true, CreatedAt: at, UpdatedAt: at}
}

// campaignSet is two campaigns of one workspace and one of another.
type campaignSet struct {
	ws1, ws2 string
	a, b     *notify.Campaign // of ws1; a scheduled with every optional field, b a later draft
	other    *notify.Campaign // of ws2
}

func campaignFixture(t *testing.T, db *store.DB) *campaignSet {
	t.Helper()
	ws1, ws2 := Workspace(t, db), Workspace(t, db)
	a, b := newCampaign(ws1, t0), newCampaign(ws1, t0.Add(time.Millisecond))
	sched := t0.Add(time.Hour)
	a.ContentHTML, a.AudienceFilter, a.ScheduledAt, a.LinkBase = "<p>x</p>", `{"attributes":{"k":"v"}}`, &sched, "http://x"
	other := newCampaign(ws2, t0)
	update(t, db, func(ctx context.Context, tx notify.Tx) error {
		for _, c := range []*notify.Campaign{a, b, other} {
			require.NoError(t, tx.CreateCampaign(ctx, c))
		}
		return nil
	})
	return &campaignSet{ws1: ws1, ws2: ws2, a: a, b: b, other: other}
}

// campaignStarted is when startCampaign starts a campaign.
var campaignStarted = t0.Add(2 * time.Hour)

// startCampaign stores c as sending since campaignStarted, with its
// fan-out job and without its schedule and filter.
func startCampaign(t *testing.T, db *store.DB, c *notify.Campaign) {
	t.Helper()
	started := campaignStarted
	c.Status, c.StartedAt, c.FanoutRef, c.ScheduledAt, c.AudienceFilter = notify.CampaignSending, &started, 42, nil, ""
	c.UpdatedAt = started
	update(t, db, func(ctx context.Context, tx notify.Tx) error { return tx.UpdateCampaign(ctx, c) })
}

func testCampaigns(t *testing.T, open Opener) {
	runVerbs(t, open, []verb{
		{"FindCampaign", testFindCampaign, perWorkspace},
		{"FindCampaigns", testFindCampaigns, perWorkspace},
		{"UpdateCampaign", testUpdateCampaign, perWorkspace},
		{"MoveCampaign", testMoveCampaign, perWorkspace},
		{"SetCampaignProgress", testSetCampaignProgress, perWorkspace},
		{"DeleteCampaign", testDeleteCampaign, perWorkspace},
	})
}

func testFindCampaign(t *testing.T, db *store.DB) {
	s := campaignFixture(t, db)
	view(t, db, func(ctx context.Context, tx notify.Tx) error {
		got, err := tx.FindCampaign(ctx, s.ws1, s.a.ID)
		require.NoError(t, err)
		require.Equal(t, s.a, got)
		_, err = tx.FindCampaign(ctx, s.ws2, s.a.ID)
		require.ErrorIs(t, err, notify.ErrNotFound, "other workspace")
		return nil
	})
}

func testFindCampaigns(t *testing.T, db *store.DB) {
	s := campaignFixture(t, db)
	view(t, db, func(ctx context.Context, tx notify.Tx) error {
		cs, total, err := tx.FindCampaigns(ctx, s.ws1, "", 1, 0)
		require.NoError(t, err)
		require.Equal(t, 2, total)
		require.Equal(t, s.b.ID, cs[0].ID, "newest first")
		cs, _, err = tx.FindCampaigns(ctx, s.ws1, "", 10, 1)
		require.NoError(t, err)
		require.Equal(t, s.a.ID, cs[0].ID)
		cs, total, err = tx.FindCampaigns(ctx, s.ws1, notify.CampaignSent, 10, 0)
		require.NoError(t, err)
		require.Equal(t, 0, total)
		require.Empty(t, cs)
		return nil
	})
}

func testUpdateCampaign(t *testing.T, db *store.DB) {
	s := campaignFixture(t, db)
	startCampaign(t, db, s.a)
	update(t, db, func(ctx context.Context, tx notify.Tx) error {
		require.ErrorIs(t, tx.UpdateCampaign(ctx, other2(s.other, s.ws1)), notify.ErrNotFound)
		return nil
	})
	view(t, db, func(ctx context.Context, tx notify.Tx) error {
		got, err := tx.FindCampaign(ctx, s.ws1, s.a.ID)
		require.NoError(t, err)
		require.Equal(t, notify.CampaignSending, got.Status)
		require.Equal(t, int64(42), got.FanoutRef)
		require.Nil(t, got.ScheduledAt)
		require.Empty(t, got.AudienceFilter)
		return nil
	})
}

func testMoveCampaign(t *testing.T, db *store.DB) {
	s := campaignFixture(t, db)
	startCampaign(t, db, s.a)
	update(t, db, func(ctx context.Context, tx notify.Tx) error {
		ok, err := tx.MoveCampaign(ctx, s.ws1, s.b.ID, []notify.CampaignStatus{notify.CampaignScheduled, notify.CampaignSending}, notify.CampaignCanceled, t0)
		require.NoError(t, err)
		require.False(t, ok, "a draft is neither")
		ok, err = tx.MoveCampaign(ctx, s.ws2, s.a.ID, []notify.CampaignStatus{notify.CampaignSending}, notify.CampaignCanceled, t0)
		require.NoError(t, err)
		require.False(t, ok, "other workspace")
		ok, err = tx.MoveCampaign(ctx, s.ws1, s.a.ID, []notify.CampaignStatus{notify.CampaignSending}, notify.CampaignSending, campaignStarted)
		require.NoError(t, err)
		require.True(t, ok)
		return nil
	})
}

// testSetCampaignProgress: the total is set, the queued and failed counts
// are added to.
func testSetCampaignProgress(t *testing.T, db *store.DB) {
	s := campaignFixture(t, db)
	startCampaign(t, db, s.a)
	update(t, db, func(ctx context.Context, tx notify.Tx) error {
		require.NoError(t, tx.SetCampaignProgress(ctx, s.ws1, s.a.ID, 10, 3, 1, campaignStarted))
		require.NoError(t, tx.SetCampaignProgress(ctx, s.ws1, s.a.ID, 11, 2, 0, campaignStarted))
		require.ErrorIs(t, tx.SetCampaignProgress(ctx, s.ws2, s.a.ID, 1, 1, 1, campaignStarted), notify.ErrNotFound)
		return nil
	})
	view(t, db, func(ctx context.Context, tx notify.Tx) error {
		got, err := tx.FindCampaign(ctx, s.ws1, s.a.ID)
		require.NoError(t, err)
		require.Equal(t, []int{11, 5, 1}, []int{got.TotalRecipients, got.QueuedCount, got.FailedCount})
		return nil
	})
}

func testDeleteCampaign(t *testing.T, db *store.DB) {
	s := campaignFixture(t, db)
	update(t, db, func(ctx context.Context, tx notify.Tx) error {
		require.ErrorIs(t, tx.DeleteCampaign(ctx, s.ws2, s.a.ID), notify.ErrNotFound)
		require.NoError(t, tx.AddCampaignRecipients(ctx, s.b.ID, []notify.CampaignRecipient{{SubscriberID: id(), RequestID: id()}}))
		return tx.DeleteCampaign(ctx, s.ws1, s.b.ID)
	})
	view(t, db, func(ctx context.Context, tx notify.Tx) error {
		_, err := tx.FindCampaign(ctx, s.ws1, s.b.ID)
		require.ErrorIs(t, err, notify.ErrNotFound)
		n, err := tx.CountCampaignRecipients(ctx, s.b.ID)
		require.NoError(t, err)
		require.Equal(t, 0, n, "recipients go with their campaign")
		return nil
	})
}

// other2 is c moved to workspace ws (which does not own it).
func other2(c *notify.Campaign, ws string) *notify.Campaign {
	x := *c
	x.WorkspaceID = ws
	return &x
}

// fanoutSet is a campaign of ws and its would-be audience: seven email
// subscribers, two not subscribed and one suppressed, and a subscriber of
// another workspace at the first one's address.
type fanoutSet struct {
	ws, ws2 string
	subs    []*notify.Subscriber
	c       *notify.Campaign
}

func fanoutFixture(t *testing.T, db *store.DB) *fanoutSet {
	t.Helper()
	ws, ws2 := Workspace(t, db), Workspace(t, db)
	var subs []*notify.Subscriber
	for i := 0; i < 7; i++ {
		x := newSubscriber(ws, fmt.Sprintf("u%d@example.com", i), t0)
		x.ConsentStatus = notify.ConsentSubscribed
		x.Attributes = map[string]string{"even": fmt.Sprint(i%2 == 0)}
		subs = append(subs, x)
	}
	subs[5].ConsentStatus = notify.ConsentUnsubscribed
	subs[6].ConsentStatus = notify.ConsentPending
	foreign := newSubscriber(ws2, "u0@example.com", t0)
	foreign.ConsentStatus = notify.ConsentSubscribed
	c := newCampaign(ws, t0)
	update(t, db, func(ctx context.Context, tx notify.Tx) error {
		require.NoError(t, tx.UpsertSubscribers(ctx, append(subs, foreign)))
		require.NoError(t, tx.PutSuppression(ctx, ws, "u4@example.com", notify.SuppressComplaint, t0))
		return tx.CreateCampaign(ctx, c)
	})
	return &fanoutSet{ws: ws, ws2: ws2, subs: subs, c: c}
}

// fanoutRequests accepts requests of the campaign to its first three
// subscribers and marks the first sent.
func fanoutRequests(t *testing.T, db *store.DB, s *fanoutSet) []*notify.Accept {
	t.Helper()
	var accs []*notify.Accept
	for i := 0; i < 3; i++ {
		r := newRequest(s.ws, "")
		r.Channel, r.Source, r.CampaignID, r.RecipientAddress = notify.ChannelEmail, notify.SourceCampaign, s.c.ID, s.subs[i].Address
		accs = append(accs, &notify.Accept{Request: r, MaxAttempts: 3})
	}
	update(t, db, func(ctx context.Context, tx notify.Tx) error {
		require.NoError(t, tx.AcceptRequests(ctx, accs, t0))
		accs[0].Request.Status = notify.StatusSent
		return tx.UpdateRequest(ctx, accs[0].Request)
	})
	return accs
}

func testCampaignFanout(t *testing.T, open Opener) {
	runVerbs(t, open, []verb{
		{"CountAudience", testCountAudience, perWorkspace},
		{"FindFanoutPage", testFindFanoutPage, perWorkspace},
		{"AddCampaignRecipients", testAddCampaignRecipients, perWorkspace},
		{"CampaignRequestCounts", testCampaignRequestCounts, perWorkspace},
		{"CancelCampaignRequests", testCancelCampaignRequests, perWorkspace},
		{"ScheduleFanout", testScheduleFanout, perWorkspace},
	})
}

func testCountAudience(t *testing.T, db *store.DB) {
	s := fanoutFixture(t, db)
	even := &notify.Audience{Conds: map[string]string{"even": "true"}}
	view(t, db, func(ctx context.Context, tx notify.Tx) error {
		for _, tc := range []struct {
			aud  *notify.Audience
			want int
		}{{nil, 4}, {even, 2}, {&notify.Audience{Never: true, Conds: map[string]string{"even": "true"}}, 0}} {
			n, err := tx.CountAudience(ctx, s.ws, notify.ChannelEmail, tc.aud, "")
			require.NoError(t, err)
			require.Equal(t, tc.want, n, "subscribed, not suppressed, matching")
		}
		return nil
	})
}

func testFindFanoutPage(t *testing.T, db *store.DB) {
	s := fanoutFixture(t, db)
	view(t, db, func(ctx context.Context, tx notify.Tx) error {
		page, err := tx.FindFanoutPage(ctx, s.ws, s.c.ID, notify.ChannelEmail, "", 3)
		require.NoError(t, err)
		require.Len(t, page, 3)
		require.Less(t, page[0].ID, page[1].ID, "by id")
		rest, err := tx.FindFanoutPage(ctx, s.ws, s.c.ID, notify.ChannelEmail, page[2].ID, 3)
		require.NoError(t, err)
		require.Len(t, rest, 1)
		return nil
	})
}

// testAddCampaignRecipients: recorded recipients leave the page and the
// remaining count; a conflicting insert records none of its rows.
func testAddCampaignRecipients(t *testing.T, db *store.DB) {
	s := fanoutFixture(t, db)
	c, subs := s.c, s.subs
	update(t, db, func(ctx context.Context, tx notify.Tx) error {
		return tx.AddCampaignRecipients(ctx, c.ID, []notify.CampaignRecipient{{SubscriberID: subs[0].ID, RequestID: id()},
			{SubscriberID: subs[1].ID}})
	})
	conflict(t, db, func(ctx context.Context, tx notify.Tx) error {
		return tx.AddCampaignRecipients(ctx, c.ID, []notify.CampaignRecipient{{SubscriberID: subs[2].ID}, {SubscriberID: subs[0].ID}})
	})
	view(t, db, func(ctx context.Context, tx notify.Tx) error {
		n, err := tx.CountCampaignRecipients(ctx, c.ID)
		require.NoError(t, err)
		require.Equal(t, 2, n, "the conflicting insert left nothing")
		n, err = tx.CountAudience(ctx, s.ws, notify.ChannelEmail, nil, c.ID)
		require.NoError(t, err)
		require.Equal(t, 2, n)
		page, err := tx.FindFanoutPage(ctx, s.ws, c.ID, notify.ChannelEmail, "", 10)
		require.NoError(t, err)
		require.Equal(t, []string{subs[2].ID, subs[3].ID}, []string{page[0].ID, page[1].ID})
		return nil
	})
}

func testCampaignRequestCounts(t *testing.T, db *store.DB) {
	s := fanoutFixture(t, db)
	fanoutRequests(t, db, s)
	view(t, db, func(ctx context.Context, tx notify.Tx) error {
		counts, err := tx.CampaignRequestCounts(ctx, s.ws, s.c.ID)
		require.NoError(t, err)
		require.Equal(t, map[notify.RequestStatus]int{notify.StatusSent: 1, notify.StatusQueued: 2}, counts)
		return nil
	})
}

// testCancelCampaignRequests: the bulk cancel takes the campaign's open
// requests and their jobs, and answers them in their new state.
func testCancelCampaignRequests(t *testing.T, db *store.DB) {
	s := fanoutFixture(t, db)
	ws, c := s.ws, s.c
	accs := fanoutRequests(t, db, s)
	var canceled int
	update(t, db, func(ctx context.Context, tx notify.Tx) error {
		none, err := tx.CancelCampaignRequests(ctx, s.ws2, c.ID, "canceled_by_api", "m", t0)
		require.NoError(t, err)
		require.Empty(t, none, "other workspace")
		rs, err := tx.CancelCampaignRequests(ctx, ws, c.ID, "canceled_by_api", "m", t0)
		require.NoError(t, err)
		for _, r := range rs {
			require.Equal(t, notify.StatusCanceled, r.Status, "the returned requests show their new state")
			require.Equal(t, "canceled_by_api", r.FinalErrorCode)
			require.Equal(t, ws, r.WorkspaceID)
		}
		canceled = len(rs)
		return nil
	})
	require.Equal(t, 2, canceled)
	view(t, db, func(ctx context.Context, tx notify.Tx) error {
		counts, err := tx.CampaignRequestCounts(ctx, ws, c.ID)
		require.NoError(t, err)
		require.Equal(t, map[notify.RequestStatus]int{notify.StatusSent: 1, notify.StatusCanceled: 2}, counts)
		r, err := tx.FindRequest(ctx, ws, accs[1].Request.ID)
		require.NoError(t, err)
		require.Equal(t, "canceled_by_api", r.FinalErrorCode)
		j, err := tx.FindJobByRequest(ctx, ws, accs[1].Request.ID)
		require.NoError(t, err)
		require.Equal(t, notify.JobCanceled, j.Status)
		j, err = tx.FindJobByRequest(ctx, ws, accs[0].Request.ID)
		require.NoError(t, err)
		require.Equal(t, notify.JobQueued, j.Status, "the sent request's job is left alone")
		return nil
	})
}

// testScheduleFanout: the fan-out job goes on its queue.
func testScheduleFanout(t *testing.T, db *store.DB) {
	ws := Workspace(t, db)
	c := newCampaign(ws, t0)
	update(t, db, func(ctx context.Context, tx notify.Tx) error { return tx.CreateCampaign(ctx, c) })
	before := countRows(t, db, "river_job")
	var jobID int64
	at := t0.Add(time.Hour)
	update(t, db, func(ctx context.Context, tx notify.Tx) (err error) {
		jobID, err = tx.ScheduleFanout(ctx, ws, c.ID, &at)
		return err
	})
	require.NotZero(t, jobID)
	require.Equal(t, before+1, countRows(t, db, "river_job"))
}

// testAcceptManyPlain accepts more requests without idempotency keys than
// one multi-row statement holds, mixed with keyed ones.
func testAcceptManyPlain(t *testing.T, db *store.DB) {
	ws := Workspace(t, db)
	var accs []*notify.Accept
	for i := 0; i < 1203; i++ {
		key := ""
		if i%400 == 0 {
			key = fmt.Sprintf("k%d", i)
		}
		accs = append(accs, &notify.Accept{Request: newRequest(ws, key), MaxAttempts: 3})
	}
	before := countRows(t, db, "river_job")
	update(t, db, func(ctx context.Context, tx notify.Tx) error { return tx.AcceptRequests(ctx, accs, t0) })
	require.Equal(t, 1203, countRows(t, db, "notification_requests"))
	require.Equal(t, 1203, countRows(t, db, "notification_jobs"))
	// Requests to run at once share queue jobs of up to DispatchBatchMax.
	require.Equal(t, before+(1203+jobs.DispatchBatchMax-1)/jobs.DispatchBatchMax, countRows(t, db, "river_job"))
	perJob := map[int64]int{}
	for _, a := range accs {
		perJob[a.Job.QueueJobID]++
	}
	for _, n := range perJob {
		require.LessOrEqual(t, n, jobs.DispatchBatchMax)
	}
	view(t, db, func(ctx context.Context, tx notify.Tx) error {
		for _, a := range []*notify.Accept{accs[0], accs[1], accs[1202]} {
			require.NotNil(t, a.Job)
			require.NotZero(t, a.Job.QueueJobID)
			got, err := tx.FindRequest(ctx, ws, a.Request.ID)
			require.NoError(t, err)
			require.Equal(t, a.Request.Metadata, got.Metadata)
		}
		return nil
	})
}
