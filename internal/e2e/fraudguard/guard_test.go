package fraudguard_test

import (
	"encoding/json"
	"net/http"
	"sort"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/notifyd/notifyd/client"
	"github.com/notifyd/notifyd/internal/notify"
	"github.com/notifyd/notifyd/internal/notifytest"
	"github.com/notifyd/notifyd/internal/store/sqlstore"
)

// TestSettings: the guard is off until set; PUT replaces and audits; bad
// bodies are 400 and change nothing; roles; other workspaces unaffected.
func TestSettings(t *testing.T) {
	t.Parallel()
	b := setup(t)
	r := notifytest.Dash(t, b.env.Owner, "GET", guardPath, nil)
	require.Equal(t, http.StatusOK, r.Status, string(r.Body))
	require.JSONEq(t, `{"enabled":false,"defaultCountryCode":"82","allowedCountryCodes":null,"deniedPrefixes":[],"prefixVelocity":null,
		"clientVelocity":null,"dailyBudget":null,"updatedAt":null}`, string(r.Body))

	out := b.guard(t, map[string]any{"allowedCountryCodes": []string{"+82", "1", "82"},
		"prefixVelocity": map[string]int{"digits": 5, "windowSeconds": 3600, "maxSends": 20},
		"clientVelocity": map[string]int{"windowSeconds": 600, "maxSends": 10}, "dailyBudget": 500})
	require.True(t, out.Enabled, "enabled defaults to true")
	require.Equal(t, "82", out.DefaultCountryCode)
	require.Equal(t, []string{"1", "82"}, out.AllowedCountryCodes, "'+' dropped, sorted, duplicates merged")
	require.Equal(t, &velocity{Digits: 5, WindowSeconds: 3600, MaxSends: 20}, out.PrefixVelocity)
	require.Equal(t, &velocity{WindowSeconds: 600, MaxSends: 10}, out.ClientVelocity)
	require.Equal(t, 500, *out.DailyBudget)
	require.NotNil(t, out.UpdatedAt)
	var got guardOut
	require.NoError(t, notifytest.Dash(t, b.env.Owner, "GET", guardPath, nil).Decode(&got))
	require.Equal(t, out, got)
	es := notifytest.Audit(t, b.env.Owner, "otp.fraud_guard.update")
	require.Len(t, es, 1)
	require.NotNil(t, es[0].ActorUserID)
	require.Equal(t, "workspace", es[0].TargetType)
	require.Equal(t, b.env.Workspace, es[0].TargetID)
	require.Equal(t, 500.0, es[0].Payload["dailyBudget"])
	require.Equal(t, []any{"1", "82"}, es[0].Payload["allowedCountryCodes"])

	bad := map[string]string{
		`{"allowedCountryCodes":[]}`:                                            "allowedCountryCodes must hold at least one code, or be null for every country",
		`{"allowedCountryCodes":["999"]}`:                                       `allowedCountryCodes: "999" is not a country calling code`,
		`{"allowedCountryCodes":["KR"]}`:                                        `allowedCountryCodes: "KR" is not a country calling code`,
		`{"defaultCountryCode":"0"}`:                                            `defaultCountryCode: "0" is not a country calling code`,
		`{"prefixVelocity":{"digits":0,"windowSeconds":60,"maxSends":1}}`:       "prefixVelocity.digits must be between 1 and 12",
		`{"prefixVelocity":{"windowSeconds":60,"maxSends":1}}`:                  "prefixVelocity.digits is required",
		`{"prefixVelocity":{"digits":3,"windowSeconds":60}}`:                    "prefixVelocity.maxSends is required",
		`{"clientVelocity":{"windowSeconds":86401,"maxSends":1}}`:               "clientVelocity.windowSeconds must be between 1 and 86400",
		`{"clientVelocity":{"windowSeconds":60,"maxSends":0}}`:                  "clientVelocity.maxSends must be between 1 and 1000000",
		`{"dailyBudget":0}`:                                                     "dailyBudget must be between 1 and 10000000",
		`{"enabled":null}`:                                                      "enabled must be a boolean",
		`{"clientVelocity":{"digits":3,"windowSeconds":60,"maxSends":1}}`:       "",
		`{"dailyBudget":"many"}`:                                                "",
		`{"zzUnknown":1}`:                                                       "",
		`[]`:                                                                    "",
		`{"allowedCountryCodes":["82"],"allowedCountryCodes":["1"]}`:            "",
		`{"prefixVelocity":{"digits":13,"windowSeconds":60,"maxSends":1}}`:      "prefixVelocity.digits must be between 1 and 12",
		`{"prefixVelocity":{"digits":3,"windowSeconds":60,"maxSends":1000001}}`: "prefixVelocity.maxSends must be between 1 and 1000000",
	}
	for body, detail := range bad {
		r := notifytest.Dash(t, b.env.Owner, "PUT", guardPath, []byte(body))
		require.Equal(t, http.StatusBadRequest, r.Status, "%s: %s", body, r.Body)
		p := r.Problem()
		require.Equal(t, "SVC-40000", p.Code, body)
		if detail != "" {
			require.Equal(t, detail, p.Detail, body)
		}
	}
	require.NoError(t, notifytest.Dash(t, b.env.Owner, "GET", guardPath, nil).Decode(&got))
	require.Equal(t, out, got, "refused bodies changed nothing")
	require.Len(t, notifytest.Audit(t, b.env.Owner, "otp.fraud_guard.update"), 1)

	// Everyone reads; only owner and admin write.
	for _, role := range []string{"viewer", "operator", "admin"} {
		c := b.env.Member(t, role)
		require.Equal(t, http.StatusOK, notifytest.Dash(t, c, "GET", guardPath, nil).Status, role)
		r := notifytest.Dash(t, c, "PUT", guardPath, map[string]any{"dailyBudget": 7})
		if role == "admin" {
			require.Equal(t, http.StatusOK, r.Status, string(r.Body))
			continue
		}
		require.Equal(t, http.StatusForbidden, r.Status, "%s: %s", role, r.Body)
		require.Equal(t, "SVC-40300", r.Problem().Code)
	}
	require.NoError(t, notifytest.Dash(t, b.env.Owner, "GET", guardPath, nil).Decode(&got))
	require.Equal(t, 7, *got.DailyBudget, "the admin's PUT replaced everything")
	require.Nil(t, got.AllowedCountryCodes)
	require.Nil(t, got.PrefixVelocity)
	require.Len(t, notifytest.Audit(t, b.env.Owner, "otp.fraud_guard.update"), 2)

	// Another workspace's guard is its own.
	other, _ := b.env.NewWorkspace(t, "Other", "other@example.com")
	r = notifytest.Dash(t, other, "GET", guardPath, nil)
	require.Equal(t, http.StatusOK, r.Status)
	require.NoError(t, r.Decode(&got))
	require.False(t, got.Enabled)
	require.Nil(t, got.DailyBudget)
}

