package templates_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/notifyd/notifyd/client"
	"github.com/notifyd/notifyd/internal/notifytest"
)

func TestTemplateCRUD(t *testing.T) {
	t.Parallel()
	b := setup(t)
	own := b.env.Owner

	r := notifytest.DashboardCall(t, own, "POST", "/v1/templates", map[string]any{"code": "welcome", "channel": "sms", "name": "Welcome"}, http.StatusCreated)
	var raw map[string]map[string]any
	require.NoError(t, r.Decode(&raw))
	for _, f := range []string{"id", "code", "channel", "name", "status", "reviewStatus", "providerAccountId", "vendorTemplateId",
		"senderProfileKey", "latestPublishedVersion", "createdAt", "updatedAt"} {
		require.Contains(t, raw["template"], f)
	}
	require.NotContains(t, raw["template"], "versions")
	tp := decodeTemplate(t, r)
	require.Equal(t, "welcome", tp.Code)
	require.Equal(t, "sms", tp.Channel)
	require.Equal(t, "Welcome", tp.Name)
	require.Equal(t, "active", tp.Status)
	require.Nil(t, tp.ReviewStatus)
	require.Nil(t, tp.ProviderAccountID)
	require.Nil(t, tp.VendorTemplateID)
	require.Nil(t, tp.SenderProfileKey)
	require.Nil(t, tp.LatestPublishedVersion)
	require.True(t, strings.HasSuffix(tp.CreatedAt, "Z"))

	got := getTemplate(t, own, tp.ID)
	require.NotNil(t, got.Versions)
	require.Empty(t, *got.Versions)

	v1 := addVersion(t, own, tp.ID, map[string]any{"text": "Hello {{name}}"})
	require.Equal(t, 1, v1.Version)
	require.Nil(t, v1.Title)
	require.Nil(t, v1.HTML)
	require.Nil(t, v1.PublishedAt)
	v2 := addVersion(t, own, tp.ID, map[string]any{"title": "Hi", "text": "Hello again", "html": "<p>Hello again</p>"})
	require.Equal(t, 2, v2.Version)
	require.Equal(t, "Hi", *v2.Title)
	require.Equal(t, "<p>Hello again</p>", *v2.HTML)

	got = getTemplate(t, own, tp.ID)
	require.Len(t, *got.Versions, 2)
	require.Equal(t, 2, (*got.Versions)[0].Version, "newest first")
	require.Equal(t, 1, (*got.Versions)[1].Version)
	require.Nil(t, got.LatestPublishedVersion)

	p1 := publish(t, own, tp.ID, 1)
	require.NotNil(t, p1.PublishedAt)
	require.Equal(t, "Hello {{name}}", p1.Text)
	again := publish(t, own, tp.ID, 1)
	require.Equal(t, *p1.PublishedAt, *again.PublishedAt, "publishedAt is set once")
	require.Equal(t, 1, *getTemplate(t, own, tp.ID).LatestPublishedVersion)
	publish(t, own, tp.ID, 2)
	require.Equal(t, 2, *getTemplate(t, own, tp.ID).LatestPublishedVersion)

	require.Equal(t, "Template version not found", notifytest.DashboardProblem(t, own, "POST", "/v1/templates/"+tp.ID+"/versions/9/publish", nil, http.StatusNotFound).Detail)
	notifytest.DashboardProblem(t, own, "POST", "/v1/templates/"+tp.ID+"/versions/x/publish", nil, http.StatusNotFound)

	// PATCH: name, status, binding fields; null clears a binding field.
	up := decodeTemplate(t, notifytest.DashboardCall(t, own, "PATCH", "/v1/templates/"+tp.ID,
		map[string]any{"name": "Welcome 2", "status": "inactive", "vendorTemplateId": "VT-1", "senderProfileKey": "PF-1"}, http.StatusOK))
	require.Equal(t, "Welcome 2", up.Name)
	require.Equal(t, "inactive", up.Status)
	require.Equal(t, "VT-1", *up.VendorTemplateID)
	require.Equal(t, "PF-1", *up.SenderProfileKey)
	require.Equal(t, 2, *up.LatestPublishedVersion)
	require.Equal(t, "welcome", up.Code)
	up = decodeTemplate(t, notifytest.DashboardCall(t, own, "PATCH", "/v1/templates/"+tp.ID, map[string]any{"vendorTemplateId": nil}, http.StatusOK))
	require.Nil(t, up.VendorTemplateID)
	require.Equal(t, "PF-1", *up.SenderProfileKey)
	require.Equal(t, "inactive", up.Status)

	// Bind to a provider of the same channel.
	prov := b.env.SimProvider(t, "vendora_sms", "aligo", nil)
	up = decodeTemplate(t, notifytest.DashboardCall(t, own, "PATCH", "/v1/templates/"+tp.ID, map[string]any{"providerAccountId": prov}, http.StatusOK))
	require.Equal(t, prov, *up.ProviderAccountID)

	second := createTemplate(t, own, map[string]any{"code": "second", "channel": "email", "name": "Second", "providerAccountId": nil})
	var list struct {
		Templates []templateOut `json:"templates"`
	}
	require.NoError(t, notifytest.DashboardCall(t, own, "GET", "/v1/templates", nil, http.StatusOK).Decode(&list))
	require.Len(t, list.Templates, 2)
	require.Equal(t, tp.ID, list.Templates[0].ID)
	require.Equal(t, second.ID, list.Templates[1].ID)
	require.Nil(t, list.Templates[0].Versions)

	// Audit entries, in the same transaction as each change.
	for action, n := range map[string]int{"template.create": 2, "template.version.create": 2, "template.version.publish": 3, "template.update": 3} {
		var logs struct {
			Logs []struct {
				Action     string `json:"action"`
				TargetType string `json:"targetType"`
				TargetID   string `json:"targetId"`
			} `json:"logs"`
		}
		require.NoError(t, notifytest.DashboardCall(t, own, "GET", "/v1/audit-logs?action="+action, nil, http.StatusOK).Decode(&logs))
		require.Len(t, logs.Logs, n, action)
		require.Equal(t, "template", logs.Logs[0].TargetType)
	}
}

