// Package dnstest runs a small authoritative DNS server on loopback for
// tests of mail domain checks. Test-only.
package dnstest

import (
	"net"
	"strings"
	"sync"
	"testing"

	"github.com/miekg/dns"
)

// Server answers from records given in zone-file syntax. A name without
// records answers NXDOMAIN; a name with records but none of the asked type
// answers NOERROR with no answer (NODATA); a name set with Fail answers
// SERVFAIL.
type Server struct {
	Addr string // host:port of the UDP and TCP listeners

	mu    sync.Mutex
	rrs   map[string][]dns.RR
	fails map[string]bool
}

// Start serves records (e.g. "mx.test. 300 IN MX 10 mail.mx.test.") on
// 127.0.0.1 until the test ends.
func Start(t testing.TB, records ...string) *Server {
	t.Helper()
	s := &Server{rrs: map[string][]dns.RR{}, fails: map[string]bool{}}
	for _, r := range records {
		s.Add(t, r)
	}
	pc, ln := listenPair(t)
	s.Addr = pc.LocalAddr().String()
	udp := &dns.Server{PacketConn: pc, Handler: s}
	tcp := &dns.Server{Listener: ln, Handler: s}
	go func() { _ = udp.ActivateAndServe() }()
	go func() { _ = tcp.ActivateAndServe() }()
	t.Cleanup(func() {
		_ = udp.Shutdown()
		_ = tcp.Shutdown()
	})
	return s
}

// Add adds one record in zone-file syntax.
func (s *Server) Add(t testing.TB, record string) {
	t.Helper()
	rr, err := dns.NewRR(record)
	if err != nil {
		t.Fatal(err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	name := strings.ToLower(rr.Header().Name)
	s.rrs[name] = append(s.rrs[name], rr)
}

// Fail makes every query of name (fully qualified) answer SERVFAIL.
func (s *Server) Fail(name string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.fails[strings.ToLower(dns.Fqdn(name))] = true
}

// ServeDNS implements dns.Handler.
func (s *Server) ServeDNS(w dns.ResponseWriter, req *dns.Msg) {
	m := new(dns.Msg)
	m.SetReply(req)
	m.Authoritative = true
	if len(req.Question) != 1 {
		m.Rcode = dns.RcodeFormatError
		_ = w.WriteMsg(m)
		return
	}
	q := req.Question[0]
	name := strings.ToLower(q.Name)
	s.mu.Lock()
	rrs, known := s.rrs[name]
	fail := s.fails[name]
	s.mu.Unlock()
	switch {
	case fail:
		m.Rcode = dns.RcodeServerFailure
	case !known:
		m.Rcode = dns.RcodeNameError
	default:
		for _, rr := range rrs {
			if rr.Header().Rrtype == q.Qtype {
				m.Answer = append(m.Answer, rr)
			}
		}
	}
	_ = w.WriteMsg(m)
}

// ClosedAddr returns a loopback UDP address where nothing listens, to
// stand for an unreachable resolver.
func ClosedAddr(t testing.TB) string {
	t.Helper()
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := pc.LocalAddr().String()
	_ = pc.Close()
	return addr
}

// listenPair opens UDP and TCP listeners on one loopback port. A free UDP
// port may be taken for TCP (an ephemeral port of another connection), so
// it tries a few ports before giving up.
func listenPair(t testing.TB) (net.PacketConn, net.Listener) {
	t.Helper()
	var lastErr error
	for range 20 {
		pc, err := net.ListenPacket("udp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		// TCP on the same port, for truncated answers.
		ln, err := net.Listen("tcp", pc.LocalAddr().String())
		if err == nil {
			return pc, ln
		}
		_ = pc.Close()
		lastErr = err
	}
	t.Fatal(lastErr)
	return nil, nil
}
