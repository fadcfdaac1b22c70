package identities_test

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/notifyd/notifyd/internal/notify"
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

// TestDNSCheckShowsOnlyWhatItLooksFor: found holds the records of the kind
// the check looks for (SPF, DMARC, a DKIM key, the CNAME target, the MX),
// never the other TXT records the resolver knows at the name; those do
// not make a record "different" either (issue 29, finding 7).
func TestDNSCheckShowsOnlyWhatItLooksFor(t *testing.T) {
	t.Parallel()
	b := setup(t)
	pm, _ := b.register(t, "mailz_email", b.emailConfig("mailz_email", "news@quiet.example"))
	pd := identity(t, notifytest.Dash(t, b.env.Owner, "POST", "/v1/providers/"+pm+"/identities/domains", map[string]any{"domain": "quiet.example"}), http.StatusCreated)
	require.Len(t, pd.Records, 1)
	dkim := pd.Records[0]
	require.Equal(t, "TXT", dkim.Type)

	// Only foreign TXT records at every name looked up.
	const secret = "internal-token=s3cr3t"
	for _, name := range []string{"quiet.example", "_dmarc.quiet.example", dkim.Name} {
		b.dns.Add(t, name+`. 300 IN TXT "`+secret+`"`)
	}
	d := b.dnsCheck(t, pm, pd.ID)
	require.Equal(t, []string{"missing"}, statuses(d.Records), "a foreign TXT is not a DKIM key")
	require.Equal(t, "missing", d.SPF.Status)
	require.Equal(t, "missing", d.DMARC.Status)
	for _, r := range append(d.Records, d.SPF, d.DMARC) {
		require.Empty(t, r.Found, r.Name)
	}

	// The records looked for, wrong: shown, and different; the foreign
	// ones still not.
	b.dns.Add(t, `quiet.example. 300 IN TXT "v=spf1 include:_spf.google.com ~all"`)
	b.dns.Add(t, `_dmarc.quiet.example. 300 IN TXT "v=DMARC1; p=none"`)
	b.dns.Add(t, dkim.Name+`. 300 IN TXT "k=rsa; p=MIGfMA0GCSqGSIb3DQEBAQUAA4GNADCBiQKBgQDwrong"`)
	d = b.dnsCheck(t, pm, pd.ID)
	require.Equal(t, []string{"different"}, statuses(d.Records))
	require.Equal(t, []string{"k=rsa; p=MIGfMA0GCSqGSIb3DQEBAQUAA4GNADCBiQKBgQDwrong"}, d.Records[0].Found)
	require.Equal(t, "different", d.SPF.Status)
	require.Equal(t, []string{"v=spf1 include:_spf.google.com ~all"}, d.SPF.Found)
	require.Equal(t, "present", d.DMARC.Status)
	require.Equal(t, []string{"v=DMARC1; p=none"}, d.DMARC.Found)

	// Right: present, the wrong key still shown beside the right one.
	b.dns.Add(t, dkim.Name+`. 300 IN TXT "`+dkim.Value+`"`)
	d = b.dnsCheck(t, pm, pd.ID)
	require.Equal(t, []string{"present"}, statuses(d.Records))
	require.Len(t, d.Records[0].Found, 2)
	for _, r := range append(d.Records, d.SPF, d.DMARC) {
		require.NotContains(t, strings.Join(r.Found, "\n"), secret, r.Name)
	}
}

// TestPrivateDomains: a sending domain under a suffix of private networks
// is refused at connect and adopt, and a stored one is not looked up by
// the DNS check (issue 29, finding 7). .test and .example stay allowed.
func TestPrivateDomains(t *testing.T) {
	t.Parallel()
	b := setup(t)
	pid, _ := b.register(t, "maily_email", b.emailConfig("maily_email", "news@corp.example"))
	base := "/v1/providers/" + pid + "/identities"
	for _, d := range []string{"corp.internal", "Printer.LOCAL.", "nas.home.arpa", "router.lan", "app.localhost", "x.corp", "mail.intranet", "x.invalid"} {
		tld := strings.ToLower(strings.TrimSuffix(d, "."))
		tld = tld[strings.LastIndex(tld, ".")+1:]
		for _, path := range []string{"/domains", "/domains/adopt"} {
			p := notifytest.RequireProblem(t, notifytest.Dash(t, b.env.Owner, "POST", base+path, map[string]any{"domain": d}), http.StatusBadRequest, "SVC-40000")
			require.Equal(t, "domain must be a public domain name: ."+tld+" is a suffix of private networks", p.Detail, d)
		}
	}
	require.Empty(t, b.env.Sim.Identities("maily_email"), "no vendor call")
	identity(t, notifytest.Dash(t, b.env.Owner, "POST", base+"/domains", map[string]any{"domain": "corp.test"}), http.StatusCreated)

	// An identity stored before the rule: the check refuses to look it up.
	b.dns.Add(t, `corp.internal. 300 IN TXT "v=spf1 internal-only"`)
	now := time.Now()
	si := &notify.SendingIdentity{ID: "01900000-0000-7000-8000-00000000c0de", WorkspaceID: b.env.Workspace, ProviderAccountID: pid,
		Type: notify.IdentityDomain, Name: "corp.internal", Status: notify.IdentityPending, Origin: "connect", SPFInclude: "amazonses.com",
		Records: []notify.DNSRecord{}, CreatedAt: now, UpdatedAt: now, CheckedAt: now}
	require.NoError(t, b.env.Daemon.DB.Update(context.Background(), func(tx notify.Tx) error { return tx.CreateSendingIdentity(context.Background(), si) }))
	r := notifytest.Dash(t, b.env.Owner, "GET", base+"/"+si.ID+"/dns", nil)
	p := notifytest.RequireProblem(t, r, http.StatusBadRequest, "SVC-40000")
	require.Equal(t, "The checked domain must be a public domain name: .internal is a suffix of private networks", p.Detail)
	require.NotContains(t, string(r.Body), "internal-only")
}
