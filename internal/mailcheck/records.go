package mailcheck

import (
	"context"
	"fmt"
	"strconv"
	"strings"
)

// Lookup answers the records of type typ (CNAME, TXT or MX) at name, for
// the DNS check of sending domains: CNAME targets and MX hosts in lower
// case without the trailing dot, MX as "priority host", TXT with a
// record's strings joined. A name or type without records answers none
// and no error; an error means the answer is unknown (timeout, SERVFAIL).
func (c *Checker) Lookup(ctx context.Context, typ, name string) ([]string, error) {
	ctx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()
	fqdn := strings.TrimSuffix(name, ".") + "."
	var out []string
	var err error
	switch strings.ToUpper(typ) {
	case "CNAME":
		var target string
		if target, err = c.resolver.LookupCNAME(ctx, fqdn); err == nil {
			// A name without a CNAME that has address records answers itself.
			if t := host(target); t != host(fqdn) {
				out = append(out, t)
			}
		}
	case "TXT":
		out, err = c.resolver.LookupTXT(ctx, fqdn)
	case "MX":
		mxs, e := c.resolver.LookupMX(ctx, fqdn)
		for _, mx := range mxs {
			out = append(out, strconv.Itoa(int(mx.Pref))+" "+host(mx.Host))
		}
		err = e
	default:
		return nil, fmt.Errorf("record type %s is not checked", typ)
	}
	if err != nil {
		if notFound(err) {
			return nil, nil
		}
		return nil, err
	}
	return out, nil
}

func host(h string) string { return strings.ToLower(strings.TrimSuffix(h, ".")) }