func TestTemplateValidation(t *testing.T) {
	t.Parallel()
	b := setup(t)
	own := b.env.Owner
	email := notifytest.RegisterProvider(t, own, "mailx_email", "mail", map[string]string{"base_url": b.env.SimURL, "mailx_api_key": "k", "mailx_from": "a@example.com"})
	long := func(n int) string { return strings.Repeat("a", n) }

	for name, body := range map[string]any{
		"no code":          map[string]any{"channel": "sms", "name": "n"},
		"empty code":       map[string]any{"code": "", "channel": "sms", "name": "n"},
		"null code":        map[string]any{"code": nil, "channel": "sms", "name": "n"},
		"long code":        map[string]any{"code": long(121), "channel": "sms", "name": "n"},
		"no channel":       map[string]any{"code": "c", "name": "n"},
		"bad channel":      map[string]any{"code": "c", "channel": "fax", "name": "n"},
		"no name":          map[string]any{"code": "c", "channel": "sms"},
		"blank name":       map[string]any{"code": "c", "channel": "sms", "name": "  "},
		"long name":        map[string]any{"code": "c", "channel": "sms", "name": long(201)},
		"unknown field":    map[string]any{"code": "c", "channel": "sms", "name": "n", "color": "red"},
		"status at create": map[string]any{"code": "c", "channel": "sms", "name": "n", "status": "active"},
		"reviewStatus":     map[string]any{"code": "c", "channel": "msgr_alimtalk", "name": "n", "reviewStatus": "APPROVED"},
		"number code":      map[string]any{"code": 5, "channel": "sms", "name": "n"},
		"unknown provider": map[string]any{"code": "c", "channel": "sms", "name": "n", "providerAccountId": "0190aaaa-0000-7000-8000-000000000000"},
		"provider channel": map[string]any{"code": "c", "channel": "sms", "name": "n", "providerAccountId": email},
		"long vendor id":   map[string]any{"code": "c", "channel": "sms", "name": "n", "vendorTemplateId": long(201)},
		"long sender key":  map[string]any{"code": "c", "channel": "sms", "name": "n", "senderProfileKey": long(201)},
		"array body":       []any{},
		"not json":         []byte("{"),
		"empty body":       nil,
		"trailing garbage": []byte(`{"code":"c","channel":"sms","name":"n"} x`),
		"number name":      map[string]any{"code": "c", "channel": "sms", "name": 7},
	} {
		p := notifytest.DashboardProblem(t, own, "POST", "/v1/templates", body, http.StatusBadRequest)
		require.Equal(t, "SVC-40000", p.Code, name)
	}
	require.Contains(t, notifytest.DashboardProblem(t, own, "POST", "/v1/templates", map[string]any{"code": "c", "channel": "sms", "name": "n", "color": "red"},
		http.StatusBadRequest).Detail, "color")

	// Exactly at the limits is fine; a binding to the right channel too.
	tp := createTemplate(t, own, map[string]any{"code": long(120), "channel": "email", "name": long(200), "providerAccountId": email,
		"vendorTemplateId": long(200), "senderProfileKey": long(200)})
	require.Equal(t, email, *tp.ProviderAccountID)
	path := "/v1/templates/" + tp.ID

	for name, body := range map[string]any{
		"bad status":       map[string]any{"status": "deleted"},
		"null status":      map[string]any{"status": nil},
		"null name":        map[string]any{"name": nil},
		"empty name":       map[string]any{"name": ""},
		"code":             map[string]any{"code": "other"},
		"channel":          map[string]any{"channel": "sms"},
		"reviewStatus":     map[string]any{"reviewStatus": "APPROVED"},
		"unknown provider": map[string]any{"providerAccountId": "nope"},
		"long vendor id":   map[string]any{"vendorTemplateId": long(201)},
	} {
		require.Equal(t, "SVC-40000", notifytest.DashboardProblem(t, own, "PATCH", path, body, http.StatusBadRequest).Code, name)
	}
	// Clearing the binding is allowed.
	up := decodeTemplate(t, notifytest.DashboardCall(t, own, "PATCH", path, map[string]any{"providerAccountId": nil}, http.StatusOK))
	require.Nil(t, up.ProviderAccountID)

	for name, body := range map[string]any{
		"no text":       map[string]any{"title": "t"},
		"null text":     map[string]any{"text": nil},
		"empty text":    map[string]any{"text": ""},
		"long text":     map[string]any{"text": long(100_001)},
		"long title":    map[string]any{"text": "x", "title": long(201)},
		"long html":     map[string]any{"text": "x", "html": long(500_001)},
		"unknown field": map[string]any{"text": "x", "version": 3},
	} {
		require.Equal(t, "SVC-40000", notifytest.DashboardProblem(t, own, "POST", path+"/versions", body, http.StatusBadRequest).Code, name)
	}
	v := addVersion(t, own, tp.ID, map[string]any{"text": long(100_000), "title": long(200), "html": long(500_000)})
	require.Equal(t, 1, v.Version)
	require.Len(t, v.Text, 100_000)

	// Review status: messenger templates only, and only the three values.
	require.Equal(t, "SVC-40000", notifytest.DashboardProblem(t, own, "PUT", path+"/review-status", map[string]any{"reviewStatus": "APPROVED"}, http.StatusBadRequest).Code)
	msgr := createTemplate(t, own, map[string]any{"code": "m", "channel": "msgr_alimtalk", "name": "M"})
	require.Equal(t, "PENDING", *msgr.ReviewStatus)
	for _, body := range []any{map[string]any{"reviewStatus": "approved"}, map[string]any{"reviewStatus": nil}, map[string]any{},
		map[string]any{"reviewStatus": "APPROVED", "x": 1}} {
		notifytest.DashboardProblem(t, own, "PUT", "/v1/templates/"+msgr.ID+"/review-status", body, http.StatusBadRequest)
	}
	require.Equal(t, "APPROVED", *review(t, own, msgr.ID, "APPROVED").ReviewStatus)
	require.Equal(t, "REJECTED", *review(t, own, msgr.ID, "REJECTED").ReviewStatus)

	// Unknown template ids answer 404 everywhere.
	const missing = "/v1/templates/0190aaaa-0000-7000-8000-000000000000"
	for _, c := range []struct {
		method, path string
		body         any
	}{{"GET", missing, nil}, {"PATCH", missing, map[string]any{"name": "x"}}, {"POST", missing + "/versions", map[string]any{"text": "x"}},
		{"POST", missing + "/versions/1/publish", nil}, {"PUT", missing + "/review-status", map[string]any{"reviewStatus": "APPROVED"}}} {
		require.Equal(t, "Template not found", notifytest.DashboardProblem(t, own, c.method, c.path, c.body, http.StatusNotFound).Detail, c.method+" "+c.path)
	}
}

