package chaosrun

import (
	"io"
	"net"
	"sync"
)

// Proxy forwards TCP connections to a target: the processes reach
// PostgreSQL through it. Down closes the listener and every connection
// (a server going away: connections reset, then refused); Up listens
// again on the same address.
type Proxy struct {
	target string
	// Addr is the address the proxy listens on.
	Addr  string
	mu    sync.Mutex
	ln    net.Listener // nil while down
	conns map[net.Conn]bool
}

// NewProxy listens on a free loopback port and forwards to target.
func NewProxy(target string) (*Proxy, error) {
	p := &Proxy{target: target, conns: map[net.Conn]bool{}}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	p.Addr = ln.Addr().String()
	p.serve(ln)
	return p, nil
}

func (p *Proxy) serve(ln net.Listener) {
	p.mu.Lock()
	p.ln = ln
	p.mu.Unlock()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go p.pipe(c)
		}
	}()
}

func (p *Proxy) pipe(c net.Conn) {
	s, err := net.Dial("tcp", p.target)
	if err != nil {
		_ = c.Close()
		return
	}
	p.mu.Lock()
	if p.ln == nil {
		// Accepted just before Down: it must not outlive the cut.
		p.mu.Unlock()
		_, _ = c.Close(), s.Close()
		return
	}
	p.conns[c], p.conns[s] = true, true
	p.mu.Unlock()
	go func() { _, _ = io.Copy(s, c); _ = s.Close() }()
	_, _ = io.Copy(c, s)
	_ = c.Close()
}

// Down stops listening and closes every connection.
func (p *Proxy) Down() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.ln != nil {
		_ = p.ln.Close()
		p.ln = nil
	}
	for c := range p.conns {
		_ = c.Close()
	}
	p.conns = map[net.Conn]bool{}
}

// Up listens again on the same address.
func (p *Proxy) Up() error {
	ln, err := net.Listen("tcp", p.Addr)
	if err != nil {
		return err
	}
	p.serve(ln)
	return nil
}
