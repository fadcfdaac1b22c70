package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"path/filepath"
	"regexp"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/notifyd/notifyd/cmd/notifyd/demo"
	"github.com/notifyd/notifyd/internal/config"
	"github.com/notifyd/notifyd/internal/daemon"
)

func TestParseSendArgs(t *testing.T) {
	t.Parallel()
	env := func(kv map[string]string) func(string) string { return func(k string) string { return kv[k] } }
	full := map[string]string{"NOTIFYD_API_KEY": "nk_1.s", "NOTIFYD_HMAC_SECRET": "h"}

	o, err := parseSendArgs([]string{"--channel", "sms", "--to", "010-1234-5678", "--text", "hi"}, env(full), io.Discard)
	require.NoError(t, err)
	require.Equal(t, "http://127.0.0.1:8080", o.URL)
	require.Equal(t, "nk_1.s", o.APIKey)
	require.Equal(t, "h", o.HMACSecret)
	require.False(t, o.Wait)
	require.Equal(t, map[string]any{"channel": "sms", "recipient": map[string]any{"address": "010-1234-5678"},
		"content": map[string]any{"text": "hi"}}, o.body())

	withURL := map[string]string{"NOTIFYD_URL": "http://example.test:9", "NOTIFYD_API_KEY": "k", "NOTIFYD_HMAC_SECRET": "h"}
	o, err = parseSendArgs([]string{"--channel=msgr_alimtalk", "--to=010", "--template", "T1", "--title", "Ti",
		"--var", "name=Kim", "--var", "code=a=b", "--wait"}, env(withURL), io.Discard)
	require.NoError(t, err)
	require.Equal(t, "http://example.test:9", o.URL)
	require.True(t, o.Wait)
	require.Equal(t, map[string]any{"templateCode": "T1", "title": "Ti",
		"templateVariables": map[string]string{"name": "Kim", "code": "a=b"}}, o.body()["content"])

	o, err = parseSendArgs([]string{"--url", "https://n.example", "--channel", "email", "--to", "a@b.c", "--text", "x"}, env(withURL), io.Discard)
	require.NoError(t, err)
	require.Equal(t, "https://n.example", o.URL, "the flag overrides NOTIFYD_URL")

	for _, tc := range []struct {
		args []string
		env  map[string]string
		want string
	}{
		{[]string{"--to", "1", "--text", "x"}, full, "--channel"},
		{[]string{"--channel", "sms", "--text", "x"}, full, "--to"},
		{[]string{"--channel", "sms", "--to", "1"}, full, "--text or --template"},
		{[]string{"--channel", "sms", "--to", "1", "--text", "x"}, nil, "NOTIFYD_API_KEY, NOTIFYD_HMAC_SECRET"},
		{[]string{"--channel", "sms", "--to", "1", "--text", "x", "--var", "novalue"}, full, "NAME=VALUE"},
		{[]string{"--channel", "sms", "--to", "1", "--text", "x", "extra"}, full, "unexpected arguments: extra"},
		{[]string{"--channel", "sms", "--to", "1", "--text", "x", "--url", "ftp://x"}, full, "--url"},
		{[]string{"--bogus"}, full, "bogus"},
	} {
		_, err := parseSendArgs(tc.args, env(tc.env), io.Discard)
		require.ErrorContains(t, err, tc.want, "%v", tc.args)
	}
}

// TestSendCommand runs `notifyd send` against a demo daemon, with the key
// and secret it printed in the environment. t.Setenv forbids t.Parallel.
func TestSendCommand(t *testing.T) {
	cfg := config.Default()
	cfg.DatabaseURL = "sqlite:" + filepath.Join(t.TempDir(), "notifyd.db")
	cfg.Addr = "127.0.0.1:0"
	cfg.Demo = true
	var printed bytes.Buffer
	d := daemon.New(cfg, nil, &printed)
	m := demo.Attach(d)
	t.Cleanup(func() { _ = d.Close(context.Background()) })
	require.NoError(t, d.Open(t.Context()))
	for _, m := range regexp.MustCompile(`export (NOTIFYD_[A-Z_]+)=(\S+)`).FindAllStringSubmatch(printed.String(), -1) {
		t.Setenv(m[1], m[2])
	}

	var out, errb bytes.Buffer
	code := run(t.Context(), []string{"send", "--channel", "sms", "--to", "010-1234-5678", "--text", "hi", "--wait"}, &out, &errb)
	require.Equal(t, 0, code, errb.String())
	dec := json.NewDecoder(&out)
	var accepted, final map[string]any
	require.NoError(t, dec.Decode(&accepted))
	require.NoError(t, dec.Decode(&final))
	require.Equal(t, "queued", accepted["status"])
	require.Equal(t, accepted["requestId"], final["requestId"])
	require.Equal(t, "sent", final["status"])
	require.Len(t, m.Simulator().Messages("", "010-1234-5678", 0), 1)

	// Without --wait: accepted is enough.
	out.Reset()
	code = run(t.Context(), []string{"send", "--channel", "msgr_alimtalk", "--to", "010-1234-5678",
		"--template", "DEMO_WELCOME", "--var", "name=Kim"}, &out, &errb)
	require.Equal(t, 0, code, errb.String())
	require.Contains(t, out.String(), `"status": "queued"`)

	// An error answer exits 1 and names the problem.
	errb.Reset()
	code = run(t.Context(), []string{"send", "--channel", "sms", "--to", "010", "--template", "NOPE"}, &out, &errb)
	require.Equal(t, 1, code)
	require.Contains(t, errb.String(), "HTTP 400")

	// A wrong secret is refused.
	t.Setenv("NOTIFYD_HMAC_SECRET", "wrong")
	errb.Reset()
	code = run(t.Context(), []string{"send", "--channel", "sms", "--to", "010", "--text", "x"}, &out, &errb)
	require.Equal(t, 1, code)
	require.Contains(t, errb.String(), "HTTP 401")
}
