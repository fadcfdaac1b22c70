package storetest

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/notifyd/notifyd/internal/notify"
	"github.com/notifyd/notifyd/internal/store"
)

// The send pipeline's verbs beyond acceptance: attempts and their paging,
// dead letters, circuit breakers, activity counts and templates.

// accepted stores one accepted request of ws and returns it with its job.
func accepted(t *testing.T, db *store.DB, ws string) (*notify.Request, *notify.Job) {
	t.Helper()
	a := &notify.Accept{Request: newRequest(ws, ""), MaxAttempts: 3}
	update(t, db, func(ctx context.Context, tx notify.Tx) error {
		return tx.AcceptRequests(ctx, []*notify.Accept{a}, t0)
	})
	require.NotNil(t, a.Job)
	return a.Request, a.Job
}

func newAttempt(r *notify.Request, j *notify.Job, at time.Time, ok bool) *notify.Attempt {
	a := &notify.Attempt{ID: id(), WorkspaceID: r.WorkspaceID, RequestID: r.ID, JobID: j.ID, ProviderAccountID: id(),
		ProviderKind: "vendora_sms", ProviderDisplayName: "A", Channel: r.Channel, Success: ok,
		StartedAt: at, FinishedAt: at.Add(40 * time.Millisecond), RequestJSON: `{"to":"01012345678"}`, ResponseJSON: `{"result_code":"1"}`}
	if ok {
		a.ProviderMessageID = "m-" + a.ID
	} else {
		a.FailureCode, a.FailureMessage = "PROVIDER_TIMEOUT", "timed out"
	}
	return a
}

// testAttempts: attempts keep every field, list oldest first per request,
// page newest first with a (startedAt, id) cursor, carry their request, and
// never show across workspaces.
func testAttempts(t *testing.T, db *store.DB) {
	ws1, ws2 := Workspace(t, db), Workspace(t, db)
	r1, j1 := accepted(t, db, ws1)
	r2, j2 := accepted(t, db, ws1)
	r3, j3 := accepted(t, db, ws2)
	fail := newAttempt(r1, j1, t0, false)
	ok := newAttempt(r1, j1, t0.Add(time.Second), true)
	other := newAttempt(r2, j2, t0.Add(2*time.Second), true)
	foreign := newAttempt(r3, j3, t0.Add(3*time.Second), true)
	update(t, db, func(ctx context.Context, tx notify.Tx) error {
		require.NoError(t, tx.CreateAttempts(ctx, []*notify.Attempt{ok, fail}))
		return tx.CreateAttempts(ctx, []*notify.Attempt{other, foreign})
	})
	view(t, db, func(ctx context.Context, tx notify.Tx) error {
		as, err := tx.FindAttemptsOfRequest(ctx, ws1, r1.ID)
		require.NoError(t, err)
		require.Len(t, as, 2)
		require.Equal(t, fail.ID, as[0].ID, "oldest first")
		got := *as[0]
		got.Feedback = nil
		require.Equal(t, *fail, got, "every field round-trips")
		require.True(t, as[1].Success)
		require.Equal(t, ok.ProviderMessageID, as[1].ProviderMessageID)
		require.Empty(t, as[1].FailureCode)

		none, err := tx.FindAttemptsOfRequest(ctx, ws2, r1.ID)
		require.NoError(t, err)
		require.Empty(t, none, "another workspace sees no attempts")

		page, reqs, err := tx.FindAttempts(ctx, ws1, notify.AttemptFilter{Limit: 2})
		require.NoError(t, err)
		require.Equal(t, []string{other.ID, ok.ID}, []string{page[0].ID, page[1].ID}, "newest first")
		require.Equal(t, r2.ID, reqs[0].ID)
		require.Equal(t, r1.ID, reqs[1].ID)
		rest, _, err := tx.FindAttempts(ctx, ws1, notify.AttemptFilter{Limit: 2, Before: &notify.Cursor{At: page[1].StartedAt, ID: page[1].ID}})
		require.NoError(t, err)
		require.Len(t, rest, 1)
		require.Equal(t, fail.ID, rest[0].ID)

		byReq, _, err := tx.FindAttempts(ctx, ws1, notify.AttemptFilter{RequestID: r2.ID, Limit: 10})
		require.NoError(t, err)
		require.Len(t, byReq, 1)
		require.Equal(t, other.ID, byReq[0].ID)
		return nil
	})
}

