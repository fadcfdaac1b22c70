package recipients_test

import (
	"net/http"
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/notifyd/notifyd/client"
	"github.com/notifyd/notifyd/internal/notifytest"
)

// sendSetup starts a daemon with an sms route (vendora_sms), an email
// route (mailz_email) and the profile "u-42" with a phone, an email
// address, a name and the locale ko-KR.
func sendSetup(t *testing.T) (*notifytest.Env, *client.Client) {
	t.Helper()
	env := notifytest.StartDaemon(t)
	sms := env.SimProvider(t, "vendora_sms", "sms", nil)
	mail := notifytest.RegisterProvider(t, env.Owner, "mailz_email", "mail", env.MailConfig("mailz_email", "noreply@example.com"))
	notifytest.PutRoutes(t, env.Owner, notifytest.Route{Channel: "sms", ProviderAccountID: sms, Priority: 1},
		notifytest.Route{Channel: "email", ProviderAccountID: mail, Priority: 1})
	put(t, env.Owner, "u-42", map[string]any{"name": "Kim Minji", "phone": "010-1234-5678", "email": "Minji@Example.com",
		"locale": "ko-KR", "timeZone": "Asia/Seoul"}, http.StatusCreated)
	return env, env.SendKey(t)
}

func byID(channel, id, text string) map[string]any {
	return map[string]any{"channel": channel, "recipient": map[string]any{"id": id},
		"content": map[string]any{"title": "Hi", "text": text}}
}

// sendProblem posts a send that must be refused with 400 and answers the
// problem's detail.
func sendProblem(t *testing.T, k *client.Client, body map[string]any) string {
	t.Helper()
	return notifytest.RequireProblem(t, notifytest.Signed(t, k, "POST", "/v1/notifications", body), http.StatusBadRequest, "").Detail
}

// TestSendToRecipient: a send naming recipient.id goes to the profile's
// address for its channel, recorded on the request with the profile's id
// and name; a later change of the profile changes no accepted request.
func TestSendToRecipient(t *testing.T) {
	t.Parallel()
	env, key := sendSetup(t)

	id := notifytest.Send(t, key, byID("sms", "u-42", "code 1234")).RequestID
	out := notifytest.Wait(t, key, id)
	require.Equal(t, "sent", out.Status, "%+v", out)
	require.Equal(t, "01012345678", out.RecipientAddress, "the profile's phone, as the phone rule normalizes it")
	require.Equal(t, "u-42", *out.RecipientID)
	msgs := env.Sim.Messages("vendora_sms", "01012345678", 0)
	require.Len(t, msgs, 1)
	require.Equal(t, "code 1234", msgs[0].Text)

	id = notifytest.Send(t, key, byID("email", "u-42", "hello")).RequestID
	out = notifytest.Wait(t, key, id)
	require.Equal(t, "sent", out.Status, "%+v", out)
	require.Equal(t, "minji@example.com", out.RecipientAddress)
	require.Len(t, env.Sim.Messages("mailz_email", "minji@example.com", 0), 1)

	// A scheduled send keeps the address the profile had at acceptance.
	body := byID("sms", "u-42", "later")
	body["scheduledAt"] = "2099-01-01T00:00:00Z"
	id = notifytest.Send(t, key, body).RequestID
	dash(t, env.Owner, "PATCH", "/v1/recipients/u-42", map[string]any{"phone": "010-9999-0000"}, http.StatusOK)
	out = notifytest.Lookup(t, key, id)
	require.Equal(t, "01012345678", out.RecipientAddress)

	// The dashboard's request list shows the profile too.
	var list struct {
		Requests []struct {
			RequestID   string  `json:"requestId"`
			RecipientID *string `json:"recipientId"`
		} `json:"requests"`
	}
	require.NoError(t, dash(t, env.Owner, "GET", "/v1/requests?requestId="+id, nil, http.StatusOK).Decode(&list))
	require.Len(t, list.Requests, 1)
	require.Equal(t, "u-42", *list.Requests[0].RecipientID)

	// The explanation names the profile field the address came from, on
	// both APIs; another workspace gets 404.
	ex := notifytest.Data[explanation](t, notifytest.Signed(t, key, "GET", "/v1/notifications/"+id+"/explanation", nil), http.StatusOK)
	require.Equal(t, "u-42", *ex.RecipientID)
	require.Len(t, ex.Decisions, 2)
	require.Equal(t, decision{Stage: "acceptance", Kind: "address", Channel: ptr("sms"), Outcome: "resolved", Rule: ptr("profile.phone"),
		Detail: ptr("recipient profile u-42")}, ex.Decisions[0].plain())
	// A send by id is decided by the person's preferences even without a
	// category (a channel switched off counts); none are set here.
	require.Equal(t, decision{Stage: "acceptance", Kind: "preference", Channel: ptr("sms"), Outcome: "allowed", Rule: ptr("default"),
		Detail: ptr("sms is on (rule default)")}, ex.Decisions[1].plain())
	dashEx := notifytest.Decode[explanation](t, dash(t, env.Owner, "GET", "/v1/requests/"+id+"/explanation", nil, http.StatusOK), http.StatusOK)
	require.Equal(t, ex, dashEx)
	other, _ := env.NewWorkspace(t, "Other", "other-explain@example.com")
	dash(t, other, "GET", "/v1/requests/"+id+"/explanation", nil, http.StatusNotFound)

	// A send by address records no profile and no decision.
	id = notifytest.Send(t, key, notifytest.SMS("01055554444", "plain")).RequestID
	require.Nil(t, notifytest.Wait(t, key, id).RecipientID)
	ex = notifytest.Data[explanation](t, notifytest.Signed(t, key, "GET", "/v1/notifications/"+id+"/explanation", nil), http.StatusOK)
	require.Empty(t, ex.Decisions)
	require.Nil(t, ex.RecipientID)
}

