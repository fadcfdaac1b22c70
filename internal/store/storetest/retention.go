package storetest

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/notifyd/notifyd/internal/notify"
	"github.com/notifyd/notifyd/internal/store"
)

// purgeAll runs PurgeRequests in batches of limit until one deletes
// nothing, and sums what they deleted.
func purgeAll(t *testing.T, db *store.DB, ws string, before time.Time, limit int) notify.PurgedRequests {
	t.Helper()
	var sum notify.PurgedRequests
	for {
		var p notify.PurgedRequests
		update(t, db, func(ctx context.Context, tx notify.Tx) (err error) {
			p, err = tx.PurgeRequests(ctx, ws, before, limit)
			return err
		})
		require.LessOrEqual(t, p.Requests, limit)
		if p.Requests == 0 {
			return sum
		}
		sum.Requests, sum.Jobs, sum.Attempts = sum.Requests+p.Requests, sum.Jobs+p.Jobs, sum.Attempts+p.Attempts
	}
}

// purgeCutoff is the cutoff of the purges tested here.
var purgeCutoff = t0.Add(24 * time.Hour)

// purgeSet is a workspace's requests in every state a purge judges at
// its cutoff, with a campaign's and another workspace's.
type purgeSet struct {
	ws, ws2 string
	camp    *notify.Campaign
	gone    []*notify.Accept // what a purge at the cutoff deletes
	kept    []*notify.Accept // what it keeps
	recent  *notify.Accept   // accepted after the cutoff
}

// purgeFixture stores a purgeSet: terminal requests accepted and last
// changed before the cutoff, with their jobs and attempts, and the ones a
// purge keeps (open, recently ended, dead-lettered, other workspace's).
func purgeFixture(t *testing.T, db *store.DB) *purgeSet {
	t.Helper()
	ws, ws2 := Workspace(t, db), Workspace(t, db)
	before := purgeCutoff
	camp := newCampaign(ws, t0)
	update(t, db, func(ctx context.Context, tx notify.Tx) error { return tx.CreateCampaign(ctx, camp) })

	var accs []*notify.Accept
	add := func(ws string, at time.Time, campaign string) *notify.Accept {
		r := newRequest(ws, "")
		r.RequestedAt, r.UpdatedAt, r.CampaignID = at, at, campaign
		if campaign != "" {
			r.Channel, r.Source, r.RecipientAddress = notify.ChannelEmail, notify.SourceCampaign, id()+"@example.com"
		}
		a := &notify.Accept{Request: r, MaxAttempts: 3}
		accs = append(accs, a)
		return a
	}
	old := add(ws, t0, "")                               // sent: purged
	old2 := add(ws, t0.Add(time.Minute), "")             // failed: purged
	dead := add(ws, t0, "")                              // failed, dead-lettered: kept
	open := add(ws, t0, "")                              // still queued: kept
	lateEnd := add(ws, t0, "")                           // ended after the cutoff: kept
	recent := add(ws, before.Add(time.Hour), "")         // accepted after the cutoff: kept
	other := add(ws2, t0, "")                            // other workspace: kept by this purge
	c1, c2 := add(ws, t0, camp.ID), add(ws, t0, camp.ID) // campaign requests: purged
	update(t, db, func(ctx context.Context, tx notify.Tx) error {
		for _, a := range accs {
			require.NoError(t, tx.AcceptRequests(ctx, []*notify.Accept{a}, a.Request.RequestedAt))
		}
		end := func(a *notify.Accept, status notify.RequestStatus, at time.Time) {
			a.Request.Status, a.Request.UpdatedAt = status, at
			require.NoError(t, tx.UpdateRequest(ctx, a.Request))
		}
		end(old, notify.StatusSent, t0.Add(time.Second))
		end(old2, notify.StatusFailed, t0.Add(time.Second))
		end(dead, notify.StatusFailed, t0.Add(time.Second))
		end(lateEnd, notify.StatusSent, before.Add(time.Second))
		end(recent, notify.StatusSent, before.Add(time.Hour))
		end(other, notify.StatusSent, t0)
		end(c1, notify.StatusSent, t0)
		end(c2, notify.StatusCanceled, t0)
		require.NoError(t, tx.CreateDeadLetter(ctx, &notify.DeadLetter{ID: id(), WorkspaceID: ws, JobID: dead.Job.ID,
			RequestID: dead.Request.ID, Channel: notify.ChannelSMS, FailedReason: "x", FailedAt: t0, AttemptsMade: 3}))
		return tx.CreateAttempts(ctx, []*notify.Attempt{newAttempt(old.Request, old.Job, t0, false),
			newAttempt(old.Request, old.Job, t0.Add(2*time.Hour), true), newAttempt(old2.Request, old2.Job, t0, false),
			newAttempt(recent.Request, recent.Job, before.Add(time.Hour), true)})
	})
	return &purgeSet{ws: ws, ws2: ws2, camp: camp, recent: recent,
		gone: []*notify.Accept{old, old2, c1, c2}, kept: []*notify.Accept{dead, open, lateEnd, recent, other}}
}

