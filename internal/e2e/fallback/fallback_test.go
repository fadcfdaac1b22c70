package fallback_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/notifyd/notifyd/internal/config"
	"github.com/notifyd/notifyd/internal/notifytest"
)

// Every AlimTalk route fails retryably on every attempt: once the
// channel's attempt budget is spent (where it would dead-letter), the SMS
// step delivers within the same request.
func TestAlimtalkFailsEverywhereThenSMS(t *testing.T) {
	t.Parallel()
	b := setup(t)
	rc := b.webhook(t)
	for _, kind := range []string{"vendorb_msgr", "vendora_msgr"} {
		b.env.Fault(t, map[string]any{"kind": kind, "status": 500, "count": 100})
	}
	id := b.send(t, alimtalk(smsStep("[대체] {{name}}님 주문 {{order}} 접수")))
	out := notifytest.Wait(t, b.key, id)

	require.Equal(t, "sent", out.Status, "%+v", out)
	require.Equal(t, "msgr_alimtalk", out.Channel, "the request keeps its own channel")
	require.Equal(t, "sms", *out.DeliveredChannel)
	require.Equal(t, b.accounts["sms"], *out.SelectedProviderAccountID)
	// Three attempts of the AlimTalk step, each through both routes, then
	// the SMS step's first attempt.
	require.Equal(t, []string{"msgr_alimtalk", "msgr_alimtalk", "msgr_alimtalk", "msgr_alimtalk", "msgr_alimtalk", "msgr_alimtalk", "sms"},
		channels(out.Attempts))
	for _, a := range out.Attempts[:6] {
		require.Equal(t, "failure", a.Status)
		require.Equal(t, "temporary_unavailable", *a.FailureCode)
	}
	require.Equal(t, b.accounts["msgrB"], out.Attempts[0].ProviderAccountID)
	require.Equal(t, b.accounts["msgrA"], out.Attempts[1].ProviderAccountID)
	require.Equal(t, "success", out.Attempts[6].Status)
	require.Equal(t, "vendora_sms", out.Attempts[6].ProviderKind)
	require.Equal(t, "completed", out.Job.Status)
	require.Equal(t, 4, out.Job.AttemptsMade)
	require.Equal(t, 6, out.Job.MaxAttempts, "the SMS step got a budget of its own")
	require.NotNil(t, out.ChannelFallback)
	require.Equal(t, 1, out.ChannelFallback.CurrentStep)
	require.Equal(t, "sms", out.ChannelFallback.CurrentChannel)
	require.Equal(t, []notifytest.FallbackStep{{Step: 1, Channel: "sms", RecipientAddress: "01012345678", Status: "sent"}}, out.ChannelFallback.Steps)

	// The SMS went once, with its own text rendered with the send's
	// variables; no AlimTalk went.
	msgs := b.env.Sim.Messages("vendora_sms", "01012345678", 0)
	require.Len(t, msgs, 1)
	require.Equal(t, "[대체] Kim님 주문 A-1 접수", msgs[0].Text)
	require.Empty(t, b.env.Sim.Messages("vendorb_msgr", "", 0))
	require.Empty(t, b.env.Sim.Messages("vendora_msgr", "", 0))

	// The dashboard history records each call with its channel.
	var hist struct {
		Attempts []struct {
			Channel string `json:"channel"`
			Request struct {
				Recipient struct {
					Address string `json:"address"`
				} `json:"recipient"`
				RenderedContent struct {
					Text *string `json:"text"`
				} `json:"renderedContent"`
			} `json:"request"`
		} `json:"attempts"`
	}
	b.dashOK(t, "GET", "/v1/attempts?requestId="+id, nil, &hist)
	require.Len(t, hist.Attempts, 7)
	require.Equal(t, "sms", hist.Attempts[0].Channel, "newest first")
	require.Equal(t, "[대체] Kim님 주문 A-1 접수", *hist.Attempts[0].Request.RenderedContent.Text)
	require.Equal(t, "msgr_alimtalk", hist.Attempts[6].Channel)

	// One final event, and it says which channel delivered.
	evs := rc.AwaitEvent(t, id, "notification.delivered")
	require.Len(t, evs, 1, "no event while the request moved between channels")
	ev := evs[0]
	require.Equal(t, "msgr_alimtalk", ev.Data.Channel)
	require.Equal(t, "sent", ev.Data.Status)
	require.Equal(t, "sms", *ev.Data.DeliveredChannel)
	require.Equal(t, 1, *ev.Data.FallbackStep)
}

