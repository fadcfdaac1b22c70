package templates_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/notifyd/notifyd/client"
	"github.com/notifyd/notifyd/internal/notifytest"
	"github.com/notifyd/notifyd/internal/simulator"
)

// Template preview, layouts and locales (issue 21).

type layoutOut struct {
	ID        string  `json:"id"`
	Name      string  `json:"name"`
	HTML      *string `json:"html"`
	Text      *string `json:"text"`
	CreatedAt string  `json:"createdAt"`
	UpdatedAt string  `json:"updatedAt"`
}

func decodeLayout(t *testing.T, r *client.Response) layoutOut {
	t.Helper()
	return notifytest.Field[layoutOut](t, r, "layout")
}

func createLayout(t *testing.T, c *client.Client, body map[string]any) layoutOut {
	t.Helper()
	return decodeLayout(t, notifytest.DashboardCall(t, c, "POST", "/v1/layouts", body, http.StatusCreated))
}

type previewOut struct {
	TemplateID       string   `json:"templateId"`
	Version          int      `json:"version"`
	Locale           *string  `json:"locale"`
	LayoutID         *string  `json:"layoutId"`
	Title            *string  `json:"title"`
	Text             string   `json:"text"`
	HTML             *string  `json:"html"`
	MissingVariables []string `json:"missingVariables"`
}

