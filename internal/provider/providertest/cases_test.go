package providertest

import (
	"fmt"
	"strings"
	"time"

	"github.com/notifyd/notifyd/internal/notify"
	"github.com/notifyd/notifyd/internal/provider"
	"github.com/notifyd/notifyd/internal/simulator"
)

// kindCase is what the tests know about one provider kind.
type kindCase struct {
	// msg builds the n-th test message; recipients differ per n.
	msg func(n int) provider.Message
	// want is what the simulator must record for m. Headers are checked
	// as a subset; an empty value means the header must be absent.
	want func(m provider.Message) simulator.Message
	// idOK reports whether the adapter's message id fits the one the
	// simulator recorded.
	idOK func(resultID, simID string) bool
	// vendor are the kind's own failure codes.
	vendor []failCase
}

// failCase is one fault and the classification it must get.
type failCase struct {
	name  string
	fault map[string]any // "kind" is added
	want  notify.FailureCode
	final bool
	// status is the HTTP status the exchange must record (0: not checked).
	status int
	// retryAfter is the wait the error must carry.
	retryAfter time.Duration
	// cured: the adapter retries and the message gets through (a refused
	// token is renewed once).
	cured bool
}

func sameID(res, sim string) bool { return res != "" && res == sim }

// aligoID: Aligo answers one id per call; the n-th message of a
// multi-message call gets "<id>-<n>".
func aligoID(res, sim string) bool {
	return sim != "" && (res == sim || strings.HasPrefix(res, sim+"-"))
}

// fcmID: the simulator records the full name, the adapter keeps its last segment.
func fcmID(res, sim string) bool {
	return res != "" && strings.HasSuffix(sim, "/messages/"+res)
}

func phone(n int) string { return fmt.Sprintf("0101234%04d", n) }

func smsMsg(n int) provider.Message {
	return provider.Message{
		ID: fmt.Sprintf("req-sms-%d", n), Channel: notify.ChannelSMS, To: phone(n),
		Title: "인증", Text: fmt.Sprintf("[notifyd] 인증번호 %06d 입니다", 100000+n),
	}
}

func alimMsg(n int) provider.Message {
	return provider.Message{
		ID: fmt.Sprintf("req-alim-%d", n), Channel: notify.ChannelAlimTalk, To: phone(n), ToName: "홍길동",
		Title: "주문 안내", Text: fmt.Sprintf("홍길동님, 주문 %d번이 접수되었습니다.", n),
		TemplateCode: "ORDER_OK", VendorTemplateID: "KA01TP000000000000000001", SenderProfileKey: "KA01PF000000000000000001",
		Variables: map[string]string{"name": "홍길동", "order": fmt.Sprint(n)},
	}
}

func emailMsg(n int) provider.Message {
	return provider.Message{
		ID: fmt.Sprintf("req-mail-%d", n), Channel: notify.ChannelEmail,
		To: fmt.Sprintf("user%d@example.org", n), ToName: "User",
		Title: fmt.Sprintf("Weekly news #%d", n), Text: fmt.Sprintf("Hello, issue %d.", n),
		HTML: fmt.Sprintf("<p>Hello, <b>issue %d</b>.</p>", n),
		Headers: map[string]string{
			"List-Unsubscribe":      fmt.Sprintf("<https://notifyd.example.com/u/%d>", n),
			"List-Unsubscribe-Post": "List-Unsubscribe=One-Click",
		},
	}
}

func emailWant(from string) func(m provider.Message) simulator.Message {
	return func(m provider.Message) simulator.Message {
		h := map[string]string{"From": from}
		for k, v := range m.Headers {
			h[k] = v
		}
		return simulator.Message{To: m.To, Subject: m.Title, Text: m.Text, HTML: m.HTML, Headers: h}
	}
}

