package crash_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/notifyd/notifyd/client"
	"github.com/notifyd/notifyd/internal/notifytest"
	"github.com/notifyd/notifyd/internal/simulator"
)

// campaignDetail is what the test reads of a campaign.
type campaignDetail struct {
	Status          string         `json:"status"`
	TotalRecipients int            `json:"totalRecipients"`
	QueuedCount     int            `json:"queuedCount"`
	FailedCount     int            `json:"failedCount"`
	DeliveryStats   map[string]int `json:"deliveryStats"`
}

func getCampaign(t *testing.T, c *client.Client, id string) campaignDetail {
	t.Helper()
	return notifytest.Field[campaignDetail](t, dashboard(t, c, "GET", "/v1/newsletter/campaigns/"+id, nil, http.StatusOK), "campaign")
}

// TestCampaignFanoutCrash kills notifyd with SIGKILL in the middle of a
// campaign fan-out. After a restart on the same database the fan-out job
// is rescued and resumes after its last committed batch: every subscriber
// gets exactly one request, and the counters add up. The vendor hangs
// while the first process runs, so no mail of the first process reaches
// it.
func TestCampaignFanoutCrash(t *testing.T) {
	const subscribers, mailKind = 10_000, "mailx_email"
	bin := notifytest.BuildBinary(t)
	sim := simulator.New()
	simSrv := httptest.NewServer(sim)
	t.Cleanup(simSrv.Close)
	env, baseURL, owner := bootstrap(t, bin, "NOTIFYD_JOB_RESCUE_AFTER=15s")
	first := serve(t, bin, env, baseURL, "first notifyd")
	notifytest.RegisterRoute(t, owner, "email", mailKind, map[string]string{"base_url": simSrv.URL,
		"mailx_api_key": "re_test", "mailx_from_email": "news@example.com"})
	for start := 0; start < subscribers; start += 5000 {
		items := make([]map[string]any, 0, 5000)
		for i := start; i < start+5000; i++ {
			items = append(items, map[string]any{"channel": "email", "address": fmt.Sprintf("r%05d@example.com", i)})
		}
		dashboard(t, owner, "POST", "/v1/newsletter/subscribers/import", map[string]any{"subscribers": items}, http.StatusOK)
	}
	// The vendor hangs: calls in flight at the kill are aborted, not stored.
	simControl(t, simSrv.URL, "POST", "/_sim/faults", map[string]any{"kind": mailKind, "latencyMs": 600_000, "count": 1_000_000})

	r := dashboard(t, owner, "POST", "/v1/newsletter/campaigns", map[string]any{"name": "crash", "channel": "email",
		"subject": "Weekly", "contentText": "News"}, http.StatusCreated)
	var created struct {
		Campaign struct {
			ID string `json:"id"`
		} `json:"campaign"`
	}
	require.NoError(t, r.Decode(&created))
	id := created.Campaign.ID
	dashboard(t, owner, "POST", "/v1/newsletter/campaigns/"+id+"/send", nil, http.StatusOK)

	// Kill once some batches are committed but not all.
	deadline := time.Now().Add(60 * time.Second)
	var atKill campaignDetail
	for {
		atKill = getCampaign(t, owner, id)
		if atKill.QueuedCount > 0 {
			break
		}
		require.True(t, time.Now().Before(deadline), "no batch committed")
		time.Sleep(2 * time.Millisecond)
	}
	first.kill()
	require.Less(t, atKill.QueuedCount, subscribers, "the fan-out finished before the kill")
	t.Logf("killed with %d of %d queued", atKill.QueuedCount, subscribers)
	require.Empty(t, sim.Messages(mailKind, "", 0), "nothing reached the vendor before the kill")

	simControl(t, simSrv.URL, "DELETE", "/_sim/faults?kind="+mailKind, nil)
	restarted := time.Now()
	serve(t, bin, env, baseURL, "second notifyd")
	deadline = time.Now().Add(3 * time.Minute)
	var x campaignDetail
	for {
		x = getCampaign(t, owner, id)
		if x.Status == "sent" {
			break
		}
		require.True(t, time.Now().Before(deadline), "campaign not sent 3 minutes after the restart: %+v", x)
		time.Sleep(200 * time.Millisecond)
	}
	t.Logf("sent %s after the restart", time.Since(restarted).Round(time.Millisecond))
	require.Equal(t, subscribers, x.TotalRecipients)
	require.Equal(t, subscribers, x.QueuedCount)
	require.Equal(t, 0, x.FailedCount)
	require.Equal(t, subscribers, x.DeliveryStats["sent"])
	require.Equal(t, 0, x.DeliveryStats["unknown"])
	// sent = queuedCount = 10,000 requests, and every subscriber has a
	// mail: so each subscriber got exactly one request.
	perRecipient := map[string]int{}
	for _, m := range sim.Messages(mailKind, "", 0) {
		perRecipient[m.To]++
	}
	require.Len(t, perRecipient, subscribers)
	duplicates := 0
	for _, n := range perRecipient {
		duplicates += n - 1
	}
	t.Logf("duplicate mails: %d", duplicates)
	// Nothing reached the vendor before the kill, so a duplicate could only
	// come from River rescuing a dispatch job whose run is still live (a
	// loaded machine's runs outlive the 15 s rescue): such a run snoozes
	// while the request's earlier run may still send (service.liveRun).
	require.Zero(t, duplicates)
}