// A permanent refusal on a channel (not a KakaoTalk user, or no route at
// all) moves on at once, without spending the channel's retries.
func TestPermanentFailureMovesOnAtOnce(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.env.Fault(t, map[string]any{"kind": "vendorb_msgr", "vendorCode": "3104", "count": 1})
	id := b.send(t, alimtalk(smsStep("SMS instead")))
	out := notifytest.Wait(t, b.key, id)
	require.Equal(t, "sent", out.Status, "%+v", out)
	require.Equal(t, []string{"msgr_alimtalk", "sms"}, channels(out.Attempts))
	require.Equal(t, "invalid_request", *out.Attempts[0].FailureCode)
	require.Equal(t, b.accounts["msgrB"], out.Attempts[0].ProviderAccountID, "a final failure ends the channel's routes")
	require.Equal(t, 2, out.Job.AttemptsMade)
	require.Equal(t, "sms", *out.DeliveredChannel)
	require.Len(t, b.env.Sim.Messages("vendora_sms", "01012345678", 0), 1)

	// Email has no route: the chain goes on to sms, where the step's own
	// recipient is used.
	id = b.send(t, map[string]any{"channel": "email", "recipient": map[string]any{"address": "kim@example.com"},
		"content":         map[string]any{"title": "Order", "text": "Order A-2"},
		"channelFallback": []map[string]any{{"channel": "sms", "recipient": map[string]any{"address": "01055556666"}}}})
	out = notifytest.Wait(t, b.key, id)
	require.Equal(t, "sent", out.Status, "%+v", out)
	require.Equal(t, []string{"sms"}, channels(out.Attempts))
	require.Equal(t, "kim@example.com", out.RecipientAddress)
	require.Equal(t, "01055556666", out.ChannelFallback.Steps[0].RecipientAddress)
	msgs := b.env.Sim.Messages("vendora_sms", "01055556666", 0)
	require.Len(t, msgs, 1)
	require.Equal(t, "Order A-2", msgs[0].Text, "a step without content sends the send's rendered text")
}

// The first channel delivers: the chain is never used.
func TestNoFallbackWhenFirstChannelDelivers(t *testing.T) {
	t.Parallel()
	b := setup(t)
	rc := b.webhook(t)
	id := b.send(t, alimtalk(smsStep("never sent")))
	out := notifytest.Wait(t, b.key, id)
	require.Equal(t, "sent", out.Status, "%+v", out)
	require.Equal(t, []string{"msgr_alimtalk"}, channels(out.Attempts))
	require.Equal(t, "msgr_alimtalk", *out.DeliveredChannel)
	require.Equal(t, 0, out.ChannelFallback.CurrentStep)
	require.Equal(t, "skipped", out.ChannelFallback.Steps[0].Status)
	require.Equal(t, 3, out.Job.MaxAttempts)
	require.Len(t, b.env.Sim.Messages("vendorb_msgr", "01012345678", 0), 1)
	require.Empty(t, b.env.Sim.Messages("vendora_sms", "", 0))
	ev := rc.AwaitEvent(t, id, "notification.delivered")[0]
	require.Equal(t, "msgr_alimtalk", *ev.Data.DeliveredChannel)
	require.Equal(t, 0, *ev.Data.FallbackStep)

	// A send without a chain shows none, and its attempts their channel.
	id = b.send(t, alimtalk())
	out = notifytest.Wait(t, b.key, id)
	require.Equal(t, "sent", out.Status)
	require.Nil(t, out.ChannelFallback)
	require.Equal(t, "msgr_alimtalk", *out.DeliveredChannel)
	require.Equal(t, []string{"msgr_alimtalk"}, channels(out.Attempts))
	ev = rc.AwaitEvent(t, id, "notification.delivered")[0]
	require.Nil(t, ev.Data.FallbackStep)
}