func chatMsg(ch notify.Channel, to string) func(n int) provider.Message {
	return func(n int) provider.Message {
		return provider.Message{ID: fmt.Sprintf("req-chat-%d", n), Channel: ch, To: to,
			Title: "Deploy", Text: fmt.Sprintf("build %d is live <@U123> & done", n)}
	}
}

// cases covers every kind of kinds.All(); TestEveryKindCovered keeps it so.
var cases = map[string]kindCase{
	"vendora_sms": {
		msg: smsMsg,
		// A short text goes as SMS, which has no title.
		want: func(m provider.Message) simulator.Message {
			return simulator.Message{To: m.To, Text: m.Text, Headers: map[string]string{"sender": aligoSender, "msg_type": "SMS"}}
		},
		idOK: aligoID,
		vendor: []failCase{
			{name: "-201 insufficient balance", fault: map[string]any{"vendorCode": -201}, want: notify.FailureCreditExhausted, final: true, status: 200},
			{name: "-101 bad key", fault: map[string]any{"vendorCode": -101}, want: notify.FailureUnauthorized, status: 200},
			{name: "-301 bad receiver", fault: map[string]any{"vendorCode": -301}, want: notify.FailureInvalidRequest, status: 200},
		},
	},
	"vendora_msgr": {
		msg: alimMsg,
		want: func(m provider.Message) simulator.Message {
			return simulator.Message{To: m.To, Subject: m.Title, Text: m.Text, Headers: map[string]string{
				"senderkey": m.SenderProfileKey, "tpl_code": m.VendorTemplateID, "sender": aligoSender,
				"recvname": m.ToName, "failover": "", // native SMS fallback stays off
			}}
		},
		idOK: aligoID,
		vendor: []failCase{
			{name: "-201 insufficient balance", fault: map[string]any{"vendorCode": -201}, want: notify.FailureCreditExhausted, final: true, status: 200},
			{name: "-101 bad key", fault: map[string]any{"vendorCode": -101}, want: notify.FailureUnauthorized, status: 200},
			{name: "-107 token refused once", fault: map[string]any{"vendorCode": -107}, cured: true},
			{name: "-107 token refused twice", fault: map[string]any{"vendorCode": -107, "count": 2}, want: notify.FailureUnknown, status: 200},
			{name: "token call 500", fault: map[string]any{"op": "token", "status": 500}, want: notify.FailureTemporaryUnavailable, status: 500},
		},
	},
	"vendorb_sms": {
		msg: smsMsg,
		want: func(m provider.Message) simulator.Message {
			return simulator.Message{To: m.To, Subject: m.Title, Text: m.Text, Headers: map[string]string{
				"from": solapiSender, "type": "SMS", "country": "82", "customFields.nid": m.ID,
			}}
		},
		idOK:   sameID,
		vendor: solapiFailures,
	},
	"vendorb_msgr": {
		msg: alimMsg,
		want: func(m provider.Message) simulator.Message {
			return simulator.Message{To: m.To, Text: m.Text, Headers: map[string]string{
				"type": "ATA", "pfId": m.SenderProfileKey, "templateId": m.VendorTemplateID, "disableSms": "true",
				"variables.#{name}": m.Variables["name"], "variables.#{order}": m.Variables["order"],
				"customFields.nid": m.ID,
			}}
		},
		idOK:   sameID,
		vendor: solapiFailures,
	},
	"push_gateway": {
		msg: func(n int) provider.Message {
			return provider.Message{ID: fmt.Sprintf("req-push-%d", n), Channel: notify.ChannelPush,
				To: fmt.Sprintf("fcm-device-token-%d:APA91b", n), Title: "Order shipped",
				Text: fmt.Sprintf("Order %d is on its way <&>", n), Data: map[string]string{"orderId": fmt.Sprint(n), "kind": "shipping"}}
		},
		want: func(m provider.Message) simulator.Message {
			return simulator.Message{To: m.To, Subject: m.Title, Text: m.Text, Headers: m.Data}
		},
		idOK: fcmID,
		vendor: []failCase{
			{name: "UNREGISTERED", fault: map[string]any{"vendorCode": "UNREGISTERED"}, want: notify.FailureInvalidRequest, status: 404},
			{name: "INVALID_ARGUMENT", fault: map[string]any{"vendorCode": "INVALID_ARGUMENT"}, want: notify.FailureInvalidRequest, status: 400},
			{name: "SENDER_ID_MISMATCH", fault: map[string]any{"vendorCode": "SENDER_ID_MISMATCH"}, want: notify.FailureUnauthorized, status: 403},
			{name: "QUOTA_EXCEEDED", fault: map[string]any{"vendorCode": "QUOTA_EXCEEDED"}, want: notify.FailureRateLimited, status: 429, retryAfter: time.Second},
			{name: "UNAVAILABLE", fault: map[string]any{"vendorCode": "UNAVAILABLE"}, want: notify.FailureTemporaryUnavailable, status: 503},
			{name: "THIRD_PARTY_AUTH_ERROR", fault: map[string]any{"vendorCode": "THIRD_PARTY_AUTH_ERROR"}, want: notify.FailureUnauthorized, status: 401},
			{name: "UNAUTHENTICATED once", fault: map[string]any{"vendorCode": "UNAUTHENTICATED"}, cured: true},
			{name: "token invalid_grant", fault: map[string]any{"op": "token", "vendorCode": "invalid_grant"}, want: notify.FailureUnauthorized, status: 400},
			{name: "token 503", fault: map[string]any{"op": "token", "status": 503}, want: notify.FailureTemporaryUnavailable, status: 503},
		},
	},
	"mailx_email": {
		msg:  emailMsg,
		want: emailWant(resendFrom),
		idOK: sameID,
		vendor: []failCase{
			{name: "daily_quota_exceeded", fault: map[string]any{"vendorCode": "daily_quota_exceeded"}, want: notify.FailureCreditExhausted, status: 429, retryAfter: time.Second},
			{name: "monthly_quota_exceeded", fault: map[string]any{"vendorCode": "monthly_quota_exceeded"}, want: notify.FailureCreditExhausted, status: 429, retryAfter: time.Second},
			{name: "rate_limit_exceeded", fault: map[string]any{"vendorCode": "rate_limit_exceeded"}, want: notify.FailureRateLimited, status: 429, retryAfter: time.Second},
			{name: "invalid_api_key", fault: map[string]any{"vendorCode": "invalid_api_key"}, want: notify.FailureUnauthorized, status: 403},
			{name: "restricted_api_key", fault: map[string]any{"vendorCode": "restricted_api_key"}, want: notify.FailureUnauthorized, status: 401},
			{name: "validation_error", fault: map[string]any{"vendorCode": "validation_error"}, want: notify.FailureInvalidRequest, status: 422},
			{name: "application_error", fault: map[string]any{"vendorCode": "application_error"}, want: notify.FailureTemporaryUnavailable, status: 500},
		},
	},
	"maily_email": {
		msg:  emailMsg,
		want: emailWant(sesFromName + " <" + mailFrom + ">"),
		idOK: sameID,
		vendor: []failCase{
			{name: "MessageRejected", fault: map[string]any{"vendorCode": "MessageRejected"}, want: notify.FailureInvalidRequest, status: 400},
			{name: "ThrottlingException rate", fault: map[string]any{"vendorCode": "ThrottlingException"}, want: notify.FailureRateLimited, status: 400},
			{name: "ThrottlingException daily quota", fault: map[string]any{"vendorCode": "ThrottlingException", "message": "Daily message quota exceeded."}, want: notify.FailureCreditExhausted, status: 400},
			{name: "TooManyRequestsException", fault: map[string]any{"vendorCode": "TooManyRequestsException"}, want: notify.FailureRateLimited, status: 429, retryAfter: time.Second},
			{name: "UnrecognizedClientException", fault: map[string]any{"vendorCode": "UnrecognizedClientException"}, want: notify.FailureUnauthorized, status: 403},
			{name: "BadRequestException", fault: map[string]any{"vendorCode": "BadRequestException"}, want: notify.FailureInvalidRequest, status: 400},
			{name: "NotFoundException", fault: map[string]any{"vendorCode": "NotFoundException"}, want: notify.FailureInvalidRequest, status: 404},
		},
	},
	"mailz_email": {
		msg:  emailMsg,
		want: emailWant(postmarkName + " <" + mailFrom + ">"),
		idOK: sameID,
		vendor: []failCase{
			{name: "405 out of credits", fault: map[string]any{"vendorCode": 405}, want: notify.FailureCreditExhausted, status: 422},
			{name: "406 inactive recipient", fault: map[string]any{"vendorCode": 406}, want: notify.FailureInvalidRequest, status: 422},
			{name: "300 invalid email", fault: map[string]any{"vendorCode": 300}, want: notify.FailureInvalidRequest, status: 422},
			{name: "10 bad token", fault: map[string]any{"vendorCode": 10}, want: notify.FailureUnauthorized, status: 401},
			{name: "429 rate limit", fault: map[string]any{"vendorCode": 429}, want: notify.FailureRateLimited, status: 429, retryAfter: time.Second},
		},
	},
	"chata_webhook": {
		msg: chatMsg(notify.ChannelChatAWebhook, ""),
		want: func(m provider.Message) simulator.Message {
			return simulator.Message{To: slackHookPath, Text: "*Deploy*\n" + m.Text}
		},
		// Incoming webhooks answer "ok" and no id.
		idOK: func(res, sim string) bool { return res == "" && sim != "" },
		vendor: []failCase{
			{name: "channel_not_found", fault: map[string]any{"vendorCode": "channel_not_found"}, want: notify.FailureInvalidRequest, status: 404},
			{name: "no_service", fault: map[string]any{"vendorCode": "no_service"}, want: notify.FailureInvalidRequest, status: 404},
			{name: "channel_is_archived", fault: map[string]any{"vendorCode": "channel_is_archived"}, want: notify.FailureInvalidRequest, status: 410},
			{name: "invalid_payload", fault: map[string]any{"vendorCode": "invalid_payload"}, want: notify.FailureInvalidRequest, status: 400},
			{name: "action_prohibited", fault: map[string]any{"vendorCode": "action_prohibited"}, want: notify.FailureUnauthorized, status: 403},
			{name: "rollup_error", fault: map[string]any{"vendorCode": "rollup_error"}, want: notify.FailureTemporaryUnavailable, status: 500},
		},
	},
	"chata_bot": {
		msg: chatMsg(notify.ChannelChatABot, slackChannel),
		want: func(m provider.Message) simulator.Message {
			return simulator.Message{To: m.To, Text: "*Deploy*\n" + m.Text, Headers: map[string]string{"channel_id": m.To}}
		},
		idOK: sameID,
		vendor: []failCase{
			{name: "channel_not_found", fault: map[string]any{"vendorCode": "channel_not_found"}, want: notify.FailureInvalidRequest, status: 200},
			{name: "not_in_channel", fault: map[string]any{"vendorCode": "not_in_channel"}, want: notify.FailureInvalidRequest, status: 200},
			{name: "invalid_auth", fault: map[string]any{"vendorCode": "invalid_auth"}, want: notify.FailureUnauthorized, status: 200},
			{name: "ratelimited", fault: map[string]any{"vendorCode": "ratelimited"}, want: notify.FailureRateLimited, status: 429, retryAfter: time.Second},
			{name: "internal_error", fault: map[string]any{"vendorCode": "internal_error"}, want: notify.FailureTemporaryUnavailable, status: 200},
		},
	},
	"chatb_webhook": {
		msg: chatMsg(notify.ChannelChatBWebhook, ""),
		want: func(m provider.Message) simulator.Message {
			return simulator.Message{To: discordHook, Text: "**Deploy**\n" + m.Text}
		},
		idOK: sameID,
		vendor: []failCase{
			{name: "10015 unknown webhook", fault: map[string]any{"vendorCode": 10015}, want: notify.FailureInvalidRequest, status: 404},
			{name: "50027 invalid webhook token", fault: map[string]any{"vendorCode": 50027}, want: notify.FailureUnauthorized, status: 401},
			{name: "50006 empty message", fault: map[string]any{"vendorCode": 50006}, want: notify.FailureInvalidRequest, status: 400},
			{name: "50035 invalid form body", fault: map[string]any{"vendorCode": 50035}, want: notify.FailureInvalidRequest, status: 400},
		},
	},
	"chatb_bot": {
		msg: chatMsg(notify.ChannelChatBBot, discordChan),
		want: func(m provider.Message) simulator.Message {
			return simulator.Message{To: m.To, Text: "**Deploy**\n" + m.Text}
		},
		idOK: sameID,
		vendor: []failCase{
			{name: "10003 unknown channel", fault: map[string]any{"vendorCode": 10003}, want: notify.FailureInvalidRequest, status: 404},
			{name: "10015", fault: map[string]any{"vendorCode": 10015}, want: notify.FailureInvalidRequest, status: 404},
			{name: "50001 missing access", fault: map[string]any{"vendorCode": 50001}, want: notify.FailureUnauthorized, status: 403},
			{name: "50013 missing permissions", fault: map[string]any{"vendorCode": 50013}, want: notify.FailureUnauthorized, status: 403},
			{name: "0 bad token", fault: map[string]any{"vendorCode": 0}, want: notify.FailureUnauthorized, status: 401},
		},
	},
}