// testPurgeRequests: terminal requests accepted and last changed before
// the cutoff go with their jobs and attempts, in batches of the limit;
// open ones, recently ended ones, dead-lettered ones and other workspaces'
// stay. The metrics of whole hours and the campaign's statistics are the
// same after the purge as before.
func testPurgeRequests(t *testing.T, open Opener) {
	runVerbs(t, open, []verb{
		{"PurgeRequests", testPurgeRequestsRows, perWorkspace},
		{"CountActivity", testPurgeRequestsActivity, perWorkspace},
		{"CampaignRequestCounts", testPurgeRequestsCampaignCounts, perWorkspace},
	})
}

// testPurgeRequestsRows: what a purge deletes and what it keeps.
func testPurgeRequestsRows(t *testing.T, db *store.DB) {
	s := purgeFixture(t, db)
	ws := s.ws
	attemptsBefore := countRows(t, db, "attempts")
	p := purgeAll(t, db, ws, purgeCutoff, 2)
	require.Equal(t, notify.PurgedRequests{Requests: 4, Jobs: 4, Attempts: 3}, p)
	require.Equal(t, attemptsBefore-3, countRows(t, db, "attempts"))
	view(t, db, func(ctx context.Context, tx notify.Tx) error {
		for _, a := range s.gone {
			_, err := tx.FindRequest(ctx, ws, a.Request.ID)
			require.ErrorIs(t, err, notify.ErrNotFound)
			_, err = tx.FindJobByRequest(ctx, ws, a.Request.ID)
			require.ErrorIs(t, err, notify.ErrNotFound)
			as, err := tx.FindAttemptsOfRequest(ctx, ws, a.Request.ID)
			require.NoError(t, err)
			require.Empty(t, as)
		}
		for _, a := range s.kept {
			_, err := tx.FindRequest(ctx, a.Request.WorkspaceID, a.Request.ID)
			require.NoError(t, err, "kept")
			_, err = tx.FindJobByRequest(ctx, a.Request.WorkspaceID, a.Request.ID)
			require.NoError(t, err, "its job row is kept")
		}
		as, err := tx.FindAttemptsOfRequest(ctx, ws, s.recent.Request.ID)
		require.NoError(t, err)
		require.Len(t, as, 1)
		_, n, err := tx.FindDeadLetters(ctx, ws, 10)
		require.NoError(t, err)
		require.Equal(t, 1, n, "the dead letter stays")
		return nil
	})
	p = purgeAll(t, db, ws, purgeCutoff.Add(72*time.Hour), 1000)
	require.Equal(t, 2, p.Requests, "the late-ended and the recent one; open and dead-lettered stay")
}

// testPurgeRequestsActivity: CountActivity reads the same whole hours
// after a purge as before.
func testPurgeRequestsActivity(t *testing.T, db *store.DB) {
	s := purgeFixture(t, db)
	ws, ws2 := s.ws, s.ws2
	// Whole hours: from the hour of t0 to the end of the day after.
	from := t0.Truncate(time.Hour)
	to := from.Add(48*time.Hour - time.Millisecond)
	var metricsBefore, ws2Before *notify.Counts
	view(t, db, func(ctx context.Context, tx notify.Tx) (err error) {
		metricsBefore, err = tx.CountActivity(ctx, ws, from, to)
		require.NoError(t, err)
		ws2Before, err = tx.CountActivity(ctx, ws2, from, to)
		return err
	})
	require.Equal(t, 8, metricsBefore.TotalRequests)
	require.Equal(t, 4, metricsBefore.TotalAttempts)
	purgeAll(t, db, ws, purgeCutoff, 2)
	view(t, db, func(ctx context.Context, tx notify.Tx) error {
		// The figures did not move.
		c, err := tx.CountActivity(ctx, ws, from, to)
		require.NoError(t, err)
		require.Equal(t, metricsBefore, c, "whole-hour metrics count purged rows through the rollup")
		c, err = tx.CountActivity(ctx, ws2, from, to)
		require.NoError(t, err)
		require.Equal(t, ws2Before, c)
		// A range that holds none of the purged hours counts none of them.
		c, err = tx.CountActivity(ctx, ws, purgeCutoff, purgeCutoff.Add(2*time.Hour))
		require.NoError(t, err)
		require.Equal(t, 1, c.TotalRequests, "only the recent request")
		require.Equal(t, 1, c.TotalAttempts)
		return nil
	})
	// A second purge at a later cutoff adds to the same rollup rows.
	purgeAll(t, db, ws, purgeCutoff.Add(72*time.Hour), 1000)
	view(t, db, func(ctx context.Context, tx notify.Tx) error {
		c, err := tx.CountActivity(ctx, ws, from, to)
		require.NoError(t, err)
		require.Equal(t, metricsBefore, c)
		return nil
	})
}