func TestTemplateDuplicateCode(t *testing.T) {
	t.Parallel()
	b := setup(t)
	own := b.env.Owner
	createTemplate(t, own, map[string]any{"code": "otp", "channel": "sms", "name": "OTP"})
	p := notifytest.DashboardProblem(t, own, "POST", "/v1/templates", map[string]any{"code": "otp", "channel": "sms", "name": "Again"}, http.StatusConflict)
	require.Equal(t, "SVC-40900", p.Code)
	// Same code on another channel is a different template.
	createTemplate(t, own, map[string]any{"code": "otp", "channel": "email", "name": "OTP mail"})
	// The transaction was not poisoned: the store still answers afterwards.
	var list struct {
		Templates []templateOut `json:"templates"`
	}
	require.NoError(t, notifytest.DashboardCall(t, own, "GET", "/v1/templates", nil, http.StatusOK).Decode(&list))
	require.Len(t, list.Templates, 2)
}

func TestTemplateRoles(t *testing.T) {
	t.Parallel()
	b := setup(t)
	tp := createTemplate(t, b.env.Owner, map[string]any{"code": "m", "channel": "msgr_alimtalk", "name": "M"})
	viewer := b.env.Member(t, "viewer")
	operator := b.env.Member(t, "operator")
	admin := b.env.Member(t, "admin")

	// Viewer reads only.
	notifytest.DashboardCall(t, viewer, "GET", "/v1/templates", nil, http.StatusOK)
	notifytest.DashboardCall(t, viewer, "GET", "/v1/templates/"+tp.ID, nil, http.StatusOK)
	require.Equal(t, "SVC-40300", notifytest.DashboardProblem(t, viewer, "POST", "/v1/templates", map[string]any{"code": "v", "channel": "sms", "name": "V"}, http.StatusForbidden).Code)
	notifytest.DashboardProblem(t, viewer, "PATCH", "/v1/templates/"+tp.ID, map[string]any{"name": "x"}, http.StatusForbidden)
	notifytest.DashboardProblem(t, viewer, "POST", "/v1/templates/"+tp.ID+"/versions", map[string]any{"text": "x"}, http.StatusForbidden)
	notifytest.DashboardProblem(t, viewer, "POST", "/v1/templates/"+tp.ID+"/versions/1/publish", nil, http.StatusForbidden)

	// Operator manages templates but cannot record review results.
	op := createTemplate(t, operator, map[string]any{"code": "o", "channel": "sms", "name": "O"})
	addVersion(t, operator, op.ID, map[string]any{"text": "x"})
	publish(t, operator, op.ID, 1)
	notifytest.DashboardCall(t, operator, "PATCH", "/v1/templates/"+op.ID, map[string]any{"status": "inactive"}, http.StatusOK)
	notifytest.DashboardProblem(t, operator, "PUT", "/v1/templates/"+tp.ID+"/review-status", map[string]any{"reviewStatus": "APPROVED"}, http.StatusForbidden)

	// Admin may.
	require.Equal(t, "APPROVED", *review(t, admin, tp.ID, "APPROVED").ReviewStatus)

	// Anonymous callers are refused.
	anon := client.New(b.env.Daemon.URL())
	notifytest.DashboardProblem(t, anon, "GET", "/v1/templates", nil, http.StatusUnauthorized)
}

