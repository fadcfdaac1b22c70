package storetest

import (
	"context"
	"fmt"
	"sort"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/notifyd/notifyd/internal/notify"
	"github.com/notifyd/notifyd/internal/store"
)

// Campaign pause and retry of failed recipients: which requests a paused
// campaign holds, its failed recipients, and their conditional way back
// to queued.

// campaignRequest accepts a queued email request of campaign c to addr.
func campaignRequest(t *testing.T, db *store.DB, c *notify.Campaign, addr string) (*notify.Request, *notify.Job) {
	t.Helper()
	r := newRequest(c.WorkspaceID, "")
	r.Channel, r.Source, r.CampaignID, r.RecipientAddress = notify.ChannelEmail, notify.SourceCampaign, c.ID, addr
	a := &notify.Accept{Request: r, MaxAttempts: 3}
	update(t, db, func(ctx context.Context, tx notify.Tx) error { return tx.AcceptRequests(ctx, []*notify.Accept{a}, t0) })
	return r, a.Job
}

func testCampaignPausedRequests(t *testing.T, db *store.DB) {
	ws, ws2 := Workspace(t, db), Workspace(t, db)
	c := newCampaign(ws, t0)
	c.Status = notify.CampaignSending
	update(t, db, func(ctx context.Context, tx notify.Tx) error { return tx.CreateCampaign(ctx, c) })
	inCampaign, _ := campaignRequest(t, db, c, "a@example.com")
	api := newRequest(ws, "")
	update(t, db, func(ctx context.Context, tx notify.Tx) error {
		return tx.AcceptRequests(ctx, []*notify.Accept{{Request: api, MaxAttempts: 3}}, t0)
	})
	ids := []string{inCampaign.ID, api.ID, id()}
	paused := func(ws string) map[string]bool {
		var out map[string]bool
		view(t, db, func(ctx context.Context, tx notify.Tx) (err error) {
			out, err = tx.FindPausedRequests(ctx, ws, ids)
			return err
		})
		return out
	}
	require.Empty(t, paused(ws), "a sending campaign holds nothing")
	update(t, db, func(ctx context.Context, tx notify.Tx) error {
		ok, err := tx.MoveCampaign(ctx, ws, c.ID, []notify.CampaignStatus{notify.CampaignSending}, notify.CampaignPaused, t0)
		require.True(t, ok)
		return err
	})
	require.Equal(t, map[string]bool{inCampaign.ID: true}, paused(ws))
	require.Empty(t, paused(ws2), "other workspace")
}

// retrySet is a sent campaign of ws whose three recipients' requests
// ended apart: r0 failed for good, r1 spent its attempts (a dead letter),
// r2 sent.
type retrySet struct {
	ws   string
	c    *notify.Campaign
	subs []*notify.Subscriber
	reqs []*notify.Request
	js   []*notify.Job
}

func retryFixture(t *testing.T, db *store.DB) *retrySet {
	t.Helper()
	ws := Workspace(t, db)
	c := newCampaign(ws, t0)
	c.Status = notify.CampaignSent
	var subs []*notify.Subscriber
	for i := 0; i < 3; i++ {
		x := newSubscriber(ws, fmt.Sprintf("r%d@example.com", i), t0)
		x.ConsentStatus = notify.ConsentSubscribed
		subs = append(subs, x)
	}
	update(t, db, func(ctx context.Context, tx notify.Tx) error {
		require.NoError(t, tx.UpsertSubscribers(ctx, subs))
		return tx.CreateCampaign(ctx, c)
	})
	s := &retrySet{ws: ws, c: c, subs: subs}
	var recips []notify.CampaignRecipient
	for i, x := range subs {
		r, j := campaignRequest(t, db, c, x.Address)
		s.reqs, s.js = append(s.reqs, r), append(s.js, j)
		recips = append(recips, notify.CampaignRecipient{SubscriberID: x.ID, RequestID: r.ID})
		update(t, db, func(ctx context.Context, tx notify.Tx) error {
			r.Status, j.Status, j.AttemptsMade, j.FinishedAt = notify.StatusFailed, notify.JobFailed, 3, &t0
			r.FinalErrorCode, r.FinalErrorMessage = string(notify.FailureInvalidRequest), "no"
			switch i {
			case 1:
				j.Status = notify.JobDeadLetter
				require.NoError(t, tx.CreateDeadLetter(ctx, &notify.DeadLetter{ID: id(), WorkspaceID: ws, JobID: j.ID, RequestID: r.ID,
					Channel: notify.ChannelEmail, FailedReason: "x", FailedAt: t0, AttemptsMade: 3}))
			case 2:
				r.Status, j.Status, r.FinalErrorCode, r.FinalErrorMessage = notify.StatusSent, notify.JobCompleted, "", ""
			}
			require.NoError(t, tx.UpdateRequest(ctx, r))
			return tx.UpdateJob(ctx, j)
		})
	}
	update(t, db, func(ctx context.Context, tx notify.Tx) error { return tx.AddCampaignRecipients(ctx, c.ID, recips) })
	return s
}

func testCampaignRetryFailed(t *testing.T, open Opener) {
	runVerbs(t, open, []verb{
		{"FindFailedRecipients", testFindFailedRecipients, perWorkspace},
		{"RequeueFailedRequests", testRequeueFailedRequests, perWorkspace},
	})
}

