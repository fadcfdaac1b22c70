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

func testCampaigns(t *testing.T, db *store.DB) {
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
	view(t, db, func(ctx context.Context, tx notify.Tx) error {
		got, err := tx.FindCampaign(ctx, ws1, a.ID)
		require.NoError(t, err)
		require.Equal(t, a, got)
		_, err = tx.FindCampaign(ctx, ws2, a.ID)
		require.ErrorIs(t, err, notify.ErrNotFound, "other workspace")
		cs, total, err := tx.FindCampaigns(ctx, ws1, "", 1, 0)
		require.NoError(t, err)
		require.Equal(t, 2, total)
		require.Equal(t, b.ID, cs[0].ID, "newest first")
		cs, _, err = tx.FindCampaigns(ctx, ws1, "", 10, 1)
		require.NoError(t, err)
		require.Equal(t, a.ID, cs[0].ID)
		cs, total, err = tx.FindCampaigns(ctx, ws1, notify.CampaignSent, 10, 0)
		require.NoError(t, err)
		require.Equal(t, 0, total)
		require.Empty(t, cs)
		return nil
	})
	update(t, db, func(ctx context.Context, tx notify.Tx) error {
		started := t0.Add(2 * time.Hour)
		a.Status, a.StartedAt, a.FanoutRef, a.ScheduledAt, a.AudienceFilter = notify.CampaignSending, &started, 42, nil, ""
		a.UpdatedAt = started
		require.NoError(t, tx.UpdateCampaign(ctx, a))
		ok, err := tx.MoveCampaign(ctx, ws1, b.ID, []notify.CampaignStatus{notify.CampaignScheduled, notify.CampaignSending}, notify.CampaignCanceled, t0)
		require.NoError(t, err)
		require.False(t, ok, "a draft is neither")
		ok, err = tx.MoveCampaign(ctx, ws2, a.ID, []notify.CampaignStatus{notify.CampaignSending}, notify.CampaignCanceled, t0)
		require.NoError(t, err)
		require.False(t, ok, "other workspace")
		ok, err = tx.MoveCampaign(ctx, ws1, a.ID, []notify.CampaignStatus{notify.CampaignSending}, notify.CampaignSending, started)
		require.NoError(t, err)
		require.True(t, ok)
		require.NoError(t, tx.SetCampaignProgress(ctx, ws1, a.ID, 10, 3, 1, started))
		require.NoError(t, tx.SetCampaignProgress(ctx, ws1, a.ID, 11, 2, 0, started))
		require.ErrorIs(t, tx.SetCampaignProgress(ctx, ws2, a.ID, 1, 1, 1, started), notify.ErrNotFound)
		require.ErrorIs(t, tx.UpdateCampaign(ctx, other2(other, ws1)), notify.ErrNotFound)
		return nil
	})
	view(t, db, func(ctx context.Context, tx notify.Tx) error {
		got, err := tx.FindCampaign(ctx, ws1, a.ID)
		require.NoError(t, err)
		require.Equal(t, notify.CampaignSending, got.Status)
		require.Equal(t, int64(42), got.FanoutRef)
		require.Nil(t, got.ScheduledAt)
		require.Empty(t, got.AudienceFilter)
		require.Equal(t, []int{11, 5, 1}, []int{got.TotalRecipients, got.QueuedCount, got.FailedCount})
		return nil
	})
	update(t, db, func(ctx context.Context, tx notify.Tx) error {
		require.ErrorIs(t, tx.DeleteCampaign(ctx, ws2, a.ID), notify.ErrNotFound)
		require.NoError(t, tx.AddCampaignRecipients(ctx, b.ID, []notify.CampaignRecipient{{SubscriberID: id(), RequestID: id()}}))
		return tx.DeleteCampaign(ctx, ws1, b.ID)
	})
	view(t, db, func(ctx context.Context, tx notify.Tx) error {
		_, err := tx.FindCampaign(ctx, ws1, b.ID)
		require.ErrorIs(t, err, notify.ErrNotFound)
		n, err := tx.CountCampaignRecipients(ctx, b.ID)
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

func testCampaignFanout(t *testing.T, db *store.DB) {
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
	even := &notify.Audience{Conds: map[string]string{"even": "true"}}
	view(t, db, func(ctx context.Context, tx notify.Tx) error {
		for _, tc := range []struct {
			aud  *notify.Audience
			want int
		}{{nil, 4}, {even, 2}, {&notify.Audience{Never: true, Conds: map[string]string{"even": "true"}}, 0}} {
			n, err := tx.CountAudience(ctx, ws, notify.ChannelEmail, tc.aud, "")
			require.NoError(t, err)
			require.Equal(t, tc.want, n, "subscribed, not suppressed, matching")
		}
		page, err := tx.FindFanoutPage(ctx, ws, c.ID, notify.ChannelEmail, "", 3)
		require.NoError(t, err)
		require.Len(t, page, 3)
		require.Less(t, page[0].ID, page[1].ID, "by id")
		rest, err := tx.FindFanoutPage(ctx, ws, c.ID, notify.ChannelEmail, page[2].ID, 3)
		require.NoError(t, err)
		require.Len(t, rest, 1)
		return nil
	})
	// Recorded recipients leave the page and the remaining count.
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
		n, err = tx.CountAudience(ctx, ws, notify.ChannelEmail, nil, c.ID)
		require.NoError(t, err)
		require.Equal(t, 2, n)
		page, err := tx.FindFanoutPage(ctx, ws, c.ID, notify.ChannelEmail, "", 10)
		require.NoError(t, err)
		require.Equal(t, []string{subs[2].ID, subs[3].ID}, []string{page[0].ID, page[1].ID})
		return nil
	})

	// Requests of the campaign: counts per status and the bulk cancel.
	var accs []*notify.Accept
	for i := 0; i < 3; i++ {
		r := newRequest(ws, "")
		r.Channel, r.Source, r.CampaignID, r.RecipientAddress = notify.ChannelEmail, notify.SourceCampaign, c.ID, subs[i].Address
		accs = append(accs, &notify.Accept{Request: r, MaxAttempts: 3})
	}
	update(t, db, func(ctx context.Context, tx notify.Tx) error {
		require.NoError(t, tx.AcceptRequests(ctx, accs, t0))
		accs[0].Request.Status = notify.StatusSent
		return tx.UpdateRequest(ctx, accs[0].Request)
	})
	ctx := context.Background()
	var canceled int
	update(t, db, func(ctx context.Context, tx notify.Tx) error {
		counts, err := tx.CampaignRequestCounts(ctx, ws, c.ID)
		require.NoError(t, err)
		require.Equal(t, map[notify.RequestStatus]int{notify.StatusSent: 1, notify.StatusQueued: 2}, counts)
		none, err := tx.CancelCampaignRequests(ctx, ws2, c.ID, "canceled_by_api", "m", t0)
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
	require.NoError(t, db.View(ctx, func(tx notify.Tx) error {
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
	}))

	// The fan-out job goes on its queue.
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
