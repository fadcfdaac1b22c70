// Package identities_test drives the sending identities of the e-mail
// providers end to end: daemon, simulator (SES, Resend, Postmark identity
// APIs), the DNS test server, on both backends.
package identities_test

import (
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/notifyd/notifyd/client"
	"github.com/notifyd/notifyd/internal/mailcheck/dnstest"
	"github.com/notifyd/notifyd/internal/notifytest"
)

type bundle struct {
	env *notifytest.Env
	dns *dnstest.Server
}

// setup starts a daemon whose sending-domain DNS checks ask a DNS test
// server (NOTIFYD_DNS_SERVER).
func setup(t *testing.T) *bundle {
	t.Helper()
	dns := dnstest.Start(t)
	return &bundle{env: notifytest.StartDaemon(t, notifytest.WithDNSServer(dns.Addr)), dns: dns}
}

// emailConfig is a provider's configJson on the simulator, sending from
// from (Postmark's with the account token its identity API needs).
func (b *bundle) emailConfig(kind, from string) map[string]string {
	cfg := b.env.MailConfig(kind, from)
	if kind == "mailz_email" {
		cfg["mailz_api_key"], cfg["mailz_account_token"] = "pm-server-token", "pm-account-token"
	}
	return cfg
}

// register registers a provider and answers its id and the registration's
// Warning header.
func (b *bundle) register(t *testing.T, kind string, cfg map[string]string) (string, string) {
	t.Helper()
	r := notifytest.Dash(t, b.env.Owner, "POST", "/v1/providers", map[string]any{"providerKind": kind, "displayName": kind, "configJson": cfg})
	out := notifytest.Decode[struct {
		Provider struct {
			ID string `json:"id"`
		} `json:"provider"`
	}](t, r, http.StatusCreated)
	return out.Provider.ID, r.Header.Get("Warning")
}

type recordOut struct {
	Purpose  string   `json:"purpose"`
	Type     string   `json:"type"`
	Name     string   `json:"name"`
	Value    string   `json:"value"`
	Priority int      `json:"priority"`
	Status   string   `json:"status"`
	Found    []string `json:"found"`
}

type identityOut struct {
	ID                string      `json:"id"`
	ProviderAccountID string      `json:"providerAccountId"`
	Type              string      `json:"type"`
	Name              string      `json:"name"`
	Status            string      `json:"status"`
	Origin            string      `json:"origin"`
	MailFromDomain    *string     `json:"mailFromDomain"`
	SPFInclude        *string     `json:"spfInclude"`
	Records           []recordOut `json:"records"`
	VerifiedAt        *string     `json:"verifiedAt"`
}

// identity decodes {identity} from a response of status.
func identity(t *testing.T, r *client.Response, status int) identityOut {
	t.Helper()
	require.Equal(t, status, r.Status, string(r.Body))
	return notifytest.Field[identityOut](t, r, "identity")
}

type listOut struct {
	Identities []identityOut `json:"identities"`
	Sender     struct {
		Address    *string `json:"address"`
		Verified   bool    `json:"verified"`
		IdentityID *string `json:"identityId"`
		Warning    *string `json:"warning"`
	} `json:"sender"`
}

func (b *bundle) list(t *testing.T, pid string) listOut {
	t.Helper()
	return notifytest.Decode[listOut](t, notifytest.Dash(t, b.env.Owner, "GET", "/v1/providers/"+pid+"/identities", nil), http.StatusOK)
}

// simVerify marks an identity verified at the simulator's control API.
func (b *bundle) simVerify(t *testing.T, kind, name string) {
	t.Helper()
	r, err := http.Post(b.env.SimURL+"/_sim/identities/verify", "application/json",
		jsonBody(map[string]any{"kind": kind, "name": name}))
	require.NoError(t, err)
	_ = r.Body.Close()
	require.Equal(t, http.StatusOK, r.StatusCode)
}