func testFindFailedRecipients(t *testing.T, db *store.DB) {
	s := retryFixture(t, db)
	ws2 := Workspace(t, db)
	view(t, db, func(ctx context.Context, tx notify.Tx) error {
		fr, err := tx.FindFailedRecipients(ctx, s.ws, s.c.ID)
		require.NoError(t, err)
		got := map[string]string{}
		for _, f := range fr {
			got[f.RequestID] = f.Subscriber.Address
		}
		require.Equal(t, map[string]string{s.reqs[0].ID: s.subs[0].Address, s.reqs[1].ID: s.subs[1].Address}, got)
		none, err := tx.FindFailedRecipients(ctx, ws2, s.c.ID)
		require.NoError(t, err)
		require.Empty(t, none, "other workspace")
		return nil
	})
}

// testRequeueFailedRequests: the failed requests go back to queued, once,
// in one new queue job with a fresh attempt budget; the dead letter
// leaves its queue and the recipients are failed no more.
func testRequeueFailedRequests(t *testing.T, db *store.DB) {
	s := retryFixture(t, db)
	ws, reqs := s.ws, s.reqs
	ws2 := Workspace(t, db)
	ids := []string{reqs[0].ID, reqs[1].ID, reqs[2].ID}
	requeue := func(ws string) int {
		var n int
		update(t, db, func(ctx context.Context, tx notify.Tx) (err error) {
			n, err = tx.RequeueFailedRequests(ctx, ws, ids, 2, t0)
			return err
		})
		return n
	}
	require.Zero(t, requeue(ws2), "other workspace")
	require.Equal(t, 2, requeue(ws), "the two failed requests, not the sent one")
	require.Zero(t, requeue(ws), "a request no longer failed is not taken again")
	view(t, db, func(ctx context.Context, tx notify.Tx) error {
		var qids []int64
		for i, want := range []notify.RequestStatus{notify.StatusQueued, notify.StatusQueued, notify.StatusSent} {
			r, err := tx.FindRequest(ctx, ws, reqs[i].ID)
			require.NoError(t, err)
			require.Equal(t, want, r.Status)
			j, err := tx.FindJobByRequest(ctx, ws, reqs[i].ID)
			require.NoError(t, err)
			if i == 2 {
				require.Equal(t, notify.JobCompleted, j.Status)
				continue
			}
			require.Empty(t, r.FinalErrorCode)
			require.Equal(t, notify.JobQueued, j.Status)
			require.Equal(t, 3, j.AttemptsMade, "the attempt count goes on")
			require.Equal(t, 5, j.MaxAttempts, "a fresh budget of 2")
			require.Nil(t, j.FinishedAt)
			require.NotEqual(t, s.js[i].QueueJobID, j.QueueJobID, "a new queue job")
			qids = append(qids, j.QueueJobID)
		}
		sort.Slice(qids, func(a, b int) bool { return qids[a] < qids[b] })
		require.Equal(t, qids[0], qids[1], "one dispatch_batch job carries both")
		_, n, err := tx.FindDeadLetters(ctx, ws, 10)
		require.NoError(t, err)
		require.Zero(t, n, "the dead letter left the queue")
		fr, err := tx.FindFailedRecipients(ctx, ws, s.c.ID)
		require.NoError(t, err)
		require.Empty(t, fr)
		return nil
	})
}

// testLockQueuedCampaignRequests: a transaction that claimed a queued
// request of the campaign is waited for, so the counts read after the
// lock see the request processing, not queued.
func testLockQueuedCampaignRequests(t *testing.T, db *store.DB) {
	ws := Workspace(t, db)
	c := newCampaign(ws, t0)
	c.Status = notify.CampaignSending
	update(t, db, func(ctx context.Context, tx notify.Tx) error { return tx.CreateCampaign(ctx, c) })
	_, j := campaignRequest(t, db, c, "a@example.com")
	campaignRequest(t, db, c, "b@example.com")

	claimed, release := make(chan struct{}), make(chan struct{})
	claimDone := make(chan error, 1)
	go func() {
		claimDone <- db.Update(context.Background(), func(tx notify.Tx) error {
			_, _, err := tx.ClaimRequests(context.Background(), []*notify.Job{j}, t0, "worker-a")
			close(claimed)
			<-release
			return err
		})
	}()
	<-claimed
	type result struct {
		counts map[notify.RequestStatus]int
		err    error
	}
	counted := make(chan result, 1)
	go func() {
		var r result
		r.err = db.Update(context.Background(), func(tx notify.Tx) error {
			ctx := context.Background()
			if err := tx.LockQueuedCampaignRequests(ctx, ws, c.ID); err != nil {
				return err
			}
			var err error
			r.counts, err = tx.CampaignRequestCounts(ctx, ws, c.ID)
			return err
		})
		counted <- r
	}()
	select {
	case r := <-counted:
		t.Fatalf("the counts were read while a claim was open: %+v", r)
	case <-time.After(300 * time.Millisecond):
	}
	close(release)
	require.NoError(t, <-claimDone)
	r := <-counted
	require.NoError(t, r.err)
	require.Equal(t, 1, r.counts[notify.StatusProcessing], "the claimed request is counted in flight")
	require.Equal(t, 1, r.counts[notify.StatusQueued])
}
