package e2e_test

import (
	"net/http"
	"net/url"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestConfigNeverLeaks plants unique values in the configJson of providers
// of every kind, then calls every route of the Dashboard API (successes and
// errors) and checks that no response body holds any of them. TestMain
// repeats the check over every response of the whole suite.
func TestConfigNeverLeaks(t *testing.T) {
	t.Parallel()
	e := start(t)
	var planted []string
	plant := func(kind string) map[string]string {
		cfg := e.configFor(t, kind)
		for _, v := range cfg {
			planted = append(planted, v)
		}
		return cfg
	}
	ids := map[string]string{}
	for _, kind := range kindOrder {
		r := do(t, e.Owner, "POST", "/v1/providers", map[string]any{"providerKind": kind, "displayName": kind, "configJson": plant(kind)})
		requireStatus(t, r, http.StatusCreated)
		ids[kind] = decode[map[string]map[string]any](t, r)["provider"]["id"].(string)
	}
	secret := plantSecret(t)
	planted = append(planted, secret)

	// Reads.
	listProviders(t, e.Owner)
	for _, id := range ids {
		requireStatus(t, do(t, e.Owner, "GET", "/v1/providers/"+id, nil), http.StatusOK)
	}
	// Updates, including a new config, and failing updates carrying secrets.
	for kind, id := range ids {
		requireStatus(t, do(t, e.Owner, "PATCH", "/v1/providers/"+id, map[string]any{"configJson": plant(kind)}), http.StatusOK)
		requireStatus(t, do(t, e.Owner, "PATCH", "/v1/providers/"+id, map[string]any{"displayName": "renamed " + kind, "enabled": false}), http.StatusOK)
		for _, body := range []map[string]any{
			{"configJson": map[string]any{"api_key": secret, "bad": 1}},
			{"configJson": map[string]any{"api_key": secret}, "providerKind": "chata_bot"},
			{"configJson": map[string]any{"api_key": secret}, "displayName": ""},
			{"configJson": map[string]any{"api_key": secret}, "unknown": secret},
		} {
			r := do(t, e.Owner, "PATCH", "/v1/providers/"+id, body)
			require.Equal(t, 400, r.Status, "%s", r.Body)
		}
	}
	for _, body := range []map[string]any{
		{"providerKind": "nope", "displayName": "x", "configJson": map[string]any{"k": secret}},
		{"providerKind": "mailx_email", "displayName": "", "configJson": map[string]any{"k": secret}},
		{"providerKind": "mailx_email", "displayName": "x", "configJson": map[string]any{"k": secret, "n": []string{secret}}},
		{"providerKind": "mailx_email", "displayName": "x", "configJson": map[string]any{"k": secret}, "extra": true},
	} {
		r := do(t, e.Owner, "POST", "/v1/providers", body)
		require.Equal(t, 400, r.Status, "%s", r.Body)
	}
	r := do(t, e.Owner, "POST", "/v1/providers", `{"providerKind":"mailx_email","displayName":"x","configJson":{"k":"`+secret+`"`)
	require.Equal(t, 400, r.Status)
	r = do(t, e.Owner, "POST", "/v1/providers", `{"providerKind":"mailx_email","displayName":"x","configJson":{"k":"`+secret+`"}} trailing`)
	require.Equal(t, 400, r.Status)

	// Routes, audit log (every filter and page), keys, members, workspace, me.
	putRoutes(t, e.Owner, route{"channel": "sms", "providerAccountId": ids["vendora_sms"], "priority": 1},
		route{"channel": "email", "providerAccountId": ids["mailx_email"], "priority": 2})
	getRoutes(t, e.Owner)
	for _, q := range []string{"", "limit=1", "limit=200", "action=provider.create", "action=provider.update", "targetType=provider", "action=route.replace"} {
		audit(t, e.Owner, q)
	}
	cursor := ""
	for {
		q := "limit=3"
		if cursor != "" {
			q += "&cursor=" + url.QueryEscape(cursor)
		}
		p := audit(t, e.Owner, q)
		if !p.HasNext {
			break
		}
		cursor = *p.Cursor
	}
	createKey(t, e.Owner, map[string]any{"name": "k", "scopes": []string{"otp:send"}})
	listKeys(t, e.Owner)
	members(t, e.Owner)
	requireStatus(t, do(t, e.Owner, "GET", "/v1/workspace", nil), http.StatusOK)
	requireStatus(t, do(t, e.Owner, "GET", "/v1/me", nil), http.StatusOK)
	_, viewer := e.member(t, "viewer")
	listProviders(t, viewer)
	for _, id := range ids {
		requireStatus(t, do(t, viewer, "GET", "/v1/providers/"+id, nil), http.StatusOK)
	}
	audit(t, viewer, "limit=200")

	require.Greater(t, len(planted), 24)
	require.Empty(t, leaks(planted...))
}