// testDeadLetters: newest first, counted per workspace, never across.
func testDeadLetters(t *testing.T, db *store.DB) {
	ws1, ws2 := Workspace(t, db), Workspace(t, db)
	var want []string
	update(t, db, func(ctx context.Context, tx notify.Tx) error {
		for i := range 3 {
			d := &notify.DeadLetter{ID: id(), WorkspaceID: ws1, JobID: id(), RequestID: id(), Channel: notify.ChannelEmail,
				FailedReason: fmt.Sprintf("reason %d", i), FailedAt: t0.Add(time.Duration(i) * time.Minute), AttemptsMade: 3}
			require.NoError(t, tx.CreateDeadLetter(ctx, d))
			want = append([]string{d.ID}, want...)
		}
		return tx.CreateDeadLetter(ctx, &notify.DeadLetter{ID: id(), WorkspaceID: ws2, JobID: id(), RequestID: id(),
			Channel: notify.ChannelSMS, FailedReason: "x", FailedAt: t0, AttemptsMade: 1})
	})
	view(t, db, func(ctx context.Context, tx notify.Tx) error {
		ds, n, err := tx.FindDeadLetters(ctx, ws1, 2)
		require.NoError(t, err)
		require.Equal(t, 3, n, "total ignores the limit")
		require.Equal(t, want[:2], []string{ds[0].ID, ds[1].ID}, "newest first")
		require.Equal(t, "reason 2", ds[0].FailedReason)
		require.Equal(t, notify.ChannelEmail, ds[0].Channel)
		require.Equal(t, 3, ds[0].AttemptsMade)
		require.Equal(t, t0.Add(2*time.Minute), ds[0].FailedAt)
		_, n2, err := tx.FindDeadLetters(ctx, ws2, 10)
		require.NoError(t, err)
		require.Equal(t, 1, n2)
		return nil
	})
}

// testBreakers: a breaker upserts by provider account; lookups return only
// accounts that have one.
func testBreakers(t *testing.T, db *store.DB) {
	a, b := id(), id()
	update(t, db, func(ctx context.Context, tx notify.Tx) error {
		require.NoError(t, tx.PutBreaker(ctx, &notify.BreakerRecord{ProviderAccountID: a, State: "closed", Failures: 2, UpdatedAt: t0}))
		return tx.PutBreaker(ctx, &notify.BreakerRecord{ProviderAccountID: a, State: "open", Failures: 5,
			OpenedUntil: t0.Add(30 * time.Second), TrialInFlight: true, UpdatedAt: t0.Add(time.Second)})
	})
	view(t, db, func(ctx context.Context, tx notify.Tx) error {
		none, err := tx.FindBreakers(ctx, nil)
		require.NoError(t, err)
		require.Empty(t, none)
		got, err := tx.FindBreakers(ctx, []string{a, b})
		require.NoError(t, err)
		require.Len(t, got, 1)
		require.Equal(t, notify.BreakerRecord{ProviderAccountID: a, State: "open", Failures: 5,
			OpenedUntil: t0.Add(30 * time.Second), TrialInFlight: true, UpdatedAt: t0.Add(time.Second)}, *got[a])
		return nil
	})
}

