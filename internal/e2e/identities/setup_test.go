// Package identities_test drives the sending identities of the e-mail
// providers end to end: daemon, simulator (SES, Resend, Postmark identity
// APIs), the DNS test server, on both backends.
package identities_test

import (
	"context"
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/notifyd/notifyd/client"
	"github.com/notifyd/notifyd/internal/mailcheck/dnstest"
	"github.com/notifyd/notifyd/internal/notifytest"
)

var ctx = context.Background()

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

// emailConfig is a provider's configJson on the simulator, sending from from.
func (b *bundle) emailConfig(kind, from string) map[string]string {
	cfg := map[string]string{"base_url": b.env.SimURL}
	switch kind {
	case "mailx_email":
		cfg["mailx_api_key"], cfg["mailx_from_email"] = "re_test", from
	case "maily_email":
		cfg["maily_access_key_id"], cfg["maily_secret_access_key"], cfg["maily_region"], cfg["maily_from_email"] = "AKIATEST", "secret", "us-east-1", from
	default:
		cfg["mailz_api_key"], cfg["mailz_from_email"], cfg["mailz_account_token"] = "pm-server-token", from, "pm-account-token"
	}
	return cfg
}

func (b *bundle) dash(t *testing.T, c *client.Client, method, path string, body any) *client.Response {
	t.Helper()
	r, err := c.Dashboard(ctx, method, path, body)
	require.NoError(t, err)
	return r
}

func (b *bundle) owner(t *testing.T, method, path string, body any) *client.Response {
	t.Helper()
	return b.dash(t, b.env.Owner, method, path, body)
}

// register registers a provider and answers its id and the registration's
// Warning header.
func (b *bundle) register(t *testing.T, kind string, cfg map[string]string) (string, string) {
	t.Helper()
	r := b.owner(t, "POST", "/v1/providers", map[string]any{"providerKind": kind, "displayName": kind, "configJson": cfg})
	require.Equal(t, http.StatusCreated, r.Status, string(r.Body))
	var out struct {
		Provider struct {
			ID string `json:"id"`
		} `json:"provider"`
	}
	require.NoError(t, r.Decode(&out))
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
	var out struct {
		Identity identityOut `json:"identity"`
	}
	require.NoError(t, r.Decode(&out))
	return out.Identity
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
	r := b.owner(t, "GET", "/v1/providers/"+pid+"/identities", nil)
	require.Equal(t, http.StatusOK, r.Status, string(r.Body))
	var out listOut
	require.NoError(t, r.Decode(&out))
	return out
}

// problem asserts r is a problem+json answer with status and code.
func problem(t *testing.T, r *client.Response, status int, code string) client.Problem {
	t.Helper()
	require.Equal(t, status, r.Status, string(r.Body))
	require.Contains(t, r.Header.Get("Content-Type"), "application/problem+json", string(r.Body))
	p := r.Problem()
	require.Equal(t, code, p.Code, string(r.Body))
	return p
}

type auditOut struct {
	ActorUserID *string        `json:"actorUserId"`
	Action      string         `json:"action"`
	TargetType  string         `json:"targetType"`
	TargetID    string         `json:"targetId"`
	Payload     map[string]any `json:"payload"`
}

func (b *bundle) audit(t *testing.T, action string) []auditOut {
	t.Helper()
	r := b.owner(t, "GET", "/v1/audit-logs?action="+action, nil)
	require.Equal(t, http.StatusOK, r.Status, string(r.Body))
	var out struct {
		Logs []auditOut `json:"logs"`
	}
	require.NoError(t, r.Decode(&out))
	return out.Logs
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