func TestTemplateWorkspaceIsolation(t *testing.T) {
	t.Parallel()
	b := setup(t)
	tp := createTemplate(t, b.env.Owner, map[string]any{"code": "shared", "channel": "msgr_alimtalk", "name": "A"})
	addVersion(t, b.env.Owner, tp.ID, map[string]any{"text": "x"})
	other, _ := b.env.NewWorkspace(t, "Other", "other@example.com")

	path := "/v1/templates/" + tp.ID
	for _, c := range []struct {
		method, path string
		body         any
	}{{"GET", path, nil}, {"PATCH", path, map[string]any{"name": "stolen"}}, {"POST", path + "/versions", map[string]any{"text": "x"}},
		{"POST", path + "/versions/1/publish", nil}, {"PUT", path + "/review-status", map[string]any{"reviewStatus": "APPROVED"}}} {
		require.Equal(t, "Template not found", notifytest.DashboardProblem(t, other, c.method, c.path, c.body, http.StatusNotFound).Detail, c.method+" "+c.path)
	}
	var list struct {
		Templates []templateOut `json:"templates"`
	}
	require.NoError(t, notifytest.DashboardCall(t, other, "GET", "/v1/templates", nil, http.StatusOK).Decode(&list))
	require.Empty(t, list.Templates)
	// Codes are unique per workspace only.
	mine := createTemplate(t, other, map[string]any{"code": "shared", "channel": "msgr_alimtalk", "name": "B"})
	require.NotEqual(t, tp.ID, mine.ID)

	// Binding to another workspace's provider is refused.
	prov := b.env.SimProvider(t, "vendorb_msgr", "solapi", nil)
	notifytest.DashboardProblem(t, other, "PATCH", "/v1/templates/"+mine.ID, map[string]any{"providerAccountId": prov}, http.StatusBadRequest)

	// Nothing changed in the first workspace.
	got := getTemplate(t, b.env.Owner, tp.ID)
	require.Equal(t, "A", got.Name)
	require.Equal(t, "PENDING", *got.ReviewStatus)
	require.Nil(t, (*got.Versions)[0].PublishedAt)
}

