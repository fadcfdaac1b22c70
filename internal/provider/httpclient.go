package provider

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"sync"
	"syscall"
	"time"
)

// DefaultHTTPTimeout bounds one vendor call (redirects included) when
// HTTPOptions.Timeout is zero.
const DefaultHTTPTimeout = 10 * time.Second

// maxRedirects is how many redirects a vendor call follows; vendor APIs do
// not redirect in normal operation, so a long chain is a misconfiguration.
const maxRedirects = 3

// HTTPOptions configures NewHTTPClient.
type HTTPOptions struct {
	// AllowPrivate turns the SSRF guard off (NOTIFYD_ALLOW_PRIVATE_TARGETS),
	// for the simulator, tests and vendors on a private network.
	AllowPrivate bool
	// Timeout bounds a whole call, redirects included; zero means
	// DefaultHTTPTimeout.
	Timeout time.Duration

	// blocked and lookup replace the address policy and the resolver. Only
	// tests set them: every test server listens on loopback, so telling an
	// "allowed" server from a blocked one needs a policy that sees ports,
	// and a name resolving to loopback needs a fake resolver.
	blocked func(netip.AddrPort) bool
	lookup  func(ctx context.Context, host string) ([]netip.Addr, error)
	// interfaceAddrs replaces net.InterfaceAddrs (tests: a public address
	// of "this host").
	interfaceAddrs func() ([]net.Addr, error)
}

// NewHTTPClient returns the outbound client for vendor calls: a tuned
// transport that keeps connections alive per host, at most three redirects,
// and, unless opts.AllowPrivate, the SSRF guard. The guard checks the
// address actually dialled (net.Dialer.Control) rather than the host name,
// so DNS answers, rebinding and redirects cannot route around it; a refused
// dial fails with an error wrapping ErrBlockedTarget, which Do classifies as
// invalid_request.
func NewHTTPClient(opts HTTPOptions) *http.Client {
	timeout := opts.Timeout
	if timeout <= 0 {
		timeout = DefaultHTTPTimeout
	}
	g := &guard{blocked: opts.blocked, lookup: opts.lookup}
	if g.blocked == nil {
		own := &ownAddrs{list: opts.interfaceAddrs}
		if own.list == nil {
			own.list = net.InterfaceAddrs
		}
		g.blocked = func(ap netip.AddrPort) bool { return BlockedAddr(ap.Addr()) || own.has(ap.Addr()) }
	}
	g.dialer = net.Dialer{Timeout: timeout, KeepAlive: 30 * time.Second}
	if !opts.AllowPrivate {
		g.dialer.Control = g.control
	}
	tr := &http.Transport{
		// No proxy from the environment: through a proxy the guard would
		// see only the proxy's address, never the target's.
		Proxy:             nil,
		DialContext:       g.dial,
		ForceAttemptHTTP2: true,
		// Workers send to a handful of vendor hosts at high rates; the
		// default of 2 idle connections per host would make most calls
		// open a new connection (and TLS session) under load.
		MaxIdleConns:          1024,
		MaxIdleConnsPerHost:   256,
		IdleConnTimeout:       90 * time.Second,
		TLSHandshakeTimeout:   timeout,
		ExpectContinueTimeout: time.Second,
	}
	return &http.Client{
		Transport:     tr,
		Timeout:       timeout,
		CheckRedirect: checkRedirect,
	}
}

var defaultClient = sync.OnceValue(func() *http.Client {
	return NewHTTPClient(HTTPOptions{})
})

// DefaultHTTPClient is a shared guarded client with the default timeout, for
// adapters built with Deps.HTTP unset. It is shared so that such adapters
// still reuse connections.
func DefaultHTTPClient() *http.Client { return defaultClient() }

// checkRedirect follows at most maxRedirects redirects. Each one dials
// through the same transport, hence through the same guard.
func checkRedirect(req *http.Request, via []*http.Request) error {
	if len(via) > maxRedirects {
		return fmt.Errorf("stopped after %d redirects", maxRedirects)
	}
	return nil
}

type guard struct {
	dialer  net.Dialer
	blocked func(netip.AddrPort) bool
	lookup  func(ctx context.Context, host string) ([]netip.Addr, error)
}

// dial resolves with the injected resolver when there is one; the dialer's
// Control still checks every address it connects to.
func (g *guard) dial(ctx context.Context, network, addr string) (net.Conn, error) {
	if g.lookup == nil {
		return g.dialer.DialContext(ctx, network, addr)
	}
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, err
	}
	ips, err := g.lookup(ctx, host)
	if err != nil {
		return nil, err
	}
	if len(ips) == 0 {
		return nil, fmt.Errorf("lookup %s: no addresses", host)
	}
	var errs []error
	for _, ip := range ips {
		c, err := g.dialer.DialContext(ctx, network, net.JoinHostPort(ip.String(), port))
		if err == nil {
			return c, nil
		}
		errs = append(errs, err)
	}
	return nil, errors.Join(errs...)
}

