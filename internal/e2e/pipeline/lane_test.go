package pipeline_test

import (
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/notifyd/notifyd/internal/notify"
	"github.com/notifyd/notifyd/internal/notifytest"
	"github.com/notifyd/notifyd/internal/store/sqlstore"
)

// TestBulkCallLane: a bulk call marked "lane": "bulk" queues its items in
// the bulk lane (River's bulk queue), an unmarked one in the default
// queue, both are delivered, and a lane other than the two is refused
// (issue 31, item 2).
func TestBulkCallLane(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.env.SimRoute(t, "sms", "vendorb_sms", nil)
	send := func(lane any, text string) (int, string) {
		body := map[string]any{"items": []any{notifytest.SMS("01012345678", text)}}
		if lane != nil {
			body["lane"] = lane
		}
		r := notifytest.Signed(t, b.key, "POST", "/v1/notifications/bulk", body)
		if r.Status != http.StatusCreated {
			return r.Status, string(r.Body)
		}
		var out struct {
			Items []notifytest.Accepted `json:"items"`
		}
		require.NoError(t, r.Data(&out))
		return r.Status, *out.Items[0].QueueJobID
	}
	queue := func(id string) string {
		var q string
		require.NoError(t, b.env.Daemon.DB.View(ctx, func(tx notify.Tx) error {
			return tx.(*sqlstore.Tx).Conn().QueryRow(ctx, `SELECT queue FROM river_job WHERE id = ?`, id).Scan(&q)
		}))
		return q
	}
	_, bulkJob := send("bulk", "marked")
	_, plainJob := send(nil, "plain")
	_, txJob := send("transactional", "explicit")
	require.Equal(t, "bulk", queue(bulkJob))
	require.Equal(t, "default", queue(plainJob))
	require.Equal(t, "default", queue(txJob))

	status, body := send("urgent", "refused")
	require.Equal(t, http.StatusBadRequest, status)
	require.Contains(t, body, `lane must be \"transactional\" or \"bulk\"`)
	status, _ = send(3, "refused")
	require.Equal(t, http.StatusBadRequest, status)

	deadline := time.Now().Add(20 * time.Second)
	for len(b.env.Sim.Messages("vendorb_sms", "", 0)) < 3 {
		require.True(t, time.Now().Before(deadline), "every lane is delivered")
		time.Sleep(50 * time.Millisecond)
	}
	require.Len(t, b.env.Sim.Messages("vendorb_sms", "", 0), 3)
}
