package pipeline_test

import (
	"errors"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/notifyd/notifyd/internal/dispatch"
	"github.com/notifyd/notifyd/internal/notifytest"
)

// TestRescuedRunDoesNotSendTwice plays River's rescue of a job whose run
// is still live (a slow vendor call): the second run of the request must
// snooze instead of calling the vendor again, and the message goes once.
func TestRescuedRunDoesNotSendTwice(t *testing.T) {
	t.Parallel()
	b := setup(t)
	p := b.env.SimProvider(t, "vendorb_sms", "solapi", nil)
	notifytest.PutRoutes(t, b.env.Owner, notifytest.Route{Channel: "sms", ProviderAccountID: p, Priority: 1})
	fault(t, b, map[string]any{"kind": "vendorb_sms", "latencyMs": 3000, "count": 1})
	res := notifytest.Send(t, b.key, notifytest.SMS("01012345678", "once"))
	running := notifytest.WaitFor(t, b.key, res.RequestID, "processing", func(o notifytest.Request) bool { return o.Status == "processing" })
	queueJobID, err := strconv.ParseInt(running.Job.QueueJobID, 10, 64)
	require.NoError(t, err)

	err = b.env.Daemon.Delivery.RunJob(ctx, queueJobID)
	var snooze *dispatch.SnoozeError
	require.True(t, errors.As(err, &snooze), "the second run snoozes: %v", err)
	require.Greater(t, snooze.After, time.Second)
	require.LessOrEqual(t, snooze.After, 3*time.Minute, "the run bound plus the record grace, at most")

	out := notifytest.Wait(t, b.key, res.RequestID)
	require.Equal(t, "sent", out.Status)
	require.Len(t, out.Attempts, 1)
	require.Len(t, b.env.Sim.Messages("vendorb_sms", "", 0), 1)
	// Once the request is final, a late run changes nothing.
	require.NoError(t, b.env.Daemon.Delivery.RunJob(ctx, queueJobID))
	require.Len(t, b.env.Sim.Messages("vendorb_sms", "", 0), 1)
}
