package provider

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// TestMailFrom: the From of vendors that encode UTF-8 names (Postmark).
func TestMailFrom(t *testing.T) {
	t.Parallel()
	cases := []struct{ name, want string }{
		{"notifyd", "notifyd <a@b.test>"},
		{"Acme Team", "Acme Team <a@b.test>"},
		{"Acme, Inc.", `"Acme, Inc." <a@b.test>`},
		{"J. Doe", `"J. Doe" <a@b.test>`},
		{`Say "hi" \o/`, `"Say \"hi\" \\o/" <a@b.test>`},
		{"홍길동 상점", "홍길동 상점 <a@b.test>"},
		{"Evil\r\nBcc: x@y.test", `"EvilBcc: x@y.test" <a@b.test>`},
		{"", "a@b.test"},
	}
	for _, c := range cases {
		require.Equal(t, c.want, MailFrom(c.name, "a@b.test"), c.name)
	}
}

// TestMailFromASCII: the From of vendors that do not (SES).
func TestMailFromASCII(t *testing.T) {
	t.Parallel()
	cases := []struct{ name, want string }{
		{"", "a@b.test"},
		{"Acme", "Acme <a@b.test>"},
		{"Acme, Inc.", `"Acme, Inc." <a@b.test>`},
		{`Say "hi"`, `"Say \"hi\"" <a@b.test>`},
		{"홍길동", "=?UTF-8?q?=ED=99=8D=EA=B8=B8=EB=8F=99?= <a@b.test>"},
		{"Evil\r\nBcc: x", `"EvilBcc: x" <a@b.test>`},
	}
	for _, c := range cases {
		require.Equal(t, c.want, MailFromASCII(c.name, "a@b.test"), c.name)
	}
}
