package receipts_test

import (
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/notifyd/notifyd/internal/notify"
	"github.com/notifyd/notifyd/internal/notifytest"
	"github.com/notifyd/notifyd/internal/simulator"
)

// A report arriving two seconds after the send moves the request's
// receipt to delivered, beside SPEC's status, and announces it once; a
// duplicate and an out-of-order report change nothing more. Both SMS
// vendors' result APIs.
func TestSMSReportDelivered(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ kind, code string }{{"vendorb_sms", "4000"}, {"vendora_sms", "발송완료"}} {
		t.Run(tc.kind, func(t *testing.T) {
			t.Parallel()
			b := setup(t, tc.kind)
			rc := b.webhook(t)
			require.True(t, b.env.Sim.QueueReport(simulator.ReportRule{Kind: tc.kind, Outcome: "delivered", DelayMs: 2000}))
			id := b.send(t, notifytest.SMS("01012345678", "hello"))

			// Sent (the vendor accepted) while the report is not in yet.
			out := notifytest.WaitFor(t, b.key, id, "sent", func(r notifytest.Request) bool { return r.Status == "sent" })
			require.NotNil(t, out.DeliveryStatus)
			require.Equal(t, "pending", out.DeliveryStatus.Status)
			require.Zero(t, count(rc, id, notify.EventArrived))

			out = b.waitReceipt(t, id, "delivered")
			require.Equal(t, "sent", out.Status, "SPEC's status keeps its meaning")
			require.Equal(t, tc.code, *out.DeliveryStatus.VendorCode)
			require.NotNil(t, out.DeliveryStatus.At)
			require.Len(t, out.Attempts, 1)
			require.Equal(t, "delivered", out.Attempts[0].DeliveryStatus.Status)
			reps := b.env.Sim.Reports(tc.kind, "01012345678")
			require.Len(t, reps, 1)
			require.GreaterOrEqual(t, reps[0].Lookups, 1, "the result API was asked")

			require.Equal(t, 1.0, notifytest.Counter(t, b.env.Daemon.Metrics.Registry, "notifyd_receipts_total",
				map[string]string{"provider_kind": tc.kind, "status": "delivered"}))
			evs := rc.AwaitEvent(t, id, notify.EventArrived)
			require.Equal(t, notify.EventDelivered, evs[0].Type, "SPEC's event came first, at acceptance")

			// The same report again, then a contradicting one out of order.
			msgID := *out.Attempts[0].ProviderMessageID
			for _, rep := range []*notify.VendorReport{{Status: notify.ReceiptDelivered, Code: tc.code},
				{Status: notify.ReceiptUndelivered, Code: "3059"}} {
				changed, err := b.env.Daemon.Rooms.Receipts.Apply(ctx, tc.kind, msgID, rep)
				require.NoError(t, err)
				require.False(t, changed)
			}
			time.Sleep(time.Second) // room for a stray poll or relay
			again := notifytest.Lookup(t, b.key, id)
			require.Equal(t, out.DeliveryStatus, again.DeliveryStatus)
			require.Equal(t, 1, count(rc, id, notify.EventArrived))
			require.Zero(t, count(rc, id, notify.EventUndelivered))
			require.Equal(t, 1, count(rc, id, notify.EventDelivered))
		})
	}
}

