package otp_test

import (
	"net/http"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/notifyd/notifyd/client"
)

// TestTwoDaemons runs two daemons on one database (two processes of a
// deployment; PostgreSQL when NOTIFYD_TEST_DATABASE_URL is set): wrong
// verifies spread over both never use more than 5 attempts, and the
// per-recipient send limit holds over both.
func TestTwoDaemons(t *testing.T) {
	t.Parallel()
	b := setup(t)
	peer := b.env.StartPeer(t, nil)
	keys := []*client.Client{b.key, func() *client.Client { c := *b.key; c.BaseURL = peer.URL(); return &c }()}
	require.NotEqual(t, keys[0].BaseURL, keys[1].BaseURL)

	s := b.send(t, map[string]any{"channel": "sms", "to": "01090909090"})
	code := b.code(t, "01090909090")
	var wg sync.WaitGroup
	var mu sync.Mutex
	results := map[string]int{}
	for i := range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r, err := keys[i%2].Signed(ctx, "POST", "/v1/otp/"+s.VerificationID+"/verify", map[string]any{"code": wrong(code)})
			mu.Lock()
			defer mu.Unlock()
			if err != nil || r.Status != http.StatusOK {
				results["error"]++
				return
			}
			var out verifyOut
			if r.Data(&out) != nil {
				results["error"]++
				return
			}
			results[out.Reason]++
		}()
	}
	wg.Wait()
	require.Equal(t, 0, results["error"], results)
	require.Equal(t, 4, results["invalid_code"], results)
	require.Equal(t, 12, results["too_many_attempts"], results)
	g := b.get(t, s.VerificationID)
	require.Equal(t, 5, g.Attempts)
	require.Equal(t, "failed", g.Status)
	// The right code no longer helps, on either daemon.
	for _, k := range keys {
		r, err := k.Signed(ctx, "POST", "/v1/otp/"+s.VerificationID+"/verify", map[string]any{"code": code})
		require.NoError(t, err)
		var out verifyOut
		require.NoError(t, r.Data(&out))
		require.Equal(t, verifyOut{Status: "failed", Reason: "too_many_attempts"}, out)
	}

	// Ten concurrent sends to one recipient over both daemons: the hourly
	// limit (5, the send above was to another number) lets exactly five through.
	statuses := map[int]int{}
	for i := range 10 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r, err := keys[i%2].Signed(ctx, "POST", "/v1/otp", map[string]any{"channel": "sms", "to": "010-9191-9191"})
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				statuses[-1]++
				return
			}
			if r.Status == http.StatusTooManyRequests && r.Problem().Detail != "OTP send rate limit exceeded" {
				statuses[-2]++ // wrong detail
				return
			}
			statuses[r.Status]++
		}()
	}
	wg.Wait()
	require.Equal(t, map[int]int{http.StatusCreated: 5, http.StatusTooManyRequests: 5}, statuses)
	require.Len(t, b.env.Sim.Messages("vendorb_sms", "01091919191", 0), 5)
}
