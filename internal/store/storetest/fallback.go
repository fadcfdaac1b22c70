package storetest

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/notifyd/notifyd/internal/notify"
	"github.com/notifyd/notifyd/internal/store"
)

// testChannelFallback: a request's cross-channel fallback chain is stored
// with it (bulk and single inserts alike), comes back from every read and
// from the claim, and MoveFallbackSteps saves the step and the job's new
// ceiling of only the rows it is given; a request without a chain reads
// back without one.
func testChannelFallback(t *testing.T, db *store.DB) {
	ws := Workspace(t, db)
	chain := &notify.ChannelFallback{Attempts: 3, Steps: []notify.ChannelStep{
		{Channel: notify.ChannelSMS, RecipientAddress: "01012345678", Text: "SMS {{x}}", TemplateVariables: map[string]string{"x": "y"}},
		{Channel: notify.ChannelEmail, RecipientAddress: "a@example.com", Title: "T", HTML: "<p>h</p>", TemplateCode: "mail",
			VendorTemplateID: "v", SenderProfileKey: "p", RecipientName: "Kim"},
	}}
	accs := make([]*notify.Accept, 3)
	for i := range accs {
		accs[i] = &notify.Accept{Request: newRequest(ws, ""), MaxAttempts: 3}
	}
	accs[0].Request.Fallback = chain
	accs[1].Request.Fallback = chain
	keyed := &notify.Accept{Request: newRequest(ws, "with-chain"), MaxAttempts: 3}
	keyed.Request.Fallback = chain
	update(t, db, func(ctx context.Context, tx notify.Tx) error {
		return tx.AcceptRequests(ctx, append(accs, keyed), t0)
	})
	view(t, db, func(ctx context.Context, tx notify.Tx) error {
		for _, a := range []*notify.Accept{accs[0], keyed} {
			r, err := tx.FindRequest(ctx, ws, a.Request.ID)
			require.NoError(t, err)
			require.Equal(t, chain, r.Fallback)
			require.Equal(t, 0, r.FallbackStep)
		}
		r, err := tx.FindRequest(ctx, ws, accs[2].Request.ID)
		require.NoError(t, err)
		require.Nil(t, r.Fallback)
		return nil
	})
	now := t0.Add(time.Second)
	update(t, db, func(ctx context.Context, tx notify.Tx) error {
		js, err := tx.FindJobsOfQueueJob(ctx, accs[0].Job.QueueJobID)
		require.NoError(t, err)
		reqs, claimed, err := tx.ClaimRequests(ctx, js, now, "worker-a")
		require.NoError(t, err)
		require.Len(t, reqs, 4)
		var moved []*notify.Request
		var movedJobs []*notify.Job
		for i, r := range reqs {
			if r.ID == accs[0].Request.ID {
				require.Equal(t, chain, r.Fallback)
				r.FallbackStep, claimed[i].MaxAttempts = 1, claimed[i].AttemptsMade+3
				moved, movedJobs = append(moved, r), append(movedJobs, claimed[i])
			}
		}
		require.Len(t, moved, 1)
		return tx.MoveFallbackSteps(ctx, moved, movedJobs)
	})
	view(t, db, func(ctx context.Context, tx notify.Tx) error {
		r, err := tx.FindRequest(ctx, ws, accs[0].Request.ID)
		require.NoError(t, err)
		require.Equal(t, 1, r.FallbackStep)
		j, err := tx.FindJobByRequest(ctx, ws, accs[0].Request.ID)
		require.NoError(t, err)
		require.Equal(t, 4, j.MaxAttempts)
		r, err = tx.FindRequest(ctx, ws, accs[1].Request.ID)
		require.NoError(t, err)
		require.Equal(t, 0, r.FallbackStep)
		j, err = tx.FindJobByRequest(ctx, ws, accs[1].Request.ID)
		require.NoError(t, err)
		require.Equal(t, 3, j.MaxAttempts)
		return nil
	})
}
