package storetest

import (
	"context"
	"sort"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/notifyd/notifyd/internal/notify"
	"github.com/notifyd/notifyd/internal/store"
)

// Delivery receipts (issue 35): created with their poll jobs, settled once,
// found by request and by vendor message id, and the early reports of a
// message whose send is not recorded yet.

func testReceipts(t *testing.T, open Opener) {
	runVerbs(t, open, []verb{
		{"CreateReceipts", testCreateReceipts, perWorkspace},
		{"FindReceipt", testCreateReceipts, perWorkspace},
		{"FindReceiptsOfRequest", testCreateReceipts, perWorkspace},
		{"FindReceiptByMessage", testCreateReceipts, perWorkspace},
		{"SettleReceipt", testSettleReceipt, perWorkspace},
		{"SettleReceiptOfMessage", testSettleReceiptOfMessage, perWorkspace},
		{"SettleReceiptsOfMessages", testSettleReceiptsOfMessages, perWorkspace},
		{"CountReceiptPoll", testSettleReceipt, perWorkspace},
		{"MarkReceiptFellBack", testSettleReceipt, perWorkspace},
		{"PutEarlyReport", testEarlyReports, perWorkspace},
		{"TakeEarlyReports", testEarlyReports, perWorkspace},
		{"CountReceipts", testCountReceipts, perWorkspace},
	})
}

func newReceipt(ws, req, msgID string) *notify.Receipt {
	return &notify.Receipt{AttemptID: id(), WorkspaceID: ws, RequestID: req, ProviderAccountID: id(), ProviderKind: "vendorb_sms",
		ProviderMessageID: msgID, Recipient: "01012345678", Channel: notify.ChannelSMS, FallbackStep: 0,
		Status: notify.ReceiptPending, CreatedAt: t0, Deadline: t0.Add(72 * time.Hour)}
}

func testCreateReceipts(t *testing.T, db *store.DB) {
	ws1, ws2 := Workspace(t, db), Workspace(t, db)
	req := id()
	a, b := newReceipt(ws1, req, "M-"+id()), newReceipt(ws1, req, "M-"+id())
	b.CreatedAt = t0.Add(time.Second)
	update(t, db, func(ctx context.Context, tx notify.Tx) error {
		return tx.CreateReceipts(ctx, []*notify.Receipt{a, b}, []bool{true, false}, time.Hour)
	})
	view(t, db, func(ctx context.Context, tx notify.Tx) error {
		got, err := tx.FindReceipt(ctx, ws1, a.AttemptID)
		require.NoError(t, err)
		require.Equal(t, a, got)
		_, err = tx.FindReceipt(ctx, ws2, a.AttemptID)
		require.ErrorIs(t, err, notify.ErrNotFound, "another workspace")
		list, err := tx.FindReceiptsOfRequest(ctx, ws1, req)
		require.NoError(t, err)
		require.Equal(t, []*notify.Receipt{a, b}, list)
		list, err = tx.FindReceiptsOfRequest(ctx, ws2, req)
		require.NoError(t, err)
		require.Empty(t, list)
		got, err = tx.FindReceiptByMessage(ctx, "vendorb_sms", b.ProviderMessageID)
		require.NoError(t, err)
		require.Equal(t, b, got)
		_, err = tx.FindReceiptByMessage(ctx, "vendora_sms", b.ProviderMessageID)
		require.ErrorIs(t, err, notify.ErrNotFound, "another kind")
		return nil
	})
}

func testSettleReceipt(t *testing.T, db *store.DB) {
	ws := Workspace(t, db)
	rc := newReceipt(ws, id(), "M-"+id())
	update(t, db, func(ctx context.Context, tx notify.Tx) error {
		return tx.CreateReceipts(ctx, []*notify.Receipt{rc}, []bool{false}, 0)
	})
	at := t0.Add(3 * time.Second)
	done := *rc
	done.Status, done.Code, done.Text, done.ReportedAt = notify.ReceiptDelivered, "4000", "ok", &at
	update(t, db, func(ctx context.Context, tx notify.Tx) error {
		require.NoError(t, tx.CountReceiptPoll(ctx, ws, rc.AttemptID))
		ok, err := tx.SettleReceipt(ctx, &done)
		require.NoError(t, err)
		require.True(t, ok)
		// Once final, a later report (out of order) changes nothing.
		late := done
		late.Status, late.Code = notify.ReceiptUndelivered, "3059"
		ok, err = tx.SettleReceipt(ctx, &late)
		require.NoError(t, err)
		require.False(t, ok)
		marked, err := tx.MarkReceiptFellBack(ctx, ws, rc.AttemptID)
		require.NoError(t, err)
		require.True(t, marked)
		marked, err = tx.MarkReceiptFellBack(ctx, ws, rc.AttemptID)
		require.NoError(t, err)
		require.False(t, marked, "once")
		return nil
	})
	view(t, db, func(ctx context.Context, tx notify.Tx) error {
		got, err := tx.FindReceipt(ctx, ws, rc.AttemptID)
		require.NoError(t, err)
		done.Polls, done.FellBack = 1, true
		require.Equal(t, &done, got)
		return nil
	})
}