// Every channel of the chain fails: the request ends as it does today,
// in the dead-letter queue after retryable failures, failed (not a dead
// letter) after a permanent one, with one notification.failed event.
func TestChainExhausted(t *testing.T) {
	t.Parallel()
	b := setup(t)
	rc := b.webhook(t)
	// Three attempts, each through every route of its channel: three
	// calls per kind, so the faults queued next serve the second send.
	for _, kind := range []string{"vendorb_msgr", "vendora_msgr", "vendora_sms"} {
		b.env.Fault(t, map[string]any{"kind": kind, "status": 500, "count": 3})
	}
	id := b.send(t, alimtalk(smsStep("also down")))
	out := notifytest.Wait(t, b.key, id)
	require.Equal(t, "failed", out.Status, "%+v", out)
	require.Equal(t, "temporary_unavailable", *out.FinalErrorCode)
	require.Nil(t, out.DeliveredChannel)
	require.Equal(t, "dead_letter", out.Job.Status)
	require.Equal(t, 6, out.Job.AttemptsMade)
	require.Equal(t, []string{"msgr_alimtalk", "msgr_alimtalk", "msgr_alimtalk", "msgr_alimtalk", "msgr_alimtalk", "msgr_alimtalk",
		"sms", "sms", "sms"}, channels(out.Attempts))
	require.Equal(t, 1, out.ChannelFallback.CurrentStep)
	require.Equal(t, "failed", out.ChannelFallback.Steps[0].Status)
	var dl struct {
		Items []struct {
			Data struct {
				NotificationRequestID string `json:"notificationRequestId"`
				Channel               string `json:"channel"`
			} `json:"data"`
		} `json:"items"`
		Count int `json:"count"`
	}
	b.dashOK(t, "GET", "/v1/dead-letter", nil, &dl)
	require.Equal(t, 1, dl.Count, "one dead letter for the whole chain")
	require.Equal(t, id, dl.Items[0].Data.NotificationRequestID)
	require.Equal(t, "msgr_alimtalk", dl.Items[0].Data.Channel)
	evs := rc.AwaitEvent(t, id, "notification.failed")
	require.Len(t, evs, 1)
	require.Nil(t, evs[0].Data.DeliveredChannel)
	require.Equal(t, 1, *evs[0].Data.FallbackStep)
	require.Equal(t, "temporary_unavailable", *evs[0].Data.FinalErrorCode)

	// Permanent refusals on both channels: failed at once, no dead letter.
	b.env.Fault(t, map[string]any{"kind": "vendorb_msgr", "vendorCode": "3104", "count": 1})
	b.env.Fault(t, map[string]any{"kind": "vendora_sms", "vendorCode": "-301", "count": 1})
	id2 := b.send(t, map[string]any{"channel": "msgr_alimtalk", "recipient": map[string]any{"address": "01077778888"},
		"content":         map[string]any{"templateCode": "order"},
		"channelFallback": []map[string]any{smsStep("x")}})
	out = notifytest.Wait(t, b.key, id2)
	require.Equal(t, "failed", out.Status, "%+v", out)
	require.Equal(t, "invalid_request", *out.FinalErrorCode)
	require.Equal(t, "failed", out.Job.Status)
	require.Equal(t, 2, out.Job.AttemptsMade)
	require.Equal(t, []string{"msgr_alimtalk", "sms"}, channels(out.Attempts))
	require.Equal(t, 1, out.ChannelFallback.CurrentStep)
	require.Equal(t, "failed", out.ChannelFallback.Steps[0].Status)
	b.dashOK(t, "GET", "/v1/dead-letter", nil, &dl)
	require.Equal(t, 1, dl.Count, "a permanent failure is not a dead letter")
	require.Equal(t, "invalid_request", *rc.AwaitEvent(t, id2, "notification.failed")[0].Data.FinalErrorCode)
}

// Retryable failures within a step retry that step (its own backoff), and
// the status lookup shows the chain's progress meanwhile.
func TestProgressDuringFallbackRetries(t *testing.T) {
	t.Parallel()
	b := setup(t, func(c *config.Config) { c.QueueBackoff = 1500 * time.Millisecond })
	b.env.Fault(t, map[string]any{"kind": "vendorb_msgr", "vendorCode": "3104", "count": 1})
	b.env.Fault(t, map[string]any{"kind": "vendora_sms", "status": 500, "count": 1})
	id := b.send(t, alimtalk(smsStep("after a retry")))
	mid := notifytest.WaitFor(t, b.key, id, "the SMS step waiting for its retry", func(o notifytest.Request) bool {
		return o.ChannelFallback.CurrentStep == 1 && o.Job.Status == "retrying"
	})
	require.Equal(t, "queued", mid.Status)
	require.Nil(t, mid.DeliveredChannel)
	require.Equal(t, "sms", mid.ChannelFallback.CurrentChannel)
	require.Equal(t, "active", mid.ChannelFallback.Steps[0].Status)
	require.Equal(t, []string{"msgr_alimtalk", "sms"}, channels(mid.Attempts))
	require.Equal(t, "temporary_unavailable", mid.Job.LastError.Code)

	out := notifytest.Wait(t, b.key, id)
	require.Equal(t, "sent", out.Status, "%+v", out)
	require.Equal(t, []string{"msgr_alimtalk", "sms", "sms"}, channels(out.Attempts))
	require.Equal(t, "sent", out.ChannelFallback.Steps[0].Status)
	require.Len(t, b.env.Sim.Messages("vendora_sms", "01012345678", 0), 1)
}

