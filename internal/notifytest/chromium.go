package notifytest

import (
	"context"
	"os"
	"os/exec"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// EnvChromium names a Chromium binary to use instead of the first of
// chromium, chromium-browser, google-chrome found on PATH.
const EnvChromium = "NOTIFYD_TEST_CHROMIUM"

// Browser is one headless Chromium for a test, driven with chromedp. Each
// Run works in the same tab, so cookies and the current page carry over.
type Browser struct {
	ctx     context.Context
	timeout time.Duration
}

// ChromiumPath returns the browser binary, or "" when none is installed.
func ChromiumPath() string {
	if p := os.Getenv(EnvChromium); p != "" {
		return p
	}
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome", "google-chrome-stable"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	return ""
}

// EnvRequireBrowser set to 1 makes a missing Chromium fail browser tests
// instead of skipping them (.ci/run sets it, so CI never skips them).
const EnvRequireBrowser = "NOTIFYD_REQUIRE_BROWSER"

// StartChromium starts a headless Chromium, closed after the test. A
// missing browser skips the test with a one-line reason, or fails it when
// NOTIFYD_REQUIRE_BROWSER=1: install the Debian package chromium, as
// .ci/run does.
func StartChromium(t testing.TB) *Browser {
	t.Helper()
	path := ChromiumPath()
	if path == "" {
		const msg = "headless Chromium not found on PATH (nor %s): install it, e.g. `apt-get install -y chromium`"
		if os.Getenv(EnvRequireBrowser) == "1" {
			t.Fatalf(msg+" (%s=1 requires it)", EnvChromium, EnvRequireBrowser)
		}
		t.Skipf(msg, EnvChromium)
	}
	// Our own profile directory rather than t.TempDir or chromedp's: the
	// browser's helper processes may still write to it for a moment after
	// the browser exits, and the removal below retries instead of failing.
	profile, err := os.MkdirTemp("", "notifyd-chromium-")
	if err != nil {
		t.Fatalf("chromium profile dir: %v", err)
	}
	var out Buffer // written by chromedp's goroutines, read on failure
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(path),
		chromedp.NoSandbox, // containers and CI runners usually lack the user namespaces the sandbox needs
		chromedp.DisableGPU,
		chromedp.Flag("disable-dev-shm-usage", true),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("no-proxy-server", true), // the daemon is on loopback
		chromedp.UserDataDir(profile),
		chromedp.WSURLReadTimeout(20*time.Second),
		chromedp.CombinedOutput(&out),
	)
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancel := chromedp.NewContext(actx)
	// Start the browser now, so a broken installation fails here with its
	// own output rather than in the first Run. The first Run must get ctx
	// itself (cancelling its context closes the browser); the websocket
	// read timeout above bounds the start.
	if err := chromedp.Run(ctx); err != nil {
		cancel()
		cancelAlloc()
		removeProfile(profile)
		t.Fatalf("start headless Chromium %s: %v\n%s", path, err, out.String())
	}
	t.Cleanup(func() {
		cancel()      // closes the tab and the browser
		cancelAlloc() // waits for the browser process
		removeProfile(profile)
	})
	return &Browser{ctx: ctx, timeout: 15 * time.Second}
}

func removeProfile(dir string) {
	for range 20 {
		if os.RemoveAll(dir) == nil {
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// Run runs actions in the browser's tab within the browser's timeout and
// fails the test on error.
func (b *Browser) Run(t testing.TB, actions ...chromedp.Action) {
	t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, b.timeout)
	defer cancel()
	if err := chromedp.Run(ctx, actions...); err != nil {
		t.Fatalf("chromium: %v", err)
	}
}

// Try runs actions like Run but returns the error, for steps that may race
// a navigation (a form submit) and are retried.
func (b *Browser) Try(actions ...chromedp.Action) error {
	ctx, cancel := context.WithTimeout(b.ctx, b.timeout)
	defer cancel()
	return chromedp.Run(ctx, actions...)
}

// WaitText polls the text of the first element matching the CSS selector
// sel until it equals want (a click that submits a form navigates, and a
// query during the navigation fails), failing the test after the
// browser's timeout.
func (b *Browser) WaitText(t testing.TB, sel, want string) {
	t.Helper()
	deadline := time.Now().Add(b.timeout)
	var got string
	var err error
	for time.Now().Before(deadline) {
		ctx, cancel := context.WithTimeout(b.ctx, time.Second)
		err = chromedp.Run(ctx, chromedp.Text(sel, &got, chromedp.ByQuery, chromedp.NodeVisible))
		cancel()
		if err == nil && got == want {
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatalf("chromium: %q never showed %q (last %q, err %v)", sel, want, got, err)
}

// Context is the tab's context, for callers that need chromedp directly
// (its lifetime is the test's).
func (b *Browser) Context() context.Context { return b.ctx }