func testEarlyReports(t *testing.T, db *store.DB) {
	m1, m2 := "E-"+id(), "E-"+id()
	update(t, db, func(ctx context.Context, tx notify.Tx) error {
		for _, rep := range []*notify.VendorReport{
			{Status: notify.ReceiptDelivered, Code: "delivered", At: t0.Add(2 * time.Second)},
			{Status: notify.ReceiptDelivered, Code: "again", At: t0.Add(3 * time.Second)}, // the same report twice: kept once
			{Status: notify.ReceiptUndelivered, Code: "bounce", At: t0.Add(time.Second)},
		} {
			require.NoError(t, tx.PutEarlyReport(ctx, "mailx_email", m1, rep, t0))
		}
		return tx.PutEarlyReport(ctx, "mailx_email", m2, &notify.VendorReport{Status: notify.ReceiptDelivered, At: t0}, t0)
	})
	update(t, db, func(ctx context.Context, tx notify.Tx) error {
		got, err := tx.TakeEarlyReports(ctx, "mailx_email", []string{m1})
		require.NoError(t, err)
		require.Len(t, got, 1)
		require.Equal(t, &notify.VendorReport{Status: notify.ReceiptUndelivered, Code: "bounce", At: t0.Add(time.Second)}, got[m1],
			"the first final report by the vendor's time")
		got, err = tx.TakeEarlyReports(ctx, "mailx_email", []string{m1})
		require.NoError(t, err)
		require.Empty(t, got, "taken")
		got, err = tx.TakeEarlyReports(ctx, "maily_email", []string{m2})
		require.NoError(t, err)
		require.Empty(t, got, "another kind")
		got, err = tx.TakeEarlyReports(ctx, "mailx_email", []string{m2})
		require.NoError(t, err)
		require.Len(t, got, 1)
		return nil
	})
}

// testCountReceipts: the receipts of a workspace's sends in a range, by
// bucket, channel, account and status (pending past its deadline counting
// as unknown), the same after retention purged them (hourly rollup).
func testCountReceipts(t *testing.T, db *store.DB) {
	s := purgeFixture(t, db)
	ws := s.ws
	acct := id()
	mk := func(a *notify.Accept, status string, at time.Time) *notify.Receipt {
		rc := newReceipt(a.Request.WorkspaceID, a.Request.ID, "M-"+id())
		rc.ProviderAccountID, rc.Status, rc.CreatedAt, rc.Deadline = acct, status, at, at.Add(72*time.Hour)
		if status != notify.ReceiptPending {
			rc.ReportedAt = &at
		}
		return rc
	}
	hour := t0.Truncate(time.Hour)
	rs := []*notify.Receipt{
		mk(s.gone[0], notify.ReceiptDelivered, t0),                // purged
		mk(s.gone[1], notify.ReceiptUndelivered, t0),              // purged
		mk(s.gone[2], notify.ReceiptPending, t0),                  // purged, past its deadline: unknown
		mk(s.kept[0], notify.ReceiptDelivered, t0.Add(time.Hour)), // the next hour
		mk(s.kept[4], notify.ReceiptDelivered, t0),                // another workspace
	}
	update(t, db, func(ctx context.Context, tx notify.Tx) error {
		return tx.CreateReceipts(ctx, rs, make([]bool, len(rs)), 0)
	})
	from, to := hour, hour.Add(48*time.Hour-time.Millisecond)
	now := t0.Add(100 * time.Hour) // past every deadline
	count := func(interval time.Duration) []notify.ReceiptCount {
		var out []notify.ReceiptCount
		view(t, db, func(ctx context.Context, tx notify.Tx) (err error) {
			out, err = tx.CountReceipts(ctx, ws, from, to, now, interval)
			return err
		})
		sort.Slice(out, func(i, j int) bool {
			if !out[i].Bucket.Equal(out[j].Bucket) {
				return out[i].Bucket.Before(out[j].Bucket)
			}
			return out[i].Status < out[j].Status
		})
		return out
	}
	row := func(at time.Time, status string, n int) notify.ReceiptCount {
		return notify.ReceiptCount{Bucket: at, Channel: notify.ChannelSMS, ProviderAccountID: acct, ProviderKind: "vendorb_sms", Status: status, N: n}
	}
	want := []notify.ReceiptCount{row(hour, notify.ReceiptDelivered, 1), row(hour, notify.ReceiptUndelivered, 1),
		row(hour, notify.ReceiptUnknown, 1), row(hour.Add(time.Hour), notify.ReceiptDelivered, 1)}
	require.Equal(t, want, count(time.Hour))
	day := t0.Truncate(24 * time.Hour)
	require.Equal(t, []notify.ReceiptCount{row(day, notify.ReceiptDelivered, 2), row(day, notify.ReceiptUndelivered, 1),
		row(day, notify.ReceiptUnknown, 1)}, count(24*time.Hour))
	var none []notify.ReceiptCount
	view(t, db, func(ctx context.Context, tx notify.Tx) (err error) {
		none, err = tx.CountReceipts(ctx, ws, t0.Add(-48*time.Hour), t0.Add(-time.Hour), now, time.Hour)
		return err
	})
	require.Empty(t, none, "a range before the sends")

	// Retention purges three of them: the whole hours count the same.
	purgeAll(t, db, ws, purgeCutoff, 1000)
	require.Equal(t, want, count(time.Hour), "purged receipts count through the rollup")
}