// A chain of three: AlimTalk, then email (no route), then sms.
func TestLongerChainAndBulk(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.template(t, "order_sms", "sms", "SMS {{name}} {{order}}", false)
	b.env.Fault(t, map[string]any{"kind": "vendorb_msgr", "vendorCode": "3104", "count": 2})
	item := func(to string) map[string]any {
		body := alimtalk(
			map[string]any{"channel": "email", "recipient": map[string]any{"address": "kim@example.com"}},
			map[string]any{"channel": "sms", "content": map[string]any{"templateCode": "order_sms",
				"templateVariables": map[string]string{"name": "Lee", "order": "B-2"}}})
		body["recipient"] = map[string]any{"address": to}
		return body
	}
	for i, id := range notifytest.Bulk(t, b.key, []any{item("01011110000"), item("01011110001")}) {
		out := notifytest.Wait(t, b.key, id)
		require.Equal(t, "sent", out.Status, "%+v", out)
		require.Equal(t, []string{"msgr_alimtalk", "sms"}, channels(out.Attempts))
		require.Equal(t, 2, out.ChannelFallback.CurrentStep)
		require.Equal(t, []string{"failed", "sent"}, []string{out.ChannelFallback.Steps[0].Status, out.ChannelFallback.Steps[1].Status})
		require.Equal(t, "order_sms", *out.ChannelFallback.Steps[1].TemplateCode)
		msgs := b.env.Sim.Messages("vendora_sms", "0101111000"+string(rune('0'+i)), 0)
		require.Len(t, msgs, 1)
		require.Equal(t, "SMS Lee B-2", msgs[0].Text)
	}
}

