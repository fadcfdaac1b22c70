package console_test

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/notifyd/notifyd/internal/mailcheck/dnstest"
	"github.com/notifyd/notifyd/internal/notifytest"
)

var dkimRowRE = regexp.MustCompile(`<tr class="record record-dkim"><td>dkim</td><td>CNAME</td><td class="mono">([^<]+)</td><td class="mono">([^<]+)</td>`)

// TestConsoleIdentities: an owner connects a domain of an SES
// (maily_email) provider on the simulator and sees its DNS records, checks
// them against the DNS test server, marks it verified at the simulator and
// refreshes; markup in a domain is refused and shown escaped; operators
// and viewers are refused (page and forged POST with a valid CSRF token);
// another workspace's provider is 404.
func TestConsoleIdentities(t *testing.T) {
	t.Parallel()
	dns := dnstest.Start(t)
	env := notifytest.StartDaemon(t, notifytest.WithDNSServer(dns.Addr))
	c := env.ConsoleLogin(t, env.Email, env.Password)
	cfg, err := json.Marshal(map[string]string{"base_url": env.SimURL, "maily_access_key_id": "AKIATEST",
		"maily_secret_access_key": "secret", "maily_region": "us-east-1", "maily_from_email": "news@console.example"})
	require.NoError(t, err)
	pid := registerInConsole(t, c, "maily_email", "SES", string(cfg))
	page := "/providers/" + pid + "/identities"

	_, body := c.Get(t, "/providers/"+pid)
	require.Contains(t, body, `href="`+page+`"`, "the provider page links the identities")
	resp, body := c.Get(t, page)
	require.Equal(t, http.StatusOK, resp.StatusCode, body)
	require.Contains(t, body, `id="no-identities"`)
	require.Contains(t, body, `id="sender-state" class="status-failed">not verified`)
	require.Contains(t, body, "maily_from_email news@console.example is neither a verified address nor on a verified domain")

	// Connect: three DKIM CNAMEs, the MAIL FROM MX and its SPF to publish.
	resp, body = c.Post(t, page+"/domains", url.Values{"domain": {"Console.Example"}, "mailFromSubdomain": {"mail"}})
	require.Equal(t, http.StatusSeeOther, resp.StatusCode, body)
	require.True(t, strings.HasPrefix(resp.Header.Get("Location"), page+"#identity-"), resp.Header.Get("Location"))
	_, body = c.Get(t, page)
	require.Contains(t, body, `<span class="mono identity-name">console.example</span> <span class="identity-status status-pending">pending</span>`)
	dkim := dkimRowRE.FindAllStringSubmatch(body, -1)
	require.Len(t, dkim, 3, body)
	for _, m := range dkim {
		require.True(t, strings.HasSuffix(m[1], "._domainkey.console.example"), m[1])
		require.True(t, strings.HasSuffix(m[2], ".dkim.amazonses.com"), m[2])
	}
	require.Contains(t, body, `<tr class="record record-mail_from_mx"><td>mail_from_mx</td><td>MX</td><td class="mono">mail.console.example</td><td class="mono">10 feedback-smtp.us-east-1.amazonses.com</td>`)
	require.Contains(t, body, `<td class="mono">v=spf1 include:amazonses.com ~all</td>`)
	m := regexp.MustCompile(`id="identity-([^"]+)"`).FindStringSubmatch(body)
	require.NotNil(t, m)
	iid := m[1]

	// DNS check: one DKIM record published, one wrong, SPF without the
	// vendor, no DMARC.
	dns.Add(t, dkim[0][1]+". 300 IN CNAME "+dkim[0][2]+".")
	dns.Add(t, dkim[1][1]+". 300 IN CNAME elsewhere.example.")
	dns.Add(t, `mail.console.example. 300 IN TXT "v=spf1 include:_spf.google.com ~all"`)
	resp, body = c.Get(t, page+"/"+iid+"/dns")
	require.Equal(t, http.StatusOK, resp.StatusCode, body)
	require.Equal(t, []string{"present", "different", "missing", "missing", "different"}, dnsStatuses(body))
	require.Regexp(t, `<tr id="dns-spf">.*<td class="dns-different">different</td>`, body)
	require.Regexp(t, `<tr id="dns-dmarc">.*<td class="dns-missing">missing</td>`, body)
	require.Contains(t, body, "SPF of mail.console.example does not include include:amazonses.com")
	require.Contains(t, body, "No DMARC record at _dmarc.console.example")
	require.Contains(t, body, "elsewhere.example")

	// Verified at the vendor: refresh reads it, the sender is now covered.
	simVerify(t, env, "maily_email", "console.example")
	resp, body = c.Post(t, page+"/"+iid+"/refresh", nil)
	require.Equal(t, http.StatusSeeOther, resp.StatusCode, body)
	_, body = c.Get(t, page)
	require.Contains(t, body, `<span class="identity-status status-verified">verified</span>`)
	require.Contains(t, body, "refreshed: verified")
	require.Contains(t, body, `id="sender-state" class="status-sent">verified`)
	require.NotContains(t, body, `id="sender-warning"`)

	// An address to verify: tracked, pending.
	resp, body = c.Post(t, page+"/email-addresses", url.Values{"address": {"Hello@Console.Example"}})
	require.Equal(t, http.StatusSeeOther, resp.StatusCode, body)
	_, body = c.Get(t, page)
	require.Contains(t, body, `<span class="mono identity-name">hello@console.example</span> <span class="identity-status status-pending">pending</span>`)

	// Identities are for e-mail providers: an SMS provider has no link
	// and its page is 400.
	sms := registerInConsole(t, c, "vendorb_sms", "SMS", simConfig(t, env, "s"))
	_, body = c.Get(t, "/providers/"+sms)
	require.NotContains(t, body, `id="identities-link"`)
	resp, body = c.Get(t, "/providers/"+sms+"/identities")
	require.Equal(t, http.StatusBadRequest, resp.StatusCode, body)
	require.Contains(t, body, "Sending identities apply to email providers")

	// Markup in a domain: refused, and the refilled form escapes it.
	evil := `<script>alert(1)</script>.example`
	resp, body = c.Post(t, page+"/domains", url.Values{"domain": {evil}})
	require.Equal(t, http.StatusBadRequest, resp.StatusCode, body)
	require.Contains(t, body, "domain must be a domain name")
	require.NotContains(t, body, evil)
	require.Contains(t, body, `value="&lt;script&gt;alert(1)&lt;/script&gt;.example"`)
	resp, body = c.Post(t, page+"/domains/adopt", url.Values{"domain": {evil}})
	require.Equal(t, http.StatusBadRequest, resp.StatusCode, body)
	require.NotContains(t, body, evil)

	// Owner and admin only, reads included.
	admin := env.ConsoleMember(t, "admin")
	resp, body = admin.Get(t, page)
	require.Equal(t, http.StatusOK, resp.StatusCode, body)
	require.Contains(t, body, `id="connect-domain"`)
	for _, role := range []string{"operator", "viewer"} {
		s := env.ConsoleMember(t, role)
		_, body = s.Get(t, "/providers/"+pid)
		require.NotContains(t, body, `id="identities-link"`, role)
		for _, p := range []string{page, page + "/" + iid + "/dns"} {
			resp, body = s.Get(t, p)
			require.Equal(t, http.StatusForbidden, resp.StatusCode, "%s GET %s", role, p)
			require.Contains(t, body, "Role "+role+" is not allowed")
		}
		s.Get(t, "/")
		for _, p := range []string{page + "/domains", page + "/domains/adopt", page + "/email-addresses", page + "/" + iid + "/refresh"} {
			resp, body = s.Post(t, p, url.Values{"domain": {"forged.example"}, "address": {"a@forged.example"}})
			require.Equal(t, http.StatusForbidden, resp.StatusCode, "%s's forged POST %s with a valid CSRF token", role, p)
			require.Contains(t, body, "Role "+role+" is not allowed")
		}
	}
	_, body = c.Get(t, page)
	require.NotContains(t, body, "forged.example", "the refused writes changed nothing")

	// Another workspace's provider is 404.
	env.NewWorkspace(t, "Other", "other-ident@example.com")
	other := env.ConsoleLogin(t, "other-ident@example.com", "correct horse battery")
	for _, p := range []string{page, page + "/" + iid + "/dns"} {
		resp, _ = other.Get(t, p)
		require.Equal(t, http.StatusNotFound, resp.StatusCode, "another workspace's %s", p)
	}
	other.Get(t, "/")
	for _, p := range []string{page + "/domains", page + "/" + iid + "/refresh"} {
		resp, _ = other.Post(t, p, url.Values{"domain": {"other.example"}})
		require.Equal(t, http.StatusNotFound, resp.StatusCode, "another workspace's POST %s", p)
	}
}

var dnsStatusRE = regexp.MustCompile(`<tr class="dns-record">.*?<td class="dns-[a-z]+">([a-z]+)</td></tr>`)

// dnsStatuses answers the statuses of the DNS check's record rows.
func dnsStatuses(body string) []string {
	var out []string
	for _, m := range dnsStatusRE.FindAllStringSubmatch(body, -1) {
		out = append(out, m[1])
	}
	return out
}

// simVerify marks an identity verified at the simulator's control API.
func simVerify(t *testing.T, env *notifytest.Env, kind, name string) {
	t.Helper()
	b, err := json.Marshal(map[string]any{"kind": kind, "name": name})
	require.NoError(t, err)
	r, err := http.Post(env.SimURL+"/_sim/identities/verify", "application/json", bytes.NewReader(b))
	require.NoError(t, err)
	_ = r.Body.Close()
	require.Equal(t, http.StatusOK, r.StatusCode)
}