// TestCountry: the allow-list passes national and E.164 numbers of an
// allowed country and refuses others with 403, sending nothing, counted
// in the metric and audited with the masked number.
func TestCountry(t *testing.T) {
	t.Parallel()
	b := setup(t)
	// Refusals are audited up to 100 per UTC hour: the test starts at the
	// top of an hour, so it never straddles two (103 audits, seen in CI).
	b.clock.AdvanceTo(b.clock.Now().Truncate(time.Hour).Add(time.Hour + time.Second))
	b.guard(t, map[string]any{"allowedCountryCodes": []string{"82"}})
	b.sent(t, "010-1234-5678", "")    // national: the default country, 82
	b.sent(t, "+82 10-2345-6789", "") // E.164
	refused(t, b.send(t, "+1 415 555 0100", ""), http.StatusForbidden, "SVC-40300", detailCountry)
	require.Zero(t, b.messages("+14155550100"), "nothing sent")
	// An international prefix without '+' names no country reliably.
	refused(t, b.send(t, "001-415-555-0101", ""), http.StatusForbidden, "SVC-40300", detailCountry)
	require.Equal(t, 2.0, b.refusals(t, "country"))
	require.Zero(t, b.refusals(t, "daily_budget"))
	sessions, requests := b.rows(t)
	require.Equal(t, []int{2, 2}, []int{sessions, requests}, "a session and a request per accepted send, none for the refused ones")

	es := notifytest.Audit(t, b.env.Owner, "otp.fraud_guard.refuse")
	require.Len(t, es, 2)
	require.Nil(t, es[1].ActorUserID)
	require.Equal(t, "api_key", es[1].TargetType)
	require.Equal(t, b.keyID, es[1].TargetID)
	require.Equal(t, map[string]any{"rule": "country", "channel": "sms", "recipientMasked": "********0100", "countryCode": "1"}, es[1].Payload)
	require.Equal(t, map[string]any{"rule": "country", "channel": "sms", "recipientMasked": "*********0101"}, es[0].Payload)
	raw, err := json.Marshal(es)
	require.NoError(t, err)
	require.NotContains(t, string(raw), "4155550100", "the number is masked")

	// National numbers follow the workspace's default country.
	b.guard(t, map[string]any{"defaultCountryCode": "1", "allowedCountryCodes": []string{"82"}})
	refused(t, b.send(t, "010-1234-5678", ""), http.StatusForbidden, "SVC-40300", detailCountry)
	b.sent(t, "+821012345678", "")

	// A flood of refusals: every one counted, at most 100 audited per hour.
	for i := range 100 {
		refused(t, b.send(t, "+4420794600"+strconv.Itoa(10+i), ""), http.StatusForbidden, "SVC-40300", detailCountry)
	}
	require.Equal(t, 103.0, b.refusals(t, "country"))
	require.Len(t, notifytest.Audit(t, b.env.Owner, "otp.fraud_guard.refuse"), 100)
}