// Invalid chains are refused at acceptance with 400 problem+json naming
// the step, on send and on bulk; nothing is queued.
func TestInvalidFallbackBodies(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.template(t, "pending", "msgr_alimtalk", "x", false)
	eight := []map[string]any{}
	for range 8 {
		eight = append(eight, smsStep("x"))
	}
	cases := []struct {
		name   string
		chain  any
		status int
		detail string
	}{
		{"empty", []any{}, 400, "channelFallback must hold 1 to 7 steps"},
		{"too many", eight, 400, "channelFallback must hold 1 to 7 steps"},
		{"not an array", "sms", 400, "channelFallback must be an array"},
		{"null step", []any{nil}, 400, "channelFallback[0] must be an object"},
		{"no channel", []any{map[string]any{"content": map[string]any{"text": "x"}}}, 400, "channelFallback[0].channel is required"},
		{"bad channel", []any{map[string]any{"channel": "fax"}}, 400,
			"channelFallback[0].channel must be one of sms, msgr_alimtalk, email, push_mobile, chata_webhook, chatb_webhook, chata_bot, chatb_bot"},
		{"own channel", []any{map[string]any{"channel": "msgr_alimtalk"}}, 400,
			"channelFallback[0].channel must differ from channel and from the other steps' channels"},
		{"repeated", []any{smsStep("a"), smsStep("b")}, 400,
			"channelFallback[1].channel must differ from channel and from the other steps' channels"},
		{"inherited recipient wrong for channel", []any{map[string]any{"channel": "email"}}, 400,
			"channelFallback[0].recipient.address must be an email address for channel email"},
		{"own recipient wrong for channel", []any{map[string]any{"channel": "sms", "recipient": map[string]any{"address": "kim@example.com"}}}, 400,
			"channelFallback[0].recipient.address must be a phone number for channel sms"},
		{"recipient without address", []any{map[string]any{"channel": "sms", "recipient": map[string]any{"name": "Kim"}}}, 400,
			"channelFallback[0].recipient.address is required"},
		{"content without text", []any{map[string]any{"channel": "sms", "content": map[string]any{"title": "t"}}}, 400,
			"channelFallback[0].content.text is required when channelFallback[0].content.templateCode is absent"},
		{"long title", []any{map[string]any{"channel": "email", "recipient": map[string]any{"address": "a@example.com"},
			"content": map[string]any{"text": "x", "title": strings.Repeat("t", 201)}}}, 400, "channelFallback[0].content.title must be at most 200 characters"},
		{"unknown field", []any{map[string]any{"channel": "sms", "text": "x"}}, 400, "text is not an allowed field"},
		{"wrong type", []any{map[string]any{"channel": 7}}, 400, "channelFallback.channel must be a string"},
		{"missing template", []any{map[string]any{"channel": "sms", "content": map[string]any{"templateCode": "nope"}}}, 400,
			"channelFallback[0]: Template nope is not an active template of channel sms"},
		{"unapproved alimtalk step", nil, 400, "channelFallback[0]: Template pending is not approved"},
	}
	for _, tc := range cases {
		body := alimtalk()
		body["channelFallback"] = tc.chain
		if tc.chain == nil {
			body = map[string]any{"channel": "sms", "recipient": map[string]any{"address": "01012345678"},
				"content":         map[string]any{"text": "x"},
				"channelFallback": []any{map[string]any{"channel": "msgr_alimtalk", "content": map[string]any{"templateCode": "pending"}}}}
		}
		r, err := b.key.Signed(ctx, "POST", "/v1/notifications", body)
		require.NoError(t, err)
		require.Equal(t, tc.status, r.Status, "%s: %s", tc.name, r.Body)
		require.Contains(t, r.Header.Get("Content-Type"), "application/problem+json", tc.name)
		p := r.Problem()
		require.Equal(t, "SVC-40000", p.Code, tc.name)
		require.Equal(t, tc.detail, p.Detail, tc.name)
	}

	// Bulk: a field error refuses the call, naming the item.
	bad := alimtalk(map[string]any{"channel": "sms", "content": map[string]any{}})
	r, err := b.key.Signed(ctx, "POST", "/v1/notifications/bulk", map[string]any{"items": []any{alimtalk(smsStep("ok")), bad}})
	require.NoError(t, err)
	require.Equal(t, http.StatusBadRequest, r.Status, string(r.Body))
	require.Equal(t, "items[1].channelFallback[0].content.text is required when items[1].channelFallback[0].content.templateCode is absent",
		r.Problem().Detail)
	// An item whose step template cannot be resolved is left out.
	r, err = b.key.Signed(ctx, "POST", "/v1/notifications/bulk", map[string]any{"items": []any{alimtalk(smsStep("ok")),
		alimtalk(map[string]any{"channel": "sms", "content": map[string]any{"templateCode": "nope"}})}})
	require.NoError(t, err)
	require.Equal(t, http.StatusCreated, r.Status, string(r.Body))
	var res struct {
		Total int `json:"total"`
	}
	require.NoError(t, r.Data(&res))
	require.Equal(t, 1, res.Total)

	// A template step outside the key's allowed list is 403, as for the
	// send's own template.
	var created struct {
		Key        string `json:"key"`
		HMACSecret string `json:"hmacSecret"`
	}
	b.dashOK(t, "POST", "/v1/api-keys", map[string]any{"name": "limited", "scopes": []string{"notifications:send"},
		"allowedTemplateCodes": []string{"order"}}, &created)
	b.template(t, "other_sms", "sms", "x", false)
	limited := *b.key
	limited.APIKey, limited.HMACSecret = created.Key, created.HMACSecret
	r, err = limited.Signed(ctx, "POST", "/v1/notifications", alimtalk(map[string]any{"channel": "sms",
		"content": map[string]any{"templateCode": "other_sms"}}))
	require.NoError(t, err)
	require.Equal(t, http.StatusForbidden, r.Status, string(r.Body))
	require.Equal(t, "channelFallback[0]: Template other_sms is not allowed for this API key", r.Problem().Detail)
}

