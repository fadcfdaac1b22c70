package e2e_test

import (
	"bytes"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/notifyd/notifyd/client"
)

type quotaJSON struct {
	Period          string   `json:"period"`
	Limit           *float64 `json:"limit"`
	Used            float64  `json:"used"`
	RemainingCredit float64  `json:"remainingCredit"`
	Currency        string   `json:"currency"`
}

type providerJSON struct {
	ID           string     `json:"id"`
	ProviderKind string     `json:"providerKind"`
	Channel      string     `json:"channel"`
	DisplayName  string     `json:"displayName"`
	Enabled      bool       `json:"enabled"`
	CreatedAt    string     `json:"createdAt"`
	UpdatedAt    string     `json:"updatedAt"`
	Quota        *quotaJSON `json:"quota"`
}

// kindChannels is SPEC's provider table.
var kindChannels = map[string]string{
	"vendora_msgr": "msgr_alimtalk", "vendorb_msgr": "msgr_alimtalk",
	"vendora_sms": "sms", "vendorb_sms": "sms",
	"push_gateway": "push_mobile", "mailx_email": "email", "maily_email": "email", "mailz_email": "email",
	"chata_webhook": "chata_webhook", "chata_bot": "chata_bot", "chatb_webhook": "chatb_webhook", "chatb_bot": "chatb_bot",
}

// kindOrder lists the kinds in SPEC's table order.
var kindOrder = []string{"vendora_msgr", "vendorb_msgr", "vendora_sms", "vendorb_sms", "push_gateway", "mailx_email",
	"maily_email", "mailz_email", "chata_webhook", "chata_bot", "chatb_webhook", "chatb_bot"}

// configFor is a complete configJson for kind with a planted secret in
// every credential; vendor kinds point at the simulator so quota lookups
// never leave the machine.
func (e *env) configFor(t testing.TB, kind string) map[string]string {
	t.Helper()
	s := plantSecret(t)
	switch kind {
	case "vendora_msgr":
		return map[string]string{"vendora_user_id": "user1", "vendora_msgr_api_key": s, "vendora_sender": "01000000000", "base_url": e.SimURL}
	case "vendora_sms":
		return map[string]string{"vendora_user_id": "user1", "vendora_api_key": s, "vendora_sender": "01000000000", "base_url": e.SimURL}
	case "vendorb_msgr", "vendorb_sms":
		return map[string]string{"vendorb_api_key": "key-" + s, "vendorb_api_secret": s, "vendorb_sender": "01000000000", "base_url": e.SimURL}
	case "push_gateway":
		return map[string]string{"push_service_account_json": `{"type":"service_account","private_key":"` + s + `"}`}
	case "mailx_email":
		return map[string]string{"mailx_api_key": s, "mailx_from_email": "from@example.com"}
	case "maily_email":
		return map[string]string{"maily_access_key_id": "AKIA", "maily_secret_access_key": s, "maily_region": "ap-northeast-2", "maily_from_email": "from@example.com"}
	case "mailz_email":
		return map[string]string{"mailz_api_key": s, "mailz_from_email": "from@example.com"}
	case "chata_webhook":
		return map[string]string{"chata_webhook_url": "https://hooks.example.com/" + s}
	case "chatb_webhook":
		return map[string]string{"chatb_webhook_url": "https://hooks.example.com/" + s}
	case "chata_bot":
		return map[string]string{"chata_bot_token": s}
	case "chatb_bot":
		return map[string]string{"chatb_bot_token": s}
	}
	t.Fatalf("no config for %s", kind)
	return nil
}

// createProvider registers a provider and returns its id.
func (e *env) createProvider(t testing.TB, c *client.Client, kind, name string) string {
	t.Helper()
	r := do(t, c, "POST", "/v1/providers", map[string]any{"providerKind": kind, "displayName": name, "configJson": e.configFor(t, kind)})
	requireStatus(t, r, http.StatusCreated)
	return decode[struct {
		Provider struct {
			ID string `json:"id"`
		} `json:"provider"`
	}](t, r).Provider.ID
}

func listProviders(t testing.TB, c *client.Client) []providerJSON {
	t.Helper()
	r := do(t, c, "GET", "/v1/providers", nil)
	requireStatus(t, r, http.StatusOK)
	return decode[struct {
		Providers []providerJSON `json:"providers"`
	}](t, r).Providers
}

