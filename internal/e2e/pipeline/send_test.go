package pipeline_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/notifyd/notifyd/internal/notifytest"
)

func TestSendDelivered(t *testing.T) {
	t.Parallel()
	b := setup(t)
	p := b.env.SimProvider(t, "vendora_sms", "aligo", nil)
	notifytest.PutRoutes(t, b.env.Owner, notifytest.Route{Channel: "sms", ProviderAccountID: p, Priority: 1})
	res := notifytest.Send(t, b.key, notifytest.SMS("010-1234-5678", "hello"))
	require.Equal(t, "queued", res.Status)
	require.False(t, res.Deduplicated)
	require.NotNil(t, res.QueueJobID)
	require.Nil(t, res.ScheduledAt)
	out := notifytest.Wait(t, b.key, res.RequestID)
	require.Equal(t, "sent", out.Status)
	require.Equal(t, p, *out.SelectedProviderAccountID)
	require.NotEmpty(t, *out.SelectedProviderMessageID)
	require.Len(t, out.Attempts, 1)
	require.Equal(t, "success", out.Attempts[0].Status)
	require.Equal(t, "completed", out.Job.Status)
	msgs := b.env.Sim.Messages("vendora_sms", "", 0)
	require.Len(t, msgs, 1)
	require.Equal(t, "hello", msgs[0].Text)
}

func TestFailoverToNextRoute(t *testing.T) {
	t.Parallel()
	b := setup(t)
	p1 := b.env.SimProvider(t, "vendora_sms", "aligo", nil)
	p2 := b.env.SimProvider(t, "vendorb_sms", "solapi", nil)
	notifytest.PutRoutes(t, b.env.Owner, notifytest.Route{Channel: "sms", ProviderAccountID: p1, Priority: 1}, notifytest.Route{Channel: "sms", ProviderAccountID: p2, Priority: 2})
	fault(t, b, map[string]any{"kind": "vendora_sms", "status": 500})
	res := notifytest.Send(t, b.key, notifytest.SMS("01012345678", "failover"))
	out := notifytest.Wait(t, b.key, res.RequestID)
	require.Equal(t, "sent", out.Status)
	require.Equal(t, p2, *out.SelectedProviderAccountID)
	require.Len(t, out.Attempts, 2)
	require.Equal(t, "temporary_unavailable", *out.Attempts[0].FailureCode)
}

func fault(t *testing.T, b *bundle, f map[string]any) {
	t.Helper()
	c := *b.env.Owner
	c.BaseURL, c.Token = b.env.SimURL, ""
	r, err := c.Dashboard(ctx, "POST", "/_sim/faults", f)
	require.NoError(t, err)
	require.Less(t, r.Status, 300, string(r.Body))
}

func TestNoRouteFailsUnsupportedChannel(t *testing.T) {
	t.Parallel()
	b := setup(t)
	res := notifytest.Send(t, b.key, notifytest.SMS("01012345678", "x"))
	out := notifytest.Wait(t, b.key, res.RequestID)
	require.Equal(t, "failed", out.Status)
	require.Equal(t, "unsupported_channel", *out.FinalErrorCode)
	require.Empty(t, out.Attempts)
}
