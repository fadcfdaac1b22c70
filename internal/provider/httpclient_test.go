package provider

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/notifyd/notifyd/internal/notify"
)

func TestBlockedAddr(t *testing.T) {
	t.Parallel()
	cases := map[string]bool{
		"127.0.0.1":                true,
		"127.255.0.9":              true,
		"::1":                      true,
		"10.0.0.1":                 true,
		"172.16.0.1":               true,
		"172.31.255.255":           true,
		"192.168.1.1":              true,
		"fd00::1":                  true,
		"fc00::1":                  true,
		"169.254.169.254":          true,
		"fe80::1":                  true,
		"fe80::1%eth0":             true,
		"0.0.0.0":                  true,
		"::":                       true,
		"100.64.0.1":               true,
		"100.127.255.254":          true,
		"::ffff:127.0.0.1":         true,
		"::ffff:10.0.0.1":          true,
		"::ffff:169.254.169.254":   true,
		"::127.0.0.1":              true,
		"64:ff9b::7f00:1":          true, // NAT64 of 127.0.0.1
		"2002:a9fe:a9fe::1":        true, // 6to4 of 169.254.169.254
		"224.0.0.1":                true,
		"255.255.255.255":          true,
		"192.0.2.1":                true, // documentation ranges (issue 17)
		"198.51.100.255":           true,
		"203.0.113.7":              true,
		"::ffff:203.0.113.7":       true,
		"192.0.3.1":                false,
		"198.51.101.1":             false,
		"203.0.114.1":              false,
		"8.8.8.8":                  false,
		"172.32.0.1":               false,
		"100.128.0.1":              false,
		"2606:4700:4700::1111":     false,
		"::ffff:8.8.8.8":           false,
		"64:ff9b::808:808":         false,
		"2002:808:808::1":          false,
		"hooks.slack.example.test": true, // not parsable: zero Addr
	}
	for in, want := range cases {
		a, _ := netip.ParseAddr(in)
		require.Equal(t, want, BlockedAddr(a), in)
	}
}

func TestNewHTTPClientDefaults(t *testing.T) {
	t.Parallel()
	c := NewHTTPClient(HTTPOptions{})
	require.Equal(t, DefaultHTTPTimeout, c.Timeout)
	tr, ok := c.Transport.(*http.Transport)
	require.True(t, ok)
	require.GreaterOrEqual(t, tr.MaxIdleConnsPerHost, 256)
	require.Nil(t, tr.Proxy)

	c = NewHTTPClient(HTTPOptions{Timeout: time.Second})
	require.Equal(t, time.Second, c.Timeout)
	require.Same(t, DefaultHTTPClient(), DefaultHTTPClient())
}

func okServer(t *testing.T) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.WriteString(w, "ok")
	}))
	t.Cleanup(srv.Close)
	return srv
}

func get(c *http.Client, u string) (string, error) {
	resp, err := c.Get(u)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return string(b), err
}

func port(t *testing.T, srv *httptest.Server) string {
	t.Helper()
	u, err := url.Parse(srv.URL)
	require.NoError(t, err)
	return u.Port()
}

func TestGuardBlocksPrivateTargets(t *testing.T) {
	t.Parallel()
	srv := okServer(t)
	p := port(t, srv)
	c := NewHTTPClient(HTTPOptions{Timeout: 2 * time.Second})
	for _, u := range []string{
		srv.URL, // 127.0.0.1, a live server: only the guard stops the call
		"http://localhost:" + p,
		"http://[::ffff:127.0.0.1]:" + p,
		"http://10.0.0.1/",
		"http://169.254.169.254/latest/meta-data/",
		"http://100.64.0.1/",
		"http://0.0.0.0:" + p,
	} {
		_, err := get(c, u)
		require.ErrorIs(t, err, ErrBlockedTarget, u)
	}
}

