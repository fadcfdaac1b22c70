package notifytest

import (
	"context"
	"maps"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/notifyd/notifyd/client"
)

// simCredentials are test credentials of each simulated kind: what the
// simulator accepts, with a sender it knows. Kinds not listed need no
// credentials against the simulator beyond extra configuration.
var simCredentials = map[string]map[string]string{
	"vendora_sms":  {"vendora_user_id": "u", "vendora_api_key": "k", "vendora_sender": "0212345678"},
	"vendora_msgr": {"vendora_user_id": "u", "vendora_msgr_api_key": "k", "vendora_sender": "0212345678"},
	"vendorb_sms":  {"vendorb_api_key": "k", "vendorb_api_secret": "s", "vendorb_sender": "0212345678"},
	"vendorb_msgr": {"vendorb_api_key": "k", "vendorb_api_secret": "s", "vendorb_sender": "0212345678"},
	"mailx_email":  {"mailx_api_key": "re_test", "mailx_from_email": "from@example.com"},
	"maily_email": {"maily_access_key_id": "AKIATEST", "maily_secret_access_key": "secret", "maily_region": "us-east-1",
		"maily_from_email": "from@example.com"},
	"mailz_email": {"mailz_api_key": "pm-token", "mailz_from_email": "from@example.com"},
}

// SimConfig is the configJson of a provider of kind on e's simulator:
// its base_url and test credentials, with extra's keys added or replacing
// them (a sender address, a batching option).
func (e *Env) SimConfig(kind string, extra map[string]string) map[string]string {
	cfg := map[string]string{"base_url": e.SimURL}
	maps.Copy(cfg, simCredentials[kind])
	maps.Copy(cfg, extra)
	return cfg
}

// MailConfig is SimConfig of the email kind (mailx_email, maily_email,
// mailz_email) sending from the address from.
func (e *Env) MailConfig(kind, from string) map[string]string {
	return e.SimConfig(kind, map[string]string{strings.TrimSuffix(kind, "_email") + "_from_email": from})
}

// RegisterProvider registers a provider account of kind named name with
// configJson cfg through owner's dashboard client and answers its id.
func RegisterProvider(t testing.TB, owner *client.Client, kind, name string, cfg map[string]string) string {
	t.Helper()
	r := Dash(t, owner, "POST", "/v1/providers", map[string]any{"providerKind": kind, "displayName": name, "configJson": cfg})
	out := Decode[struct {
		Provider struct {
			ID string `json:"id"`
		} `json:"provider"`
	}](t, r, http.StatusCreated)
	return out.Provider.ID
}

// Route is one entry of the workspace's route table.
type Route struct {
	Channel           string `json:"channel"`
	ProviderAccountID string `json:"providerAccountId"`
	Priority          int    `json:"priority"`
}

// PutRoutes replaces the route table through owner's dashboard client.
func PutRoutes(t testing.TB, owner *client.Client, routes ...Route) {
	t.Helper()
	r := Dash(t, owner, "PUT", "/v1/routes", map[string]any{"routes": routes})
	require.Equal(t, http.StatusOK, r.Status, string(r.Body))
}

// RegisterRoute registers a provider account of kind with configJson cfg
// through owner's dashboard client and routes channel to it alone
// (priority 1); it returns the account's id.
func RegisterRoute(t testing.TB, owner *client.Client, channel, kind string, cfg map[string]string) string {
	t.Helper()
	id := RegisterProvider(t, owner, kind, kind, cfg)
	PutRoutes(t, owner, Route{Channel: channel, ProviderAccountID: id, Priority: 1})
	return id
}

// SimProvider registers a provider account of kind named name on e's
// simulator (SimConfig with extra) as the owner; it returns its id.
func (e *Env) SimProvider(t testing.TB, kind, name string, extra map[string]string) string {
	t.Helper()
	return RegisterProvider(t, e.Owner, kind, name, e.SimConfig(kind, extra))
}

// SimRoute registers kind on e's simulator (SimConfig with extra) as the
// owner and routes channel to it alone; it returns the account's id.
func (e *Env) SimRoute(t testing.TB, channel, kind string, extra map[string]string) string {
	t.Helper()
	return RegisterRoute(t, e.Owner, channel, kind, e.SimConfig(kind, extra))
}

// Fault queues a fault in the simulator (POST /_sim/faults): f holds
// kind, and status, vendorCode, count and the other fault fields.
func (e *Env) Fault(t testing.TB, f map[string]any) {
	t.Helper()
	c := client.New(e.SimURL)
	r, err := c.Dashboard(context.Background(), "POST", "/_sim/faults", f)
	require.NoError(t, err)
	require.Less(t, r.Status, 300, string(r.Body))
}