// testCountActivity: requests by status and channel and attempts by
// outcome, within the time range and the workspace only.
func testCountActivity(t *testing.T, db *store.DB) {
	ws1, ws2 := Workspace(t, db), Workspace(t, db)
	r1, j1 := accepted(t, db, ws1)
	r2, _ := accepted(t, db, ws1)
	r3, j3 := accepted(t, db, ws2)
	update(t, db, func(ctx context.Context, tx notify.Tx) error {
		r2.Status = notify.StatusFailed
		require.NoError(t, tx.UpdateRequest(ctx, r2))
		return tx.CreateAttempts(ctx, []*notify.Attempt{newAttempt(r1, j1, t0, false), newAttempt(r1, j1, t0.Add(time.Second), true),
			newAttempt(r1, j1, t0.Add(2*time.Hour), true), newAttempt(r3, j3, t0, true)})
	})
	view(t, db, func(ctx context.Context, tx notify.Tx) error {
		c, err := tx.CountActivity(ctx, ws1, t0.Add(-time.Minute), t0.Add(time.Hour))
		require.NoError(t, err)
		require.Equal(t, 2, c.TotalRequests)
		require.Equal(t, map[string]int{string(notify.StatusQueued): 1, string(notify.StatusFailed): 1}, c.ByStatus)
		require.Equal(t, map[string]int{string(notify.ChannelSMS): 2}, c.ByChannel)
		require.Equal(t, 2, c.TotalAttempts, "the attempt two hours later is outside the range")
		require.Equal(t, 1, c.SuccessAttempts)
		require.Equal(t, 1, c.FailedAttempts)

		empty, err := tx.CountActivity(ctx, ws1, t0.Add(-2*time.Hour), t0.Add(-time.Hour))
		require.NoError(t, err)
		require.Zero(t, empty.TotalRequests)
		require.Zero(t, empty.TotalAttempts)
		return nil
	})
}

// testTemplates: codes are unique per workspace and channel, versions list
// newest first, publishing is idempotent and sets the latest published
// version, and nothing is visible across workspaces.
func testTemplates(t *testing.T, db *store.DB) {
	ws1, ws2 := Workspace(t, db), Workspace(t, db)
	tpl := &notify.Template{ID: id(), WorkspaceID: ws1, Code: "WELCOME", Channel: notify.ChannelSMS, Name: "Welcome",
		Status: "active", CreatedAt: t0, UpdatedAt: t0}
	update(t, db, func(ctx context.Context, tx notify.Tx) error {
		require.NoError(t, tx.CreateTemplate(ctx, tpl))
		// The same code on another channel or in another workspace is fine.
		require.NoError(t, tx.CreateTemplate(ctx, &notify.Template{ID: id(), WorkspaceID: ws1, Code: "WELCOME", Channel: notify.ChannelEmail,
			Name: "Welcome mail", Status: "active", CreatedAt: t0.Add(time.Second), UpdatedAt: t0}))
		require.NoError(t, tx.CreateTemplate(ctx, &notify.Template{ID: id(), WorkspaceID: ws2, Code: "WELCOME", Channel: notify.ChannelSMS,
			Name: "Other", Status: "active", CreatedAt: t0, UpdatedAt: t0}))
		for v := 1; v <= 2; v++ {
			require.NoError(t, tx.CreateTemplateVersion(ctx, &notify.TemplateVersion{TemplateID: tpl.ID, Version: v,
				Text: fmt.Sprintf("hello v%d {{name}}", v), CreatedAt: t0}))
		}
		return nil
	})
	conflict(t, db, func(ctx context.Context, tx notify.Tx) error {
		return tx.CreateTemplate(ctx, &notify.Template{ID: id(), WorkspaceID: ws1, Code: "WELCOME", Channel: notify.ChannelSMS,
			Name: "dup", Status: "active", CreatedAt: t0, UpdatedAt: t0})
	})
	pub := t0.Add(time.Minute)
	update(t, db, func(ctx context.Context, tx notify.Tx) error {
		require.NoError(t, tx.PublishTemplateVersion(ctx, tpl.ID, 1, pub))
		// Publishing again keeps the first publication time.
		require.NoError(t, tx.PublishTemplateVersion(ctx, tpl.ID, 1, pub.Add(time.Hour)))
		require.True(t, notify.IsNotFound(tx.PublishTemplateVersion(ctx, tpl.ID, 9, pub)))
		tpl.Name, tpl.Status, tpl.UpdatedAt = "Renamed", "inactive", pub
		require.NoError(t, tx.UpdateTemplate(ctx, tpl))
		foreign := *tpl
		foreign.WorkspaceID = ws2
		require.True(t, notify.IsNotFound(tx.UpdateTemplate(ctx, &foreign)), "an update scoped to another workspace matches nothing")
		return nil
	})
	view(t, db, func(ctx context.Context, tx notify.Tx) error {
		got, err := tx.FindTemplate(ctx, ws1, tpl.ID)
		require.NoError(t, err)
		require.Equal(t, "Renamed", got.Name)
		require.Equal(t, "inactive", got.Status)
		require.Equal(t, 1, got.LatestPublishedVersion)
		_, err = tx.FindTemplate(ctx, ws2, tpl.ID)
		require.True(t, notify.IsNotFound(err))

		byCode, err := tx.FindTemplateByCode(ctx, ws1, "WELCOME", notify.ChannelSMS)
		require.NoError(t, err)
		require.Equal(t, tpl.ID, byCode.ID)
		_, err = tx.FindTemplateByCode(ctx, ws1, "WELCOME", notify.ChannelPush)
		require.True(t, notify.IsNotFound(err))

		all, err := tx.FindTemplates(ctx, ws1)
		require.NoError(t, err)
		require.Len(t, all, 2)
		require.Equal(t, tpl.ID, all[0].ID, "oldest first")

		vs, err := tx.FindTemplateVersions(ctx, ws1, tpl.ID, notify.TemplateVersionFilter{Limit: 10})
		require.NoError(t, err)
		require.Len(t, vs, 2)
		require.Equal(t, 2, vs[0].Version, "newest first")
		require.Nil(t, vs[0].PublishedAt)
		require.NotNil(t, vs[1].PublishedAt)
		require.Equal(t, pub, *vs[1].PublishedAt)
		require.Equal(t, "hello v1 {{name}}", vs[1].Text)
		return nil
	})
}

