package identities_test

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/notifyd/notifyd/client"
	"github.com/notifyd/notifyd/internal/notifytest"
	"github.com/notifyd/notifyd/internal/simulator"
)

func jsonBody(v any) io.Reader {
	b, _ := json.Marshal(v)
	return bytes.NewReader(b)
}

// sesRecords are the records of an SES domain with a custom MAIL FROM:
// three Easy DKIM CNAMEs, the MAIL FROM MX and its SPF TXT.
func requireSESRecords(t *testing.T, id identityOut, domain string) {
	t.Helper()
	require.Len(t, id.Records, 5, "%+v", id.Records)
	for _, r := range id.Records[:3] {
		require.Equal(t, "dkim", r.Purpose)
		require.Equal(t, "CNAME", r.Type)
		token := strings.TrimSuffix(r.Name, "._domainkey."+domain)
		require.NotEqual(t, r.Name, token, "DKIM name %s", r.Name)
		require.Equal(t, token+".dkim.amazonses.com", r.Value)
	}
	require.Equal(t, recordOut{Purpose: "mail_from_mx", Type: "MX", Name: "mail." + domain, Value: "feedback-smtp.us-east-1.amazonses.com", Priority: 10}, id.Records[3])
	require.Equal(t, recordOut{Purpose: "spf", Type: "TXT", Name: "mail." + domain, Value: "v=spf1 include:amazonses.com ~all"}, id.Records[4])
}

