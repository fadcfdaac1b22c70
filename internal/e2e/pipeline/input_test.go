package pipeline_test

import (
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/notifyd/notifyd/internal/notifytest"
)

// TestRecipientAtAcceptance (issue 17, finding 9): an address is held to
// what SPEC's recipient table says the channel's address is, and no
// address, name or title holds a control character; refused with 400
// SVC-40000 at acceptance, on single, bulk and test sends, before anything
// is stored.
func TestRecipientAtAcceptance(t *testing.T) {
	t.Parallel()
	b := setup(t)
	msg := func(channel, addr string) map[string]any {
		return map[string]any{"channel": channel, "recipient": map[string]any{"address": addr}, "content": map[string]any{"text": "x"}}
	}
	withTitle := func(m map[string]any, title string) map[string]any {
		m["content"] = map[string]any{"text": "x", "title": title}
		return m
	}
	withName := func(m map[string]any, name string) map[string]any {
		m["recipient"].(map[string]any)["name"] = name
		return m
	}
	for _, c := range []struct {
		body   map[string]any
		detail string
	}{
		{msg("sms", "hello"), "recipient.address must be a phone number for channel sms"},
		{msg("sms", "user@example.com"), "recipient.address must be a phone number for channel sms"},
		{msg("msgr_alimtalk", "010-1234-567x"), "recipient.address must be a phone number for channel msgr_alimtalk"},
		{msg("email", "not-an-email"), "recipient.address must be an email address for channel email"},
		{msg("email", "Bob <bob@example.com>"), "recipient.address must be an email address for channel email"},
		{msg("email", "user@localhost"), "recipient.address must be an email address for channel email"},
		{msg("push_mobile", "two words"), "recipient.address must be a device token for channel push_mobile"},
		{msg("sms", "010\r\n12345678"), "recipient.address must not contain control characters"},
		{msg("email", "a@example.com\r\nBcc: b@example.com"), "recipient.address must not contain control characters"},
		{msg("chata_webhook", "label\nX-Injected: 1"), "recipient.address must not contain control characters"},
		{msg("chata_bot", "#general\x1b"), "recipient.address must not contain control characters"},
		{msg("email", "01012345678\n"), "recipient.address must not contain control characters"},
		{withTitle(msg("email", "a@example.com"), "Hi\r\nBcc: b@example.com"), "content.title must not contain control characters"},
		{withTitle(msg("push_mobile", "tok"), "line\u2028break"), "content.title must not contain control characters"},
		{withName(msg("email", "a@example.com"), "Bob\r\nBcc: b@example.com"), "recipient.name must not contain control characters"},
	} {
		p := notifytest.RequireProblem(t, notifytest.Signed(t, b.key, "POST", "/v1/notifications", c.body), http.StatusBadRequest, "SVC-40000")
		require.Equal(t, c.detail, p.Detail)
		// In a bulk call the item is named, and the whole call refused.
		p = notifytest.RequireProblem(t, notifytest.Signed(t, b.key, "POST", "/v1/notifications/bulk", map[string]any{"items": []any{notifytest.SMS("01012345678", "ok"), c.body}}),
			http.StatusBadRequest, "SVC-40000")
		require.Equal(t, "items[1]."+c.detail, p.Detail)
	}
	require.Zero(t, b.metrics(t, "").TotalRequests, "nothing was accepted")

	// What each channel's address is, written as people write it.
	for _, m := range []map[string]any{
		msg("sms", "010-1234-5678"), msg("sms", "+82 (10) 1234.5678"), msg("msgr_alimtalk", "01012345678"),
		msg("email", " First.Last+tag@Example.co.kr "), msg("push_mobile", "fcm:APA91b-token_1"),
		msg("chata_webhook", "any label, with spaces"), msg("chata_bot", "#general"), msg("chatb_bot", "123456789"),
		withTitle(msg("email", "a@example.com"), "Tabs\u00a0and ünïcode are fine"),
	} {
		notifytest.Send(t, b.key, m)
	}

	// A template variable cannot put a line break into the title either.
	r := notifytest.Dash(t, b.env.Owner, "POST", "/v1/templates", map[string]any{"code": "hello", "channel": "email", "name": "Hello"})
	require.Equal(t, http.StatusCreated, r.Status, string(r.Body))
	var tpl struct {
		Template struct {
			ID string `json:"id"`
		} `json:"template"`
	}
	require.NoError(t, r.Decode(&tpl))
	p := notifytest.RequireProblem(t, notifytest.Dash(t, b.env.Owner, "POST", "/v1/templates/"+tpl.Template.ID+"/versions", map[string]any{"title": "a\r\nb", "text": "x"}),
		http.StatusBadRequest, "SVC-40000")
	require.Equal(t, "title must not contain control characters", p.Detail)
	r = notifytest.Dash(t, b.env.Owner, "POST", "/v1/templates/"+tpl.Template.ID+"/versions", map[string]any{"title": "Hi {{name}}", "text": "x"})
	require.Equal(t, http.StatusCreated, r.Status, string(r.Body))
	r = notifytest.Dash(t, b.env.Owner, "POST", "/v1/templates/"+tpl.Template.ID+"/versions/1/publish", nil)
	require.Equal(t, http.StatusOK, r.Status, string(r.Body))
	p = notifytest.RequireProblem(t, notifytest.Signed(t, b.key, "POST", "/v1/notifications", map[string]any{"channel": "email", "recipient": map[string]any{"address": "a@example.com"},
		"content": map[string]any{"templateCode": "hello", "templateVariables": map[string]string{"name": "x\r\nBcc: b@example.com"}}}),
		http.StatusBadRequest, "SVC-40000")
	require.Equal(t, "content.title must not contain control characters", p.Detail)

	// A campaign's subject is a mail header too.
	p = notifytest.RequireProblem(t, notifytest.Dash(t, b.env.Owner, "POST", "/v1/newsletter/campaigns", map[string]any{"name": "c", "channel": "email", "subject": "s\r\nBcc: b@example.com", "contentText": "t"}),
		http.StatusBadRequest, "SVC-40000")
	require.Equal(t, "subject must not contain control characters", p.Detail)

	// A test-send holds its recipient to the provider's channel.
	prov := b.env.SimProvider(t, "vendora_sms", "sms", nil)
	for addr, detail := range map[string]string{
		"hello":           "recipient.address must be a phone number for channel sms",
		"010\r\n12345678": "recipient.address must not contain control characters",
	} {
		p = notifytest.RequireProblem(t, notifytest.Dash(t, b.env.Owner, "POST", "/v1/providers/"+prov+"/test-send", map[string]any{"mode": "test",
			"recipient": map[string]any{"address": addr}, "content": map[string]any{"text": "x"}}), http.StatusBadRequest, "SVC-40000")
		require.Equal(t, detail, p.Detail)
	}
	require.Empty(t, b.env.Sim.Messages("vendora_sms", "", 0), "no test-send reached the vendor")
}
