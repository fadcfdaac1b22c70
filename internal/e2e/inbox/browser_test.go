package inbox_test

import (
	"fmt"
	"html/template"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/require"

	"github.com/notifyd/notifyd/internal/notifytest"
)

// appPage is the customer's own web app: a plain HTML page on another
// origin that embeds the component from the daemon.
var appPage = template.Must(template.New("").Parse(`<!doctype html>
<html><head><meta charset="utf-8"><title>Shop</title>
<script src="{{.Base}}/static/notifyd-inbox.js"></script>
<style>notifyd-inbox { --notifyd-badge-bg: rgb(0, 128, 0); }</style></head>
<body><h1>Shop</h1><notifyd-inbox base-url="{{.Base}}" token="{{.Token}}"></notifyd-inbox></body></html>`))

// shadow is a script reading the component's shadow root.
func shadow(expr string) string {
	return `(() => { const r = document.querySelector("notifyd-inbox").shadowRoot; return ` + expr + `; })()`
}

// waitJS polls a script until it answers want.
func waitJS(t *testing.T, b *notifytest.Browser, js, want string) {
	t.Helper()
	var got string
	var err error
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		if err = b.Try(chromedp.Evaluate(js, &got)); err == nil && got == want {
			return
		}
	}
	t.Fatalf("%s never answered %q (last %q, err %v)", js, want, got, err)
}

// TestInboxComponentInBrowser: the component on another origin shows a
// message sent while the page is open, with its badge; marking it read
// updates the badge; mark all read, archive and delete work; older
// messages page in; the theme's CSS variable reaches the badge; a
// message's text is shown as text.
func TestInboxComponentInBrowser(t *testing.T) {
	t.Parallel()
	b := notifytest.StartChromium(t)
	env, key := setup(t)
	tok := mint(t, key, "u-1")
	app := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		_ = appPage.Execute(w, map[string]string{"Base": env.Daemon.URL(), "Token": tok})
	}))
	t.Cleanup(app.Close)
	notifytest.DashboardCall(t, env.Owner, "PUT", "/v1/inbox-settings", map[string]any{"allowedOrigins": []string{app.URL}}, http.StatusOK)

	b.Run(t, chromedp.Navigate(app.URL))
	waitJS(t, b, shadow(`String(r.querySelector(".badge").hidden) + "/" + r.querySelector(".empty").hidden`), "true/false")

	notifytest.Send(t, key, inapp("u-1", "Shipped", `Your order <b>7</b> is on its way`))
	waitJS(t, b, shadow(`r.querySelector(".badge").textContent`), "1")
	waitJS(t, b, shadow(`r.querySelector("li .body").textContent`), `Your order <b>7</b> is on its way`)
	waitJS(t, b, shadow(`getComputedStyle(r.querySelector(".badge")).backgroundColor`), "rgb(0, 128, 0)")

	b.Run(t, chromedp.Evaluate(shadow(`r.querySelector(".bell").click()`), nil))
	waitJS(t, b, shadow(`String(r.querySelector(".panel").hidden)`), "false")
	b.Run(t, chromedp.Evaluate(shadow(`r.querySelector("li button.read").click()`), nil))
	waitJS(t, b, shadow(`String(r.querySelector(".badge").hidden)`), "true")
	waitJS(t, b, shadow(`String(r.querySelector("li").classList.contains("unread"))`), "false")
	p := get[page](t, env, "/v1/inbox/messages", mint(t, key, "u-1"))
	require.NotNil(t, p.Messages[0].ReadAt, "marked read on the server")
	require.NotNil(t, p.Messages[0].SeenAt, "opening the panel saw it")

	deliver(t, key, "u-1", 2)
	waitJS(t, b, shadow(`r.querySelector(".badge").textContent + "/" + r.querySelectorAll("li.unread").length`), "2/2")
	b.Run(t, chromedp.Evaluate(shadow(`r.querySelector(".mark-all").click()`), nil))
	waitJS(t, b, shadow(`String(r.querySelector(".badge").hidden) + "/" + r.querySelectorAll("li.unread").length`), "true/0")
	b.Run(t, chromedp.Evaluate(shadow(`r.querySelector("li button.archive").click()`), nil))
	waitJS(t, b, shadow(`String(r.querySelectorAll("li").length)`), "2")
	require.Len(t, get[page](t, env, "/v1/inbox/messages?archived=true", mint(t, key, "u-1")).Messages, 1)
	b.Run(t, chromedp.Evaluate(shadow(`r.querySelector("li button.delete").click()`), nil))
	waitJS(t, b, shadow(`String(r.querySelectorAll("li").length)`), "1")
	require.Len(t, get[page](t, env, "/v1/inbox/messages", mint(t, key, "u-1")).Messages, 1, "deleted on the server")

	// Older messages page in: 60 more, a reload lists 50, "Show more" the rest.
	items := make([]map[string]any, 60)
	for i := range items {
		items[i] = inapp("u-1", "Batch", fmt.Sprintf("Message %d", i))
	}
	notifytest.Signed(t, key, "POST", "/v1/notifications/bulk", map[string]any{"items": items})
	require.Eventually(t, func() bool {
		return get[page](t, env, "/v1/inbox/counts", mint(t, key, "u-1")).Counts.Unread == 60
	}, 20*time.Second, 50*time.Millisecond)
	b.Run(t, chromedp.Navigate(app.URL))
	waitJS(t, b, shadow(`r.querySelectorAll("li").length + "/" + r.querySelector(".more").hidden`), "50/false")
	b.Run(t, chromedp.Evaluate(shadow(`r.querySelector(".more").click()`), nil))
	waitJS(t, b, shadow(`r.querySelectorAll("li").length + "/" + r.querySelector(".more").hidden`), "61/true")
	var title string
	b.Run(t, chromedp.Title(&title))
	require.Equal(t, "Shop", title)
}