// solapiFailures: per-message status codes come with HTTP 200.
var solapiFailures = []failCase{
	{name: "1030 insufficient balance", fault: map[string]any{"vendorCode": "1030"}, want: notify.FailureCreditExhausted, status: 200},
	{name: "2230 insufficient balance", fault: map[string]any{"vendorCode": "2230"}, want: notify.FailureCreditExhausted, status: 200},
	{name: "1062 unregistered sender", fault: map[string]any{"vendorCode": "1062"}, want: notify.FailureInvalidRequest, status: 200},
	{name: "1060 blocked recipient", fault: map[string]any{"vendorCode": "1060"}, want: notify.FailureInvalidRequest, status: 200},
	{name: "InvalidAPIKey", fault: map[string]any{"vendorCode": "InvalidAPIKey"}, want: notify.FailureUnauthorized, status: 403},
	{name: "ValidationError", fault: map[string]any{"vendorCode": "ValidationError"}, want: notify.FailureInvalidRequest, status: 400},
}

// commonFailures are SPEC's HTTP status rules, which hold for every kind.
func commonFailures(kind string) []failCase {
	unauthorized401 := failCase{name: "HTTP 401", fault: map[string]any{"status": 401}, want: notify.FailureUnauthorized, status: 401}
	if kind == "push_gateway" {
		// A 401 on the access token is retried once with a new token
		// (PROVIDERS.md: refresh token once first), so it must come twice.
		unauthorized401.fault["count"] = 2
	}
	return []failCase{
		{name: "HTTP 429", fault: map[string]any{"status": 429}, want: notify.FailureRateLimited, status: 429, retryAfter: time.Second},
		{name: "HTTP 500", fault: map[string]any{"status": 500}, want: notify.FailureTemporaryUnavailable, status: 500},
		{name: "HTTP 503", fault: map[string]any{"status": 503}, want: notify.FailureTemporaryUnavailable, status: 503},
		unauthorized401,
		{name: "HTTP 403", fault: map[string]any{"status": 403}, want: notify.FailureUnauthorized, status: 403},
	}
}