// rows counts the workspace's OTP sessions and notification requests
// (each accepted OTP send makes one of each).
func (b *bundle) rows(t *testing.T) (sessions, requests int) {
	t.Helper()
	require.NoError(t, b.env.Daemon.DB.View(ctx, func(tx notify.Tx) error {
		c := tx.(*sqlstore.Tx).Conn()
		if err := c.QueryRow(ctx, `SELECT COUNT(*) FROM otp_sessions WHERE workspace_id = ?`, b.env.Workspace).Scan(&sessions); err != nil {
			return err
		}
		return c.QueryRow(ctx, `SELECT COUNT(*) FROM notification_requests WHERE workspace_id = ?`, b.env.Workspace).Scan(&requests)
	}))
	return sessions, requests
}

// TestPrefixVelocity: sends to one number prefix (national and E.164
// alike) are limited per window, resends included; another prefix and
// the next window pass.
func TestPrefixVelocity(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.guard(t, map[string]any{"prefixVelocity": map[string]int{"digits": 4, "windowSeconds": 3600, "maxSends": 3}})
	b.clock.AdvanceTo(b.clock.Now().Truncate(time.Hour).Add(time.Hour + time.Minute))
	id := b.sent(t, "010-1234-0001", "")
	b.sent(t, "+82 10 1234 0002", "")
	b.sent(t, "01012340003", "")
	refused(t, b.send(t, "010-1234-0004", ""), http.StatusTooManyRequests, "SVC-42900", detailPrefix)
	refused(t, b.send(t, "+821012340005", ""), http.StatusTooManyRequests, "SVC-42900", detailPrefix)
	require.Zero(t, b.messages("01012340004"))
	b.sent(t, "010-9999-0001", "") // another prefix

	// A resend is one more code to the prefix.
	b.clock.Advance(31 * time.Second)
	r, err := b.key.Signed(ctx, "POST", "/v1/otp/"+id+"/resend", nil)
	require.NoError(t, err)
	require.Equal(t, http.StatusTooManyRequests, r.Status, string(r.Body))
	require.Equal(t, detailPrefix, r.Problem().Detail)
	es := notifytest.Audit(t, b.env.Owner, "otp.fraud_guard.refuse")
	require.Len(t, es, 3)
	require.Equal(t, map[string]any{"rule": "prefix_velocity", "channel": "sms", "recipientMasked": "*******0001",
		"countryCode": "82", "verificationId": id}, es[0].Payload)
	require.Equal(t, 3.0, b.refusals(t, "prefix_velocity"))
	require.Len(t, b.env.Sim.Messages("vendorb_sms", "01012340001", 0), 1, "the refused resend sent nothing")

	// The next window starts afresh.
	b.clock.Advance(time.Hour)
	b.sent(t, "010-1234-0004", "")
}

// TestClientVelocity: sends per end-user address (clientIp; IPv6 by its
// /64) are limited; other addresses and sends without one pass.
func TestClientVelocity(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.guard(t, map[string]any{"clientVelocity": map[string]int{"windowSeconds": 3600, "maxSends": 2}})
	b.clock.AdvanceTo(b.clock.Now().Truncate(time.Hour).Add(time.Hour + time.Minute))
	b.sent(t, "01055550001", "203.0.113.7")
	b.sent(t, "01055550002", "::ffff:203.0.113.7") // the same IPv4 address
	refused(t, b.send(t, "01055550003", "203.0.113.7"), http.StatusTooManyRequests, "SVC-42900", detailClient)
	b.sent(t, "01055550003", "203.0.113.8")
	b.sent(t, "01055550004", "") // no address: not counted by this rule
	b.sent(t, "01055550005", "2001:db8:1:2::1")
	b.sent(t, "01055550006", "2001:db8:1:2:ffff::2")
	refused(t, b.send(t, "01055550007", "2001:db8:1:2::3"), http.StatusTooManyRequests, "SVC-42900", detailClient)
	b.sent(t, "01055550007", "2001:db8:1:3::1") // another /64
	require.Equal(t, 2.0, b.refusals(t, "client_velocity"))
	for _, ip := range []string{"not-an-ip", "203.0.113.300", "fe80::1%eth0"} {
		r := b.send(t, "01055550008", ip)
		require.Equal(t, http.StatusBadRequest, r.Status, string(r.Body))
		require.Equal(t, "clientIp must be an IPv4 or IPv6 address", r.Problem().Detail)
	}
	es := notifytest.Audit(t, b.env.Owner, "otp.fraud_guard.refuse")
	require.Len(t, es, 2)
	require.NotContains(t, es[0].Payload, "clientIp", "the address is not kept")
}

