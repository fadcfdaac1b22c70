package delivery

import (
	"context"

	"github.com/notifyd/notifyd/internal/notify"
)

// QuarantineCode is the finalErrorCode of a request whose queue job
// crashed its worker process too often (jobs.QuarantineAfterCrashes).
const QuarantineCode notify.FailureCode = "crash_quarantined"

// QuarantineQueueJob ends queue job queueJobID, which crashed its process
// too often, without sending anything. A job still carrying several
// requests is split first: each request goes to an isolated queue job of
// its own counting keep crashes (IsolateDispatch), so one message that
// kills the process cannot fail the others; it answers how many. A job
// with one request fails it at once with QuarantineCode and reason, into
// the dead-letter queue (a replay sends it again), with its event.
func (e *Engine) QuarantineQueueJob(ctx context.Context, queueJobID int64, reason string, keep int) (isolated int, err error) {
	var runs []*run
	err = e.store.Update(ctx, func(tx notify.Tx) error {
		runs = nil
		js, err := tx.FindJobsOfQueueJob(ctx, queueJobID)
		if err != nil || len(js) == 0 {
			return err
		}
		if len(js) > 1 {
			isolated = len(js)
			return tx.IsolateDispatch(ctx, js, keep)
		}
		// Claimed like a run (a queued request cannot fail directly), so
		// it is recorded like one.
		reqs, claimed, err := tx.ClaimRequests(ctx, js, e.now(), e.lim.workerID)
		for i := range reqs {
			runs = append(runs, &run{req: reqs[i], msg: reqs[i].Target(), job: claimed[i], decided: true,
				out: outcome{code: QuarantineCode, msg: reason, quarantine: true}})
		}
		return err
	})
	if err != nil || len(runs) == 0 {
		return isolated, err
	}
	refused, err := e.record(ctx, runs, nil)
	for _, rerr := range refused {
		return 0, rerr
	}
	return 0, err
}