func preview(t *testing.T, c *client.Client, id string, body map[string]any) previewOut {
	t.Helper()
	return notifytest.Field[previewOut](t, notifytest.DashboardCall(t, c, "POST", "/v1/templates/"+id+"/preview", body, http.StatusOK), "preview")
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// mailSetup registers a mailx_email provider and routes email to it.
func (b *bundle) mailSetup(t *testing.T) {
	t.Helper()
	prov := b.env.SimProvider(t, "mailx_email", "mail", map[string]string{"mailx_api_key": "k", "mailx_from_email": "from@example.com"})
	notifytest.PutRoutes(t, b.env.Owner, notifytest.Route{Channel: "email", ProviderAccountID: prov, Priority: 1})
}

// delivered sends body with the key, waits until it is sent and returns
// what the simulated vendor received for to.
func (b *bundle) delivered(t *testing.T, kind, to string, body map[string]any) simulator.Message {
	t.Helper()
	res := notifytest.Send(t, b.key, body)
	require.Equal(t, "sent", notifytest.Wait(t, b.key, res.RequestID).Status)
	msgs := b.env.Sim.Messages(kind, to, 0)
	require.Len(t, msgs, 1)
	return msgs[0]
}

func mail(to string, content map[string]any) map[string]any {
	return map[string]any{"channel": "email", "recipient": map[string]any{"address": to}, "content": content}
}

func TestTemplatePreviewMatchesSend(t *testing.T) {
	t.Parallel()
	b := setup(t)
	own := b.env.Owner
	b.mailSetup(t)
	lay := createLayout(t, own, map[string]any{"name": "brand",
		"html": "<html><body><h1>{{brand}}</h1>{{ content }}<footer>{{brand}} Inc.</footer></body></html>",
		"text": "{{brand}}\n\n{{content}}\n\n-- {{brand}} Inc."})
	tp := createTemplate(t, own, map[string]any{"code": "order", "channel": "email", "name": "Order"})
	addVersion(t, own, tp.ID, map[string]any{"title": "Order {{order}} for {{name}}", "text": "Hello {{name}}, order {{order}} ships {{when}}.",
		"html": "<p>Hello {{name}}, order <b>{{order}}</b></p>", "layoutId": lay.ID})

	// A draft: preview names the version; without one there is nothing
	// a send would use yet (400, as the send answers).
	p := preview(t, own, tp.ID, map[string]any{"version": 1, "variables": map[string]string{"name": "<Kim>", "order": "A-7"}})
	require.Equal(t, []string{"when", "brand"}, p.MissingVariables)
	require.Equal(t, 1, p.Version)
	require.Equal(t, lay.ID, deref(p.LayoutID))
	require.Nil(t, p.Locale)
	require.Equal(t, "Order A-7 for <Kim>", deref(p.Title))
	require.Equal(t, "\n\nHello <Kim>, order A-7 ships .\n\n--  Inc.", p.Text)
	require.Equal(t, "<html><body><h1></h1><p>Hello &lt;Kim&gt;, order <b>A-7</b></p><footer> Inc.</footer></body></html>", deref(p.HTML))
	sp := sendProblem(t, b.key, mail("kim@example.com", map[string]any{"templateCode": "order"}), http.StatusBadRequest)
	pp := notifytest.DashboardProblem(t, own, "POST", "/v1/templates/"+tp.ID+"/preview", map[string]any{}, http.StatusBadRequest)
	require.Equal(t, sp.Detail, pp.Detail)
	require.Equal(t, "Template order has no published version", pp.Detail)

	// Published: the preview without a version is exactly what the
	// vendor receives for a send with the same variables.
	publish(t, own, tp.ID, 1)
	vars := map[string]string{"name": "<Kim>", "order": "A-7", "when": "today", "brand": "Acme & Co"}
	p = preview(t, own, tp.ID, map[string]any{"variables": vars})
	require.Empty(t, p.MissingVariables)
	require.Contains(t, deref(p.HTML), "<h1>Acme &amp; Co</h1>")
	got := b.delivered(t, "mailx_email", "kim@example.com", mail("kim@example.com", map[string]any{"templateCode": "order", "templateVariables": vars}))
	require.Equal(t, deref(p.Title), got.Subject)
	require.Equal(t, p.Text, got.Text)
	require.Equal(t, deref(p.HTML), got.HTML)

	// Missing variables: the preview lists them, and the send renders them
	// empty, as the preview shows.
	p = preview(t, own, tp.ID, map[string]any{"variables": map[string]string{"order": "B-1"}})
	require.Equal(t, []string{"name", "when", "brand"}, p.MissingVariables)
	got = b.delivered(t, "mailx_email", "lee@example.com", mail("lee@example.com", map[string]any{"templateCode": "order",
		"templateVariables": map[string]string{"order": "B-1"}}))
	require.Equal(t, deref(p.Title), got.Subject)
	require.Equal(t, p.Text, got.Text)
	require.Equal(t, deref(p.HTML), got.HTML)

	// A variable that breaks the subject is refused by both alike.
	bad := map[string]string{"name": "a\nb"}
	sp = sendProblem(t, b.key, mail("x@example.com", map[string]any{"templateCode": "order", "templateVariables": bad}), http.StatusBadRequest)
	pp = notifytest.DashboardProblem(t, own, "POST", "/v1/templates/"+tp.ID+"/preview", map[string]any{"variables": bad}, http.StatusBadRequest)
	require.Equal(t, sp.Detail, pp.Detail)

	// Preview changes nothing (no request, no audit entry).
	var logs struct {
		Logs []map[string]any `json:"logs"`
	}
	require.NoError(t, notifytest.DashboardCall(t, own, "GET", "/v1/audit-logs?targetType=template", nil, http.StatusOK).Decode(&logs))
	for _, l := range logs.Logs {
		require.NotContains(t, l["action"], "preview")
	}

	// Bad preview bodies: 400 problem+json.
	for name, body := range map[string]any{
		"unknown field":       map[string]any{"vars": map[string]string{}},
		"version and locale":  map[string]any{"version": 1, "locale": "ko"},
		"zero version":        map[string]any{"version": 0},
		"string version":      map[string]any{"version": "1"},
		"bad locale":          map[string]any{"locale": "ko_KR"},
		"number variable":     map[string]any{"variables": map[string]any{"name": 5}},
		"not json":            []byte("{"),
		"variables not a map": map[string]any{"variables": []string{"a"}},
	} {
		r := notifytest.DashboardCall(t, own, "POST", "/v1/templates/"+tp.ID+"/preview", body, http.StatusBadRequest)
		require.Equal(t, "application/problem+json", r.Header.Get("Content-Type"), name)
		require.Equal(t, "SVC-40000", r.Problem().Code, name)
	}
	require.Equal(t, "Template version not found", notifytest.DashboardProblem(t, own, "POST", "/v1/templates/"+tp.ID+"/preview", map[string]any{"version": 9}, http.StatusNotFound).Detail)
	require.Equal(t, "Template not found", notifytest.DashboardProblem(t, own, "POST", "/v1/templates/0190aaaa-0000-7000-8000-000000000000/preview", map[string]any{}, http.StatusNotFound).Detail)
}

func TestLayouts(t *testing.T) {
	t.Parallel()
	b := setup(t)
	own := b.env.Owner
	b.mailSetup(t)

	l := createLayout(t, own, map[string]any{"name": "plain", "text": "HEAD\n{{content}}\nFOOT"})
	require.Equal(t, "plain", l.Name)
	require.Nil(t, l.HTML)
	require.Equal(t, "HEAD\n{{content}}\nFOOT", deref(l.Text))
	require.True(t, strings.HasSuffix(l.CreatedAt, "Z"))
	second := createLayout(t, own, map[string]any{"name": "second", "html": "<div>{{content}}</div>"})
	var list struct {
		Layouts []layoutOut `json:"layouts"`
	}
	require.NoError(t, notifytest.DashboardCall(t, own, "GET", "/v1/layouts", nil, http.StatusOK).Decode(&list))
	require.Len(t, list.Layouts, 2)
	require.Equal(t, l.ID, list.Layouts[0].ID)
	require.Equal(t, second.ID, list.Layouts[1].ID)
	require.Equal(t, l, decodeLayout(t, notifytest.DashboardCall(t, own, "GET", "/v1/layouts/"+l.ID, nil, http.StatusOK)))

	// Validation: one {{content}} slot per part, at least one part.
	long := func(n int) string { return strings.Repeat("a", n) }
	for name, body := range map[string]any{
		"no name":        map[string]any{"text": "{{content}}"},
		"null name":      map[string]any{"name": nil, "text": "{{content}}"},
		"blank name":     map[string]any{"name": " ", "text": "{{content}}"},
		"long name":      map[string]any{"name": long(121), "text": "{{content}}"},
		"no part":        map[string]any{"name": "x"},
		"empty parts":    map[string]any{"name": "x", "html": "", "text": ""},
		"no slot":        map[string]any{"name": "x", "html": "<p>{{contents}}</p>"},
		"two slots":      map[string]any{"name": "x", "text": "{{content}} {{ content }}"},
		"text no slot":   map[string]any{"name": "x", "html": "{{content}}", "text": "nothing"},
		"long html":      map[string]any{"name": "x", "html": "{{content}}" + long(500_000)},
		"unknown field":  map[string]any{"name": "x", "text": "{{content}}", "header": "h"},
		"number text":    map[string]any{"name": "x", "text": 5},
		"array body":     []any{},
		"trailing bytes": []byte(`{"name":"x","text":"{{content}}"} x`),
	} {
		r := notifytest.DashboardCall(t, own, "POST", "/v1/layouts", body, http.StatusBadRequest)
		require.Equal(t, "application/problem+json", r.Header.Get("Content-Type"), name)
		require.Equal(t, "SVC-40000", r.Problem().Code, name)
	}
	require.Equal(t, "SVC-40900", notifytest.DashboardProblem(t, own, "POST", "/v1/layouts", map[string]any{"name": "plain", "text": "{{content}}"}, http.StatusConflict).Code)
	require.Equal(t, "SVC-40900", notifytest.DashboardProblem(t, own, "PATCH", "/v1/layouts/"+second.ID, map[string]any{"name": "plain"}, http.StatusConflict).Code)
	// Clearing the only part is refused; clearing one of two is fine.
	notifytest.DashboardProblem(t, own, "PATCH", "/v1/layouts/"+second.ID, map[string]any{"html": nil}, http.StatusBadRequest)
	notifytest.DashboardProblem(t, own, "PATCH", "/v1/layouts/"+second.ID, map[string]any{"name": nil}, http.StatusBadRequest)

	// A version names a layout: email templates only, layouts of the
	// workspace only.
	smsT := createTemplate(t, own, map[string]any{"code": "s", "channel": "sms", "name": "S"})
	require.Contains(t, notifytest.DashboardProblem(t, own, "POST", "/v1/templates/"+smsT.ID+"/versions", map[string]any{"text": "x", "layoutId": l.ID}, http.StatusBadRequest).Detail, "email")
	tp := createTemplate(t, own, map[string]any{"code": "news", "channel": "email", "name": "News"})
	notifytest.DashboardProblem(t, own, "POST", "/v1/templates/"+tp.ID+"/versions", map[string]any{"text": "x", "layoutId": "0190aaaa-0000-7000-8000-000000000000"}, http.StatusBadRequest)
	v := addVersion(t, own, tp.ID, map[string]any{"title": "News", "text": "Body {{n}}", "layoutId": l.ID})
	publish(t, own, tp.ID, v.Version)
	got := b.delivered(t, "mailx_email", "a@example.com", mail("a@example.com", map[string]any{"templateCode": "news", "templateVariables": map[string]string{"n": "1"}}))
	require.Equal(t, "HEAD\nBody 1\nFOOT", got.Text)
	require.Empty(t, got.HTML, "no HTML part: the layout's text part only")

	// Sends after an update use the new header and footer at once; a
	// content.text override is wrapped too.
	upd := decodeLayout(t, notifytest.DashboardCall(t, own, "PATCH", "/v1/layouts/"+l.ID, map[string]any{"text": "NEW {{content}} END", "html": "<main>{{content}}</main>"}, http.StatusOK))
	require.Equal(t, "plain", upd.Name)
	got = b.delivered(t, "mailx_email", "b@example.com", mail("b@example.com", map[string]any{"templateCode": "news", "text": "Override",
		"html": "<p>Override</p>"}))
	require.Equal(t, "NEW Override END", got.Text)
	require.Equal(t, "<main><p>Override</p></main>", got.HTML)
	require.Equal(t, "News", got.Subject)

	// A template version without a layout is not wrapped; a plain send
	// neither.
	v2 := addVersion(t, own, tp.ID, map[string]any{"title": "News", "text": "Bare"})
	publish(t, own, tp.ID, v2.Version)
	require.Equal(t, "Bare", b.delivered(t, "mailx_email", "c@example.com", mail("c@example.com", map[string]any{"templateCode": "news"})).Text)
	require.Equal(t, "Plain", b.delivered(t, "mailx_email", "d@example.com", mail("d@example.com", map[string]any{"text": "Plain", "title": "T"})).Text)

	// A layout in use cannot be deleted; an unused one can.
	require.Equal(t, "SVC-40900", notifytest.DashboardProblem(t, own, "DELETE", "/v1/layouts/"+l.ID, nil, http.StatusConflict).Code)
	notifytest.DashboardCall(t, own, "DELETE", "/v1/layouts/"+second.ID, nil, http.StatusNoContent)
	require.Equal(t, "Layout not found", notifytest.DashboardProblem(t, own, "GET", "/v1/layouts/"+second.ID, nil, http.StatusNotFound).Detail)
	notifytest.DashboardProblem(t, own, "DELETE", "/v1/layouts/"+second.ID, nil, http.StatusNotFound)
	notifytest.DashboardProblem(t, own, "DELETE", "/v1/layouts/"+l.ID, map[string]any{"x": 1}, http.StatusBadRequest)

	// Every layout write is audited.
	for action, n := range map[string]int{"layout.create": 2, "layout.update": 1, "layout.delete": 1} {
		logs := notifytest.Field[[]map[string]any](t, notifytest.DashboardCall(t, own, "GET", "/v1/audit-logs?action="+action, nil, http.StatusOK), "logs")
		require.Len(t, logs, n, action)
		entry := logs[0]
		require.Equal(t, "layout", entry["targetType"], action)
		require.NotEmpty(t, entry["payload"].(map[string]any)["name"], action)
	}
	require.NoError(t, notifytest.DashboardCall(t, own, "GET", "/v1/layouts", nil, http.StatusOK).Decode(&list))
	require.Len(t, list.Layouts, 1)
}

func TestTemplateLocales(t *testing.T) {
	t.Parallel()
	b := setup(t)
	own := b.env.Owner
	prov := b.env.SimProvider(t, "vendora_sms", "aligo", nil)
	notifytest.PutRoutes(t, b.env.Owner, notifytest.Route{Channel: "sms", ProviderAccountID: prov, Priority: 1})

	tp := createTemplate(t, own, map[string]any{"code": "hello", "channel": "sms", "name": "Hello"})
	addVersion(t, own, tp.ID, map[string]any{"text": "Hello {{name}}"})
	ko := addVersion(t, own, tp.ID, map[string]any{"text": "안녕하세요 {{name}}", "locale": "ko"})
	require.Equal(t, "ko", deref(ko.Locale))
	koKR := addVersion(t, own, tp.ID, map[string]any{"text": "안녕 KR {{name}}", "locale": "KO-kr"})
	require.Equal(t, "ko-KR", deref(koKR.Locale), "stored in canonical case")
	hant := addVersion(t, own, tp.ID, map[string]any{"text": "你好 {{name}}", "locale": "zh-hant"})
	require.Equal(t, "zh-Hant", deref(hant.Locale))
	addVersion(t, own, tp.ID, map[string]any{"text": "こんにちは", "locale": "ja"}) // 5: a draft
	for _, n := range []int{1, 2, 3, 4} {
		publish(t, own, tp.ID, n)
	}
	newerKo := addVersion(t, own, tp.ID, map[string]any{"text": "안녕하세요 v6 {{name}}", "locale": "ko"})
	publish(t, own, tp.ID, newerKo.Version)
	// latestPublishedVersion stays that of the default locale.
	require.Equal(t, 1, *getTemplate(t, own, tp.ID).LatestPublishedVersion)

	to := 0
	sendIn := func(locale any) string {
		to++
		addr := "0101111" + strings.Repeat("0", 4-len(itoa(to))) + itoa(to)
		body := sms(addr, map[string]any{"templateCode": "hello", "templateVariables": map[string]string{"name": "Kim"}})
		if locale != nil {
			body["locale"] = locale
		}
		return b.delivered(t, "vendora_sms", addr, body).Text
	}
	for locale, want := range map[any]string{
		nil:          "Hello Kim",
		"ko-KR":      "안녕 KR Kim",
		"ko-kr":      "안녕 KR Kim",
		"ko":         "안녕하세요 v6 Kim", // the highest published ko version
		"ko-KP":      "안녕하세요 v6 Kim", // language fallback
		"zh-Hant-TW": "你好 Kim",       // zh-Hant-TW, then zh-Hant
		"zh":         "Hello Kim",    // zh-Hant is more specific than zh: no match
		"fr-FR":      "Hello Kim",    // default locale
		"ja":         "Hello Kim",    // ja is only a draft
	} {
		require.Equal(t, want, sendIn(locale), "locale %v", locale)
		if locale != nil {
			p := preview(t, own, tp.ID, map[string]any{"locale": locale, "variables": map[string]string{"name": "Kim"}})
			require.Equal(t, want, p.Text, "preview locale %v", locale)
		}
	}
	p := preview(t, own, tp.ID, map[string]any{"locale": "ko-KR"})
	require.Equal(t, "ko-KR", deref(p.Locale))
	require.Equal(t, koKR.Version, p.Version)
	require.Equal(t, []string{"name"}, p.MissingVariables)

	// Bulk: per item.
	r, err := b.key.Signed(ctx, "POST", "/v1/notifications/bulk", map[string]any{"items": []any{
		map[string]any{"channel": "sms", "recipient": map[string]any{"address": "01099990001"}, "content": map[string]any{"templateCode": "hello"}, "locale": "ko"},
		map[string]any{"channel": "sms", "recipient": map[string]any{"address": "01099990002"}, "content": map[string]any{"templateCode": "hello"}},
	}})
	require.NoError(t, err)
	require.Equal(t, http.StatusCreated, r.Status, string(r.Body))
	var bulk struct {
		Items []notifytest.Accepted `json:"items"`
	}
	require.NoError(t, r.Data(&bulk))
	require.Len(t, bulk.Items, 2)
	for _, it := range bulk.Items {
		require.Equal(t, "sent", notifytest.Wait(t, b.key, it.RequestID).Status)
	}
	require.Equal(t, "안녕하세요 v6 ", b.env.Sim.Messages("vendora_sms", "01099990001", 0)[0].Text)
	require.Equal(t, "Hello ", b.env.Sim.Messages("vendora_sms", "01099990002", 0)[0].Text)

	// Invalid locales: 400 problem+json, on the send, the bulk item, the
	// version and the preview alike.
	for _, bad := range []any{"", "ko_KR", "k", "korean", "ko-", "-ko", "ko--KR", "ko-KR-x-private", "ko-u-ca-buddhist", "12", "ko-KR-KR", 5, strings.Repeat("a", 40)} {
		body := sms("01011112222", map[string]any{"templateCode": "hello"})
		body["locale"] = bad
		p := sendProblem(t, b.key, body, http.StatusBadRequest)
		require.Equal(t, "SVC-40000", p.Code, "%v", bad)
		require.Contains(t, p.Detail, "locale", "%v", bad)
		r, err := b.key.Signed(ctx, "POST", "/v1/notifications/bulk", map[string]any{"items": []any{sms("01011112222", map[string]any{"text": "x"}), body}})
		require.NoError(t, err)
		require.Equal(t, http.StatusBadRequest, r.Status, "%v: %s", bad, r.Body)
		require.Contains(t, r.Problem().Detail, "items[1]", "%v", bad)
		notifytest.DashboardProblem(t, own, "POST", "/v1/templates/"+tp.ID+"/versions", map[string]any{"text": "x", "locale": bad}, http.StatusBadRequest)
		notifytest.DashboardProblem(t, own, "POST", "/v1/templates/"+tp.ID+"/preview", map[string]any{"locale": bad}, http.StatusBadRequest)
	}

	// A locale on a plain text send is accepted and changes nothing.
	plain := sms("01077770000", map[string]any{"text": "plain {{x}}"})
	plain["locale"] = "ko"
	require.Equal(t, "plain {{x}}", b.delivered(t, "vendora_sms", "01077770000", plain).Text)

	// A template with localized versions only: a send in another locale
	// has nothing to fall back to (400), one without a locale neither.
	only := createTemplate(t, own, map[string]any{"code": "koonly", "channel": "sms", "name": "K"})
	addVersion(t, own, only.ID, map[string]any{"text": "한국어", "locale": "ko"})
	publish(t, own, only.ID, 1)
	require.Nil(t, getTemplate(t, own, only.ID).LatestPublishedVersion)
	require.Equal(t, "Template koonly has no published version", sendProblem(t, b.key, sms("01011112222", map[string]any{"templateCode": "koonly"}), http.StatusBadRequest).Detail)
	body := sms("01011112222", map[string]any{"templateCode": "koonly"})
	body["locale"] = "de"
	require.Equal(t, "Template koonly has no published version for locale de or its default locale", sendProblem(t, b.key, body, http.StatusBadRequest).Detail)
	body["locale"] = "ko-KR"
	res := notifytest.Send(t, b.key, body)
	require.Equal(t, "sent", notifytest.Wait(t, b.key, res.RequestID).Status)
}

func itoa(n int) string {
	const digits = "0123456789"
	if n < 10 {
		return digits[n : n+1]
	}
	return itoa(n/10) + digits[n%10:n%10+1]
}

func TestLayoutRolesAndIsolation(t *testing.T) {
	t.Parallel()
	b := setup(t)
	own := b.env.Owner
	l := createLayout(t, own, map[string]any{"name": "brand", "text": "{{content}}"})
	tp := createTemplate(t, own, map[string]any{"code": "w", "channel": "email", "name": "W"})
	addVersion(t, own, tp.ID, map[string]any{"text": "Hi {{name}}", "layoutId": l.ID})
	viewer := b.env.Member(t, "viewer")
	operator := b.env.Member(t, "operator")

	// Every member previews and reads; viewers write nothing.
	require.Equal(t, "Hi V", preview(t, viewer, tp.ID, map[string]any{"version": 1, "variables": map[string]string{"name": "V"}}).Text)
	notifytest.DashboardCall(t, viewer, "GET", "/v1/layouts", nil, http.StatusOK)
	notifytest.DashboardCall(t, viewer, "GET", "/v1/layouts/"+l.ID, nil, http.StatusOK)
	for _, c := range []struct {
		method, path string
		body         any
	}{{"POST", "/v1/layouts", map[string]any{"name": "v", "text": "{{content}}"}}, {"PATCH", "/v1/layouts/" + l.ID, map[string]any{"name": "v"}},
		{"DELETE", "/v1/layouts/" + l.ID, nil}} {
		require.Equal(t, "SVC-40300", notifytest.DashboardProblem(t, viewer, c.method, c.path, c.body, http.StatusForbidden).Code, c.method+" "+c.path)
	}
	// Operators manage layouts.
	ol := createLayout(t, operator, map[string]any{"name": "op", "html": "<p>{{content}}</p>"})
	notifytest.DashboardCall(t, operator, "PATCH", "/v1/layouts/"+ol.ID, map[string]any{"name": "op2"}, http.StatusOK)
	notifytest.DashboardCall(t, operator, "DELETE", "/v1/layouts/"+ol.ID, nil, http.StatusNoContent)
	notifytest.DashboardProblem(t, client.New(b.env.Daemon.URL()), "GET", "/v1/layouts", nil, http.StatusUnauthorized)

	// Another workspace's template and layout ids answer 404 (400 when
	// named in a version body), and its list is empty.
	other, _ := b.env.NewWorkspace(t, "Other", "other@example.com")
	require.Equal(t, "Template not found", notifytest.DashboardProblem(t, other, "POST", "/v1/templates/"+tp.ID+"/preview", map[string]any{}, http.StatusNotFound).Detail)
	for _, c := range []struct {
		method string
		body   any
	}{{"GET", nil}, {"PATCH", map[string]any{"name": "stolen"}}, {"DELETE", nil}} {
		require.Equal(t, "Layout not found", notifytest.DashboardProblem(t, other, c.method, "/v1/layouts/"+l.ID, c.body, http.StatusNotFound).Detail, c.method)
	}
	var list struct {
		Layouts []layoutOut `json:"layouts"`
	}
	require.NoError(t, notifytest.DashboardCall(t, other, "GET", "/v1/layouts", nil, http.StatusOK).Decode(&list))
	require.Empty(t, list.Layouts)
	mine := createTemplate(t, other, map[string]any{"code": "w", "channel": "email", "name": "W"})
	notifytest.DashboardProblem(t, other, "POST", "/v1/templates/"+mine.ID+"/versions", map[string]any{"text": "x", "layoutId": l.ID}, http.StatusBadRequest)
	// Names are unique per workspace only.
	createLayout(t, other, map[string]any{"name": "brand", "text": "{{content}}"})
	require.Equal(t, "brand", decodeLayout(t, notifytest.DashboardCall(t, own, "GET", "/v1/layouts/"+l.ID, nil, http.StatusOK)).Name)
}

// An OTP mail through a template whose version names a layout is wrapped
// too: OTP sends render through the same code.
func TestOTPThroughLayout(t *testing.T) {
	t.Parallel()
	b := setup(t)
	own := b.env.Owner
	b.mailSetup(t)
	l := createLayout(t, own, map[string]any{"name": "brand", "text": "ACME\n{{content}}\nbye", "html": "<div>{{content}}</div>"})
	tp := createTemplate(t, own, map[string]any{"code": "otpmail", "channel": "email", "name": "OTP"})
	addVersion(t, own, tp.ID, map[string]any{"title": "Code", "text": "Your code {{code}}", "html": "<b>{{code}}</b>", "layoutId": l.ID})
	publish(t, own, tp.ID, 1)
	key, _, err := b.env.Owner.CreateAPIKey(ctx, "otp", "otp:send")
	require.NoError(t, err)
	r, err := key.Signed(ctx, "POST", "/v1/otp", map[string]any{"channel": "email", "to": "kim@example.com", "templateCode": "otpmail"})
	require.NoError(t, err)
	require.Equal(t, http.StatusCreated, r.Status, string(r.Body))
	msgs := b.env.Sim.Messages("mailx_email", "kim@example.com", 0)
	require.Len(t, msgs, 1)
	code := strings.TrimSuffix(strings.TrimPrefix(msgs[0].Text, "ACME\nYour code "), "\nbye")
	require.Len(t, code, 6, msgs[0].Text)
	require.Equal(t, "<div><b>"+code+"</b></div>", msgs[0].HTML)
	require.Equal(t, "Code", msgs[0].Subject)
}
