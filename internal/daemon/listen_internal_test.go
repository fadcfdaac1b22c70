package daemon

import (
	"bytes"
	"log/slog"
	"net"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestWarnPlainBaseURL(t *testing.T) {
	public := &net.TCPAddr{IP: net.IPv4zero, Port: 8080}
	loopback := &net.TCPAddr{IP: net.IPv6loopback, Port: 8080}
	for _, tc := range []struct {
		baseURL string
		addr    net.Addr
		warn    bool
	}{
		{"http://notify.example.com", public, true},
		{"HTTP://notify.example.com", &net.TCPAddr{IP: net.ParseIP("192.0.2.10"), Port: 80}, true},
		{"https://notify.example.com", public, false},
		{"http://localhost:8080", loopback, false},
		{"http://127.0.0.1:8080", &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 8080}, false},
	} {
		var buf bytes.Buffer
		warnPlainBaseURL(slog.New(slog.NewTextHandler(&buf, nil)), tc.baseURL, tc.addr)
		require.Equal(t, tc.warn, bytes.Contains(buf.Bytes(), []byte("level=WARN")), "%s on %s", tc.baseURL, tc.addr)
	}
}
