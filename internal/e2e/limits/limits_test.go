package limits_test

import (
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/notifyd/notifyd/client"
	"github.com/notifyd/notifyd/internal/notifytest"
)

func TestKeyLimit(t *testing.T) {
	t.Parallel()
	b := setup(t)
	p := b.putKeyPolicy(t, b.keyID, map[string]any{"windowSeconds": 3600, "maxRequests": 3})
	require.Equal(t, b.keyID, p["apiKeyCredentialId"])
	for range 3 {
		notifytest.RequireProblem(t, lookup(t, b.key), http.StatusNotFound, "SVC-40400")
	}
	limited(t, lookup(t, b.key), "SVC-4291")
	// Every one of the four routes is limited, send and bulk included.
	limited(t, notifytest.Signed(t, b.key, "POST", "/v1/notifications", notifytest.SMS("01012345678", "x")), "SVC-4291")
	limited(t, notifytest.Signed(t, b.key, "POST", "/v1/notifications/bulk", map[string]any{"items": []any{notifytest.SMS("01012345678", "x")}}), "SVC-4291")
	limited(t, notifytest.Signed(t, b.key, "POST", "/v1/notifications/00000000-0000-4000-8000-000000000000/cancel", nil), "SVC-4291")
	// Other keys keep their own counter.
	other, _ := b.newKey(t, "other")
	notifytest.RequireProblem(t, lookup(t, other), http.StatusNotFound, "SVC-40400")
	// The 429s are counted by code.
	require.Equal(t, 4.0, scrape(t, b.env.Daemon.URL(), `notifyd_requests_rejected_total{code="SVC-4291"}`))
	require.Zero(t, scrape(t, b.env.Daemon.URL(), `notifyd_requests_rejected_total{code="SVC-4290"}`))
}

func TestWorkspaceLimitFirstAndRejectedDoNotCount(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.putWorkspacePolicy(t, map[string]any{"windowSeconds": 3600, "maxRequests": 3})
	b.putKeyPolicy(t, b.keyID, map[string]any{"windowSeconds": 3600, "maxRequests": 2})
	other, _ := b.newKey(t, "other")
	requireNotLimited(t, lookup(t, b.key))
	requireNotLimited(t, lookup(t, b.key))
	// The key is at its limit; the rejections grow neither counter.
	for range 3 {
		limited(t, lookup(t, b.key), "SVC-4291")
	}
	requireNotLimited(t, lookup(t, other)) // workspace now 3 of 3
	limited(t, lookup(t, other), "SVC-4290")
	// The workspace limit is checked first.
	limited(t, lookup(t, b.key), "SVC-4290")
}

func TestFailedAuthenticationDoesNotCount(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.putKeyPolicy(t, b.keyID, map[string]any{"windowSeconds": 3600, "maxRequests": 2})
	bad := *b.key
	bad.HMACSecret = "wrong"
	for range 4 {
		notifytest.RequireProblem(t, lookup(t, &bad), http.StatusUnauthorized, "SVC-40100")
	}
	// A key without the scope fails before the limit too.
	noScope, id, err := b.env.Owner.CreateAPIKey(ctx, "read-only", "notifications:read")
	require.NoError(t, err)
	b.putKeyPolicy(t, id, map[string]any{"windowSeconds": 3600, "maxRequests": 1})
	for range 3 {
		notifytest.RequireProblem(t, notifytest.Signed(t, noScope, "POST", "/v1/notifications", notifytest.SMS("01012345678", "x")), http.StatusForbidden, "SVC-40300")
	}
	requireNotLimited(t, lookup(t, noScope))
	limited(t, lookup(t, noScope), "SVC-4291")

	requireNotLimited(t, lookup(t, b.key))
	requireNotLimited(t, lookup(t, b.key))
	limited(t, lookup(t, b.key), "SVC-4291")
}

func TestRejectedSendRecordsNonce(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.putKeyPolicy(t, b.keyID, map[string]any{"windowSeconds": 3600, "maxRequests": 1})
	requireNotLimited(t, lookup(t, b.key))
	body := mustJSON(notifytest.SMS("01012345678", "x"))
	nonce := client.NewNonce()
	require.Equal(t, http.StatusTooManyRequests, notifytest.SignedWithNonce(t, b.key, "POST", "/v1/notifications", body, nonce))
	require.Equal(t, http.StatusUnauthorized, notifytest.SignedWithNonce(t, b.key, "POST", "/v1/notifications", body, nonce), "a replay of a refused send")
}

func TestWindowRollover(t *testing.T) {
	t.Parallel()
	b := setup(t)
	// 3 s windows: the four calls fit in one even on a loaded machine.
	const window = 3 * time.Second
	b.putKeyPolicy(t, b.keyID, map[string]any{"windowSeconds": 3, "maxRequests": 3})
	for range 2 {
		// Start just after a window boundary so the burst fits in one window.
		now := time.Now()
		time.Sleep(now.Truncate(window).Add(window + 20*time.Millisecond).Sub(now))
		for range 3 {
			requireNotLimited(t, lookup(t, b.key))
		}
		limited(t, lookup(t, b.key), "SVC-4291")
	}
}