type decision struct {
	Stage   string  `json:"stage"`
	At      string  `json:"at"`
	Kind    string  `json:"kind"`
	Channel *string `json:"channel"`
	Outcome string  `json:"outcome"`
	Rule    *string `json:"rule"`
	Detail  *string `json:"detail"`
	Until   *string `json:"until"`
}

// plain is d without its time, for comparisons.
func (d decision) plain() decision {
	d.At = ""
	return d
}

type explanation struct {
	RequestID      string     `json:"requestId"`
	Status         string     `json:"status"`
	RecipientID    *string    `json:"recipientId"`
	Category       *string    `json:"category"`
	FinalErrorCode *string    `json:"finalErrorCode"`
	ScheduledAt    *string    `json:"scheduledAt"`
	Decisions      []decision `json:"decisions"`
}

// TestSendToRecipientRefused: a missing profile, a profile without an
// address for the channel, a profile of another workspace, and a send
// giving both address and id are 400s that queue nothing.
func TestSendToRecipientRefused(t *testing.T) {
	t.Parallel()
	env, key := sendSetup(t)
	put(t, env.Owner, "no-phone", map[string]any{"email": "a@example.com"}, http.StatusCreated)
	other, _ := env.NewWorkspace(t, "Other", "other-owner@example.com")
	put(t, other, "theirs", map[string]any{"phone": "010-2222-3333"}, http.StatusCreated)

	require.Equal(t, "recipient.id: no recipient profile nobody in this workspace", sendProblem(t, key, byID("sms", "nobody", "x")))
	require.Equal(t, "recipient.id: no recipient profile theirs in this workspace", sendProblem(t, key, byID("sms", "theirs", "x")))
	require.Equal(t, "recipient.id: recipient profile no-phone has no address for channel sms", sendProblem(t, key, byID("sms", "no-phone", "x")))
	require.Equal(t, "recipient.id: recipient profile u-42 has no address for channel chata_webhook",
		sendProblem(t, key, byID("chata_webhook", "u-42", "x")))
	both := byID("sms", "u-42", "x")
	both["recipient"] = map[string]any{"id": "u-42", "address": "01012345678"}
	require.Equal(t, "recipient.address and recipient.id are exclusive: give one of them", sendProblem(t, key, both))
	require.Equal(t, `recipient.id must be 1 to 200 printable ASCII characters without space, /, ?, #, % or \`,
		sendProblem(t, key, byID("sms", "a b", "x")))
	neither := byID("sms", "u-42", "x")
	neither["recipient"] = map[string]any{"name": "Kim"}
	require.Equal(t, "recipient.address is required", sendProblem(t, key, neither), "SPEC's detail when neither is given")

	var list struct {
		Requests []any `json:"requests"`
	}
	require.NoError(t, dash(t, env.Owner, "GET", "/v1/requests", nil, http.StatusOK).Decode(&list))
	require.Empty(t, list.Requests, "nothing was queued")
	require.Empty(t, env.Sim.Messages("vendora_sms", "", 0))
}

// TestSendToRecipientLocaleAndBulk: the profile's locale picks the
// template's locale version when the send names none (a locale the send
// names wins); a bulk item naming a missing profile is left out as an
// acceptance failure, the others go.
func TestSendToRecipientLocaleAndBulk(t *testing.T) {
	t.Parallel()
	env, key := sendSetup(t)
	own := env.Owner
	var tp struct {
		Template struct {
			ID string `json:"id"`
		} `json:"template"`
	}
	require.NoError(t, dash(t, own, "POST", "/v1/templates", map[string]any{"code": "hello", "channel": "sms", "name": "Hello"},
		http.StatusCreated).Decode(&tp))
	for i, v := range []map[string]any{{"text": "Hello {{name}}"}, {"text": "안녕하세요 {{name}}", "locale": "ko"}} {
		dash(t, own, "POST", "/v1/templates/"+tp.Template.ID+"/versions", v, http.StatusCreated)
		dash(t, own, "POST", "/v1/templates/"+tp.Template.ID+"/versions/"+strconv.Itoa(i+1)+"/publish", nil, http.StatusOK)
	}
	put(t, own, "u-en", map[string]any{"phone": "010-7777-0001"}, http.StatusCreated)
	tmpl := func(id string, locale string) map[string]any {
		b := map[string]any{"channel": "sms", "recipient": map[string]any{"id": id},
			"content": map[string]any{"templateCode": "hello", "templateVariables": map[string]string{"name": "Kim"}}}
		if locale != "" {
			b["locale"] = locale
		}
		return b
	}
	ids := notifytest.Bulk(t, key, []any{tmpl("u-42", ""), tmpl("u-en", ""), tmpl("u-42", "en")})
	for _, id := range ids {
		require.Equal(t, "sent", notifytest.Wait(t, key, id).Status)
	}
	texts := map[string][]string{}
	for _, to := range []string{"01012345678", "01077770001"} {
		for _, m := range env.Sim.Messages("vendora_sms", to, 0) {
			texts[to] = append(texts[to], m.Text)
		}
	}
	require.ElementsMatch(t, []string{"안녕하세요 Kim", "Hello Kim"}, texts["01012345678"], "ko-KR falls back to ko; the send's en wins")
	require.Equal(t, []string{"Hello Kim"}, texts["01077770001"], "no profile locale: the default")

	r := notifytest.Signed(t, key, "POST", "/v1/notifications/bulk", map[string]any{"items": []any{
		byID("sms", "u-42", "one"), byID("sms", "ghost", "two")}})
	var bulk struct {
		Total int `json:"total"`
	}
	require.NoError(t, r.Data(&bulk), string(r.Body))
	require.Equal(t, http.StatusCreated, r.Status)
	require.Equal(t, 1, bulk.Total, "the item naming a missing profile is left out")
}

// TestSendToRecipientFallback: a fallback step without a recipient, of a
// send by id, takes the same profile's address for its channel; a step
// may name a profile of its own.
func TestSendToRecipientFallback(t *testing.T) {
	t.Parallel()
	env, key := sendSetup(t)
	put(t, env.Owner, "u-7", map[string]any{"phone": "010-7000-0007"}, http.StatusCreated)
	env.Fault(t, map[string]any{"kind": "mailz_email", "status": 400, "count": 100})
	body := byID("email", "u-42", "mail first")
	body["channelFallback"] = []any{map[string]any{"channel": "sms"}}
	id := notifytest.Send(t, key, body).RequestID
	out := notifytest.Wait(t, key, id)
	require.Equal(t, "sent", out.Status, "%+v", out)
	require.Equal(t, "sms", *out.DeliveredChannel)
	require.Equal(t, "01012345678", out.ChannelFallback.Steps[0].RecipientAddress)
	require.Len(t, env.Sim.Messages("vendora_sms", "01012345678", 0), 1)

	body = byID("email", "u-42", "mail first")
	body["channelFallback"] = []any{map[string]any{"channel": "sms", "recipient": map[string]any{"id": "u-7"}}}
	out = notifytest.Wait(t, key, notifytest.Send(t, key, body).RequestID)
	require.Equal(t, "01070000007", out.ChannelFallback.Steps[0].RecipientAddress)

	put(t, env.Owner, "mail-only", map[string]any{"email": "m@example.com"}, http.StatusCreated)
	body = byID("email", "mail-only", "x")
	body["channelFallback"] = []any{map[string]any{"channel": "sms"}}
	require.Equal(t, "channelFallback[0].recipient.id: recipient profile mail-only has no address for channel sms", sendProblem(t, key, body))
}
