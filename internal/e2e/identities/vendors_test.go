package identities_test

import (
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/notifyd/notifyd/internal/notifytest"
	"github.com/notifyd/notifyd/internal/simulator"
)

// TestResendDomains: Resend verifies domains only. Connect a domain and
// read its records (return-path MX and SPF, DKIM TXT), see it pending,
// verified once the simulator says so; adopt a verified one.
func TestResendDomains(t *testing.T) {
	t.Parallel()
	b := setup(t)
	pid, warning := b.register(t, "mailx_email", b.emailConfig("mailx_email", "News <news@resend.example>"))
	require.Contains(t, warning, "mailx_from_email news@resend.example is neither")
	base := "/v1/providers/" + pid + "/identities"

	p := notifytest.RequireProblem(t, notifytest.Dash(t, b.env.Owner, "POST", base+"/email-addresses", map[string]any{"address": "news@resend.example"}), http.StatusBadRequest, "SVC-40000")
	require.Contains(t, p.Detail, "verifies domains only")
	require.Empty(t, notifytest.Audit(t, b.env.Owner, "maily.email_identity.verify"))

	dom := identity(t, notifytest.Dash(t, b.env.Owner, "POST", base+"/domains", map[string]any{"domain": "resend.example", "mailFromSubdomain": "bounces"}), http.StatusCreated)
	require.Equal(t, "pending", dom.Status)
	require.Equal(t, "bounces.resend.example", *dom.MailFromDomain)
	require.Len(t, dom.Records, 3, "%+v", dom.Records)
	require.Equal(t, recordOut{Purpose: "mail_from_mx", Type: "MX", Name: "bounces.resend.example", Value: "feedback-smtp.us-east-1.amazonses.com", Priority: 10}, dom.Records[0])
	require.Equal(t, recordOut{Purpose: "spf", Type: "TXT", Name: "bounces.resend.example", Value: "v=spf1 include:amazonses.com ~all"}, dom.Records[1])
	require.Equal(t, "dkim", dom.Records[2].Purpose)
	require.Equal(t, "resend._domainkey.resend.example", dom.Records[2].Name)
	require.Contains(t, dom.Records[2].Value, "p=")
	sim := b.env.Sim.Identities("mailx_email")
	require.Len(t, sim, 1)
	require.Equal(t, 1, sim[0].VerifyRequests, "connect asks Resend to start verifying")

	require.Equal(t, "pending", identity(t, notifytest.Dash(t, b.env.Owner, "GET", base+"/"+dom.ID, nil), http.StatusOK).Status)
	b.simVerify(t, "mailx_email", "resend.example")
	got := identity(t, notifytest.Dash(t, b.env.Owner, "GET", base+"/"+dom.ID, nil), http.StatusOK)
	require.Equal(t, "verified", got.Status)
	require.NotNil(t, got.VerifiedAt)
	l := b.list(t, pid)
	require.True(t, l.Sender.Verified, "the sender is on the verified domain")
	require.Equal(t, dom.ID, *l.Sender.IdentityID)

	require.True(t, b.env.Sim.AddIdentity(simulator.IdentityRequest{Kind: "mailx_email", Name: "old.example", Verified: true}))
	ad := identity(t, notifytest.Dash(t, b.env.Owner, "POST", base+"/domains/adopt", map[string]any{"domain": "old.example"}), http.StatusCreated)
	require.Equal(t, "verified", ad.Status)
	require.Equal(t, "adopt", ad.Origin)
	require.Len(t, ad.Records, 3)
	require.Len(t, b.env.Sim.Identities("mailx_email"), 2, "adopt creates nothing at the vendor")
	require.Len(t, notifytest.Audit(t, b.env.Owner, "maily.domain.connect"), 1)
	require.Equal(t, "mailx_email", notifytest.Audit(t, b.env.Owner, "maily.domain.adopt")[0].Payload["providerKind"])
}