func TestSendWithTemplate(t *testing.T) {
	t.Parallel()
	b := setup(t)
	own := b.env.Owner
	prov := b.env.SimProvider(t, "vendora_sms", "aligo", nil)
	notifytest.PutRoutes(t, b.env.Owner, notifytest.Route{Channel: "sms", ProviderAccountID: prov, Priority: 1})

	// No such template (also: same code on another channel does not count).
	createTemplate(t, own, map[string]any{"code": "mailonly", "channel": "email", "name": "Mail"})
	for _, code := range []string{"missing", "mailonly"} {
		p := sendProblem(t, b.key, sms("01011112222", map[string]any{"templateCode": code}), http.StatusBadRequest)
		require.Equal(t, "SVC-40000", p.Code)
	}

	// No published version.
	tp := createTemplate(t, own, map[string]any{"code": "welcome", "channel": "sms", "name": "Welcome"})
	sendProblem(t, b.key, sms("01011112222", map[string]any{"templateCode": "welcome"}), http.StatusBadRequest)
	addVersion(t, own, tp.ID, map[string]any{"text": "Hello {{name}}, your order {{order_id}} is ready{{missing}}."})
	sendProblem(t, b.key, sms("01011112222", map[string]any{"templateCode": "welcome"}), http.StatusBadRequest)
	publish(t, own, tp.ID, 1)
	// A newer draft is not used until published.
	addVersion(t, own, tp.ID, map[string]any{"text": "draft {{name}}"})

	res := notifytest.Send(t, b.key, sms("01011112222", map[string]any{"templateCode": "welcome",
		"templateVariables": map[string]string{"name": "Kim", "order_id": "A-7", "unused": "x"}}))
	require.Equal(t, "sent", notifytest.Wait(t, b.key, res.RequestID).Status)
	msgs := b.env.Sim.Messages("vendora_sms", "01011112222", 0)
	require.Len(t, msgs, 1)
	require.Equal(t, "Hello Kim, your order A-7 is ready.", msgs[0].Text)

	// content.text overrides the template's body; variables still apply.
	res = notifytest.Send(t, b.key, sms("01033334444", map[string]any{"templateCode": "welcome", "text": "Override for {{name}}",
		"templateVariables": map[string]string{"name": "Lee"}}))
	require.Equal(t, "sent", notifytest.Wait(t, b.key, res.RequestID).Status)
	msgs = b.env.Sim.Messages("vendora_sms", "01033334444", 0)
	require.Len(t, msgs, 1)
	require.Equal(t, "Override for Lee", msgs[0].Text)

	// Publishing version 2 switches sends to it.
	publish(t, own, tp.ID, 2)
	res = notifytest.Send(t, b.key, sms("01055556666", map[string]any{"templateCode": "welcome"}))
	require.Equal(t, "sent", notifytest.Wait(t, b.key, res.RequestID).Status)
	require.Equal(t, "draft ", b.env.Sim.Messages("vendora_sms", "01055556666", 0)[0].Text)

	// An API key whose allowed-template list excludes the code: 403.
	r := notifytest.DashboardCall(t, own, "POST", "/v1/api-keys", map[string]any{"name": "limited", "scopes": []string{"notifications:send"},
		"allowedTemplateCodes": []string{"other"}}, http.StatusCreated)
	var created struct {
		Key        string `json:"key"`
		HMACSecret string `json:"hmacSecret"`
	}
	require.NoError(t, json.Unmarshal(r.Body, &created))
	limited := *b.key
	limited.APIKey, limited.HMACSecret = created.Key, created.HMACSecret
	p := sendProblem(t, &limited, sms("01011112222", map[string]any{"templateCode": "welcome"}), http.StatusForbidden)
	require.Equal(t, "SVC-40300", p.Code)
	// A plain text send stays allowed for that key.
	notifytest.Send(t, &limited, sms("01011112222", map[string]any{"text": "plain"}))

	// An inactive template cannot be used.
	notifytest.DashboardCall(t, own, "PATCH", "/v1/templates/"+tp.ID, map[string]any{"status": "inactive"}, http.StatusOK)
	sendProblem(t, b.key, sms("01011112222", map[string]any{"templateCode": "welcome"}), http.StatusBadRequest)
}

