package receipts

import (
	"context"
	"errors"
	"time"

	"github.com/notifyd/notifyd/internal/groupcommit"
	"github.com/notifyd/notifyd/internal/notify"
	"github.com/notifyd/notifyd/internal/usecase"
)

// Poll makes one lookup of the receipt of attempt attemptID at its
// vendor, for the poll job. It answers how long to wait before the next
// one, zero when the receipt is final (or gone). A vendor that cannot be
// reached is tried again on the schedule: only the deadline ends the wait.
func (s *Service) Poll(ctx context.Context, workspaceID, attemptID string) (time.Duration, error) {
	var rc *notify.Receipt
	var acct *notify.ProviderAccount
	err := s.Store.View(ctx, func(tx notify.Tx) error {
		var err error
		if rc, err = tx.FindReceipt(ctx, workspaceID, attemptID); err != nil {
			return err
		}
		if rc.Final() {
			return nil
		}
		acct, err = tx.FindProviderAccount(ctx, workspaceID, rc.ProviderAccountID)
		if errors.Is(err, notify.ErrNotFound) {
			return nil
		}
		return err
	})
	if errors.Is(err, notify.ErrNotFound) || (err == nil && rc.Final()) {
		return 0, nil // deleted with its request, or settled by another run
	}
	if err != nil {
		return 0, err
	}
	now := s.Now()
	if !now.Before(rc.Deadline) || acct == nil {
		// No final report in time (or its account is gone): unknown.
		return 0, s.settle(ctx, rc, &notify.VendorReport{Status: notify.ReceiptUnknown, At: now})
	}
	rep, err := s.lookup(ctx, acct, rc)
	if err != nil {
		s.Log.WarnContext(ctx, "delivery report lookup failed", "attempt", rc.AttemptID, "kind", rc.ProviderKind, "err", err)
	} else if rep.Status != notify.ReceiptPending {
		return 0, s.settle(ctx, rc, rep)
	}
	if err := s.Store.Batch(ctx, func(tx notify.Tx) error {
		return tx.CountReceiptPoll(ctx, workspaceID, attemptID)
	}); err != nil {
		return 0, err
	}
	wait := s.schedule[min(rc.Polls, len(s.schedule)-1)]
	if left := rc.Deadline.Sub(now); left < wait {
		wait = left + time.Second // the last lookup finds the deadline passed
	}
	return wait, nil
}

// lookup asks the vendor for rc's report.
func (s *Service) lookup(ctx context.Context, acct *notify.ProviderAccount, rc *notify.Receipt) (*notify.VendorReport, error) {
	if s.reporters == nil {
		return nil, errors.New("no report lookups configured")
	}
	api, ok, err := s.reporters.ReportAPI(acct)
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, errors.New("provider kind " + acct.ProviderKind + " has no result API")
	}
	return api.Report(ctx, rc.ProviderMessageID, rc.Recipient)
}

// settle applies a final report to rc in one transaction, shared with
// other reports (group commit: under load a report is one statement group
// of a shared commit, not a commit of its own).
func (s *Service) settle(ctx context.Context, rc *notify.Receipt, rep *notify.VendorReport) error {
	var final string
	err := s.Store.Batch(ctx, func(tx notify.Tx) (err error) {
		final, err = s.settleTx(ctx, tx, rc, rep)
		return err
	})
	if err == nil && final != "" {
		s.metrics.Final(string(rc.Channel), rc.ProviderKind, final)
	}
	return err
}

// settleTx applies a final report to rc in tx: the receipt (only if still
// pending, so a report applied twice or a later one after a final state
// changes nothing), its event, and the channel fallback of an undelivered
// report. It answers the status rc became, "" when nothing changed. It
// may share tx with other reports (Store.Batch): the conditional update
// makes the first of two reports about one receipt the only one applied.
func (s *Service) settleTx(ctx context.Context, tx notify.Tx, rc *notify.Receipt, rep *notify.VendorReport) (string, error) {
	now := s.Now()
	c := *rc
	c.Status = notify.ReceiptPending
	if rep.Status == notify.ReceiptUnknown {
		at := rep.At
		c.Status, c.ReportedAt = notify.ReceiptUnknown, &at
	} else if !notify.ApplyReport(&c, rep, now) {
		return "", nil
	}
	// The request row is locked only when the report may move it along
	// its fallback; the event needs no lock.
	find := tx.FindRequest
	if c.Status == notify.ReceiptUndelivered && s.window >= 0 {
		find = tx.LockRequest
	}
	r, err := find(ctx, rc.WorkspaceID, rc.RequestID)
	if errors.Is(err, notify.ErrNotFound) {
		return "", nil
	}
	if err != nil {
		return "", err
	}
	applied, err := tx.SettleReceipt(ctx, &c)
	if err != nil || !applied {
		return "", err
	}
	if typ := notify.ReceiptEventType(&c); typ != "" {
		es, err := notify.Subscribed(ctx, tx, []*notify.Event{notify.ReceiptEvent(usecase.NewID(), typ, r, &c, now)})
		if err != nil {
			return "", err
		}
		if err := tx.CreateEvents(ctx, es); err != nil {
			return "", err
		}
	}
	return c.Status, s.fallBack(ctx, tx, r, &c, now)
}

