package e2e_test

import (
	"net/http"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/notifyd/notifyd/client"
)

type routeJSON struct {
	ID                string `json:"id"`
	Channel           string `json:"channel"`
	ProviderAccountID string `json:"providerAccountId"`
	Priority          int    `json:"priority"`
	Enabled           bool   `json:"enabled"`
	CreatedAt         string `json:"createdAt"`
}

type route map[string]any

func putRoutes(t testing.TB, c *client.Client, rs ...route) []routeJSON {
	t.Helper()
	if rs == nil {
		rs = []route{}
	}
	r := do(t, c, "PUT", "/v1/routes", map[string]any{"routes": rs})
	requireStatus(t, r, http.StatusOK)
	return decodeRoutes(t, r)
}

func decodeRoutes(t testing.TB, r *client.Response) []routeJSON {
	t.Helper()
	var raw map[string][]map[string]any
	require.NoError(t, r.Decode(&raw))
	for _, x := range raw["routes"] {
		require.ElementsMatch(t, []string{"id", "channel", "providerAccountId", "priority", "enabled", "createdAt"}, keys(x))
	}
	return decode[struct {
		Routes []routeJSON `json:"routes"`
	}](t, r).Routes
}

func getRoutes(t testing.TB, c *client.Client) []routeJSON {
	t.Helper()
	r := do(t, c, "GET", "/v1/routes", nil)
	requireStatus(t, r, http.StatusOK)
	return decodeRoutes(t, r)
}

// shape reduces routes to "channel/provider/priority/enabled" in order.
func shape(rs []routeJSON, names map[string]string) []string {
	out := make([]string, len(rs))
	for i, r := range rs {
		en := "on"
		if !r.Enabled {
			en = "off"
		}
		out[i] = r.Channel + "/" + names[r.ProviderAccountID] + "/" + strconv.Itoa(r.Priority) + "/" + en
	}
	return out
}