// testSettleReceiptOfMessage: the newest receipt of a message is settled
// once, only while pending and while its request exists, and comes back
// with its request; nothing is written otherwise.
func testSettleReceiptOfMessage(t *testing.T, db *store.DB) {
	ws := Workspace(t, db)
	a := &notify.Accept{Request: newRequest(ws, ""), MaxAttempts: 3}
	update(t, db, func(ctx context.Context, tx notify.Tx) error {
		return tx.AcceptRequests(ctx, []*notify.Accept{a}, t0)
	})
	msg := "M-" + id()
	old, rc := newReceipt(ws, a.Request.ID, msg), newReceipt(ws, a.Request.ID, msg)
	rc.CreatedAt = t0.Add(time.Second)
	orphan := newReceipt(ws, id(), "M-"+id()) // its request is gone
	update(t, db, func(ctx context.Context, tx notify.Tx) error {
		return tx.CreateReceipts(ctx, []*notify.Receipt{old, rc, orphan}, []bool{false, false, false}, 0)
	})
	hooks := [][]string{{notify.EventArrived}, {"notification.failed", notify.EventUndelivered}}
	for i, ev := range hooks {
		w := &notify.Webhook{ID: id(), WorkspaceID: ws, URL: "https://a.example/hook", Events: ev, Enabled: i == 0, SecretEnc: "sealed",
			CreatedAt: t0.Add(time.Duration(i) * time.Second), UpdatedAt: t0}
		update(t, db, func(ctx context.Context, tx notify.Tx) error { return tx.CreateWebhook(ctx, w) })
	}
	at := t0.Add(3 * time.Second)
	c := &notify.Receipt{Status: notify.ReceiptDelivered, Code: "delivered", Text: "ok", ReportedAt: &at}
	want := *rc
	want.Status, want.Code, want.Text, want.ReportedAt = c.Status, c.Code, c.Text, c.ReportedAt
	update(t, db, func(ctx context.Context, tx notify.Tx) error {
		st, err := tx.SettleReceiptOfMessage(ctx, "vendorb_sms", msg, c)
		require.NoError(t, err)
		require.NotNil(t, st)
		require.Equal(t, &want, st.Receipt, "the newest receipt of the message")
		r := st.Request
		require.NotNil(t, r)
		require.Equal(t, a.Request.ID, r.ID)
		require.Equal(t, a.Request.Metadata, r.Metadata)
		require.Equal(t, notify.ChannelSMS, r.Channel)
		require.Equal(t, hooks, st.Hooks, "every webhook of the workspace, oldest first")
		// Settled already, another kind, an unknown message, no request:
		// nothing.
		for _, k := range [][2]string{{"vendorb_sms", msg}, {"vendora_sms", msg}, {"vendorb_sms", "M-" + id()},
			{"vendorb_sms", orphan.ProviderMessageID}} {
			st, err = tx.SettleReceiptOfMessage(ctx, k[0], k[1], c)
			require.NoError(t, err)
			require.Nil(t, st, k)
		}
		return nil
	})
	view(t, db, func(ctx context.Context, tx notify.Tx) error {
		got, err := tx.FindReceipt(ctx, ws, rc.AttemptID)
		require.NoError(t, err)
		require.Equal(t, &want, got)
		for _, p := range []*notify.Receipt{old, orphan} {
			got, err = tx.FindReceipt(ctx, ws, p.AttemptID)
			require.NoError(t, err)
			require.Equal(t, notify.ReceiptPending, got.Status, "only the newest receipt of a message with a request")
		}
		return nil
	})
}