// testLockRequest: a locked read returns the request like FindRequest,
// scoped by workspace, and a second writer's locked read waits for the
// first transaction and then sees its change (no lost status update
// between a dispatch run and a cancel).
func testLockRequest(t *testing.T, db *store.DB) {
	ws1, ws2 := Workspace(t, db), Workspace(t, db)
	r, _ := accepted(t, db, ws1)
	update(t, db, func(ctx context.Context, tx notify.Tx) error {
		got, err := tx.LockRequest(ctx, ws1, r.ID)
		require.NoError(t, err)
		want, err := tx.FindRequest(ctx, ws1, r.ID)
		require.NoError(t, err)
		require.Equal(t, want, got)
		_, err = tx.LockRequest(ctx, ws2, r.ID)
		require.True(t, notify.IsNotFound(err), "another workspace's request is not found")
		return nil
	})

	ctx := context.Background()
	locked, release := make(chan struct{}), make(chan struct{})
	first := make(chan error, 1)
	go func() {
		first <- db.Update(ctx, func(tx notify.Tx) error {
			cur, err := tx.LockRequest(ctx, ws1, r.ID)
			if err != nil {
				return err
			}
			close(locked)
			<-release
			cur.Status = notify.StatusSent
			return tx.UpdateRequest(ctx, cur)
		})
	}()
	<-locked
	var seen notify.RequestStatus
	second := make(chan error, 1)
	go func() {
		second <- db.Update(ctx, func(tx notify.Tx) error {
			cur, err := tx.LockRequest(ctx, ws1, r.ID)
			if err != nil {
				return err
			}
			seen = cur.Status
			return nil
		})
	}()
	select {
	case err := <-second:
		t.Fatalf("the second locked read did not wait for the first transaction (err %v)", err)
	case <-time.After(200 * time.Millisecond):
	}
	close(release)
	require.NoError(t, <-first)
	require.NoError(t, <-second)
	require.Equal(t, notify.StatusSent, seen, "the waiting read sees the committed change")
}
