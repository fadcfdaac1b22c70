package crash_test

import (
	"fmt"
	"io"
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

// sendCampaign creates an email campaign named name to every subscriber
// and sends it; it answers the campaign's id.
func sendCampaign(t *testing.T, owner *client.Client, name string) string {
	t.Helper()
	r := dashboard(t, owner, "POST", "/v1/newsletter/campaigns", map[string]any{"name": name, "channel": "email",
		"subject": "Weekly", "contentText": "News"}, http.StatusCreated)
	var created struct {
		Campaign struct {
			ID string `json:"id"`
		} `json:"campaign"`
	}
	require.NoError(t, r.Decode(&created))
	dashboard(t, owner, "POST", "/v1/newsletter/campaigns/"+created.Campaign.ID+"/send", nil, http.StatusOK)
	return created.Campaign.ID
}

// TestCampaignFanoutCrash kills notifyd with SIGKILL in the middle of a
// campaign fan-out. After a restart on the same database the fan-out job
// is rescued and resumes after its last committed batch: every subscriber
// gets exactly one request, and the counters add up.
//
// The first process's account points at a vendor that never answers and
// never sends, and the account is moved to the simulator between the two
// processes (by an API-only process). A fault that hangs the simulator
// instead is not enough: a call written just before the kill can reach
// the simulator's handler only after the fault is lifted, and is then
// sent, as a real vendor would send it (the at-least-once duplicate of a
// call in flight at a crash, which this test does not measure).
func TestCampaignFanoutCrash(t *testing.T) {
	const subscribers, mailKind = 10_000, "mailx_email"
	bin := notifytest.BuildBinary(t)
	sim := simulator.New()
	simSrv := httptest.NewServer(sim)
	t.Cleanup(simSrv.Close)
	stop := make(chan struct{})
	hang := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		select {
		case <-r.Context().Done():
		case <-stop:
		}
	}))
	t.Cleanup(hang.Close)
	t.Cleanup(func() { close(stop) }) // before hang.Close, which waits for its handlers
	account := func(baseURL string) map[string]string {
		return map[string]string{"base_url": baseURL, "mailx_api_key": "re_test", "mailx_from_email": "news@example.com"}
	}
	env, baseURL, owner := bootstrap(t, bin, "NOTIFYD_JOB_RESCUE_AFTER=15s")
	first := serve(t, bin, env, baseURL, "first notifyd")
	providerID := notifytest.RegisterRoute(t, owner, "email", mailKind, account(hang.URL))
	for start := 0; start < subscribers; start += 5000 {
		items := make([]map[string]any, 0, 5000)
		for i := start; i < start+5000; i++ {
			items = append(items, map[string]any{"channel": "email", "address": fmt.Sprintf("r%05d@example.com", i)})
		}
		dashboard(t, owner, "POST", "/v1/newsletter/subscribers/import", map[string]any{"subscribers": items}, http.StatusOK)
	}
	id := sendCampaign(t, owner, "crash")

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
	require.Empty(t, sim.Messages(mailKind, "", 0), "nothing reached the simulator before the kill")

	// An API-only process (no delivery) moves the account to the simulator.
	api := startNode(t, bin, append(env, "NOTIFYD_ROLE=api"), baseURL, "api notifyd", "serve")
	dashboard(t, owner, "PATCH", "/v1/providers/"+providerID, map[string]any{"configJson": account(simSrv.URL)}, http.StatusOK)
	api.kill()
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
	mails := sim.Messages(mailKind, "", 0)
	for _, m := range mails {
		perRecipient[m.To]++
	}
	require.Len(t, perRecipient, subscribers)
	duplicates := 0
	for _, n := range perRecipient {
		duplicates += n - 1
	}
	t.Logf("duplicate mails: %d", duplicates)
	if duplicates > 0 {
		// For whoever reads a failure: which vendor calls carried the
		// duplicated recipients, and when after the restart.
		type call struct {
			mails int
			at    time.Duration
		}
		calls := map[uint64]call{}
		for _, m := range mails {
			if perRecipient[m.To] > 1 {
				c := calls[m.Call]
				c.mails, c.at = c.mails+1, m.ReceivedAt.Sub(restarted).Round(time.Millisecond)
				calls[m.Call] = c
			}
		}
		t.Logf("vendor calls carrying a duplicated recipient (call: mails, received after the restart): %+v", calls)
	}
	// Nothing of the first process reached the simulator, so a duplicate
	// could only come from River rescuing a dispatch job whose run is
	// still live (a loaded machine's runs outlive the 15 s rescue): such a
	// run snoozes while the request's earlier run may still send
	// (delivery.Engine.RunJob).
	require.Zero(t, duplicates)
}
