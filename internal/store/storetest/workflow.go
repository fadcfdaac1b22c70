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

// testWorkflows pins the verbs of workflows (issue 34): definitions and
// versions round-trip and are scoped by workspace; a run and its first
// step start together and an idempotency key starts a recipient's run
// once; steps end and follow; throttle counts; a digest window opens
// once, counts its joins and is released once with its first items.
func testWorkflows(t *testing.T, db *store.DB) {
	ws1, ws2 := Workspace(t, db), Workspace(t, db)
	w := &notify.Workflow{ID: id(), WorkspaceID: ws1, Key: "comment", Name: "Comment", CreatedAt: t0, UpdatedAt: t0}
	steps := []notify.WorkflowStep{{Key: "a", Type: notify.StepSend, Channel: "sms", TemplateCode: "x"},
		{Key: "b", Type: notify.StepBranch, Conditions: []notify.WorkflowCondition{{Step: "a", State: "unread"}}, Else: "end"}}
	v1 := &notify.WorkflowVersion{WorkflowID: w.ID, WorkspaceID: ws1, Version: 1, Steps: steps, CreatedAt: t0}
	update(t, db, func(ctx context.Context, tx notify.Tx) error {
		require.NoError(t, tx.CreateWorkflow(ctx, w))
		return tx.CreateWorkflowVersion(ctx, v1)
	})
	conflict(t, db, func(ctx context.Context, tx notify.Tx) error {
		return tx.CreateWorkflow(ctx, &notify.Workflow{ID: id(), WorkspaceID: ws1, Key: "comment", Name: "x", CreatedAt: t0, UpdatedAt: t0})
	})
	update(t, db, func(ctx context.Context, tx notify.Tx) error {
		return tx.PublishWorkflowVersion(ctx, ws1, w.ID, 1, t0.Add(time.Second))
	})
	view(t, db, func(ctx context.Context, tx notify.Tx) error {
		got, err := tx.FindWorkflowByKey(ctx, ws1, "comment")
		require.NoError(t, err)
		require.Equal(t, 1, got.PublishedVersion)
		_, err = tx.FindWorkflowByKey(ctx, ws2, "comment")
		require.ErrorIs(t, err, notify.ErrNotFound, "another workspace's workflow")
		all, err := tx.FindWorkflows(ctx, ws1)
		require.NoError(t, err)
		require.Len(t, all, 1)
		v, err := tx.FindWorkflowVersion(ctx, ws1, w.ID, 1)
		require.NoError(t, err)
		require.Equal(t, steps, v.Steps)
		require.Equal(t, t0.Add(time.Second), *v.PublishedAt)
		_, err = tx.FindWorkflowVersion(ctx, ws2, w.ID, 1)
		require.ErrorIs(t, err, notify.ErrNotFound)
		vs, err := tx.FindWorkflowVersions(ctx, ws1, w.ID)
		require.NoError(t, err)
		require.Len(t, vs, 1)
		return nil
	})
	// A trigger's read: the workflow, its published version and how many
	// of the named recipients are profiles of the workspace.
	update(t, db, func(ctx context.Context, tx notify.Tx) error {
		for _, r := range []*notify.Recipient{newRecipient(ws1, "p-1", t0), newRecipient(ws1, "p-2", t0), newRecipient(ws2, "p-3", t0)} {
			if _, err := tx.PutRecipient(ctx, r); err != nil {
				return err
			}
		}
		return nil
	})
	view(t, db, func(ctx context.Context, tx notify.Tx) error {
		got, v, n, err := tx.FindTriggerWorkflow(ctx, ws1, "comment", []string{"p-1", "p-2", "p-3", "nobody"})
		require.NoError(t, err)
		require.Equal(t, w.ID, got.ID)
		require.Equal(t, steps, v.Steps)
		require.Equal(t, 1, v.Version)
		require.Equal(t, t0.Add(time.Second), *v.PublishedAt)
		require.Equal(t, 2, n, "p-3 is another workspace's profile")
		_, _, n, err = tx.FindTriggerWorkflow(ctx, ws1, "comment", nil)
		require.NoError(t, err)
		require.Zero(t, n)
		_, _, _, err = tx.FindTriggerWorkflow(ctx, ws2, "comment", []string{"p-3"})
		require.ErrorIs(t, err, notify.ErrNotFound, "another workspace's workflow")
		return nil
	})
	draft := &notify.Workflow{ID: id(), WorkspaceID: ws1, Key: "draft", Name: "Draft", CreatedAt: t0, UpdatedAt: t0}
	update(t, db, func(ctx context.Context, tx notify.Tx) error {
		require.NoError(t, tx.CreateWorkflow(ctx, draft))
		return tx.CreateWorkflowVersion(ctx, &notify.WorkflowVersion{WorkflowID: draft.ID, WorkspaceID: ws1, Version: 1, Steps: steps, CreatedAt: t0})
	})
	view(t, db, func(ctx context.Context, tx notify.Tx) error {
		got, v, n, err := tx.FindTriggerWorkflow(ctx, ws1, "draft", []string{"p-1"})
		require.NoError(t, err)
		require.Equal(t, draft.ID, got.ID)
		require.Nil(t, v, "no published version")
		require.Equal(t, 1, n)
		return nil
	})

	newRun := func(recipient, idem string) *notify.WorkflowRunStart {
		r := &notify.WorkflowRun{ID: id(), WorkspaceID: ws1, WorkflowID: w.ID, WorkflowKey: w.Key, Version: 1, RecipientID: recipient,
			Payload: map[string]any{"title": "hi"}, IdempotencyKey: idem, CancellationKey: "c1", Status: notify.RunRunning, CreatedAt: t0, UpdatedAt: t0}
		return &notify.WorkflowRunStart{Run: r, First: &notify.WorkflowRunStep{RunID: r.ID, WorkspaceID: ws1, Index: 0, Key: "a",
			Type: notify.StepSend, Status: notify.StepPending, DueAt: t0, CreatedAt: t0}}
	}
	first := []*notify.WorkflowRunStart{newRun("u-1", "k"), newRun("u-2", "k"), newRun("u-3", "")}
	again := []*notify.WorkflowRunStart{newRun("u-1", "k"), newRun("u-3", "")}
	update(t, db, func(ctx context.Context, tx notify.Tx) error {
		created, err := tx.StartWorkflowRuns(ctx, first)
		require.NoError(t, err)
		require.Equal(t, []bool{true, true, true}, created)
		require.NotZero(t, first[0].First.QueueJobID, "the step's queue job")
		created, err = tx.StartWorkflowRuns(ctx, again)
		require.NoError(t, err)
		require.Equal(t, []bool{false, true}, created, "a repeated key starts nothing; no key always starts")
		require.Equal(t, first[0].Run.ID, again[0].Run.ID, "the existing run answers")
		require.Equal(t, first[0].First.QueueJobID, first[1].First.QueueJobID, "send steps due at once share a job")
		return nil
	})
	// A run whose leading send ended in the transaction that started it,
	// gone on to a pending delay: no job for the ended step, one for the
	// delay.
	led := newRun("u-4", "")
	end := t0.Add(time.Second)
	led.First.Status, led.First.Outcome, led.First.RequestID, led.First.EndedAt = notify.RunStepDone, "sent", "req-0", &end
	led.Then = &notify.WorkflowRunStep{RunID: led.Run.ID, WorkspaceID: ws1, Index: 1, Key: "b", Type: notify.StepDelay,
		Status: notify.StepPending, DueAt: t0.Add(time.Hour), CreatedAt: t0}
	update(t, db, func(ctx context.Context, tx notify.Tx) error {
		created, err := tx.StartWorkflowRuns(ctx, []*notify.WorkflowRunStart{led})
		require.NoError(t, err)
		require.Equal(t, []bool{true}, created)
		require.Zero(t, led.First.QueueJobID, "an ended step has no job")
		require.NotZero(t, led.Then.QueueJobID)
		return nil
	})
	// A batch of step runs saves rows and runs at once: the pending delay
	// ends, a send row is inserted ended, the run completes.
	update(t, db, func(ctx context.Context, tx notify.Tx) error {
		runs, err := tx.ReadWorkflowRuns(ctx, ws1, []string{led.Run.ID}, true)
		require.NoError(t, err)
		r := runs[0]
		wait := r.Steps[1]
		wait.Status, wait.Outcome, wait.EndedAt = notify.RunStepDone, "waited", &end
		sent := &notify.WorkflowRunStep{RunID: r.ID, WorkspaceID: ws1, Index: 2, Key: "c", Type: notify.StepSend, Status: notify.RunStepDone,
			Outcome: "sent", RequestID: "req-2", DueAt: end, CreatedAt: end, EndedAt: &end}
		require.NoError(t, tx.SaveWorkflowRunSteps(ctx, []*notify.WorkflowRunStep{wait, sent}))
		r.Status, r.EndedAt, r.UpdatedAt = notify.RunCompleted, &end, end
		require.NoError(t, tx.SaveWorkflowRuns(ctx, []*notify.WorkflowRun{r}))
		// Another workspace's run is not touched.
		other := *r
		other.WorkspaceID, other.Status = ws2, notify.RunFailed
		require.NoError(t, tx.SaveWorkflowRuns(ctx, []*notify.WorkflowRun{&other}))
		return nil
	})
	view(t, db, func(ctx context.Context, tx notify.Tx) error {
		r, err := tx.FindWorkflowRun(ctx, ws1, led.Run.ID)
		require.NoError(t, err)
		require.Equal(t, notify.RunCompleted, r.Status)
		require.Len(t, r.Steps, 3)
		require.Equal(t, "waited", r.Steps[1].Outcome)
		require.Equal(t, "req-2", r.Steps[2].RequestID)
		require.Equal(t, end.UnixMilli(), r.EndedAt.UnixMilli())
		require.Equal(t, map[string]any{"title": "hi"}, r.Payload, "a batch's save leaves the payload")
		return nil
	})
	ids := []string{first[0].Run.ID, first[1].Run.ID, led.Run.ID, "no-such-run"}
	for _, lock := range []bool{false, true} {
		update(t, db, func(ctx context.Context, tx notify.Tx) error {
			runs, err := tx.ReadWorkflowRuns(ctx, ws1, ids, lock)
			require.NoError(t, err)
			require.Len(t, runs, 3, "the runs that exist")
			for _, r := range runs {
				if r.ID == led.Run.ID {
					require.Len(t, r.Steps, 3)
					require.Equal(t, "req-0", r.Steps[0].RequestID)
				}
			}
			other, err := tx.ReadWorkflowRuns(ctx, ws2, ids, lock)
			require.NoError(t, err)
			require.Empty(t, other, "another workspace's runs")
			return nil
		})
	}
	update(t, db, func(ctx context.Context, tx notify.Tx) error {
		runs, err := tx.LockWorkflowRunStates(ctx, ws1, ids)
		require.NoError(t, err)
		require.Len(t, runs, 3, "the runs that exist")
		for _, r := range runs {
			require.Nil(t, r.Payload, "the state only")
			if r.ID == led.Run.ID {
				require.Equal(t, notify.RunCompleted, r.Status)
				require.Equal(t, end.UnixMilli(), r.EndedAt.UnixMilli())
				require.Len(t, r.Steps, 3)
				require.Equal(t, "req-2", r.Steps[2].RequestID)
			} else {
				require.Equal(t, notify.RunRunning, r.Status)
				require.Nil(t, r.EndedAt)
				require.Len(t, r.Steps, 1)
			}
		}
		other, err := tx.LockWorkflowRunStates(ctx, ws2, ids)
		require.NoError(t, err)
		require.Empty(t, other, "another workspace's runs")
		return nil
	})
	run := first[0].Run
	update(t, db, func(ctx context.Context, tx notify.Tx) error {
		r, err := tx.LockWorkflowRun(ctx, ws1, run.ID)
		require.NoError(t, err)
		require.Len(t, r.Steps, 1)
		_, err = tx.LockWorkflowRun(ctx, ws2, run.ID)
		require.ErrorIs(t, err, notify.ErrNotFound)
		s := r.Steps[0]
		end := t0.Add(time.Minute)
		s.Status, s.Outcome, s.RequestID, s.EndedAt = notify.RunStepDone, "sent", "req-1", &end
		require.NoError(t, tx.EndWorkflowRunStep(ctx, s))
		next := &notify.WorkflowRunStep{RunID: r.ID, WorkspaceID: ws1, Index: 1, Key: "b", Type: notify.StepBranch,
			Status: notify.StepPending, DueAt: end, CreatedAt: end}
		require.NoError(t, tx.AddWorkflowRunStep(ctx, next))
		require.NotZero(t, next.QueueJobID)
		r.Status, r.EndedAt, r.UpdatedAt = notify.RunCompleted, &end, end
		r.Digest = &notify.WorkflowDigestResult{Count: 2, Items: []map[string]any{{"a": "1"}}}
		return tx.UpdateWorkflowRun(ctx, r)
	})
	view(t, db, func(ctx context.Context, tx notify.Tx) error {
		r, err := tx.FindWorkflowRun(ctx, ws1, run.ID)
		require.NoError(t, err)
		require.Equal(t, notify.RunCompleted, r.Status)
		require.Equal(t, 2, r.Digest.Count)
		require.Equal(t, map[string]any{"title": "hi"}, r.Payload)
		require.Len(t, r.Steps, 2)
		require.Equal(t, "req-1", r.Steps[0].RequestID)
		require.Equal(t, notify.StepPending, r.Steps[1].Status)
		_, err = tx.FindWorkflowRun(ctx, ws2, run.ID)
		require.ErrorIs(t, err, notify.ErrNotFound)
		page, err := tx.FindWorkflowRuns(ctx, ws1, notify.WorkflowRunFilter{WorkflowID: w.ID, Limit: 10})
		require.NoError(t, err)
		require.Len(t, page, 5)
		for _, r := range page {
			require.NotEmpty(t, r.Steps, "a page's runs come with their steps")
		}
		mine, err := tx.FindWorkflowRuns(ctx, ws1, notify.WorkflowRunFilter{RecipientID: "u-3", Limit: 10})
		require.NoError(t, err)
		require.Len(t, mine, 2)
		running, err := tx.FindRunningWorkflowRuns(ctx, ws1, w.ID, "c1")
		require.NoError(t, err)
		require.Len(t, running, 3, "the completed runs are not running")
		none, err := tx.FindWorkflowRuns(ctx, ws2, notify.WorkflowRunFilter{Limit: 10})
		require.NoError(t, err)
		require.Empty(t, none)
		return nil
	})

	update(t, db, func(ctx context.Context, tx notify.Tx) error {
		for i, at := range []time.Time{t0, t0.Add(30 * time.Minute), t0.Add(2 * time.Hour)} {
			require.NoError(t, tx.AddWorkflowThrottle(ctx, ws1, w.ID, "u-1", "run-"+string(rune('a'+i)), at))
		}
		n, err := tx.CountWorkflowThrottle(ctx, ws1, w.ID, "u-1", t0.Add(time.Hour))
		require.NoError(t, err)
		require.Equal(t, 1, n)
		n, err = tx.CountWorkflowThrottle(ctx, ws1, w.ID, "u-2", t0.Add(-time.Hour))
		require.NoError(t, err)
		require.Zero(t, n)
		return nil
	})

	// A digest: opened once, joined, released once with its first items.
	d := &notify.WorkflowDigest{ID: id(), WorkspaceID: ws1, WorkflowID: w.ID, RecipientID: "u-1", DigestKey: "u-1", RunID: "run-1",
		WindowEnd: t0.Add(time.Minute)}
	update(t, db, func(ctx context.Context, tx notify.Tx) error {
		got, opened, err := tx.JoinWorkflowDigest(ctx, d, "run-1", map[string]any{"n": "1"}, t0)
		require.NoError(t, err)
		require.True(t, opened)
		require.Equal(t, 1, got.Count)
		for _, r := range []string{"run-2", "run-3"} {
			other := *d
			other.ID, other.RunID = id(), r
			got, opened, err = tx.JoinWorkflowDigest(ctx, &other, r, map[string]any{"n": r}, t0)
			require.NoError(t, err)
			require.False(t, opened)
			require.Equal(t, "run-1", got.RunID)
		}
		require.Equal(t, 3, got.Count)
		rel, items, released, err := tx.ReleaseWorkflowDigest(ctx, ws1, "run-1", 2)
		require.NoError(t, err)
		require.True(t, released)
		require.Equal(t, 3, rel.Count)
		require.Equal(t, []map[string]any{{"n": "1"}, {"n": "run-2"}}, items)
		_, _, released, err = tx.ReleaseWorkflowDigest(ctx, ws1, "run-1", 2)
		require.NoError(t, err)
		require.False(t, released, "released once")
		next := *d
		next.ID, next.RunID = id(), "run-4"
		_, opened, err = tx.JoinWorkflowDigest(ctx, &next, "run-4", map[string]any{}, t0)
		require.NoError(t, err)
		require.True(t, opened, "after a release the next join opens a new window")
		return nil
	})

	// Topic subscriptions, scoped by workspace, in id order.
	update(t, db, func(ctx context.Context, tx notify.Tx) error {
		for _, r := range []string{"u-2", "u-1", "u-3"} {
			created, err := tx.PutTopicSubscription(ctx, ws1, "news", r, t0)
			require.NoError(t, err)
			require.True(t, created)
		}
		created, err := tx.PutTopicSubscription(ctx, ws1, "news", "u-1", t0)
		require.NoError(t, err)
		require.False(t, created)
		ids, err := tx.FindTopicSubscribers(ctx, ws1, "news", "u-1", 10)
		require.NoError(t, err)
		require.Equal(t, []string{"u-2", "u-3"}, ids)
		ids, err = tx.FindTopicSubscribers(ctx, ws2, "news", "", 10)
		require.NoError(t, err)
		require.Empty(t, ids)
		require.NoError(t, tx.DeleteTopicSubscription(ctx, ws1, "news", "u-2"))
		require.ErrorIs(t, tx.DeleteTopicSubscription(ctx, ws2, "news", "u-1"), notify.ErrNotFound)
		ids, err = tx.FindTopicSubscribers(ctx, ws1, "news", "", 10)
		require.NoError(t, err)
		require.Equal(t, []string{"u-1", "u-3"}, ids)
		return nil
	})
}