// Another workspace cannot see a request with a chain.
func TestFallbackRequestIsolation(t *testing.T) {
	t.Parallel()
	b := setup(t)
	id := b.send(t, alimtalk(smsStep("x")))
	other, _ := b.env.NewWorkspace(t, "Other", "other@example.com")
	key, _, err := other.CreateAPIKey(ctx, "k", "notifications:read")
	require.NoError(t, err)
	r, err := key.Signed(ctx, "GET", "/v1/notifications/"+id, nil)
	require.NoError(t, err)
	require.Equal(t, http.StatusNotFound, r.Status, string(r.Body))
}

// A cancel while the SMS step waits for its retry ends the request there:
// the retry never sends, the step shows canceled, one canceled event.
func TestCancelDuringFallback(t *testing.T) {
	t.Parallel()
	b := setup(t, func(c *config.Config) { c.QueueBackoff = 3 * time.Second })
	rc := b.webhook(t)
	b.env.Fault(t, map[string]any{"kind": "vendorb_msgr", "vendorCode": "3104", "count": 1})
	b.env.Fault(t, map[string]any{"kind": "vendora_sms", "status": 500, "count": 1})
	id := b.send(t, alimtalk(smsStep("canceled before the retry")))
	notifytest.WaitFor(t, b.key, id, "the SMS step waiting for its retry", func(o notifytest.Request) bool {
		return o.ChannelFallback.CurrentStep == 1 && o.Job.Status == "retrying"
	})
	// The SMS step's first retry waits SPEC's first backoff (3 s), not the
	// doubled one its job-wide attempt number (2) would give.
	var open struct {
		Jobs []struct {
			NotificationRequestID string  `json:"notificationRequestId"`
			NextRetryAt           *string `json:"nextRetryAt"`
		} `json:"jobs"`
	}
	b.dashOK(t, "GET", "/v1/jobs", nil, &open)
	require.Len(t, open.Jobs, 1)
	require.Equal(t, id, open.Jobs[0].NotificationRequestID)
	mid := notifytest.Lookup(t, b.key, id)
	failedAt, err := time.Parse(time.RFC3339, mid.Attempts[1].FinishedAt)
	require.NoError(t, err)
	retryAt, err := time.Parse(time.RFC3339, *open.Jobs[0].NextRetryAt)
	require.NoError(t, err)
	require.GreaterOrEqual(t, retryAt.Sub(failedAt), 3*time.Second)
	require.Less(t, retryAt.Sub(failedAt), 6*time.Second)

	r, err := b.key.Signed(ctx, "POST", "/v1/notifications/"+id+"/cancel", nil)
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, r.Status, string(r.Body))
	evs := rc.AwaitEvent(t, id, "notification.canceled")
	time.Sleep(5 * time.Second) // past the retry's backoff (3 s: the step's first retry)
	out := notifytest.Lookup(t, b.key, id)
	require.Equal(t, "canceled", out.Status)
	require.Equal(t, "canceled", out.ChannelFallback.Steps[0].Status)
	require.Equal(t, []string{"msgr_alimtalk", "sms"}, channels(out.Attempts))
	require.Empty(t, b.env.Sim.Messages("vendora_sms", "", 0))
	require.Len(t, evs, 1)
	require.Equal(t, 1, *evs[0].Data.FallbackStep)
}

// Many requests of one queue job move on together (the run's multi-row
// statements): each is delivered once by SMS, none twice.
func TestManyRequestsMoveOnTogether(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.env.Fault(t, map[string]any{"kind": "vendorb_msgr", "vendorCode": "3104", "count": 1000})
	const n = 60
	items := make([]any, n)
	for i := range items {
		body := alimtalk(smsStep("bulk {{name}}"))
		body["recipient"] = map[string]any{"address": fmt.Sprintf("0109000%04d", i)}
		items[i] = body
	}
	for _, id := range notifytest.Bulk(t, b.key, items) {
		out := notifytest.Wait(t, b.key, id)
		require.Equal(t, "sent", out.Status, "%+v", out)
		require.Equal(t, []string{"msgr_alimtalk", "sms"}, channels(out.Attempts))
		require.Equal(t, "sms", *out.DeliveredChannel)
	}
	msgs := b.env.Sim.Messages("vendora_sms", "", 0)
	require.Len(t, msgs, n)
	seen := map[string]bool{}
	for _, m := range msgs {
		require.False(t, seen[m.To], "%s got two SMS", m.To)
		seen[m.To] = true
		require.Equal(t, "bulk Kim", m.Text)
	}
	require.Empty(t, b.env.Sim.Messages("vendorb_msgr", "", 0))
}