func TestDisabledPolicyReturnsToDefaults(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.putKeyPolicy(t, b.keyID, map[string]any{"windowSeconds": 3600, "maxRequests": 1})
	requireNotLimited(t, lookup(t, b.key))
	limited(t, lookup(t, b.key), "SVC-4291")
	p := b.putKeyPolicy(t, b.keyID, map[string]any{"windowSeconds": 3600, "maxRequests": 1, "enabled": false})
	require.Equal(t, false, p["enabled"])
	for range 5 {
		requireNotLimited(t, lookup(t, b.key))
	}
	b.putWorkspacePolicy(t, map[string]any{"windowSeconds": 3600, "maxRequests": 1, "enabled": false})
	requireNotLimited(t, lookup(t, b.key))
}

func TestBulkCountsOnce(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.env.SimRoute(t, "sms", "vendora_sms", nil)
	b.putKeyPolicy(t, b.keyID, map[string]any{"windowSeconds": 3600, "maxRequests": 2})
	items := []any{notifytest.SMS("01011110000", "a"), notifytest.SMS("01011110001", "b"), notifytest.SMS("01011110002", "c"), notifytest.SMS("01011110003", "d")}
	r := notifytest.Signed(t, b.key, "POST", "/v1/notifications/bulk", map[string]any{"items": items})
	require.Equal(t, http.StatusCreated, r.Status, string(r.Body))
	r = notifytest.Signed(t, b.key, "POST", "/v1/notifications", notifytest.SMS("01011110004", "e"))
	require.Equal(t, http.StatusCreated, r.Status, string(r.Body))
	limited(t, notifytest.Signed(t, b.key, "POST", "/v1/notifications", notifytest.SMS("01011110005", "f")), "SVC-4291")
}

func TestDashboardNotLimited(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.putWorkspacePolicy(t, map[string]any{"windowSeconds": 3600, "maxRequests": 1})
	for range 3 {
		require.Equal(t, http.StatusOK, notifytest.Dash(t, b.env.Owner, "GET", "/v1/limits/rate", nil).Status)
	}
}

func TestConcurrentRequestsCountedExactly(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.putWorkspacePolicy(t, map[string]any{"windowSeconds": 3600, "maxRequests": 10})
	other, _ := b.newKey(t, "other")
	const n = 30
	codes := make(chan int, n)
	var wg sync.WaitGroup
	for i := range n {
		k := b.key
		if i%2 == 1 {
			k = other
		}
		wg.Go(func() {
			r, err := k.Signed(ctx, "GET", "/v1/notifications/"+uuid.NewString(), nil)
			if err != nil {
				codes <- 0
				return
			}
			codes <- r.Status
		})
	}
	wg.Wait()
	close(codes)
	got := map[int]int{}
	for c := range codes {
		got[c]++
	}
	require.Equal(t, map[int]int{http.StatusNotFound: 10, http.StatusTooManyRequests: 20}, got)
}

// Concurrent checks are counted together (group commit): a request the key
// limit refuses must not use up the workspace's allowance, even when it
// shares a transaction with requests of another key.
func TestConcurrentKeyRefusalsDoNotCount(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.putWorkspacePolicy(t, map[string]any{"windowSeconds": 3600, "maxRequests": 10})
	b.putKeyPolicy(t, b.keyID, map[string]any{"windowSeconds": 3600, "maxRequests": 3})
	other, _ := b.newKey(t, "other")
	type answer struct {
		limitedKey bool
		status     int
		code       string
	}
	const n = 20
	answers := make(chan answer, 2*n)
	var wg sync.WaitGroup
	for i := range 2 * n {
		k, limitedKey := other, false
		if i%2 == 0 {
			k, limitedKey = b.key, true
		}
		wg.Go(func() {
			r, err := k.Signed(ctx, "GET", "/v1/notifications/"+uuid.NewString(), nil)
			if err != nil {
				answers <- answer{limitedKey, 0, err.Error()}
				return
			}
			a := answer{limitedKey: limitedKey, status: r.Status}
			if r.Status == http.StatusTooManyRequests {
				a.code = r.Problem().Code
			}
			answers <- a
		})
	}
	wg.Wait()
	close(answers)
	admitted, admittedKey := 0, 0
	for a := range answers {
		switch a.status {
		case http.StatusNotFound:
			admitted++
			if a.limitedKey {
				admittedKey++
			}
		case http.StatusTooManyRequests:
			if !a.limitedKey {
				require.Equal(t, "SVC-4290", a.code, "the unlimited key is refused only by the workspace")
			}
		default:
			t.Fatalf("unexpected answer %+v", a)
		}
	}
	require.Equal(t, 10, admitted, "the workspace allowance, no less: refusals by the key limit did not count")
	require.LessOrEqual(t, admittedKey, 3)
}