// TestGuardBlocksOwnAddresses (issue 17): an address of one of the host's
// own interfaces, public or not, is refused like loopback (without
// connecting: the guard runs before connect), unless private targets are
// allowed.
func TestGuardBlocksOwnAddresses(t *testing.T) {
	t.Parallel()
	own := func() ([]net.Addr, error) {
		return []net.Addr{&net.IPNet{IP: net.ParseIP("8.8.4.4"), Mask: net.CIDRMask(24, 32)},
			&net.IPNet{IP: net.ParseIP("2606:4700::6810:1"), Mask: net.CIDRMask(64, 128)}}, nil
	}
	c := NewHTTPClient(HTTPOptions{Timeout: 2 * time.Second, interfaceAddrs: own})
	for _, u := range []string{"http://8.8.4.4/", "http://[::ffff:8.8.4.4]/", "http://[2606:4700::6810:1]/"} {
		_, err := get(c, u)
		require.ErrorIs(t, err, ErrBlockedTarget, u)
	}
	// Another address of the same network is not the host's.
	g := &ownAddrs{list: own}
	require.False(t, g.has(netip.MustParseAddr("8.8.4.5")))
	require.True(t, g.has(netip.MustParseAddr("8.8.4.4")))
	// The real list: loopback is always one of them.
	require.True(t, (&ownAddrs{list: net.InterfaceAddrs}).has(netip.MustParseAddr("127.0.0.1")))
}

func TestGuardChecksResolvedAddress(t *testing.T) {
	t.Parallel()
	srv := okServer(t)
	c := NewHTTPClient(HTTPOptions{
		Timeout: 2 * time.Second,
		lookup: func(_ context.Context, host string) ([]netip.Addr, error) {
			if host == "innocent.example" {
				return []netip.Addr{netip.MustParseAddr("127.0.0.1")}, nil
			}
			return nil, fmt.Errorf("no such host %s", host)
		},
	})
	_, err := get(c, "http://innocent.example:"+port(t, srv))
	require.ErrorIs(t, err, ErrBlockedTarget)
}

func TestGuardAppliesToRedirects(t *testing.T) {
	t.Parallel()
	internal := okServer(t)
	public := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/hop" {
			http.Redirect(w, r, internal.URL+"/secret", http.StatusFound)
			return
		}
		_, _ = io.WriteString(w, "public")
	}))
	t.Cleanup(public.Close)

	// Both servers are on loopback; the injected policy calls only the
	// internal server's port blocked, standing in for a private address.
	blockedPort, err := strconv.Atoi(port(t, internal))
	require.NoError(t, err)
	c := NewHTTPClient(HTTPOptions{
		Timeout: 2 * time.Second,
		blocked: func(ap netip.AddrPort) bool { return int(ap.Port()) == blockedPort },
	})

	body, err := get(c, public.URL)
	require.NoError(t, err, "the allowed server is reachable")
	require.Equal(t, "public", body)

	_, err = get(c, public.URL+"/hop")
	require.ErrorIs(t, err, ErrBlockedTarget)
}

func TestRedirectLimit(t *testing.T) {
	t.Parallel()
	var hits atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		n, _ := strconv.Atoi(r.URL.Query().Get("n"))
		if n > 0 {
			http.Redirect(w, r, fmt.Sprintf("/?n=%d", n-1), http.StatusFound)
			return
		}
		_, _ = io.WriteString(w, "done")
	}))
	t.Cleanup(srv.Close)
	c := NewHTTPClient(HTTPOptions{AllowPrivate: true, Timeout: 2 * time.Second})

	body, err := get(c, srv.URL+"/?n=3")
	require.NoError(t, err)
	require.Equal(t, "done", body)
	require.EqualValues(t, 4, hits.Load())

	hits.Store(0)
	_, err = get(c, srv.URL+"/?n=4")
	require.ErrorContains(t, err, "redirects")
	require.EqualValues(t, 4, hits.Load(), "the fourth redirect is not followed")
}

func TestAllowPrivate(t *testing.T) {
	t.Parallel()
	srv := okServer(t)
	c := NewHTTPClient(HTTPOptions{AllowPrivate: true, Timeout: 2 * time.Second})
	for _, u := range []string{srv.URL, "http://localhost:" + port(t, srv)} {
		body, err := get(c, u)
		require.NoError(t, err, u)
		require.Equal(t, "ok", body)
	}
}

func TestDoClassifiesBlockedTarget(t *testing.T) {
	t.Parallel()
	srv := okServer(t)
	c := NewHTTPClient(HTTPOptions{Timeout: 2 * time.Second})
	ex, _, perr := Do(context.Background(), c, Call{Method: http.MethodPost, URL: srv.URL})
	require.NotNil(t, perr)
	require.Equal(t, notify.FailureInvalidRequest, perr.Code)
	require.False(t, perr.FallsBack())
	require.Nil(t, ex.Response)
}