// testPurgeRequestsCampaignCounts: a campaign's statistics do not move
// when its requests are purged.
func testPurgeRequestsCampaignCounts(t *testing.T, db *store.DB) {
	s := purgeFixture(t, db)
	var campBefore map[notify.RequestStatus]int
	view(t, db, func(ctx context.Context, tx notify.Tx) (err error) {
		campBefore, err = tx.CampaignRequestCounts(ctx, s.ws, s.camp.ID)
		return err
	})
	require.Equal(t, map[notify.RequestStatus]int{notify.StatusSent: 1, notify.StatusCanceled: 1}, campBefore)
	purgeAll(t, db, s.ws, purgeCutoff, 2)
	view(t, db, func(ctx context.Context, tx notify.Tx) error {
		counts, err := tx.CampaignRequestCounts(ctx, s.ws, s.camp.ID)
		require.NoError(t, err)
		require.Equal(t, campBefore, counts)
		return nil
	})
}

// testPurgeOther: stale undispatched events, the fan-out records of ended
// campaigns and old audit entries go in bounded batches; newer rows, and
// the records of campaigns still sending, stay. These purges read every
// workspace's rows, so each subtest has a database of its own.
func testPurgeOther(t *testing.T, open Opener) {
	runVerbs(t, open, []verb{
		{"WorkspaceIDs", testWorkspaceIDs, allWorkspaces},
		{"PurgeEvents", testPurgeEvents, allWorkspaces},
		{"PurgeCampaignRecipients", testPurgeCampaignRecipients, allWorkspaces},
		{"PurgeAudit", testPurgeAudit, allWorkspaces},
		{"PurgeInboxEvents", testPurgeInboxEvents, allWorkspaces},
		{"PurgeInboxMessages", testPurgeInboxMessages, allWorkspaces},
	})
}

// testPurgeInboxEvents: entries of the inbox event logs older than the
// cutoff go, a bounded batch at a time; newer ones and the log's head
// stay, so a stream asked to resume before them resets.
func testPurgeInboxEvents(t *testing.T, db *store.DB) {
	f := newInboxFixture(t, db, 3) // events 1-3 at t0
	update(t, db, func(ctx context.Context, tx notify.Tx) error {
		_, err := tx.ChangeInbox(ctx, f.ws1, f.p.ID, notify.InboxChange{Op: notify.InboxRead, MessageID: f.ms[2].ID,
			At: purgeCutoff.Add(time.Second)})
		return err
	})
	for _, want := range []int{2, 1, 0} {
		update(t, db, func(ctx context.Context, tx notify.Tx) error {
			n, err := tx.PurgeInboxEvents(ctx, purgeCutoff, 2)
			require.NoError(t, err)
			require.Equal(t, want, n)
			return nil
		})
	}
	view(t, db, func(ctx context.Context, tx notify.Tx) error {
		es, lg, err := tx.FindInboxEvents(ctx, f.ws1, f.p.ID, 0, 100)
		require.NoError(t, err)
		require.Equal(t, notify.InboxLog{Oldest: 4, Newest: 4}, lg)
		require.Len(t, es, 1)
		require.Equal(t, notify.InboxEventRead, es[0].Type)
		return nil
	})
}