// TestSESIdentities: verify an address, connect a domain and read its
// records, see both pending, mark them verified at the simulator, see them
// verified; adopt a verified domain; each write audited with SPEC's action
// names; registration and test-send warn about an unverified sender.
func TestSESIdentities(t *testing.T) {
	t.Parallel()
	b := setup(t)
	pid, warning := b.register(t, "maily_email", b.emailConfig("maily_email", "news@example.com"))
	require.Contains(t, warning, `199 notifyd "maily_from_email news@example.com is neither a verified address nor on a verified domain`)
	base := "/v1/providers/" + pid + "/identities"

	// Nothing tracked yet: the sender is not verified.
	l := b.list(t, pid)
	require.Empty(t, l.Identities)
	require.Equal(t, "news@example.com", *l.Sender.Address)
	require.False(t, l.Sender.Verified)
	require.Contains(t, *l.Sender.Warning, "POST /v1/providers/"+pid+"/identities/email-addresses")

	// A test-send from the unverified sender is warned about.
	ts := map[string]any{"mode": "test", "recipient": map[string]any{"address": "to@example.net"}, "content": map[string]any{"title": "t", "text": "x"}}
	r := notifytest.Dash(t, b.env.Owner, "POST", "/v1/providers/"+pid+"/test-send", ts)
	require.Equal(t, http.StatusOK, r.Status, string(r.Body))
	require.Contains(t, r.Header.Get("Warning"), "maily_from_email news@example.com is neither")
	// ... and a vendor refusal says why it likely happened.
	fault := map[string]any{"kind": "maily_email", "vendorCode": "MessageRejected"}
	fr, err := http.Post(b.env.SimURL+"/_sim/faults", "application/json", jsonBody(fault))
	require.NoError(t, err)
	_ = fr.Body.Close()
	p := notifytest.RequireProblem(t, notifytest.Dash(t, b.env.Owner, "POST", "/v1/providers/"+pid+"/test-send", ts), http.StatusBadGateway, "SVC-50200")
	require.Contains(t, p.Detail, "Email address is not verified")
	require.Contains(t, p.Detail, "maily_from_email news@example.com is neither a verified address nor on a verified domain")

	// Verify the address: CreateEmailIdentity, pending until the link is clicked.
	addr := identity(t, notifytest.Dash(t, b.env.Owner, "POST", base+"/email-addresses", map[string]any{"address": " News@Example.com "}), http.StatusCreated)
	require.Equal(t, "email_address", addr.Type)
	require.Equal(t, "news@example.com", addr.Name)
	require.Equal(t, "pending", addr.Status)
	require.Equal(t, "verify", addr.Origin)
	require.Empty(t, addr.Records)
	require.Nil(t, addr.VerifiedAt)
	simIDs := b.env.Sim.Identities("maily_email")
	require.Len(t, simIDs, 1)
	require.Equal(t, "news@example.com", simIDs[0].Name)

	// Connect a domain with a custom MAIL FROM: Easy DKIM records and the
	// MAIL FROM records to publish.
	dom := identity(t, notifytest.Dash(t, b.env.Owner, "POST", base+"/domains", map[string]any{"domain": "Example.org.", "mailFromSubdomain": "mail"}), http.StatusCreated)
	require.Equal(t, "domain", dom.Type)
	require.Equal(t, "example.org", dom.Name)
	require.Equal(t, "pending", dom.Status)
	require.Equal(t, "connect", dom.Origin)
	require.Equal(t, "mail.example.org", *dom.MailFromDomain)
	require.Equal(t, "amazonses.com", *dom.SPFInclude)
	requireSESRecords(t, dom, "example.org")

	// Read back: still pending.
	got := identity(t, notifytest.Dash(t, b.env.Owner, "GET", base+"/"+dom.ID, nil), http.StatusOK)
	require.Equal(t, "pending", got.Status)
	require.Equal(t, dom.Records, got.Records)

	// The simulator sees the DNS records and the click: verified.
	b.simVerify(t, "maily_email", "example.org")
	got = identity(t, notifytest.Dash(t, b.env.Owner, "GET", base+"/"+dom.ID, nil), http.StatusOK)
	require.Equal(t, "verified", got.Status)
	require.NotNil(t, got.VerifiedAt)
	// The sender is on example.com, not example.org: still unverified.
	require.False(t, b.list(t, pid).Sender.Verified)
	b.simVerify(t, "maily_email", "news@example.com")
	require.Equal(t, "verified", identity(t, notifytest.Dash(t, b.env.Owner, "GET", base+"/"+addr.ID, nil), http.StatusOK).Status)
	l = b.list(t, pid)
	require.Len(t, l.Identities, 2)
	require.True(t, l.Sender.Verified)
	require.Equal(t, addr.ID, *l.Sender.IdentityID)
	require.Nil(t, l.Sender.Warning)
	r = notifytest.Dash(t, b.env.Owner, "POST", "/v1/providers/"+pid+"/test-send", ts)
	require.Equal(t, http.StatusOK, r.Status, string(r.Body))
	require.Empty(t, r.Header.Get("Warning"), "a verified sender is not warned about")

	// Adopt a domain verified in the SES console: not created again.
	require.True(t, b.env.Sim.AddIdentity(simulator.IdentityRequest{Kind: "maily_email", Name: "adopted.example", Verified: true}))
	ad := identity(t, notifytest.Dash(t, b.env.Owner, "POST", base+"/domains/adopt", map[string]any{"domain": "adopted.example"}), http.StatusCreated)
	require.Equal(t, "verified", ad.Status)
	require.Equal(t, "adopt", ad.Origin)
	require.Len(t, ad.Records, 3)
	require.NotNil(t, ad.VerifiedAt)
	// A domain the account lacks, or has not verified, is not adopted.
	notifytest.RequireProblem(t, notifytest.Dash(t, b.env.Owner, "POST", base+"/domains/adopt", map[string]any{"domain": "unknown.example"}), http.StatusConflict, "SVC-40900")
	require.True(t, b.env.Sim.AddIdentity(simulator.IdentityRequest{Kind: "maily_email", Name: "pending.example"}))
	p = notifytest.RequireProblem(t, notifytest.Dash(t, b.env.Owner, "POST", base+"/domains/adopt", map[string]any{"domain": "pending.example"}), http.StatusConflict, "SVC-40900")
	require.Contains(t, p.Detail, "not verified")
	// Connecting a domain the account has already reads it back.
	pe := identity(t, notifytest.Dash(t, b.env.Owner, "POST", base+"/domains", map[string]any{"domain": "pending.example"}), http.StatusCreated)
	require.Equal(t, "pending", pe.Status)
	require.Len(t, pe.Records, 3)
	// What the provider tracks already: 409 before any vendor call.
	for path, body := range map[string]any{"/domains": map[string]any{"domain": "example.org"}, "/domains/adopt": map[string]any{"domain": "adopted.example"},
		"/email-addresses": map[string]any{"address": "news@example.com"}} {
		notifytest.RequireProblem(t, notifytest.Dash(t, b.env.Owner, "POST", base+path, body), http.StatusConflict, "SVC-40900")
	}

	// Audited with SPEC's action names, by the owner, target the provider.
	for action, names := range map[string][]string{"maily.email_identity.verify": {"news@example.com"},
		"maily.domain.connect": {"pending.example", "example.org"}, "maily.domain.adopt": {"adopted.example"}} {
		logs := notifytest.Audit(t, b.env.Owner, action)
		require.Len(t, logs, len(names), action)
		for i, l := range logs {
			require.NotNil(t, l.ActorUserID)
			require.Equal(t, "provider", l.TargetType)
			require.Equal(t, pid, l.TargetID)
			require.Equal(t, names[i], l.Payload["identity"])
			require.Equal(t, "maily_email", l.Payload["providerKind"])
		}
	}
	require.Equal(t, "mail.example.org", notifytest.Audit(t, b.env.Owner, "maily.domain.connect")[1].Payload["mailFromDomain"])
	require.Equal(t, true, notifytest.Audit(t, b.env.Owner, "maily.domain.connect")[0].Payload["existing"])
}