// control runs after the name is resolved and before connect(2), with the
// literal address; anything unparsable is refused.
func (g *guard) control(network, address string, _ syscall.RawConn) error {
	ap, err := netip.ParseAddrPort(address)
	if err != nil {
		return fmt.Errorf("%w: %s", ErrBlockedTarget, address)
	}
	if g.blocked(ap) {
		return fmt.Errorf("%w: %s", ErrBlockedTarget, ap.Addr())
	}
	return nil
}

// ownAddrsTTL is how long the host's interface addresses are kept before
// they are listed again (an address can be added while the process runs).
const ownAddrsTTL = 30 * time.Second

// ownAddrs are the addresses of the host's own interfaces: a public one
// reaches the host's own services as surely as loopback does.
type ownAddrs struct {
	list func() ([]net.Addr, error)

	mu    sync.Mutex
	addrs map[netip.Addr]bool
	at    time.Time
}

func (o *ownAddrs) has(a netip.Addr) bool {
	a = a.WithZone("").Unmap()
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.addrs == nil || time.Since(o.at) > ownAddrsTTL {
		addrs, err := o.list()
		if err != nil && o.addrs != nil {
			return o.addrs[a] // keep the last good list
		}
		o.addrs, o.at = map[netip.Addr]bool{}, time.Now()
		for _, ad := range addrs {
			if p, err := netip.ParsePrefix(ad.String()); err == nil {
				o.addrs[p.Addr().WithZone("").Unmap()] = true
			}
		}
	}
	return o.addrs[a]
}

// blockedPrefixes are the ranges the guard refuses. Some overlap netip's
// predicates in BlockedAddr; they are listed anyway so the policy reads as
// one table.
var blockedPrefixes = []netip.Prefix{
	netip.MustParsePrefix("127.0.0.0/8"),     // loopback
	netip.MustParsePrefix("10.0.0.0/8"),      // private
	netip.MustParsePrefix("172.16.0.0/12"),   // private
	netip.MustParsePrefix("192.168.0.0/16"),  // private
	netip.MustParsePrefix("169.254.0.0/16"),  // link-local, cloud metadata 169.254.169.254
	netip.MustParsePrefix("100.64.0.0/10"),   // CGNAT shared space, often internal in clouds
	netip.MustParsePrefix("0.0.0.0/8"),       // "this network": 0.x.x.x reaches the local host on Linux
	netip.MustParsePrefix("192.0.0.0/24"),    // IETF protocol assignments
	netip.MustParsePrefix("198.18.0.0/15"),   // benchmarking networks
	netip.MustParsePrefix("192.0.2.0/24"),    // documentation (TEST-NET-1)
	netip.MustParsePrefix("198.51.100.0/24"), // documentation (TEST-NET-2)
	netip.MustParsePrefix("203.0.113.0/24"),  // documentation (TEST-NET-3)
	netip.MustParsePrefix("224.0.0.0/4"),     // multicast
	netip.MustParsePrefix("240.0.0.0/4"),     // reserved, broadcast included
	netip.MustParsePrefix("::/96"),           // ::, ::1 and deprecated IPv4-compatible ::a.b.c.d
	netip.MustParsePrefix("fc00::/7"),        // unique local
	netip.MustParsePrefix("fe80::/10"),       // link-local
	netip.MustParsePrefix("fec0::/10"),       // deprecated site-local
	netip.MustParsePrefix("ff00::/8"),        // multicast
	netip.MustParsePrefix("64:ff9b:1::/48"),  // local-use NAT64
	netip.MustParsePrefix("100::/64"),        // discard-only
	netip.MustParsePrefix("2001:db8::/32"),   // documentation
}

// Prefixes whose addresses embed an IPv4 address in their last 32 bits
// (well-known NAT64) or in bits 16-47 (6to4); the embedded address is judged.
var (
	nat64Prefix = netip.MustParsePrefix("64:ff9b::/96")
	sixToFour   = netip.MustParsePrefix("2002::/16")
)

// BlockedAddr reports whether the SSRF guard refuses a: loopback, private,
// link-local (cloud metadata included), unspecified, CGNAT, multicast,
// documentation and reserved ranges, in IPv4, IPv6 and IPv4-mapped IPv6
// form. The guard also refuses the host's own interface addresses.
func BlockedAddr(a netip.Addr) bool {
	if !a.IsValid() {
		return true
	}
	a = a.WithZone("").Unmap()
	if a.IsLoopback() || a.IsPrivate() || a.IsUnspecified() ||
		a.IsLinkLocalUnicast() || a.IsLinkLocalMulticast() ||
		a.IsInterfaceLocalMulticast() || a.IsMulticast() {
		return true
	}
	for _, p := range blockedPrefixes {
		if p.Contains(a) {
			return true
		}
	}
	if a.Is6() {
		b := a.As16()
		switch {
		case nat64Prefix.Contains(a):
			return BlockedAddr(netip.AddrFrom4([4]byte{b[12], b[13], b[14], b[15]}))
		case sixToFour.Contains(a):
			return BlockedAddr(netip.AddrFrom4([4]byte{b[2], b[3], b[4], b[5]}))
		}
	}
	return false
}