func TestRoutes(t *testing.T) {
	t.Parallel()
	e := start(t)
	me := decode[meBody](t, do(t, e.Owner, "GET", "/v1/me", nil))
	sms1 := e.createProvider(t, e.Owner, "vendora_sms", "sms1")
	sms2 := e.createProvider(t, e.Owner, "vendorb_sms", "sms2")
	mail := e.createProvider(t, e.Owner, "mailx_email", "mail")
	mail2 := e.createProvider(t, e.Owner, "mailz_email", "mail2")
	chat := e.createProvider(t, e.Owner, "chata_webhook", "chat")
	names := map[string]string{sms1: "sms1", sms2: "sms2", mail: "mail", mail2: "mail2", chat: "chat"}

	require.Empty(t, getRoutes(t, e.Owner))
	require.Contains(t, string(do(t, e.Owner, "GET", "/v1/routes", nil).Body), `"routes":[]`)

	// PUT answers and lists ordered by channel then priority.
	got := putRoutes(t, e.Owner,
		route{"channel": "sms", "providerAccountId": sms2, "priority": 20},
		route{"channel": "sms", "providerAccountId": sms1, "priority": 10, "enabled": false},
		route{"channel": "email", "providerAccountId": mail, "priority": 9999},
		route{"channel": "chata_webhook", "providerAccountId": chat, "priority": 1, "enabled": true},
		route{"channel": "email", "providerAccountId": mail2, "priority": 1},
	)
	want := []string{"chata_webhook/chat/1/on", "email/mail2/1/on", "email/mail/9999/on", "sms/sms1/10/off", "sms/sms2/20/on"}
	require.Equal(t, want, shape(got, names))
	listed := getRoutes(t, e.Owner)
	require.Equal(t, got, listed)
	ids := map[string]bool{}
	for _, r := range listed {
		require.NotEmpty(t, r.ID)
		require.False(t, ids[r.ID])
		ids[r.ID] = true
		ts, err := time.Parse("2006-01-02T15:04:05.000Z", r.CreatedAt)
		require.NoError(t, err)
		require.WithinDuration(t, time.Now(), ts, time.Minute)
	}
	require.True(t, sort.SliceIsSorted(listed, func(i, j int) bool {
		if listed[i].Channel != listed[j].Channel {
			return listed[i].Channel < listed[j].Channel
		}
		return listed[i].Priority < listed[j].Priority
	}))
	l := requireAudit(t, e.Owner, "route.replace", e.Workspace)
	require.Equal(t, "route", l.TargetType)
	require.Equal(t, me.User.ID, *l.ActorUserID)

	// Replace: the old set is gone entirely.
	got = putRoutes(t, e.Owner, route{"channel": "sms", "providerAccountId": sms1, "priority": 5})
	require.Equal(t, []string{"sms/sms1/5/on"}, shape(got, names))
	require.Equal(t, got, getRoutes(t, e.Owner))
	require.False(t, ids[got[0].ID], "routes are recreated")
	require.Equal(t, 2, auditCount(t, e.Owner, "route.replace"))

	// Every invalid body is 400 and leaves the routes untouched (atomic).
	other, _ := e.NewWorkspace(t, "Other", "other@example.com")
	recordClient(other)
	foreign := e.createProvider(t, other, "vendora_sms", "theirs")
	var tooMany []route
	for i := range 201 {
		tooMany = append(tooMany, route{"channel": "sms", "providerAccountId": sms1, "priority": i + 1})
	}
	bad := map[string]any{
		"over 200 routes": map[string]any{"routes": tooMany},
		"priority 0":      map[string]any{"routes": []route{{"channel": "sms", "providerAccountId": sms1, "priority": 0}}},
		"priority 10000":  map[string]any{"routes": []route{{"channel": "sms", "providerAccountId": sms1, "priority": 10000}}},
		"priority -1":     map[string]any{"routes": []route{{"channel": "sms", "providerAccountId": sms1, "priority": -1}}},
		"priority 1.5":    map[string]any{"routes": []route{{"channel": "sms", "providerAccountId": sms1, "priority": 1.5}}},
		"priority string": map[string]any{"routes": []route{{"channel": "sms", "providerAccountId": sms1, "priority": "1"}}},
		"priority absent": map[string]any{"routes": []route{{"channel": "sms", "providerAccountId": sms1}}},
		"unknown channel": map[string]any{"routes": []route{{"channel": "fax", "providerAccountId": sms1, "priority": 1}}},
		"no channel":      map[string]any{"routes": []route{{"providerAccountId": sms1, "priority": 1}}},
		"no provider":     map[string]any{"routes": []route{{"channel": "sms", "priority": 1}}},
		"unknown provider": map[string]any{"routes": []route{
			{"channel": "sms", "providerAccountId": sms2, "priority": 1},
			{"channel": "sms", "providerAccountId": "00000000-0000-7000-8000-000000000000", "priority": 2}}},
		"other workspace's provider": map[string]any{"routes": []route{
			{"channel": "sms", "providerAccountId": sms2, "priority": 1},
			{"channel": "sms", "providerAccountId": foreign, "priority": 2}}},
		"same provider twice": map[string]any{"routes": []route{
			{"channel": "sms", "providerAccountId": sms2, "priority": 1},
			{"channel": "sms", "providerAccountId": sms2, "priority": 2}}},
		"channel differs": map[string]any{"routes": []route{
			{"channel": "sms", "providerAccountId": sms2, "priority": 1},
			{"channel": "email", "providerAccountId": sms1, "priority": 2}}},
		"bot channel for webhook": map[string]any{"routes": []route{{"channel": "chata_bot", "providerAccountId": chat, "priority": 1}}},
		"enabled string":          map[string]any{"routes": []route{{"channel": "sms", "providerAccountId": sms1, "priority": 1, "enabled": "yes"}}},
		"unknown route field":     map[string]any{"routes": []route{{"channel": "sms", "providerAccountId": sms1, "priority": 1, "weight": 3}}},
		"unknown top field":       map[string]any{"routes": []route{}, "mode": "merge"},
		"routes missing":          map[string]any{},
		"routes null":             map[string]any{"routes": nil},
		"routes object":           map[string]any{"routes": map[string]any{}},
		"route not an object":     map[string]any{"routes": []any{"sms"}},
	}
	for name, body := range bad {
		r := do(t, e.Owner, "PUT", "/v1/routes", body)
		require.Equal(t, 400, r.Status, "%s: %s", name, r.Body)
		e.requireProblem(t, r, 400, "SVC-40000", "/v1/routes")
	}
	require.Equal(t, got, getRoutes(t, e.Owner))
	require.Equal(t, 2, auditCount(t, e.Owner, "route.replace"))
	// The foreign provider is named in no detail of ours, and its workspace has no routes.
	require.Empty(t, getRoutes(t, other))

	// Exactly 200 routes is fine (a provider has one channel, so 200 providers).
	var ps []string
	for i := range 200 {
		ps = append(ps, e.createProviderQuiet(t, "chatb_bot", "bot"+strconv.Itoa(i+1)))
	}
	var full []route
	for i, p := range ps {
		full = append(full, route{"channel": "chatb_bot", "providerAccountId": p, "priority": 200 - i})
	}
	got = putRoutes(t, e.Owner, full...)
	require.Len(t, got, 200)
	for i := 1; i < len(got); i++ {
		require.Less(t, got[i-1].Priority, got[i].Priority)
	}
	// An empty list clears every route.
	require.Empty(t, putRoutes(t, e.Owner))
	require.Empty(t, getRoutes(t, e.Owner))

	// Roles: viewer reads, operator replaces.
	_, viewer := e.member(t, "viewer")
	_, op := e.member(t, "operator")
	require.Empty(t, getRoutes(t, viewer))
	e.callProblem(t, viewer, "PUT", "/v1/routes", map[string]any{"routes": []route{}}, 403, "SVC-40300")
	require.Len(t, putRoutes(t, op, route{"channel": "email", "providerAccountId": mail, "priority": 3}), 1)
	require.Len(t, getRoutes(t, viewer), 1)
	require.Empty(t, getRoutes(t, other))
}