// pushed says whether a pushed report moves no request (delivered, or
// undelivered with the fallback off): such a report is settled with the
// others of the moment by settleQueued.
func (s *Service) pushed(rep *notify.VendorReport) bool {
	return rep.Status == notify.ReceiptDelivered || (rep.Status == notify.ReceiptUndelivered && s.window < 0)
}

// pushCall is one pushed report waiting in the reports' queue.
type pushCall struct {
	ctx  context.Context
	rep  notify.MessageReport
	done chan error
	// settled is the receipt the batch settled, nil when it changed
	// nothing; set before done is answered.
	settled *notify.Receipt
}

func (c *pushCall) Context() context.Context { return c.ctx }
func (c *pushCall) Answer(err error)         { c.done <- err }

// settleQueued settles a pushed report that moves no request (pushed) to
// the newest receipt of its message, with the reports that arrive at the
// same moment: one store call for all of them (SettleReceiptsOfMessages:
// one statement on PostgreSQL) and their events, in one shared
// transaction. It answers the receipt as settled, nil when it changed
// nothing (no receipt, a final one, or no request): Apply then takes the
// general path, which tells these apart.
func (s *Service) settleQueued(ctx context.Context, kind, messageID string, rep *notify.VendorReport) (*notify.Receipt, error) {
	c := notify.Receipt{Status: notify.ReceiptPending}
	if !notify.ApplyReport(&c, rep, s.Now()) {
		return nil, nil
	}
	call := &pushCall{ctx: ctx, rep: notify.MessageReport{Kind: kind, MessageID: messageID, C: &c}, done: make(chan error, 1)}
	if err := groupcommit.Wait(ctx, s.pushq, call, call.done); err != nil {
		return nil, err
	}
	return call.settled, nil
}

// settleBatch settles a batch of pushed reports (the queue's run): the
// first report about each message in one SettleReceiptsOfMessages and
// their events with it. A later report about the same message, and every
// report of a batch whose transaction failed, is answered unsettled and
// takes Apply's general path on its own.
func (s *Service) settleBatch(calls []*pushCall) {
	live := groupcommit.Live(calls)
	if len(live) == 0 {
		return
	}
	type key struct{ kind, id string }
	seen := make(map[key]bool, len(live))
	in := make([]*pushCall, 0, len(live))
	reps := make([]notify.MessageReport, 0, len(live))
	for _, c := range live {
		k := key{c.rep.Kind, c.rep.MessageID}
		if seen[k] {
			continue
		}
		seen[k] = true
		in, reps = append(in, c), append(reps, c.rep)
	}
	ctx := context.Background()
	start := time.Now()
	defer func() { s.yield(time.Since(start)) }()
	var got []*notify.SettledReceipt
	err := s.commit.CommitShared(ctx, func(tx notify.Tx) error {
		var err error
		if got, err = tx.SettleReceiptsOfMessages(ctx, reps); err != nil {
			return err
		}
		now := s.Now()
		var es []*notify.Event
		for _, st := range got {
			if st == nil {
				continue
			}
			if typ := notify.ReceiptEventType(st.Receipt); typ != "" {
				es = append(es, notify.SubscribedBy(st.Hooks, []*notify.Event{notify.ReceiptEvent(usecase.NewID(), typ, st.Request, st.Receipt, now)})...)
			}
		}
		if len(es) == 0 {
			return nil
		}
		return tx.CreateEvents(ctx, es)
	})
	if err != nil {
		s.Log.WarnContext(ctx, "delivery reports batch failed; each is applied on its own", "reports", len(reps), "err", err)
	} else {
		for i, c := range in {
			if got[i] != nil {
				c.settled = got[i].Receipt
			}
		}
	}
	for _, c := range live {
		c.Answer(nil)
	}
}

// yield pauses the reports' queue after a batch that took d (its
// answers sent), so that pushed reports take at most their share of the
// time while they keep coming (Options.ReportShare): the reports that
// arrive meanwhile make the next batch, one statement for all of them.
// A batch takes longer when the writer or the machine is busy with
// sends, so the reports then slow down with it. A lone report after a
// quiet moment does not wait: the pause follows a batch, and only a
// report arriving during it waits (at most maxReportPause).
func (s *Service) yield(d time.Duration) {
	if s.pause <= 0 {
		return
	}
	if p := min(time.Duration(float64(d)*s.pause), maxReportPause); p > 0 {
		time.Sleep(p)
	}
}

