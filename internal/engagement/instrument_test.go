package engagement

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/notifyd/notifyd/internal/notify"
)

func testService() *Service {
	return &Service{key: []byte("k"), baseURL: "https://n.example", window: DefaultScannerWindow}
}

func TestTokenRoundTripAndTamper(t *testing.T) {
	s := testService()
	l := link{kind: 'c', workspaceID: "0190a8e2-7d2e-7a39-9c1b-2f1e5b6c7d8e", requestID: "req-1", campaignID: "",
		index: 3, sentAt: time.Unix(1700000000, 0).UTC(), url: "https://shop.example/a?b=c&d=e"}
	tok := s.sign(l)
	got, ok := s.verify(tok, 'c')
	require.True(t, ok)
	require.Equal(t, l, got)
	_, ok = s.verify(tok, 'o')
	require.False(t, ok, "a click token is no open token")
	// Every single-character change is refused.
	for i := range tok {
		b := []byte(tok)
		b[i] = map[bool]byte{true: 'A', false: 'B'}[b[i] != 'A']
		_, ok := s.verify(string(b), 'c')
		require.False(t, ok, "changed at %d", i)
	}
	other := &Service{key: []byte("other"), baseURL: s.baseURL}
	_, ok = other.verify(tok, 'c')
	require.False(t, ok, "another key")
	_, ok = s.verify("", 'c')
	require.False(t, ok)
	_, ok = s.verify(strings.Repeat("A", maxToken+1), 'c')
	require.False(t, ok)
}

func TestRewriteLinks(t *testing.T) {
	s := testService()
	body := `<html><body><p><a href="https://a.example/x?y=1&amp;z=2">A</a> <A class=b HREF='http://b.example/'>B</A>` +
		`<a href="mailto:x@example.com">m</a><a href="https://n.example/v1/newsletter/unsubscribe?token=t">u</a>` +
		`<a data-notrack href="https://c.example/">c</a><a name=x>n</a><abbr href="https://d.example/">d</abbr>` +
		`<a href=https://e.example/plain>e</a></p></body></html>`
	out := s.rewriteLinks(body, link{workspaceID: "w", requestID: "r"}, "")
	require.Contains(t, out, `href="mailto:x@example.com"`)
	require.Contains(t, out, `href="https://n.example/v1/newsletter/unsubscribe?token=t"`, "own pages untouched")
	require.Contains(t, out, `data-notrack href="https://c.example/"`)
	require.Contains(t, out, `<abbr href="https://d.example/">`)
	var urls []string
	for _, part := range strings.Split(out, ClickPath)[1:] {
		end := strings.IndexAny(part, `"' >`)
		l, ok := s.verify(part[:end], 'c')
		require.True(t, ok)
		require.Equal(t, len(urls), l.index)
		urls = append(urls, l.url)
	}
	require.Equal(t, []string{"https://a.example/x?y=1&z=2", "http://b.example/", "https://e.example/plain"}, urls)
	require.Equal(t, "<p>no links</p>", s.rewriteLinks("<p>no links</p>", link{}, ""))
	require.Equal(t, `<a href="https://x`, s.rewriteLinks(`<a href="https://x`, link{}, ""), "unterminated")
}

func TestLikelyScanner(t *testing.T) {
	s := testService()
	sent := time.Unix(1700000000, 0)
	l := link{sentAt: sent}
	browser := "Mozilla/5.0 (Macintosh) AppleWebKit/605.1.15 Safari/605.1.15"
	require.True(t, s.likelyScanner(l, browser, sent.Add(3*time.Second)), "seconds after the send")
	require.False(t, s.likelyScanner(l, browser, sent.Add(time.Minute)))
	require.True(t, s.likelyScanner(l, "Mozilla/5.0 (compatible; Barracuda Sentinel)", sent.Add(time.Minute)))
	require.True(t, s.likelyScanner(l, "", sent.Add(time.Minute)))
	require.False(t, s.likelyScanner(l, "Mozilla/5.0 (Windows NT 5.1; rv:11.0) Gecko Firefox/11.0 (via ggpht.com GoogleImageProxy)",
		sent.Add(time.Minute)), "Gmail's image proxy fetches when a person opens")
}