// TestDailyBudget: the workspace's phone OTP sends per UTC day.
func TestDailyBudget(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.guard(t, map[string]any{"dailyBudget": 3})
	b.nextDay()
	id := b.sent(t, "01066660001", "")
	b.sent(t, "+14155550100", "")
	b.clock.Advance(31 * time.Second)
	r, err := b.key.Signed(ctx, "POST", "/v1/otp/"+id+"/resend", nil)
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, r.Status, "a resend is the third of the budget: %s", r.Body)
	refused(t, b.send(t, "01066660002", ""), http.StatusTooManyRequests, "SVC-42900", detailBudget)
	refused(t, b.send(t, "01066660003", ""), http.StatusTooManyRequests, "SVC-42900", detailBudget)
	require.Equal(t, 2.0, b.refusals(t, "daily_budget"))
	require.Zero(t, b.messages("01066660002"))
	b.nextDay()
	b.sent(t, "01066660002", "")
}

// TestGuardOff: without settings, or with the guard disabled, OTP is
// SPEC's: any country, and the per-recipient limit is the only 429.
func TestGuardOff(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.clock.AdvanceTo(b.clock.Now().Truncate(time.Hour).Add(time.Hour + time.Minute))
	for range 5 {
		b.sent(t, "+44 20 7946 0000", "198.51.100.1")
	}
	r := b.send(t, "+442079460000", "198.51.100.1")
	require.Equal(t, http.StatusTooManyRequests, r.Status)
	require.Equal(t, "OTP send rate limit exceeded", r.Problem().Detail)

	b.guard(t, map[string]any{"enabled": false, "allowedCountryCodes": []string{"82"}, "dailyBudget": 1,
		"clientVelocity": map[string]int{"windowSeconds": 60, "maxSends": 1}})
	b.sent(t, "+14155550100", "198.51.100.1")
	b.sent(t, "+14155550101", "198.51.100.1")
	for _, rule := range []string{"country", "prefix_velocity", "client_velocity", "daily_budget"} {
		require.Zero(t, b.refusals(t, rule), rule)
	}
	require.Empty(t, notifytest.Audit(t, b.env.Owner, "otp.fraud_guard.refuse"))

	b.guard(t, map[string]any{"allowedCountryCodes": []string{"82"}})
	refused(t, b.send(t, "+14155550102", ""), http.StatusForbidden, "SVC-40300", detailCountry)
}

// TestTwoDaemons: two processes on one database (PostgreSQL when
// configured) share the counters: of concurrent sends over both, exactly
// the budget passes.
func TestTwoDaemons(t *testing.T) {
	t.Parallel()
	b := setup(t)
	peer := b.env.StartPeer(t, b.clock.Now)
	b.guard(t, map[string]any{"dailyBudget": 5})
	b.nextDay()
	keys := []*client.Client{b.key, func() *client.Client { c := *b.key; c.BaseURL = peer.URL(); return &c }()}
	var wg sync.WaitGroup
	var mu sync.Mutex
	var statuses []string
	for i := range 12 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r, err := keys[i%2].Signed(ctx, "POST", "/v1/otp", map[string]any{"channel": "sms", "to": "0107777" + strconv.Itoa(1000+i)})
			s := "error"
			if err == nil {
				s = strconv.Itoa(r.Status)
				if r.Status != http.StatusCreated {
					s += " " + r.Problem().Detail
				}
			}
			mu.Lock()
			defer mu.Unlock()
			statuses = append(statuses, s)
		}()
	}
	wg.Wait()
	sort.Strings(statuses)
	want := []string{"201", "201", "201", "201", "201"}
	for range 7 {
		want = append(want, "429 "+detailBudget)
	}
	require.Equal(t, want, statuses)
	total := b.refusals(t, "daily_budget") + notifytest.Counter(t, peer.Metrics.Registry,
		"notifyd_otp_fraud_guard_refusals_total", map[string]string{"rule": "daily_budget"})
	require.Equal(t, 7.0, total)
}
