// Package mailcheck checks email addresses: their syntax, and by DNS
// whether their domain has a mail record (MX, falling back to A/AAAA).
package mailcheck

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/mail"
	"strings"
	"time"
)

// MaxAddress is the longest address accepted (SPEC: 320 characters).
const MaxAddress = 320

// Normalize trims and lower-cases an address, as it is stored.
func Normalize(addr string) string { return strings.ToLower(strings.TrimSpace(addr)) }

// Domain checks the syntax of a normalized address (local@domain, a dotted
// host name of letters, digits and hyphens) and returns its domain.
func Domain(addr string) (string, error) {
	bad := errors.New("address must be a valid email address")
	if addr == "" || len([]rune(addr)) > MaxAddress {
		return "", bad
	}
	at := strings.LastIndexByte(addr, '@')
	if at <= 0 || at == len(addr)-1 {
		return "", bad
	}
	// The local part is not held to RFC 5321's 64 octets: SPEC's limit is
	// the whole address (320).
	domain := addr[at+1:]
	if !validHost(domain) {
		return "", bad
	}
	// net/mail knows RFC 5322 local parts; requiring it to give the input
	// back refuses display names, comments and angle brackets.
	p, err := mail.ParseAddress(addr)
	if err != nil || p.Name != "" || !strings.EqualFold(p.Address, addr) {
		return "", bad
	}
	return domain, nil
}

// validHost reports whether d is a DNS host name with at least two labels
// and a non-numeric top-level label (no address literals).
func validHost(d string) bool {
	if len(d) > 253 {
		return false
	}
	labels := strings.Split(d, ".")
	if len(labels) < 2 {
		return false
	}
	for _, l := range labels {
		if l == "" || len(l) > 63 || l[0] == '-' || l[len(l)-1] == '-' {
			return false
		}
		for i := 0; i < len(l); i++ {
			c := l[i]
			if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-') {
				return false
			}
		}
	}
	tld := labels[len(labels)-1]
	return strings.Trim(tld, "0123456789") != ""
}

// ErrNoMail means DNS answered definitively that the domain cannot
// receive mail.
var ErrNoMail = errors.New("domain cannot receive mail")

// Checker looks domains up. The zero value uses the system resolver.
type Checker struct {
	resolver *net.Resolver
	timeout  time.Duration
}

// New returns a Checker asking server (host:port), or the system resolver
// when server is empty. timeout bounds one whole check (default 5s).
func New(server string, timeout time.Duration) *Checker {
	if timeout <= 0 {
		timeout = 5 * time.Second
	}
	c := &Checker{resolver: net.DefaultResolver, timeout: timeout}
	if server != "" {
		var d net.Dialer
		c.resolver = &net.Resolver{PreferGo: true, Dial: func(ctx context.Context, network, _ string) (net.Conn, error) {
			return d.DialContext(ctx, network, server)
		}}
	}
	return c
}

// Check reports whether domain can receive mail. It returns nil when it
// can, an error wrapping ErrNoMail when DNS says it cannot (NXDOMAIN, or
// no MX and no address record), and any other error when the
// answer is unknown (timeout, SERVFAIL, no resolver reachable): callers
// fail open on those.
func (c *Checker) Check(ctx context.Context, domain string) error {
	ctx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()
	// Fully qualified, so the resolver's search domains are never appended.
	fqdn := strings.TrimSuffix(domain, ".") + "."
	tld := fqdn[strings.LastIndexByte(fqdn[:len(fqdn)-1], '.')+1:]
	// RFC 6761: these names never exist, whatever a resolver says.
	if tld == "invalid." || tld == "localhost." {
		return fmt.Errorf("%w: %s is a reserved name", ErrNoMail, domain)
	}
	mxs, err := c.resolver.LookupMX(ctx, fqdn)
	switch {
	case err == nil && len(mxs) > 0:
		// SPEC checks that an MX record exists. A null MX (RFC 7505, "0 .")
		// counts: the reserved documentation domains such as example.com
		// publish one, and refusing them would refuse every example
		// address wherever DNS is reachable.
		return nil
	case err != nil && !notFound(err):
		return fmt.Errorf("mx lookup of %s: %w", domain, err)
	}
	// No MX: RFC 5321 section 5.1 delivers to the address records.
	ips, err := c.resolver.LookupIPAddr(ctx, fqdn)
	switch {
	case err == nil && len(ips) > 0:
		return nil
	case err != nil && !notFound(err):
		return fmt.Errorf("address lookup of %s: %w", domain, err)
	}
	// A resolver that does not know the top-level domain either has no view
	// of the public DNS (an offline or filtering resolver answering NXDOMAIN
	// for everything): its "not found" says nothing about the domain, so the
	// answer is unknown and callers fail open.
	if _, err := c.resolver.LookupNS(ctx, tld); err != nil {
		return fmt.Errorf("resolver does not know the top-level domain of %s: %w", domain, err)
	}
	return fmt.Errorf("%w: %s has no MX and no address record", ErrNoMail, domain)
}

func notFound(err error) bool {
	var de *net.DNSError
	return errors.As(err, &de) && de.IsNotFound
}
