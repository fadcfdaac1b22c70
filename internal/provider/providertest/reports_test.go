package providertest

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/notifyd/notifyd/internal/notify"
	"github.com/notifyd/notifyd/internal/provider"
	"github.com/notifyd/notifyd/internal/provider/kinds"
)

// Every polled kind's result API against the simulator (issue 35): a
// message of a batch is pending while the report is not due, then
// delivered or undelivered with the vendor's code, found by its own number
// among the call's recipients; a kind that reports by callback has no
// Reporter, nor does one without reports.
func TestReports(t *testing.T) {
	t.Parallel()
	for kind, want := range map[string]struct{ delivered, undelivered string }{
		"vendora_sms": {"발송완료", "결번"}, "vendora_msgr": {"0", "3018"},
		"vendorb_sms": {"4000", "3059"}, "vendorb_msgr": {"4000", "3104"},
	} {
		t.Run(kind, func(t *testing.T) {
			t.Parallel()
			require.Equal(t, notify.ReceiptsPolled, kinds.All()[kind].Receipts)
			e := newEnv(t)
			e.control(http.MethodPost, "/_sim/reports", map[string]any{"kind": kind, "to": phone(2), "outcome": "undelivered", "delayMs": 300})
			p := e.provider(kind, 0)
			msg := smsMsg
			if kind == "vendora_msgr" || kind == "vendorb_msgr" {
				msg = alimMsg
			}
			res := p.Send(context.Background(), []provider.Message{msg(1), msg(2)})
			for _, r := range res {
				require.Nil(t, r.Err)
			}
			rep := p.(provider.Reporter)
			first, err := rep.Report(context.Background(), res[1].MessageID, phone(2))
			require.NoError(t, err)
			require.Equal(t, notify.ReceiptPending, first.Status, "not due yet")
			require.Eventually(t, func() bool {
				r, err := rep.Report(context.Background(), res[1].MessageID, phone(2))
				return err == nil && r.Status == notify.ReceiptUndelivered && r.Code == want.undelivered
			}, 5*time.Second, 50*time.Millisecond)
			require.Eventually(t, func() bool {
				r, err := rep.Report(context.Background(), res[0].MessageID, phone(1))
				return err == nil && r.Status == notify.ReceiptDelivered && r.Code == want.delivered
			}, 5*time.Second, 50*time.Millisecond)
		})
	}
	for id, k := range kinds.All() {
		switch id {
		case "vendora_sms", "vendora_msgr", "vendorb_sms", "vendorb_msgr":
		case "mailx_email", "maily_email", "mailz_email":
			require.Equal(t, notify.ReceiptsPushed, k.Receipts, id)
		default:
			require.Empty(t, k.Receipts, id)
		}
	}
}