// testPurgeInboxMessages: inbox messages stored before the cutoff go, a
// bounded batch at a time, read or not; a newer one stays.
func testPurgeInboxMessages(t *testing.T, db *store.DB) {
	f := newInboxFixture(t, db, 3) // at t0, before the cutoff
	recent := &notify.InboxMessage{ID: id(), WorkspaceID: f.ws1, RecipientID: f.p.ID, RequestID: id(), Title: "t", Body: "new",
		CreatedAt: purgeCutoff.Add(time.Second)}
	update(t, db, func(ctx context.Context, tx notify.Tx) error {
		if err := tx.CreateInboxMessages(ctx, []*notify.InboxMessage{recent}); err != nil {
			return err
		}
		_, err := tx.ChangeInbox(ctx, f.ws1, f.p.ID, notify.InboxChange{Op: notify.InboxRead, MessageID: f.ms[0].ID, At: t0})
		return err
	})
	for _, want := range []int{2, 1, 0} {
		update(t, db, func(ctx context.Context, tx notify.Tx) error {
			n, err := tx.PurgeInboxMessages(ctx, purgeCutoff, 2)
			require.NoError(t, err)
			require.Equal(t, want, n)
			return nil
		})
	}
	view(t, db, func(ctx context.Context, tx notify.Tx) error {
		got, err := tx.FindInboxMessages(ctx, f.ws1, f.p.ID, notify.InboxFilter{Limit: 10})
		require.NoError(t, err)
		require.Len(t, got, 1)
		require.Equal(t, recent.ID, got[0].ID)
		return nil
	})
}

func testWorkspaceIDs(t *testing.T, db *store.DB) {
	ws := Workspace(t, db)
	update(t, db, func(ctx context.Context, tx notify.Tx) error {
		ids, err := tx.WorkspaceIDs(ctx)
		require.NoError(t, err)
		require.Contains(t, ids, ws)
		return nil
	})
}

func testPurgeEvents(t *testing.T, db *store.DB) {
	ws := Workspace(t, db)
	ev := func(at time.Time) *notify.Event {
		return &notify.Event{ID: id(), WorkspaceID: ws, Type: notify.EventCanceled, RequestID: id(), CreatedAt: at, Payload: map[string]any{}}
	}
	stale, taken, fresh := ev(t0), ev(t0), ev(purgeCutoff.Add(time.Second))
	update(t, db, func(ctx context.Context, tx notify.Tx) error {
		for _, e := range []*notify.Event{stale, taken, fresh} {
			require.NoError(t, tx.CreateEvent(ctx, e))
		}
		return tx.MarkEventsDispatched(ctx, []string{taken.ID}, t0)
	})
	update(t, db, func(ctx context.Context, tx notify.Tx) error {
		n, err := tx.PurgeEvents(ctx, purgeCutoff, 10)
		require.NoError(t, err)
		require.Equal(t, 1, n, "only the stale undispatched one (dispatched events go with the webhook history)")
		evs, err := tx.PendingEvents(ctx, 10)
		require.NoError(t, err)
		require.Len(t, evs, 1)
		require.Equal(t, fresh.ID, evs[0].ID)
		return nil
	})
}

func testPurgeCampaignRecipients(t *testing.T, db *store.DB) {
	ws := Workspace(t, db)
	ended, sending, late := newCampaign(ws, t0), newCampaign(ws, t0), newCampaign(ws, t0)
	ended.Status, sending.Status, late.Status = notify.CampaignSent, notify.CampaignSending, notify.CampaignCanceled
	late.UpdatedAt = purgeCutoff.Add(time.Second)
	update(t, db, func(ctx context.Context, tx notify.Tx) error {
		for _, c := range []*notify.Campaign{ended, sending, late} {
			require.NoError(t, tx.CreateCampaign(ctx, c))
			require.NoError(t, tx.UpdateCampaign(ctx, c))
			require.NoError(t, tx.AddCampaignRecipients(ctx, c.ID, []notify.CampaignRecipient{{SubscriberID: id(), RequestID: id()},
				{SubscriberID: id()}, {SubscriberID: id(), RequestID: id()}}))
		}
		return nil
	})
	total := 0
	for {
		var n int
		update(t, db, func(ctx context.Context, tx notify.Tx) (err error) {
			n, err = tx.PurgeCampaignRecipients(ctx, purgeCutoff, 2)
			return err
		})
		require.LessOrEqual(t, n, 2)
		if n == 0 {
			break
		}
		total += n
	}
	require.Equal(t, 3, total)
	view(t, db, func(ctx context.Context, tx notify.Tx) error {
		for c, want := range map[string]int{ended.ID: 0, sending.ID: 3, late.ID: 3} {
			n, err := tx.CountCampaignRecipients(ctx, c)
			require.NoError(t, err)
			require.Equal(t, want, n)
		}
		got, err := tx.FindCampaign(ctx, ws, ended.ID)
		require.NoError(t, err)
		require.Equal(t, notify.CampaignSent, got.Status, "the campaign itself stays")
		return nil
	})
}