func TestProviders(t *testing.T) {
	t.Parallel()
	e := start(t)
	me := decode[meBody](t, do(t, e.Owner, "GET", "/v1/me", nil))

	require.Empty(t, listProviders(t, e.Owner))
	require.Contains(t, string(do(t, e.Owner, "GET", "/v1/providers", nil).Body), `"providers":[]`)

	// Register each of the twelve kinds: 201 {provider:{id,providerKind,displayName,enabled}}.
	ids := map[string]string{}
	for i, kind := range kindOrder {
		body := map[string]any{"providerKind": kind, "displayName": "P " + kind, "configJson": e.configFor(t, kind)}
		if i%2 == 1 {
			body["enabled"] = false
		}
		r := do(t, e.Owner, "POST", "/v1/providers", body)
		requireStatus(t, r, http.StatusCreated)
		got := decode[map[string]map[string]any](t, r)
		require.Len(t, got, 1)
		p := got["provider"]
		require.ElementsMatch(t, []string{"id", "providerKind", "displayName", "enabled"}, keys(p))
		require.Equal(t, kind, p["providerKind"])
		require.Equal(t, "P "+kind, p["displayName"])
		require.Equal(t, i%2 == 0, p["enabled"])
		ids[kind] = p["id"].(string)
		l := requireAudit(t, e.Owner, "provider.create", ids[kind])
		require.Equal(t, "provider", l.TargetType)
		require.Equal(t, me.User.ID, *l.ActorUserID)
		require.Equal(t, kind, l.Payload["providerKind"])
	}
	require.Equal(t, 12, auditCount(t, e.Owner, "provider.create"))

	// List: creation order, channel derived, no configJson; quota only for
	// the vendorA (count) and vendorB (KRW) kinds.
	list := listProviders(t, e.Owner)
	require.Len(t, list, 12)
	for i, p := range list {
		kind := kindOrder[i]
		require.Equal(t, ids[kind], p.ID)
		require.Equal(t, kind, p.ProviderKind)
		require.Equal(t, kindChannels[kind], p.Channel)
		require.Equal(t, i%2 == 0, p.Enabled)
		require.NotEmpty(t, p.CreatedAt)
		require.NotEmpty(t, p.UpdatedAt)
		switch {
		case strings.HasPrefix(kind, "vendora_"):
			require.NotNil(t, p.Quota, kind)
			require.Equal(t, "count", p.Quota.Currency)
			require.Equal(t, float64(1000+500+200), p.Quota.RemainingCredit)
		case strings.HasPrefix(kind, "vendorb_"):
			require.NotNil(t, p.Quota, kind)
			require.Equal(t, "KRW", p.Quota.Currency)
			require.Equal(t, float64(100000), p.Quota.RemainingCredit)
		default:
			require.Nil(t, p.Quota, kind)
		}
	}
	raw := do(t, e.Owner, "GET", "/v1/providers", nil).Body
	require.NotContains(t, string(raw), "configJson")
	require.Equal(t, 2, bytes.Count(raw, []byte(`"currency":"count"`)))
	require.Equal(t, 2, bytes.Count(raw, []byte(`"currency":"KRW"`)))
	require.Equal(t, 4, bytes.Count(raw, []byte(`"quota"`)), "quota is omitted, not null, for other kinds")

	// Get one.
	r := do(t, e.Owner, "GET", "/v1/providers/"+ids["vendorb_sms"], nil)
	requireStatus(t, r, http.StatusOK)
	one := decode[struct {
		Provider providerJSON `json:"provider"`
	}](t, r).Provider
	require.Equal(t, list[3], one)
	e.callProblem(t, e.Owner, "GET", "/v1/providers/00000000-0000-7000-8000-000000000000", nil, 404, "SVC-40400")
	e.callProblem(t, e.Owner, "GET", "/v1/providers/not-an-id", nil, 404, "SVC-40400")

	// Patch displayName, enabled, configJson (write-only).
	id := ids["chata_webhook"]
	r = do(t, e.Owner, "PATCH", "/v1/providers/"+id, map[string]any{"displayName": "Renamed", "enabled": false, "configJson": e.configFor(t, "chata_webhook")})
	requireStatus(t, r, http.StatusOK)
	pp := decode[struct {
		Provider providerJSON `json:"provider"`
	}](t, r).Provider
	require.Equal(t, "Renamed", pp.DisplayName)
	require.False(t, pp.Enabled)
	require.Equal(t, "chata_webhook", pp.ProviderKind)
	require.Equal(t, "chata_webhook", pp.Channel)
	r = do(t, e.Owner, "PATCH", "/v1/providers/"+id, map[string]any{"enabled": true})
	requireStatus(t, r, http.StatusOK)
	pp = decode[struct {
		Provider providerJSON `json:"provider"`
	}](t, r).Provider
	require.True(t, pp.Enabled)
	require.Equal(t, "Renamed", pp.DisplayName, "absent fields stay")
	requireAudit(t, e.Owner, "provider.update", id)
	// providerKind is immutable; other bad patches.
	for _, body := range []string{`{"providerKind":"chatb_webhook"}`, `{"providerKind":"chata_webhook"}`, `{"displayName":""}`,
		`{"displayName":null}`, `{"enabled":null}`, `{"enabled":"yes"}`, `{"configJson":null}`, `{"configJson":{"a":1}}`,
		`{"displayName":"` + strings.Repeat("x", 121) + `"}`, `{"channel":"sms"}`, `{"id":"x"}`} {
		e.callProblem(t, e.Owner, "PATCH", "/v1/providers/"+id, body, 400, "SVC-40000")
	}
	e.callProblem(t, e.Owner, "PATCH", "/v1/providers/00000000-0000-7000-8000-000000000000", map[string]any{"enabled": true}, 404, "SVC-40400")

	// Register validation: 400 SVC-40000.
	long := strings.Repeat("d", 121)
	for _, body := range []string{
		`{"providerKind":"nope","displayName":"x"}`,
		`{"providerKind":"VENDORA_SMS","displayName":"x"}`,
		`{"displayName":"x"}`,
		`{"providerKind":"","displayName":"x"}`,
		`{"providerKind":null,"displayName":"x"}`,
		`{"providerKind":"mailx_email"}`,
		`{"providerKind":"mailx_email","displayName":null}`,
		`{"providerKind":"mailx_email","displayName":""}`,
		`{"providerKind":"mailx_email","displayName":"  "}`,
		`{"providerKind":"mailx_email","displayName":"` + long + `"}`,
		`{"providerKind":"mailx_email","displayName":"x","configJson":{"mailx_api_key":1}}`,
		`{"providerKind":"mailx_email","displayName":"x","configJson":{"mailx_api_key":true}}`,
		`{"providerKind":"mailx_email","displayName":"x","configJson":{"nested":{"a":"b"}}}`,
		`{"providerKind":"mailx_email","displayName":"x","configJson":{"k":null}}`,
		`{"providerKind":"mailx_email","displayName":"x","configJson":["a"]}`,
		`{"providerKind":"mailx_email","displayName":"x","configJson":"a=b"}`,
		`{"providerKind":"mailx_email","displayName":"x","enabled":"true"}`,
		`{"providerKind":"mailx_email","displayName":"x","channel":"email"}`,
		`{"providerKind":"mailx_email","displayName":"x","id":"mine"}`,
		`{"providerKind":1,"displayName":"x"}`,
	} {
		r := do(t, e.Owner, "POST", "/v1/providers", body)
		require.Equal(t, 400, r.Status, "%s -> %s", body, r.Body)
		p := e.requireProblem(t, r, 400, "SVC-40000", "/v1/providers")
		require.NotContains(t, p.Detail, "Go ")
	}
	// 120 characters (runes) is fine; configJson may be omitted or empty.
	r = do(t, e.Owner, "POST", "/v1/providers", map[string]any{"providerKind": "mailz_email", "displayName": strings.Repeat("가", 120)})
	requireStatus(t, r, http.StatusCreated)
	require.Equal(t, true, decode[map[string]map[string]any](t, r)["provider"]["enabled"], "enabled defaults to true")
	r = do(t, e.Owner, "POST", "/v1/providers", map[string]any{"providerKind": "mailz_email", "displayName": "empty", "configJson": map[string]string{}})
	requireStatus(t, r, http.StatusCreated)
	require.Len(t, listProviders(t, e.Owner), 14)
	require.Equal(t, 14, auditCount(t, e.Owner, "provider.create"))
	// The provider.create audit payload names config keys, never values.
	for _, l := range audit(t, e.Owner, "action=provider.create&limit=200").Logs {
		require.NotContains(t, l.Payload, "configJson")
	}

	// Another workspace's providers are 404 and invisible.
	other, _ := e.NewWorkspace(t, "Other", "other@example.com")
	recordClient(other)
	otherID := e.createProvider(t, other, "chatb_bot", "theirs")
	e.callProblem(t, e.Owner, "GET", "/v1/providers/"+otherID, nil, 404, "SVC-40400")
	e.callProblem(t, e.Owner, "PATCH", "/v1/providers/"+otherID, map[string]any{"displayName": "mine"}, 404, "SVC-40400")
	e.callProblem(t, other, "GET", "/v1/providers/"+ids["chatb_bot"], nil, 404, "SVC-40400")
	e.callProblem(t, other, "PATCH", "/v1/providers/"+ids["chatb_bot"], map[string]any{"enabled": false}, 404, "SVC-40400")
	require.Len(t, listProviders(t, other), 1)
	for _, p := range listProviders(t, e.Owner) {
		require.NotEqual(t, otherID, p.ID)
	}
	r = do(t, other, "GET", "/v1/providers/"+otherID, nil)
	requireStatus(t, r, http.StatusOK)
	require.Equal(t, "theirs", decode[struct {
		Provider providerJSON `json:"provider"`
	}](t, r).Provider.DisplayName)

	// Roles: a viewer reads, an operator registers and patches.
	_, viewer := e.member(t, "viewer")
	_, op := e.member(t, "operator")
	require.Len(t, listProviders(t, viewer), 14)
	e.callProblem(t, viewer, "POST", "/v1/providers", map[string]any{"providerKind": "chata_bot", "displayName": "v"}, 403, "SVC-40300")
	e.callProblem(t, viewer, "PATCH", "/v1/providers/"+id, map[string]any{"enabled": false}, 403, "SVC-40300")
	e.createProvider(t, op, "chata_bot", "by operator")
	requireStatus(t, do(t, op, "PATCH", "/v1/providers/"+id, map[string]any{"enabled": false}), http.StatusOK)
}

