package mailcheck_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/notifyd/notifyd/internal/mailcheck"
	"github.com/notifyd/notifyd/internal/mailcheck/dnstest"
)

// Lookup answers what a sending-domain check compares: CNAME targets and
// MX hosts without the trailing dot, TXT strings joined; none for a name or
// type without records; an error only when the answer is unknown.
func TestLookup(t *testing.T) {
	t.Parallel()
	srv := dnstest.Start(t,
		"abc._domainkey.d.test. 300 IN CNAME ABC.dkim.amazonses.com.",
		"mail.d.test. 300 IN MX 10 feedback-smtp.us-east-1.amazonses.com.",
		`mail.d.test. 300 IN TXT "v=spf1 include:amazonses.com " "~all"`,
		"aonly.d.test. 300 IN A 192.0.2.1",
	)
	srv.Fail("servfail.d.test")
	ctx := context.Background()
	c := mailcheck.New(srv.Addr, 2*time.Second)
	for _, tc := range []struct {
		typ, name string
		want      []string
	}{
		{"CNAME", "abc._domainkey.d.test", []string{"abc.dkim.amazonses.com"}},
		{"cname", "abc._domainkey.d.test.", []string{"abc.dkim.amazonses.com"}},
		{"MX", "mail.d.test", []string{"10 feedback-smtp.us-east-1.amazonses.com"}},
		{"TXT", "mail.d.test", []string{"v=spf1 include:amazonses.com ~all"}},
		{"CNAME", "aonly.d.test", nil}, // address records, no CNAME
		{"TXT", "aonly.d.test", nil},   // NODATA
		{"CNAME", "nothing.d.test", nil},
		{"MX", "nothing.d.test", nil}, // NXDOMAIN
	} {
		got, err := c.Lookup(ctx, tc.typ, tc.name)
		require.NoError(t, err, "%s %s", tc.typ, tc.name)
		require.Equal(t, tc.want, got, "%s %s", tc.typ, tc.name)
	}
	_, err := c.Lookup(ctx, "TXT", "servfail.d.test")
	require.Error(t, err, "SERVFAIL is unknown, not none")
	_, err = c.Lookup(ctx, "AAAA", "aonly.d.test")
	require.Error(t, err, "types the check does not use are refused")
}