func testPurgeAudit(t *testing.T, db *store.DB) {
	ws := Workspace(t, db)
	update(t, db, func(ctx context.Context, tx notify.Tx) error {
		for _, at := range []time.Time{t0, t0.Add(time.Minute), t0.Add(2 * time.Minute), purgeCutoff} {
			require.NoError(t, tx.CreateAudit(ctx, &notify.AuditEntry{ID: id(), WorkspaceID: ws, Action: "route.replace",
				TargetType: "route", TargetID: ws, CreatedAt: at}))
		}
		return nil
	})
	update(t, db, func(ctx context.Context, tx notify.Tx) error {
		n, err := tx.PurgeAudit(ctx, purgeCutoff, 2)
		require.NoError(t, err)
		require.Equal(t, 2, n, "bounded by the limit")
		n, err = tx.PurgeAudit(ctx, purgeCutoff, 2)
		require.NoError(t, err)
		require.Equal(t, 1, n)
		es, err := tx.FindAudit(ctx, ws, notify.AuditFilter{Limit: 10})
		require.NoError(t, err)
		require.Len(t, es, 1)
		require.Equal(t, purgeCutoff, es[0].CreatedAt)
		return nil
	})
}

// testPurgeConcurrent: two purges of the same rows at once (a periodic
// run and a second node's, say) delete each row once and count it once:
// the rollups read the same as the rows did.
func testPurgeConcurrent(t *testing.T, db *store.DB) {
	ws := Workspace(t, db)
	const n = 300
	var accs []*notify.Accept
	for i := range n {
		r := newRequest(ws, "")
		r.RequestedAt = t0.Add(time.Duration(i) * time.Millisecond)
		r.Status, r.UpdatedAt = notify.StatusSent, r.RequestedAt
		accs = append(accs, &notify.Accept{Request: r, MaxAttempts: 3})
	}
	update(t, db, func(ctx context.Context, tx notify.Tx) error {
		if err := tx.AcceptRequests(ctx, accs, t0); err != nil {
			return err
		}
		var as []*notify.Attempt
		for _, a := range accs {
			a.Request.Status = notify.StatusSent
			if err := tx.UpdateRequest(ctx, a.Request); err != nil {
				return err
			}
			as = append(as, newAttempt(a.Request, a.Job, a.Request.RequestedAt, true))
		}
		return tx.CreateAttempts(ctx, as)
	})
	from := t0.Truncate(time.Hour)
	to := from.Add(time.Hour - time.Millisecond)
	var want *notify.Counts
	view(t, db, func(ctx context.Context, tx notify.Tx) (err error) {
		want, err = tx.CountActivity(ctx, ws, from, to)
		return err
	})
	require.Equal(t, n, want.TotalRequests)

	var wg sync.WaitGroup
	got := make([]notify.PurgedRequests, 4)
	for i := range got {
		wg.Add(1)
		go func() {
			defer wg.Done()
			got[i] = purgeAll(t, db, ws, t0.Add(time.Hour), 50)
		}()
	}
	wg.Wait()
	sum := notify.PurgedRequests{}
	for _, p := range got {
		sum.Requests, sum.Jobs, sum.Attempts = sum.Requests+p.Requests, sum.Jobs+p.Jobs, sum.Attempts+p.Attempts
	}
	// A purge that found its batch taken stops early; one more finishes.
	last := purgeAll(t, db, ws, t0.Add(time.Hour), 50)
	sum.Requests, sum.Jobs, sum.Attempts = sum.Requests+last.Requests, sum.Jobs+last.Jobs, sum.Attempts+last.Attempts
	require.Equal(t, notify.PurgedRequests{Requests: n, Jobs: n, Attempts: n}, sum, "each row deleted once")
	view(t, db, func(ctx context.Context, tx notify.Tx) error {
		c, err := tx.CountActivity(ctx, ws, from, to)
		require.NoError(t, err)
		require.Equal(t, want, c, "each row counted once")
		return nil
	})
}
