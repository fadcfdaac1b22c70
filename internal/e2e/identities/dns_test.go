package identities_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/notifyd/notifyd/internal/notifytest"
)

type dnsOut struct {
	Identity identityOut `json:"identity"`
	Records  []recordOut `json:"records"`
	SPF      recordOut   `json:"spf"`
	DMARC    recordOut   `json:"dmarc"`
	Warnings []string    `json:"warnings"`
}

func (b *bundle) dnsCheck(t *testing.T, pid, id string) dnsOut {
	t.Helper()
	r := notifytest.Dash(t, b.env.Owner, "GET", "/v1/providers/"+pid+"/identities/"+id+"/dns", nil)
	require.Equal(t, http.StatusOK, r.Status, string(r.Body))
	var out dnsOut
	require.NoError(t, r.Decode(&out))
	return out
}

func statuses(rs []recordOut) []string {
	out := make([]string, len(rs))
	for i, r := range rs {
		out[i] = r.Status
	}
	return out
}

// TestDNSCheck looks the records of an SES domain up at the DNS test
// server (NOTIFYD_DNS_SERVER): present, missing and wrong records, SPF
// with and without the vendor, DMARC missing (a warning) then present.
func TestDNSCheck(t *testing.T) {
	t.Parallel()
	b := setup(t)
	pid, _ := b.register(t, "maily_email", b.emailConfig("maily_email", "news@dns.example"))
	base := "/v1/providers/" + pid + "/identities"
	dom := identity(t, notifytest.Dash(t, b.env.Owner, "POST", base+"/domains", map[string]any{"domain": "dns.example", "mailFromSubdomain": "mail"}), http.StatusCreated)
	requireSESRecords(t, dom, "dns.example")

	// Nothing published: every record missing, SPF missing, DMARC missing.
	d := b.dnsCheck(t, pid, dom.ID)
	require.Equal(t, []string{"missing", "missing", "missing", "missing", "missing"}, statuses(d.Records))
	require.Equal(t, "missing", d.SPF.Status)
	require.Equal(t, "mail.dns.example", d.SPF.Name)
	require.Equal(t, "missing", d.DMARC.Status)
	require.Len(t, d.Warnings, 7)

	// First DKIM CNAME right, second pointing elsewhere, third missing; the
	// MAIL FROM MX right; its SPF without amazonses.com.
	dk := dom.Records
	b.dns.Add(t, dk[0].Name+". 300 IN CNAME "+dk[0].Value+".")
	b.dns.Add(t, dk[1].Name+". 300 IN CNAME elsewhere.example.")
	b.dns.Add(t, "mail.dns.example. 300 IN MX 10 feedback-smtp.us-east-1.amazonses.com.")
	b.dns.Add(t, `mail.dns.example. 300 IN TXT "v=spf1 include:_spf.google.com ~all"`)
	d = b.dnsCheck(t, pid, dom.ID)
	require.Equal(t, []string{"present", "different", "missing", "present", "different"}, statuses(d.Records))
	require.Equal(t, []string{"elsewhere.example"}, d.Records[1].Found)
	require.Equal(t, []string{"10 feedback-smtp.us-east-1.amazonses.com"}, d.Records[3].Found)
	require.Equal(t, "different", d.SPF.Status, "SPF without the vendor")
	require.Equal(t, "include:amazonses.com", d.SPF.Value)
	require.Equal(t, "missing", d.DMARC.Status)
	warnings := strings.Join(d.Warnings, "\n")
	require.Contains(t, warnings, "SPF of mail.dns.example does not include include:amazonses.com")
	require.Contains(t, warnings, "No DMARC record at _dmarc.dns.example")
	require.Contains(t, warnings, "CNAME record "+dk[1].Name+" (dkim) does not hold the value")
	require.Contains(t, warnings, "CNAME record "+dk[2].Name+" (dkim) is not published")

	// Fixed: the SPF gains the vendor (in another TXT of the name), the
	// missing CNAME is published, DMARC too. The wrong CNAME stays wrong.
	b.dns.Add(t, dk[2].Name+". 300 IN CNAME "+strings.ToUpper(dk[2].Value)+".")
	b.dns.Add(t, `mail.dns.example. 300 IN TXT "v=spf1 include:amazonses.com " "~all"`)
	b.dns.Add(t, `_dmarc.dns.example. 300 IN TXT "v=DMARC1; p=quarantine; rua=mailto:d@dns.example"`)
	d = b.dnsCheck(t, pid, dom.ID)
	require.Equal(t, []string{"present", "different", "present", "present", "present"}, statuses(d.Records))
	require.Equal(t, "present", d.SPF.Status)
	require.Equal(t, "present", d.DMARC.Status)
	require.Len(t, d.Warnings, 1, "%v", d.Warnings)

	// A resolver that fails: unknown, not missing.
	b.dns.Fail("_dmarc.dns.example")
	require.Equal(t, "unknown", b.dnsCheck(t, pid, dom.ID).DMARC.Status)

	// Without a MAIL FROM, SPF is checked on the domain itself; Postmark's
	// DKIM is a TXT compared without its quoting and spacing.
	pm, _ := b.register(t, "mailz_email", b.emailConfig("mailz_email", "news@pmdns.example"))
	pd := identity(t, notifytest.Dash(t, b.env.Owner, "POST", "/v1/providers/"+pm+"/identities/domains", map[string]any{"domain": "pmdns.example"}), http.StatusCreated)
	require.Len(t, pd.Records, 1)
	v := pd.Records[0].Value
	b.dns.Add(t, pd.Records[0].Name+`. 300 IN TXT "`+v[:10]+`" "`+v[10:]+`"`)
	b.dns.Add(t, `pmdns.example. 300 IN TXT "v=spf1 a mx include:spf.mtasv.net ~all"`)
	d = b.dnsCheck(t, pm, pd.ID)
	require.Equal(t, []string{"present"}, statuses(d.Records))
	require.Equal(t, "pmdns.example", d.SPF.Name)
	require.Equal(t, "present", d.SPF.Status)
	require.Equal(t, "missing", d.DMARC.Status)
	require.Len(t, d.Warnings, 1)
}