func TestSendAlimtalkTemplate(t *testing.T) {
	t.Parallel()
	b := setup(t)
	own := b.env.Owner
	prov := b.env.SimProvider(t, "vendorb_msgr", "solapi msgr", nil)
	notifytest.PutRoutes(t, b.env.Owner, notifytest.Route{Channel: "msgr_alimtalk", ProviderAccountID: prov, Priority: 1})
	tp := published(t, own, map[string]any{"code": "order", "channel": "msgr_alimtalk", "name": "Order", "providerAccountId": prov,
		"vendorTemplateId": "KA01TP0000000001", "senderProfileKey": "KA01PF0000000001"}, "#{name}님, 주문 {{order}} 접수. {{name}}")
	require.Equal(t, "PENDING", *tp.ReviewStatus)

	body := map[string]any{"channel": "msgr_alimtalk", "recipient": map[string]any{"address": "01012345678"},
		"content": map[string]any{"templateCode": "order", "templateVariables": map[string]string{"name": "Kim", "order": "A-1"}}}
	require.Contains(t, sendProblem(t, b.key, body, http.StatusBadRequest).Detail, "not approved")
	review(t, own, tp.ID, "REJECTED")
	sendProblem(t, b.key, body, http.StatusBadRequest)
	review(t, own, tp.ID, "APPROVED")

	res := notifytest.Send(t, b.key, body)
	out := notifytest.Wait(t, b.key, res.RequestID)
	require.Equal(t, "sent", out.Status, "final error %v", out.FinalErrorCode)
	require.Equal(t, prov, *out.SelectedProviderAccountID)
	msgs := b.env.Sim.Messages("vendorb_msgr", "", 0)
	require.Len(t, msgs, 1)
	m := msgs[0]
	require.Equal(t, *out.SelectedProviderMessageID, m.ID)
	require.Equal(t, "01012345678", m.To)
	require.Equal(t, "ATA", m.Headers["type"])
	require.Equal(t, "KA01TP0000000001", m.Headers["templateId"])
	require.Equal(t, "KA01PF0000000001", m.Headers["pfId"])
	require.Equal(t, "Kim", m.Headers["variables.#{name}"])
	require.Equal(t, "A-1", m.Headers["variables.#{order}"])
	require.Equal(t, "#{name}님, 주문 A-1 접수. Kim", m.Text)
}

