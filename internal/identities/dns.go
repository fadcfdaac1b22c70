package identities

import (
	"context"
	"strconv"
	"strings"

	"github.com/notifyd/notifyd/internal/notify"
	"github.com/notifyd/notifyd/internal/usecase"
)

// DNS check states of one record.
const (
	dnsPresent   = "present"   // published as the vendor asks
	dnsMissing   = "missing"   // no record of that type at the name
	dnsDifferent = "different" // records there, but not the one asked for
	dnsUnknown   = "unknown"   // the lookup failed (timeout, SERVFAIL)
)

// RecordCheck is one record of a DNS check: what the vendor asks for,
// what DNS answered, and how they compare.
type RecordCheck struct {
	notify.DNSRecord
	Status string
	// Found holds only the answers of the kind looked for (SPF records
	// for spf, v=DMARC1 records for dmarc, DKIM keys for a DKIM TXT, the
	// CNAME target, the MX hosts): whatever else the resolver knows at
	// the name is no business of the tenant's (issue 29, finding 7).
	Found []string
}

// DNSCheck is the DNS check of a domain identity: its required records,
// SPF (does the envelope domain's SPF include the vendor?) and DMARC.
type DNSCheck struct {
	Identity *notify.SendingIdentity
	Records  []RecordCheck
	SPF      RecordCheck // Value holds the include: mechanism looked for
	DMARC    RecordCheck
	Warnings []string
}

// CheckIdentityDNS looks up every record a domain identity needs through
// the configured resolver (NOTIFYD_DNS_SERVER) and compares. No vendor
// call: the records are those last read from the vendor.
func (s *Service) CheckIdentityDNS(ctx context.Context, a *usecase.Actor, providerID, identityID string) (*DNSCheck, error) {
	if !usecase.Storable(providerID) {
		return nil, notify.NotFound("Provider")
	}
	err := s.Store.View(ctx, func(tx notify.Tx) error {
		_, err := tx.FindProviderAccount(ctx, a.WorkspaceID, providerID)
		return usecase.NotFound(err, "Provider")
	})
	if err != nil {
		return nil, err
	}
	si, err := s.findIdentity(ctx, a, providerID, identityID)
	if err != nil {
		return nil, err
	}
	if si.Type != notify.IdentityDomain {
		return nil, notify.Invalid("The DNS check applies to domain identities; %s is an email address", si.Name)
	}
	// Connect and adopt refuse such names; one stored before they did is
	// not looked up either.
	for _, d := range []string{si.Name, si.MailFromDomain} {
		if err := publicDomain("The checked domain", d); d != "" && err != nil {
			return nil, err
		}
	}
	out := &DNSCheck{Identity: si}
	for _, r := range si.Records {
		c := s.checkRecord(ctx, r, si.SPFInclude)
		out.Records = append(out.Records, c)
		switch c.Status {
		case dnsMissing:
			out.Warnings = append(out.Warnings, r.Type+" record "+r.Name+" ("+r.Purpose+") is not published")
		case dnsDifferent:
			out.Warnings = append(out.Warnings, r.Type+" record "+r.Name+" ("+r.Purpose+") does not hold the value the vendor asks for")
		case dnsUnknown:
			out.Warnings = append(out.Warnings, r.Type+" record "+r.Name+" could not be looked up")
		}
	}
	spfName := si.MailFromDomain
	if spfName == "" {
		spfName = si.Name
	}
	out.SPF = s.checkRecord(ctx, notify.DNSRecord{Purpose: "spf", Type: "TXT", Name: spfName, Value: "include:" + si.SPFInclude}, si.SPFInclude)
	if out.SPF.Status != dnsPresent {
		out.Warnings = append(out.Warnings, "SPF of "+spfName+" does not include include:"+si.SPFInclude+" ("+out.SPF.Status+")")
	}
	dmarcName := "_dmarc." + si.Name
	out.DMARC = s.checkRecord(ctx, notify.DNSRecord{Purpose: "dmarc", Type: "TXT", Name: dmarcName, Value: "v=DMARC1; p=none;"}, "")
	if out.DMARC.Status != dnsPresent {
		out.Warnings = append(out.Warnings, "No DMARC record at "+dmarcName+": publish one such as \"v=DMARC1; p=none;\"")
	}
	return out, nil
}

// checkRecord looks one record up and compares: CNAME targets and MX
// hosts exactly (case and trailing dot aside), DKIM TXT values with white
// space ignored, SPF by its include: mechanism, DMARC by its v=DMARC1 tag.
// Only the answers of the kind looked for (relevant) count and are shown:
// present when one matches, different when some exist but none matches.
func (s *Service) checkRecord(ctx context.Context, r notify.DNSRecord, spfInclude string) RecordCheck {
	c := RecordCheck{DNSRecord: r}
	found, err := s.dns.Lookup(ctx, r.Type, r.Name)
	if err != nil {
		c.Status = dnsUnknown
		return c
	}
	var match func(string) bool
	relevant := func(string) bool { return true } // CNAME targets, MX hosts
	switch {
	case r.Purpose == "spf":
		relevant = func(v string) bool { return strings.HasPrefix(strings.ToLower(v), "v=spf1") }
		match = func(v string) bool { return spfIncludes(v, spfInclude) }
	case r.Purpose == "dmarc":
		relevant = func(v string) bool { return strings.HasPrefix(strings.ToUpper(strings.TrimSpace(v)), "V=DMARC1") }
		match = relevant
	case r.Type == "TXT":
		want := squash(r.Value)
		match = func(v string) bool { return squash(v) == want }
		relevant = match
		if r.Purpose == "dkim" {
			relevant = dkimKey
		}
	case r.Type == "MX":
		want := strconv.Itoa(r.Priority) + " " + strings.ToLower(strings.TrimSuffix(r.Value, "."))
		match = func(v string) bool { return v == want }
	default:
		want := strings.ToLower(strings.TrimSuffix(r.Value, "."))
		match = func(v string) bool { return v == want }
	}
	c.Status, c.Found = dnsMissing, []string{}
	for _, v := range found {
		switch {
		case match(v):
			c.Status = dnsPresent
		case !relevant(v):
			continue
		case c.Status == dnsMissing:
			c.Status = dnsDifferent
		}
		c.Found = append(c.Found, v)
	}
	return c
}

// dkimKey reports whether a TXT value is a DKIM key record (RFC 6376
// 3.6.1: a v=DKIM1 tag first, or a p= tag).
func dkimKey(v string) bool {
	v = squash(v)
	if len(v) >= 7 && strings.EqualFold(v[:7], "v=DKIM1") {
		return true
	}
	for _, tag := range strings.Split(v, ";") {
		if strings.HasPrefix(tag, "p=") {
			return true
		}
	}
	return false
}

// spfIncludes reports whether an SPF record has include:<domain>.
func spfIncludes(spf, domain string) bool {
	for _, term := range strings.Fields(strings.ToLower(spf)) {
		if strings.TrimLeft(term, "+~?") == "include:"+strings.ToLower(domain) {
			return true
		}
	}
	return false
}

// squash drops quotes and white space, which DNS consoles add or split.
func squash(v string) string {
	return strings.Map(func(r rune) rune {
		if r == '"' || r == ' ' || r == '\t' {
			return -1
		}
		return r
	}, v)
}