// testSettleReceiptsOfMessages: a batch of reports settles each message's
// newest pending receipt with a request, with its own report's state, and
// answers in the reports' order, nil where nothing was written; a batch
// with nothing to settle writes nothing.
func testSettleReceiptsOfMessages(t *testing.T, db *store.DB) {
	ws := Workspace(t, db)
	var reqs []*notify.Accept
	for range 3 {
		reqs = append(reqs, &notify.Accept{Request: newRequest(ws, ""), MaxAttempts: 3})
	}
	update(t, db, func(ctx context.Context, tx notify.Tx) error {
		return tx.AcceptRequests(ctx, reqs, t0)
	})
	a, b, done := newReceipt(ws, reqs[0].Request.ID, "M-"+id()), newReceipt(ws, reqs[1].Request.ID, "M-"+id()),
		newReceipt(ws, reqs[2].Request.ID, "M-"+id())
	old := newReceipt(ws, reqs[1].Request.ID, b.ProviderMessageID)
	b.CreatedAt = t0.Add(time.Second)
	at := t0.Add(5 * time.Second)
	done.Status, done.Code, done.ReportedAt = notify.ReceiptUndelivered, "bounce", &at
	orphan := newReceipt(ws, id(), "M-"+id())
	update(t, db, func(ctx context.Context, tx notify.Tx) error {
		return tx.CreateReceipts(ctx, []*notify.Receipt{a, b, old, done, orphan}, []bool{false, false, false, false, false}, 0)
	})
	atA, atB := t0.Add(3*time.Second), t0.Add(4*time.Second)
	cA := &notify.Receipt{Status: notify.ReceiptDelivered, Code: "delivered", Text: "a", ReportedAt: &atA}
	cB := &notify.Receipt{Status: notify.ReceiptUndelivered, Code: "bounce", Text: "b", ReportedAt: &atB}
	reps := []notify.MessageReport{
		{Kind: "vendorb_sms", MessageID: "M-" + id(), C: cA},              // unknown message
		{Kind: "vendorb_sms", MessageID: b.ProviderMessageID, C: cB},      // the newer of two
		{Kind: "vendorb_sms", MessageID: done.ProviderMessageID, C: cA},   // final already
		{Kind: "vendorb_sms", MessageID: orphan.ProviderMessageID, C: cA}, // no request
		{Kind: "vendorb_sms", MessageID: a.ProviderMessageID, C: cA},
		{Kind: "vendora_sms", MessageID: done.ProviderMessageID, C: cA}, // another kind
	}
	wantA, wantB := *a, *b
	wantA.Status, wantA.Code, wantA.Text, wantA.ReportedAt = cA.Status, cA.Code, cA.Text, cA.ReportedAt
	wantB.Status, wantB.Code, wantB.Text, wantB.ReportedAt = cB.Status, cB.Code, cB.Text, cB.ReportedAt
	update(t, db, func(ctx context.Context, tx notify.Tx) error {
		got, err := tx.SettleReceiptsOfMessages(ctx, reps)
		require.NoError(t, err)
		require.Len(t, got, len(reps))
		for _, i := range []int{0, 2, 3, 5} {
			require.Nil(t, got[i], i)
		}
		require.NotNil(t, got[1])
		require.Equal(t, &wantB, got[1].Receipt)
		require.Equal(t, reqs[1].Request.ID, got[1].Request.ID)
		require.NotNil(t, got[4])
		require.Equal(t, &wantA, got[4].Receipt)
		require.Equal(t, reqs[0].Request.ID, got[4].Request.ID)
		require.Equal(t, [][]string{}, got[4].Hooks, "no webhook in the workspace")
		// The same batch again: everything is final now.
		got, err = tx.SettleReceiptsOfMessages(ctx, reps)
		require.NoError(t, err)
		require.Equal(t, make([]*notify.SettledReceipt, len(reps)), got)
		got, err = tx.SettleReceiptsOfMessages(ctx, nil)
		require.NoError(t, err)
		require.Empty(t, got)
		return nil
	})
	view(t, db, func(ctx context.Context, tx notify.Tx) error {
		for _, w := range []*notify.Receipt{&wantA, &wantB, done} {
			got, err := tx.FindReceipt(ctx, ws, w.AttemptID)
			require.NoError(t, err)
			require.Equal(t, w, got)
		}
		for _, p := range []*notify.Receipt{old, orphan} {
			got, err := tx.FindReceipt(ctx, ws, p.AttemptID)
			require.NoError(t, err)
			require.Equal(t, notify.ReceiptPending, got.Status)
		}
		return nil
	})
}
