package console_test

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/require"

	"github.com/notifyd/notifyd/internal/notifytest"
)

// TestConsoleSendCLIInBrowser: a message sent with the real `notifyd send
// --wait` (an API key of the workspace in the environment) shows in the
// console: log in, open Messages, find the request id the command printed,
// open its page and see it sent with its attempt through the simulated
// vendor.
func TestConsoleSendCLIInBrowser(t *testing.T) {
	t.Parallel()
	f := setup(t)
	b := notifytest.StartChromium(t) // skips before the build when there is no browser
	bin := notifytest.BuildBinary(t)
	base := f.env.Daemon.URL()

	const text = "Your code is 424242 (from the CLI)"
	cctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(cctx, bin, "send", "--channel", "sms", "--to", "010-2222-3333", "--text", text, "--wait")
	cmd.Env = append(os.Environ(), "NOTIFYD_URL="+base, "NOTIFYD_API_KEY="+f.key.APIKey, "NOTIFYD_HMAC_SECRET="+f.key.HMACSecret)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	require.NoError(t, cmd.Run(), "stdout: %s\nstderr: %s", stdout.String(), stderr.String())
	// The command prints the accepted request, then (--wait) the sent one.
	dec := json.NewDecoder(&stdout)
	var accepted, final struct {
		RequestID string `json:"requestId"`
		Status    string `json:"status"`
	}
	require.NoError(t, dec.Decode(&accepted))
	require.NotEmpty(t, accepted.RequestID)
	require.NoError(t, dec.Decode(&final))
	require.Equal(t, "sent", final.Status)
	id := accepted.RequestID

	notifytest.ConsoleLoginInBrowser(t, b, base, f.env.Email, f.env.Password)
	b.WaitText(t, "#who-role", "owner")
	openMessage(t, b, id, "sent")
	var provider, class, recipient, body string
	b.Run(t, chromedp.Text(".attempt-provider", &provider, chromedp.ByQuery),
		chromedp.Text(".attempt-class", &class, chromedp.ByQuery),
		chromedp.Text("#recipient", &recipient, chromedp.ByID),
		chromedp.Text("#text", &body, chromedp.ByID))
	require.Contains(t, provider, "vendorb_sms")
	require.Equal(t, "success", class)
	require.Contains(t, recipient, "010-2222-3333")
	require.Equal(t, text, body)
}
