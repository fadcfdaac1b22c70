package storetest

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/notifyd/notifyd/internal/notify"
	"github.com/notifyd/notifyd/internal/store"
	"github.com/notifyd/notifyd/internal/store/sqlstore"
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

// testChannelFallbackStoredOnce: a step whose content is the request's
// own (a step without content of its own) does not store that content
// again, in bulk and single inserts alike (issue 29, finding 10); every
// read, the claim included, gives the step its content back, and a step
// with content of its own keeps it.
func testChannelFallbackStoredOnce(t *testing.T, db *store.DB) {
	ws := Workspace(t, db)
	body := strings.Repeat("the rendered body ", 1000) // 18,000 bytes
	mk := func(key string) *notify.Accept {
		r := newRequest(ws, key)
		r.Channel, r.RecipientAddress, r.Title, r.Text, r.HTML = notify.ChannelEmail, "a@example.com", "Subject", body, "<p>"+body+"</p>"
		r.Fallback = &notify.ChannelFallback{Attempts: 3, Steps: []notify.ChannelStep{
			{Channel: notify.ChannelSMS, RecipientAddress: "01012345678", Title: r.Title, Text: r.Text, HTML: r.HTML},
			{Channel: notify.ChannelPush, RecipientAddress: "token", Title: r.Title, Text: r.Text, HTML: r.HTML, TemplateCode: "t",
				TemplateVariables: map[string]string{"x": "y"}},
			{Channel: notify.ChannelAlimTalk, RecipientAddress: "01012345678", Text: "own text", VendorTemplateID: "v"},
		}}
		return &notify.Accept{Request: r, MaxAttempts: 3}
	}
	accs := []*notify.Accept{mk(""), mk(""), mk("keyed")}
	want := *accs[0].Request.Fallback
	want.Steps = append([]notify.ChannelStep(nil), want.Steps...)
	update(t, db, func(ctx context.Context, tx notify.Tx) error { return tx.AcceptRequests(ctx, accs, t0) })
	require.Equal(t, &want, accs[0].Request.Fallback, "the request in memory keeps its chain whole")
	view(t, db, func(ctx context.Context, tx notify.Tx) error {
		for _, a := range accs {
			var stored string
			require.NoError(t, tx.(*sqlstore.Tx).Conn().QueryRow(ctx, `SELECT fallback FROM notification_requests WHERE id = ?`, a.Request.ID).Scan(&stored))
			require.Less(t, len(stored), 1000, "the request's content is not stored again per step: %d bytes", len(stored))
			require.Contains(t, stored, "own text")
			r, err := tx.FindRequest(ctx, ws, a.Request.ID)
			require.NoError(t, err)
			require.Equal(t, a.Request.Fallback, r.Fallback)
		}
		return nil
	})
	update(t, db, func(ctx context.Context, tx notify.Tx) error {
		js, err := tx.FindJobsOfQueueJob(ctx, accs[0].Job.QueueJobID)
		require.NoError(t, err)
		reqs, _, err := tx.ClaimRequests(ctx, js, t0.Add(time.Second), "worker-a")
		require.NoError(t, err)
		require.NotEmpty(t, reqs)
		for _, r := range reqs {
			require.Equal(t, &want, r.Fallback, "a claimed request sends each step's content")
			r.FallbackStep = 1
			require.Equal(t, body, r.Target().Text)
		}
		return nil
	})
}

// testRequestRecipient: a send's recipient profile id and category (issue
// 32) are stored with its request by the bulk and the keyed inserts and
// come back from the reads and the claim; a send by address has neither.
func testRequestRecipient(t *testing.T, db *store.DB) {
	ws := Workspace(t, db)
	bulk := &notify.Accept{Request: newRequest(ws, ""), MaxAttempts: 3}
	keyed := &notify.Accept{Request: newRequest(ws, "by-profile"), MaxAttempts: 3}
	plain := &notify.Accept{Request: newRequest(ws, ""), MaxAttempts: 3}
	dec := notify.Decision{Stage: notify.StageAcceptance, At: t0, Kind: notify.DecisionPreference, Channel: notify.ChannelSMS,
		Outcome: notify.OutcomeAllowed, Rule: "default"}
	for _, a := range []*notify.Accept{bulk, keyed} {
		a.Request.RecipientID, a.Request.Category = "user-42", "security"
		a.Request.Decisions = []notify.Decision{dec}
	}
	update(t, db, func(ctx context.Context, tx notify.Tx) error {
		return tx.AcceptRequests(ctx, []*notify.Accept{bulk, keyed, plain}, t0)
	})
	view(t, db, func(ctx context.Context, tx notify.Tx) error {
		for _, a := range []*notify.Accept{bulk, keyed, plain} {
			r, err := tx.FindRequest(ctx, ws, a.Request.ID)
			require.NoError(t, err)
			require.Equal(t, a.Request.RecipientID, r.RecipientID)
			require.Equal(t, a.Request.Category, r.Category)
			require.Equal(t, a.Request.Decisions, r.Decisions)
		}
		return nil
	})
	update(t, db, func(ctx context.Context, tx notify.Tx) error {
		js, err := tx.FindJobsOfQueueJob(ctx, bulk.Job.QueueJobID)
		require.NoError(t, err)
		reqs, _, err := tx.ClaimRequests(ctx, js, t0.Add(time.Second), "worker-a")
		require.NoError(t, err)
		require.NotEmpty(t, reqs)
		for _, r := range reqs {
			if r.ID == bulk.Request.ID {
				require.Equal(t, "user-42", r.RecipientID)
				require.Equal(t, "security", r.Category)
				require.Equal(t, []notify.Decision{dec}, r.Decisions)
			}
		}
		return nil
	})
	// SaveDecisions writes the list of each request it is given.
	until := t0.Add(time.Hour)
	later := notify.Decision{Stage: notify.StageDispatch, At: t0.Add(time.Second), Kind: notify.DecisionWindow, Outcome: notify.OutcomeHeld,
		Rule: "workspace", Until: &until}
	bulk.Request.Decisions = append(bulk.Request.Decisions, later)
	plain.Request.Decisions = []notify.Decision{later}
	update(t, db, func(ctx context.Context, tx notify.Tx) error {
		return tx.SaveDecisions(ctx, []*notify.Request{bulk.Request, plain.Request})
	})
	view(t, db, func(ctx context.Context, tx notify.Tx) error {
		for _, a := range []*notify.Accept{bulk, plain, keyed} {
			r, err := tx.FindRequest(ctx, ws, a.Request.ID)
			require.NoError(t, err)
			require.Equal(t, a.Request.Decisions, r.Decisions)
		}
		return nil
	})
}