// createProviderQuiet registers a provider without planting a secret.
func (e *env) createProviderQuiet(t testing.TB, kind, name string) string {
	t.Helper()
	r := do(t, e.Owner, "POST", "/v1/providers", map[string]any{"providerKind": kind, "displayName": name,
		"configJson": map[string]string{strings.ReplaceAll(kind, "_", "") + "_token": "t"}})
	requireStatus(t, r, http.StatusCreated)
	return decode[map[string]map[string]any](t, r)["provider"]["id"].(string)
}

// TestConcurrentReplace: two replaces at once leave one of the two sets,
// never a mix.
func TestConcurrentReplace(t *testing.T) {
	t.Parallel()
	e := start(t)
	var ps []string
	for range 6 {
		ps = append(ps, e.createProviderQuiet(t, "chatb_bot", "b"))
	}
	for range 10 {
		var wg sync.WaitGroup
		for w := range 2 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				var rs []route
				for j := range 3 {
					rs = append(rs, route{"channel": "chatb_bot", "providerAccountId": ps[w*3+j], "priority": j + 1})
				}
				requireStatus(t, do(t, e.Owner, "PUT", "/v1/routes", map[string]any{"routes": rs}), 200)
			}()
		}
		wg.Wait()
		got := getRoutes(t, e.Owner)
		require.Len(t, got, 3)
		first := got[0].ProviderAccountID == ps[0] || got[0].ProviderAccountID == ps[1] || got[0].ProviderAccountID == ps[2]
		for _, r := range got {
			require.Equal(t, first, r.ProviderAccountID == ps[0] || r.ProviderAccountID == ps[1] || r.ProviderAccountID == ps[2], "a mix of both sets")
		}
	}
}