// fallBack moves r along its channel fallback when c, its receipt that
// just became final, says undelivered (once: the receipt is marked).
func (s *Service) fallBack(ctx context.Context, tx notify.Tx, r *notify.Request, c *notify.Receipt, now time.Time) error {
	if c.Status != notify.ReceiptUndelivered || s.window < 0 || !r.HasNextStep() {
		return nil
	}
	j, err := tx.FindJobByRequest(ctx, r.WorkspaceID, r.ID)
	if err != nil {
		return err
	}
	moved, err := notify.FallBackOnUndelivered(r, j, c, s.window, now)
	if err != nil || !moved {
		return err
	}
	if marked, err := tx.MarkReceiptFellBack(ctx, c.WorkspaceID, c.AttemptID); err != nil || !marked {
		return err
	}
	if err := tx.UpdateRequest(ctx, r); err != nil {
		return err
	}
	if err := tx.MoveFallbackSteps(ctx, []*notify.Request{r}, []*notify.Job{j}); err != nil {
		return err
	}
	if err := tx.ScheduleDispatch(ctx, []*notify.Job{j}, []time.Time{{}}, []notify.Lane{r.Lane()}); err != nil {
		return err
	}
	return tx.UpdateJobs(ctx, []*notify.Job{j})
}

// Apply applies a report a vendor pushed (a delivery callback) about its
// message messageID of kind: to its receipt, once; a report about a
// message whose send is not recorded yet is kept and applied when it is.
// It reports whether the report changed a receipt now. A report that
// moves no request is settled with the others of the moment in one
// store call (settleQueued); the others, and one that found nothing to
// settle there, are found and settled by one function of a shared
// transaction (Committer), so a burst of callbacks commits together, and
// with the sends of the moment.
func (s *Service) Apply(ctx context.Context, kind, messageID string, rep *notify.VendorReport) (bool, error) {
	if messageID == "" || rep == nil || rep.Status == notify.ReceiptPending {
		return false, nil
	}
	var rc *notify.Receipt
	var final string
	// The vendor waits for the answer: the shared transaction goes before
	// background writers (delivery runs), as a send's does; the daemon's
	// is the send group commit's own (docs/DECISIONS.md "Reports ride in
	// the send group commit").
	if s.pushed(rep) {
		settled, err := s.settleQueued(ctx, kind, messageID, rep)
		if err != nil {
			return false, err
		}
		if settled != nil {
			s.metrics.Final(string(settled.Channel), settled.ProviderKind, settled.Status)
			return true, nil
		}
	}
	err := s.commit.CommitShared(ctx, func(tx notify.Tx) error {
		rc, final = nil, ""
		found, err := tx.FindReceiptByMessage(ctx, kind, messageID)
		if errors.Is(err, notify.ErrNotFound) {
			return tx.PutEarlyReport(ctx, kind, messageID, rep, s.Now())
		}
		if err != nil {
			return err
		}
		rc = found
		if rc.Final() {
			return nil
		}
		final, err = s.settleTx(ctx, tx, rc, rep)
		return err
	})
	if err != nil {
		return false, err
	}
	if rc != nil {
		if final != "" {
			s.metrics.Final(string(rc.Channel), rc.ProviderKind, final)
		}
		return final != "", nil
	}
	// Kept as early. The send's record takes it when it commits; one that
	// was committing while it was kept (PostgreSQL: neither saw the other)
	// is caught by looking once more a moment later.
	if err := sleep(ctx, earlyRecheck); err != nil {
		return false, nil
	}
	if rc, err = s.takeEarly(ctx, kind, messageID); err != nil || rc == nil {
		return false, err
	}
	if rc.Final() {
		return false, nil
	}
	if err := s.settle(ctx, rc, rep); err != nil {
		return false, err
	}
	return true, nil
}

// earlyRecheck is how long after keeping an early report Apply looks for
// its receipt again: longer than a send's record transaction takes.
const earlyRecheck = 200 * time.Millisecond

// takeEarly answers the receipt of messageID when it exists now and its
// early report was still kept (no record took it), which it removes; nil
// otherwise.
func (s *Service) takeEarly(ctx context.Context, kind, messageID string) (*notify.Receipt, error) {
	var rc *notify.Receipt
	err := s.Store.Update(ctx, func(tx notify.Tx) error {
		found, err := tx.FindReceiptByMessage(ctx, kind, messageID)
		if errors.Is(err, notify.ErrNotFound) {
			return nil
		}
		if err != nil {
			return err
		}
		kept, err := tx.TakeEarlyReports(ctx, kind, []string{messageID})
		if err == nil && kept[messageID] != nil {
			rc = found
		}
		return err
	})
	return rc, err
}

func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