// TestIdentityAccess: roles owner and admin only; another workspace's
// provider and unknown ids answer 404; bad input 400.
func TestIdentityAccess(t *testing.T) {
	t.Parallel()
	b := setup(t)
	pid, _ := b.register(t, "maily_email", b.emailConfig("maily_email", "news@example.com"))
	base := "/v1/providers/" + pid + "/identities"
	dom := identity(t, notifytest.Dash(t, b.env.Owner, "POST", base+"/domains", map[string]any{"domain": "access.example"}), http.StatusCreated)

	routes := []struct {
		method, path string
		body         any
	}{
		{"GET", base, nil},
		{"POST", base + "/email-addresses", map[string]any{"address": "a@access.example"}},
		{"POST", base + "/domains", map[string]any{"domain": "b.access.example"}},
		{"POST", base + "/domains/adopt", map[string]any{"domain": "c.access.example"}},
		{"GET", base + "/" + dom.ID, nil},
		{"GET", base + "/" + dom.ID + "/dns", nil},
	}
	viewer, operator, admin := b.env.Member(t, "viewer"), b.env.Member(t, "operator"), b.env.Member(t, "admin")
	for _, rt := range routes {
		for role, c := range map[string]*client.Client{"viewer": viewer, "operator": operator} {
			p := notifytest.RequireProblem(t, notifytest.Dash(t, c, rt.method, rt.path, rt.body), http.StatusForbidden, "SVC-40300")
			require.Contains(t, p.Detail, role, "%s %s", rt.method, rt.path)
		}
		r := notifytest.Dash(t, admin, rt.method, rt.path, rt.body)
		require.NotContains(t, []int{401, 403, 404}, r.Status, "%s %s as admin: %s", rt.method, rt.path, r.Body)
		require.Less(t, r.Status, 500, "%s %s as admin: %s", rt.method, rt.path, r.Body)
	}
	require.Len(t, notifytest.Audit(t, b.env.Owner, "maily.email_identity.verify"), 1, "the admin's verify is audited")

	// Another workspace's provider, or its identity, is 404, as are unknown ids.
	other, _ := b.env.NewWorkspace(t, "Other", "other-owner@example.com")
	for _, rt := range routes {
		notifytest.RequireProblem(t, notifytest.Dash(t, other, rt.method, rt.path, rt.body), http.StatusNotFound, "SVC-40400")
	}
	notifytest.RequireProblem(t, notifytest.Dash(t, b.env.Owner, "GET", base+"/00000000-0000-7000-8000-000000000000", nil), http.StatusNotFound, "SVC-40400")
	notifytest.RequireProblem(t, notifytest.Dash(t, b.env.Owner, "GET", "/v1/providers/00000000-0000-7000-8000-000000000000/identities", nil), http.StatusNotFound, "SVC-40400")
	notifytest.RequireProblem(t, notifytest.Dash(t, b.env.Owner, "GET", base+"/not-an-id/dns", nil), http.StatusNotFound, "SVC-40400")

	// Bad input: 400.
	sms, _ := b.register(t, "vendora_sms", map[string]string{"vendora_user_id": "u", "vendora_api_key": "k", "vendora_sender": "0212345678"})
	for _, c := range []struct {
		path string
		body any
	}{
		{base + "/email-addresses", map[string]any{"address": "not an address"}},
		{base + "/email-addresses", map[string]any{}},
		{base + "/email-addresses", map[string]any{"address": "a@b.example", "x": 1}},
		{base + "/domains", map[string]any{"domain": "no_dots"}},
		{base + "/domains", map[string]any{"domain": "ok.example", "mailFromSubdomain": "a.b"}},
		{base + "/domains", map[string]any{"domain": "ok.example", "mailFromSubdomain": "-x"}},
		{base + "/domains/adopt", map[string]any{"domain": "user@ok.example"}},
		{"/v1/providers/" + sms + "/identities/domains", map[string]any{"domain": "ok.example"}},
	} {
		notifytest.RequireProblem(t, notifytest.Dash(t, b.env.Owner, "POST", c.path, c.body), http.StatusBadRequest, "SVC-40000")
	}
	notifytest.RequireProblem(t, notifytest.Dash(t, b.env.Owner, "GET", "/v1/providers/"+sms+"/identities", nil), http.StatusBadRequest, "SVC-40000")
	addr := identity(t, notifytest.Dash(t, b.env.Owner, "POST", base+"/email-addresses", map[string]any{"address": "dns@access.example"}), http.StatusCreated)
	notifytest.RequireProblem(t, notifytest.Dash(t, b.env.Owner, "GET", base+"/"+addr.ID+"/dns", nil), http.StatusBadRequest, "SVC-40000")
	require.Empty(t, b.env.Sim.Identities("mailx_email"))
}