func TestEffectiveScopes(t *testing.T) {
	on, off := true, false
	rows := []*notify.TrackingSetting{
		{Scope: notify.TrackingWorkspace, Opens: &on, Clicks: &off},
		{Scope: notify.TrackingCategory, Key: "news", Clicks: &on},
		{Scope: notify.TrackingCampaign, Key: "c1", Opens: &off},
	}
	for _, tc := range []struct {
		category, campaign string
		opens, clicks      bool
	}{
		{"", "", true, false},
		{"news", "", true, true},
		{"other", "", true, false},
		{"", "c1", false, false},
		{"news", "c1", false, true},
	} {
		o, c := effective(rows, tc.category, tc.campaign)
		require.Equal(t, []bool{tc.opens, tc.clicks}, []bool{o, c}, "%+v", tc)
	}
	o, c := effective(nil, "news", "c1")
	require.False(t, o || c, "nothing without a setting")
}

// TestPixelPlace: the pixel goes before the last </body> (any case), or at
// the end without one, whether links were rewritten or not.
func TestPixelPlace(t *testing.T) {
	s := testService()
	for _, c := range []struct{ body, want string }{
		{`<body><a href="https://a.example/">A</a></BODY></html>`, `</a>PIX</BODY></html>`},
		{`<body><a href="https://a.example/">A</a></body><p></body></p>`, `<p>PIX</body></p>`},
		{`<p><a href="https://a.example/">A</a></p>`, `</a></p>PIX`},
		{`<body><p>x</p></body>`, `<body><p>x</p>PIX</body>`},
		{`<p>x</p>`, `<p>x</p>PIX`},
		{`<body></body><a href="https://a.example/">A</a>`, `<body>PIX</body><a href="https://n.example/t/c/`},
	} {
		out := s.rewriteLinks(c.body, link{workspaceID: "w", requestID: "r"}, "PIX")
		require.Equal(t, 1, strings.Count(out, "PIX"), c.body)
		require.Contains(t, out, c.want, c.body)
		require.Equal(t, withPixel(s.rewriteLinks(c.body, link{workspaceID: "w", requestID: "r"}, ""), "PIX"), out, c.body)
	}
}

// BenchmarkInstrumentMail: a campaign mail's HTML (three links and an
// unsubscribe footer under the base URL) with opens and clicks tracked.
func BenchmarkInstrumentMail(b *testing.B) {
	s := testService()
	body := `<html><body><h1>Weekly news for Kim</h1><p>` + strings.Repeat("News and offers. ", 40) +
		`</p><p><a href="https://shop.example.com/sale?utm_source=news&amp;utm_medium=email">This week's sale</a> · ` +
		`<a href="https://shop.example.com/new">New arrivals</a> · <a href="https://blog.example.com/2026/11/story">Our story</a></p>` +
		`<p>Your plan: pro.</p><hr><p><a href="https://n.example/v1/newsletter/unsubscribe?token=t">Unsubscribe</a></p></body></html>`
	l := link{workspaceID: "0190a8e2-7d2e-7a39-9c1b-2f1e5b6c7d8e", requestID: "0190a8e2-7d2e-7a39-9c1b-2f1e5b6c7d8f",
		campaignID: "0190a8e2-7d2e-7a39-9c1b-2f1e5b6c7d90", sentAt: time.Unix(1700000000, 0)}
	b.ReportAllocs()
	for b.Loop() {
		o := l
		o.kind = 'o'
		pixel := `<img src="` + s.baseURL + OpenPath + s.sign(o) + `">`
		if out := s.rewriteLinks(body, l, pixel); len(out) <= len(body) {
			b.Fatal("nothing rewritten")
		}
	}
}
