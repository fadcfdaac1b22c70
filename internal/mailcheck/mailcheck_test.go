package mailcheck_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/notifyd/notifyd/internal/mailcheck"
	"github.com/notifyd/notifyd/internal/mailcheck/dnstest"
)

func TestDomain(t *testing.T) {
	t.Parallel()
	for addr, want := range map[string]string{
		"a@example.com":                 "example.com",
		"first.last+tag@sub.example.co": "sub.example.co",
		"o'brien@x-y.example":           "x-y.example",
	} {
		got, err := mailcheck.Domain(addr)
		require.NoError(t, err, addr)
		require.Equal(t, want, got, addr)
	}
	long := make([]byte, 310)
	for i := range long {
		long[i] = 'a'
	}
	for _, addr := range []string{
		"", "plain", "@example.com", "a@", "a@b", "a@@example.com", "a b@example.com", "a@exa mple.com",
		"a@-x.com", "a@x-.com", "a@x..com", "a@[127.0.0.1]", "a@1.2.3.4", "Name <a@example.com>", "a@example.com.",
		"a@ex_ample.com", "a(comment)@example.com",
		string(long) + "@example.com", // over 320
	} {
		_, err := mailcheck.Domain(addr)
		require.Error(t, err, "%q", addr)
	}
	_, err := mailcheck.Domain(string(long[:308]) + "@example.com") // 320 characters
	require.NoError(t, err)
	require.Equal(t, "a@example.com", mailcheck.Normalize("  A@Example.COM \t"))
}

func TestCheck(t *testing.T) {
	t.Parallel()
	srv := dnstest.Start(t,
		"test. 300 IN NS ns.test.",
		"mx.test. 300 IN MX 10 mail.mx.test.",
		"mail.mx.test. 300 IN A 192.0.2.10",
		"aonly.test. 300 IN A 192.0.2.1",
		"aaaaonly.test. 300 IN AAAA 2001:db8::1",
		"nullmx.test. 300 IN MX 0 .",
		"nullmx.test. 300 IN A 192.0.2.2",
		"txtonly.test. 300 IN TXT \"v=spf1 -all\"",
	)
	srv.Fail("servfail.test")
	ctx := context.Background()
	c := mailcheck.New(srv.Addr, 2*time.Second)

	// A null MX is an MX record (SPEC checks that one exists).
	for _, d := range []string{"mx.test", "aonly.test", "aaaaonly.test", "MX.Test", "nullmx.test"} {
		require.NoError(t, c.Check(ctx, d), d)
	}
	for _, d := range []string{"nxdomain.test", "txtonly.test", "mx.invalid", "a.localhost"} {
		err := c.Check(ctx, d)
		require.ErrorIs(t, err, mailcheck.ErrNoMail, d)
	}
	// A resolver that does not know the top-level domain (offline, or
	// answering NXDOMAIN for everything) cannot judge: not ErrNoMail.
	err := c.Check(ctx, "nxdomain.example")
	require.Error(t, err)
	require.False(t, errors.Is(err, mailcheck.ErrNoMail), "%v", err)

	// SERVFAIL is no answer: not ErrNoMail, so callers fail open.
	err = c.Check(ctx, "servfail.test")
	require.Error(t, err)
	require.False(t, errors.Is(err, mailcheck.ErrNoMail), "%v", err)

	// Nobody listening: an error, not ErrNoMail, within the timeout.
	down := mailcheck.New(dnstest.ClosedAddr(t), 2*time.Second)
	start := time.Now()
	err = down.Check(ctx, "mx.test")
	require.Error(t, err)
	require.False(t, errors.Is(err, mailcheck.ErrNoMail), "%v", err)
	require.Less(t, time.Since(start), 3*time.Second)
}