// An undelivered AlimTalk moves the request on to its SMS step, once:
// the SMS goes, the request is sent again through it, and a repeated
// undelivered report sends nothing more.
func TestUndeliveredAlimtalkFallsBackToSMS(t *testing.T) {
	t.Parallel()
	b := setup(t, "vendora_sms")
	rc := b.webhook(t)
	require.True(t, b.env.Sim.QueueReport(simulator.ReportRule{Kind: "vendorb_msgr", Outcome: "undelivered", Code: "3104", DelayMs: 500}))
	id := b.send(t, alimtalk("[대체] {{name}}님 주문 {{order}} 접수"))

	out := notifytest.WaitFor(t, b.key, id, "the SMS step sent", func(r notifytest.Request) bool {
		return r.Status == "sent" && r.DeliveredChannel != nil && *r.DeliveredChannel == "sms"
	})
	require.Len(t, out.Attempts, 2)
	require.Equal(t, "vendorb_msgr", out.Attempts[0].ProviderKind)
	require.Equal(t, "success", out.Attempts[0].Status, "the vendor accepted the AlimTalk")
	require.Equal(t, "undelivered", out.Attempts[0].DeliveryStatus.Status)
	require.Equal(t, "3104", *out.Attempts[0].DeliveryStatus.VendorCode)
	require.Equal(t, "vendora_sms", out.Attempts[1].ProviderKind)
	require.Equal(t, 1, out.ChannelFallback.CurrentStep)
	msgs := b.env.Sim.Messages("vendora_sms", "01012345678", 0)
	require.Len(t, msgs, 1)
	require.Equal(t, "[대체] Kim님 주문 A-1 접수", msgs[0].Text)

	// The SMS's own report then arrives.
	out = b.waitReceipt(t, id, "delivered")
	require.Equal(t, "delivered", out.Attempts[1].DeliveryStatus.Status)
	rc.AwaitEvent(t, id, notify.EventArrived)

	// The console's timeline shows both reports.
	con := b.env.ConsoleLogin(t, b.env.Email, b.env.Password)
	resp, page := con.Get(t, "/messages/"+id)
	require.Equal(t, http.StatusOK, resp.StatusCode)
	require.Contains(t, page, "delivery report via vendorb_msgr: undelivered (3104")
	require.Contains(t, page, "delivery report via vendora_sms: delivered (발송완료)")
	require.Contains(t, page, `id="delivery-status" class="receipt-delivered"`)

	// The AlimTalk's report once more: nothing moves.
	changed, err := b.env.Daemon.Rooms.Receipts.Apply(ctx, "vendorb_msgr", *out.Attempts[0].ProviderMessageID,
		&notify.VendorReport{Status: notify.ReceiptUndelivered, Code: "3104"})
	require.NoError(t, err)
	require.False(t, changed)
	time.Sleep(time.Second)
	require.Len(t, b.env.Sim.Messages("vendora_sms", "", 0), 1, "the fallback happened once")
	require.Equal(t, 1, count(rc, id, notify.EventUndelivered))
	require.Equal(t, 2, count(rc, id, notify.EventDelivered), "accepted twice: the AlimTalk, then the SMS")
	require.Equal(t, 1, count(rc, id, notify.EventArrived))
}

// A kind that gives no report says so; a report that never comes turns
// the receipt unknown at the deadline, with no event.
func TestNotTrackedAndDeadline(t *testing.T) {
	t.Parallel()
	b := setup(t, "vendorb_sms", fastPolls(3*time.Second))
	rc := b.webhook(t)
	chat := b.send(t, map[string]any{"channel": "chata_webhook", "recipient": map[string]any{"address": "ops"}, "content": map[string]any{"text": "deploy done"}})
	out := notifytest.Wait(t, b.key, chat)
	require.Equal(t, "sent", out.Status)
	require.Equal(t, "notTracked", out.DeliveryStatus.Status)
	require.NotEmpty(t, out.DeliveryStatus.Reason)

	require.True(t, b.env.Sim.QueueReport(simulator.ReportRule{Kind: "vendorb_sms", Outcome: "delivered", DelayMs: 60_000}))
	id := b.send(t, notifytest.SMS("01099998888", "late"))
	out = b.waitReceipt(t, id, "unknown")
	require.Equal(t, "sent", out.Status)
	require.NotEmpty(t, out.DeliveryStatus.Reason)
	require.Zero(t, count(rc, id, notify.EventArrived))
	require.Zero(t, count(rc, id, notify.EventUndelivered))
}