func TestTestSendAlimtalk(t *testing.T) {
	t.Parallel()
	b := setup(t)
	own := b.env.Owner
	p1 := b.env.SimProvider(t, "vendorb_msgr", "msgr one", nil)
	p2 := b.env.SimProvider(t, "vendorb_msgr", "msgr two", nil)
	foreign := published(t, own, map[string]any{"code": "foreign", "channel": "msgr_alimtalk", "name": "F", "providerAccountId": p2,
		"vendorTemplateId": "TP-F", "senderProfileKey": "PF-F"}, "foreign {{x}}")
	review(t, own, foreign.ID, "APPROVED")
	mine := published(t, own, map[string]any{"code": "mine", "channel": "msgr_alimtalk", "name": "M", "providerAccountId": p1,
		"vendorTemplateId": "TP-M", "senderProfileKey": "PF-M"}, "Hi {{who}}")

	ts := func(code string) map[string]any {
		return map[string]any{"mode": "test", "recipient": map[string]any{"address": "01099998888"},
			"content": map[string]any{"templateCode": code, "text": "ignored", "templateVariables": map[string]string{"who": "Park"}}}
	}
	path := "/v1/providers/" + p1 + "/test-send"
	p := notifytest.DashboardProblem(t, own, "POST", path, ts("foreign"), http.StatusForbidden)
	require.Equal(t, "Template is not bound to this provider", p.Detail)
	require.Equal(t, "SVC-40300", p.Code)
	notifytest.DashboardProblem(t, own, "POST", path, ts("mine"), http.StatusBadRequest) // PENDING
	notifytest.DashboardProblem(t, own, "POST", path, ts("nope"), http.StatusBadRequest) // missing
	require.Empty(t, b.env.Sim.Messages("vendorb_msgr", "", 0))

	review(t, own, mine.ID, "APPROVED")
	r := notifytest.DashboardCall(t, own, "POST", path, ts("mine"), http.StatusOK)
	var out struct {
		RequestID         string  `json:"requestId"`
		Status            string  `json:"status"`
		Channel           string  `json:"channel"`
		ProviderMessageID *string `json:"providerMessageId"`
	}
	require.NoError(t, r.Decode(&out))
	require.Equal(t, "sent", out.Status)
	require.Equal(t, "msgr_alimtalk", out.Channel)
	require.NotNil(t, out.ProviderMessageID)
	msgs := b.env.Sim.Messages("vendorb_msgr", "", 0)
	require.Len(t, msgs, 1)
	require.Equal(t, *out.ProviderMessageID, msgs[0].ID)
	require.Equal(t, "Hi Park", msgs[0].Text)
	require.Equal(t, "TP-M", msgs[0].Headers["templateId"])
	require.Equal(t, "PF-M", msgs[0].Headers["pfId"])
}