// TestProviderQuota checks the quota of the vendor kinds against the
// simulator: values, a failed lookup omitting the field, the cache.
func TestProviderQuota(t *testing.T) {
	t.Parallel()
	e := start(t)
	sim := recordClient(client.New(e.SimURL))
	requireStatus(t, do(t, sim, "PUT", "/_sim/balance", map[string]any{"kind": "vendora_sms", "value": 7, "lms": 2, "mms": 1}), http.StatusOK)
	requireStatus(t, do(t, sim, "PUT", "/_sim/balance", map[string]any{"kind": "vendorb_sms", "value": 4321.5}), http.StatusOK)
	a := e.createProvider(t, e.Owner, "vendora_sms", "A")
	b := e.createProvider(t, e.Owner, "vendorb_sms", "B")
	byID := func() map[string]providerJSON {
		out := map[string]providerJSON{}
		for _, p := range listProviders(t, e.Owner) {
			out[p.ID] = p
		}
		return out
	}
	ps := byID()
	require.NotNil(t, ps[a].Quota)
	require.Equal(t, quotaJSON{Period: ps[a].Quota.Period, RemainingCredit: 10, Currency: "count"}, *ps[a].Quota)
	require.NotNil(t, ps[b].Quota)
	require.Equal(t, float64(4321.5), ps[b].Quota.RemainingCredit)
	require.Equal(t, "KRW", ps[b].Quota.Currency)
	require.NotEmpty(t, ps[b].Quota.Period)

	// Cached for 60 s: a new balance is not seen yet.
	requireStatus(t, do(t, sim, "PUT", "/_sim/balance", map[string]any{"kind": "vendorb_sms", "value": 1}), http.StatusOK)
	require.Equal(t, float64(4321.5), byID()[b].Quota.RemainingCredit)

	// A failed lookup omits quota.
	requireStatus(t, do(t, sim, "POST", "/_sim/faults", map[string]any{"kind": "vendorb_sms", "op": "balance", "status": 500, "count": 10}), http.StatusCreated)
	c := e.createProvider(t, e.Owner, "vendorb_sms", "C")
	r := do(t, e.Owner, "GET", "/v1/providers/"+c, nil)
	requireStatus(t, r, http.StatusOK)
	require.NotContains(t, string(r.Body), "quota")
	require.NotNil(t, byID()[b].Quota, "still cached")

	// Wrong credentials (the simulator refuses them): no quota either.
	r = do(t, e.Owner, "POST", "/v1/providers", map[string]any{"providerKind": "vendora_sms", "displayName": "bad",
		"configJson": map[string]string{"vendora_user_id": "", "vendora_api_key": "", "vendora_sender": "x", "base_url": e.SimURL}})
	requireStatus(t, r, http.StatusCreated)
	bad := decode[map[string]map[string]any](t, r)["provider"]["id"].(string)
	require.Nil(t, byID()[bad].Quota)
}

func keys(m map[string]any) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	return out
}