// testWorkflowDigestConcurrent: joins from concurrent transactions (on
// PostgreSQL, of several connections) open one window and all count.
func testWorkflowDigestConcurrent(t *testing.T, db *store.DB) {
	ctx := context.Background()
	ws := Workspace(t, db)
	w := &notify.Workflow{ID: id(), WorkspaceID: ws, Key: "digest", Name: "Digest", CreatedAt: t0, UpdatedAt: t0}
	update(t, db, func(ctx context.Context, tx notify.Tx) error { return tx.CreateWorkflow(ctx, w) })
	var wg sync.WaitGroup
	var mu sync.Mutex
	opened := 0
	for i := range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			run := "run-" + string(rune('a'+i))
			require.NoError(t, db.Update(ctx, func(tx notify.Tx) error {
				d := &notify.WorkflowDigest{ID: id(), WorkspaceID: ws, WorkflowID: w.ID, RecipientID: "u", DigestKey: "k", RunID: run,
					WindowEnd: t0.Add(time.Minute)}
				_, o, err := tx.JoinWorkflowDigest(ctx, d, run, map[string]any{"i": i}, t0)
				if o {
					mu.Lock()
					opened++
					mu.Unlock()
				}
				return err
			}))
		}()
	}
	wg.Wait()
	require.Equal(t, 1, opened)
	var leader string
	update(t, db, func(ctx context.Context, tx notify.Tx) error {
		d := &notify.WorkflowDigest{ID: id(), WorkspaceID: ws, WorkflowID: w.ID, RecipientID: "u", DigestKey: "k", RunID: "probe"}
		got, _, err := tx.JoinWorkflowDigest(ctx, d, "probe", map[string]any{}, t0)
		require.NoError(t, err)
		require.Equal(t, 17, got.Count)
		leader = got.RunID
		return nil
	})
	update(t, db, func(ctx context.Context, tx notify.Tx) error {
		_, items, released, err := tx.ReleaseWorkflowDigest(ctx, ws, leader, 100)
		require.NoError(t, err)
		require.True(t, released)
		require.Len(t, items, 17)
		return nil
	})
}