// TestPostmarkIdentities: sender signatures and domains through the
// account token, which configJson holds apart from the server token.
func TestPostmarkIdentities(t *testing.T) {
	t.Parallel()
	b := setup(t)
	cfg := b.emailConfig("mailz_email", "news@pm.example")
	delete(cfg, "mailz_account_token")
	noToken, _ := b.register(t, "mailz_email", cfg)
	p := notifytest.RequireProblem(t, notifytest.Dash(t, b.env.Owner, "POST", "/v1/providers/"+noToken+"/identities/email-addresses", map[string]any{"address": "news@pm.example"}),
		http.StatusConflict, "SVC-40900")
	require.Contains(t, p.Detail, "mailz_account_token")

	pid, _ := b.register(t, "mailz_email", b.emailConfig("mailz_email", "news@pm.example"))
	base := "/v1/providers/" + pid + "/identities"
	addr := identity(t, notifytest.Dash(t, b.env.Owner, "POST", base+"/email-addresses", map[string]any{"address": "news@pm.example"}), http.StatusCreated)
	require.Equal(t, "pending", addr.Status)
	require.Equal(t, "email_address", addr.Type)
	require.Equal(t, "pending", identity(t, notifytest.Dash(t, b.env.Owner, "GET", base+"/"+addr.ID, nil), http.StatusOK).Status)
	b.simVerify(t, "mailz_email", "news@pm.example")
	require.Equal(t, "verified", identity(t, notifytest.Dash(t, b.env.Owner, "GET", base+"/"+addr.ID, nil), http.StatusOK).Status)
	require.True(t, b.list(t, pid).Sender.Verified)

	dom := identity(t, notifytest.Dash(t, b.env.Owner, "POST", base+"/domains", map[string]any{"domain": "pm.example", "mailFromSubdomain": "pm-bounces"}), http.StatusCreated)
	require.Equal(t, "pending", dom.Status)
	require.Len(t, dom.Records, 2, "%+v", dom.Records)
	require.Equal(t, "dkim", dom.Records[0].Purpose)
	require.Equal(t, "TXT", dom.Records[0].Type)
	require.Contains(t, dom.Records[0].Name, "pm._domainkey.pm.example")
	require.Equal(t, recordOut{Purpose: "return_path", Type: "CNAME", Name: "pm-bounces.pm.example", Value: "pm.mtasv.net"}, dom.Records[1])
	require.Equal(t, "spf.mtasv.net", *dom.SPFInclude)
	require.Equal(t, "pending", identity(t, notifytest.Dash(t, b.env.Owner, "GET", base+"/"+dom.ID, nil), http.StatusOK).Status)
	b.simVerify(t, "mailz_email", "pm.example")
	got := identity(t, notifytest.Dash(t, b.env.Owner, "GET", base+"/"+dom.ID, nil), http.StatusOK)
	require.Equal(t, "verified", got.Status)
	require.Equal(t, dom.Records, got.Records, "the verified DKIM key is the one that was pending")

	require.True(t, b.env.Sim.AddIdentity(simulator.IdentityRequest{Kind: "mailz_email", Name: "legacy.example", Verified: true}))
	ad := identity(t, notifytest.Dash(t, b.env.Owner, "POST", base+"/domains/adopt", map[string]any{"domain": "legacy.example"}), http.StatusCreated)
	require.Equal(t, "verified", ad.Status)
	// A sender signature made in Postmark's console is taken over as it is.
	require.True(t, b.env.Sim.AddIdentity(simulator.IdentityRequest{Kind: "mailz_email", Name: "console@pm.example", Verified: true}))
	con := identity(t, notifytest.Dash(t, b.env.Owner, "POST", base+"/email-addresses", map[string]any{"address": "console@pm.example"}), http.StatusCreated)
	require.Equal(t, "verified", con.Status)
	require.Equal(t, "verified", identity(t, notifytest.Dash(t, b.env.Owner, "GET", base+"/"+con.ID, nil), http.StatusOK).Status, "read back by its Postmark id")
	require.Len(t, b.env.Sim.Identities("mailz_email"), 4)

	for action, n := range map[string]int{"maily.email_identity.verify": 2, "maily.domain.connect": 1, "maily.domain.adopt": 1} {
		logs := notifytest.Audit(t, b.env.Owner, action)
		require.Len(t, logs, n, action)
		require.Equal(t, "mailz_email", logs[0].Payload["providerKind"])
	}
	require.Equal(t, true, notifytest.Audit(t, b.env.Owner, "maily.email_identity.verify")[0].Payload["existing"])
}
