package mailcheck

import "strings"

// privateTLDs are top-level labels no public resolver answers for: names
// of private networks (ICANN's .internal, RFC 6762's .local and the
// suffixes its appendix G lists as in use, .localdomain), RFC 6761's
// .localhost and .invalid, and the special-use .arpa (home.arpa included),
// .onion and .alt. A sending domain under one of them cannot be a public
// mail domain, and looking it up would read the operator's own zones.
// .test and .example are not listed: nothing public answers for them
// either, but they are the names of documentation and test set-ups.
var privateTLDs = map[string]bool{
	"internal": true, "local": true, "localhost": true, "localdomain": true,
	"lan": true, "home": true, "corp": true, "intranet": true, "private": true,
	"invalid": true, "arpa": true, "onion": true, "alt": true,
}

// PrivateSuffix answers the top-level label of domain when it is one of a
// private or special-use network (internal, local, lan, home.arpa's arpa,
// …), else "". Single-label names are refused by Domain already.
func PrivateSuffix(domain string) string {
	d := strings.TrimSuffix(strings.ToLower(domain), ".")
	tld := d[strings.LastIndexByte(d, '.')+1:]
	if privateTLDs[tld] {
		return tld
	}
	return ""
}
