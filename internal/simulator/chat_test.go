package simulator

import (
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestSlackWebhook(t *testing.T) {
	t.Parallel()
	blocks := `[{"type":"section","text":{"type":"mrkdwn","text":"*hi*"}}]`
	tests := []struct {
		name   string
		path   string
		ct     string
		body   string
		status int
		resp   string
	}{
		{"text", "/services/T000/B000/XXXX", "application/json", `{"text":"hello"}`, 200, "ok"},
		{"blocks only", "/services/T000/B000/XXXX", "application/json", `{"blocks":` + blocks + `}`, 200, "ok"},
		{"form payload", "/services/T000/B000/XXXX", "application/x-www-form-urlencoded", url.Values{"payload": {`{"text":"form"}`}}.Encode(), 200, "ok"},
		{"no text", "/services/T000/B000/XXXX", "application/json", `{"username":"x"}`, 400, "no_text"},
		{"not JSON", "/services/T000/B000/XXXX", "application/json", `text=hi`, 400, "invalid_payload"},
		{"blocks not an array", "/services/T000/B000/XXXX", "application/json", `{"blocks":{"type":"x"}}`, 400, "invalid_blocks"},
		{"block without type", "/services/T000/B000/XXXX", "application/json", `{"blocks":[{"text":"x"}]}`, 400, "invalid_blocks"},
		{"short path", "/services/T000/B000", "application/json", `{"text":"hello"}`, 404, "no_service"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t)
			r := e.do(http.MethodPost, tc.path, map[string]string{"Content-Type": tc.ct}, []byte(tc.body))
			require.Equal(t, tc.status, r.status)
			require.Equal(t, tc.resp, string(r.body))
			ms := e.messages(kindChatAWebhook, tc.path)
			if tc.status != 200 {
				require.Empty(t, ms)
				return
			}
			require.Len(t, ms, 1)
			require.True(t, strings.HasPrefix(ms[0].ID, "sim-"))
			if tc.name == "blocks only" {
				require.JSONEq(t, blocks, ms[0].Headers["blocks"])
			}
		})
	}
}

func TestSlackWebhookFaults(t *testing.T) {
	t.Parallel()
	tests := []struct {
		fault  map[string]any
		status int
		body   string
	}{
		{map[string]any{"kind": "chata_webhook", "vendorCode": "channel_not_found"}, 404, "channel_not_found"},
		{map[string]any{"kind": "chata_webhook", "vendorCode": "action_prohibited"}, 403, "action_prohibited"},
		{map[string]any{"kind": "chata_webhook", "vendorCode": "channel_is_archived"}, 410, "channel_is_archived"},
		{map[string]any{"kind": "chata_webhook", "status": 429}, 429, "rate_limited"},
		{map[string]any{"kind": "chata_webhook", "status": 500}, 500, "rollup_error"},
		{map[string]any{"kind": "chata_webhook", "status": 403}, 403, "action_prohibited"},
	}
	for _, tc := range tests {
		t.Run(tc.body+strconv.Itoa(tc.status), func(t *testing.T) {
			t.Parallel()
			e := newEnv(t)
			e.fault(tc.fault)
			r := e.postJSON("/services/T/B/X", nil, map[string]string{"text": "x"})
			require.Equal(t, tc.status, r.status)
			require.Equal(t, tc.body, string(r.body))
			if tc.status == 429 {
				require.Equal(t, "1", r.header.Get("Retry-After"))
			}
			require.Empty(t, e.messages("", ""))
		})
	}
}

func TestSlackPostMessage(t *testing.T) {
	t.Parallel()
	bot := "Bearer xoxb-1234-5678-abcdef"
	tests := []struct {
		name    string
		hdr     map[string]string
		body    string
		err     string
		channel string // expected id in the answer
	}{
		{"channel id", map[string]string{"Authorization": bot, "Content-Type": "application/json; charset=utf-8"}, `{"channel":"C0123ABCDEF","text":"hello"}`, "", "C0123ABCDEF"},
		{"channel name", map[string]string{"Authorization": bot, "Content-Type": "application/json; charset=utf-8"}, `{"channel":"#alerts","text":"hello"}`, "", ""},
		{"blocks", map[string]string{"Authorization": bot, "Content-Type": "application/json; charset=utf-8"}, `{"channel":"C0123ABCDEF","blocks":[{"type":"divider"}]}`, "", "C0123ABCDEF"},
		{"form with token field", map[string]string{"Content-Type": "application/x-www-form-urlencoded"}, url.Values{"token": {"xoxb-1-2-3"}, "channel": {"C0123ABCDEF"}, "text": {"hi"}}.Encode(), "", "C0123ABCDEF"},
		{"no token", map[string]string{"Content-Type": "application/json; charset=utf-8"}, `{"channel":"C1","text":"x"}`, "not_authed", ""},
		{"JSON body token is not read", map[string]string{"Content-Type": "application/json; charset=utf-8"}, `{"token":"xoxb-1-2-3","channel":"C1","text":"x"}`, "not_authed", ""},
		{"user token", map[string]string{"Authorization": "Bearer xoxp-1-2-3", "Content-Type": "application/json"}, `{"channel":"C1","text":"x"}`, "invalid_auth", ""},
		{"token without prefix", map[string]string{"Authorization": "Bearer 1234-5678", "Content-Type": "application/json"}, `{"channel":"C1","text":"x"}`, "invalid_auth", ""},
		{"no channel", map[string]string{"Authorization": bot, "Content-Type": "application/json"}, `{"text":"x"}`, "channel_not_found", ""},
		{"no text", map[string]string{"Authorization": bot, "Content-Type": "application/json"}, `{"channel":"C1"}`, "no_text", ""},
		{"too long", map[string]string{"Authorization": bot, "Content-Type": "application/json"}, `{"channel":"C1","text":"` + strings.Repeat("a", 40001) + `"}`, "msg_too_long", ""},
		{"bad blocks", map[string]string{"Authorization": bot, "Content-Type": "application/json"}, `{"channel":"C1","blocks":"nope"}`, "invalid_blocks", ""},
		{"bad JSON", map[string]string{"Authorization": bot, "Content-Type": "application/json"}, `{`, "invalid_json", ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t)
			r := e.do(http.MethodPost, "/api/chat.postMessage", tc.hdr, []byte(tc.body))
			require.Equal(t, http.StatusOK, r.status, "Slack answers 200 even for errors")
			m := r.obj(t)
			if tc.err != "" {
				require.Equal(t, false, m["ok"])
				require.Equal(t, tc.err, m["error"])
				require.Empty(t, e.messages("", ""))
				return
			}
			require.Equal(t, true, m["ok"], "%s", r.body)
			ts := m["ts"].(string)
			require.Regexp(t, `^\d+\.\d{6}$`, ts)
			ch := m["channel"].(string)
			if tc.channel != "" {
				require.Equal(t, tc.channel, ch)
			}
			require.Regexp(t, `^C[0-9A-Z]{8,}$`, ch)
			require.Equal(t, ts, m["message"].(map[string]any)["ts"])
			ms := e.messages(kindChatABot, "")
			require.Len(t, ms, 1)
			require.Equal(t, ch+":"+ts, ms[0].ID)
			require.Equal(t, ch, ms[0].Headers["channel_id"])
		})
	}
	t.Run("name resolves to a stable id and To is as sent", func(t *testing.T) {
		t.Parallel()
		e := newEnv(t)
		var ids []string
		for i := 0; i < 2; i++ {
			r := e.postJSON("/api/chat.postMessage", map[string]string{"Authorization": bot}, map[string]string{"channel": "#alerts", "text": "x"})
			m := r.obj(t)
			ids = append(ids, m["channel"].(string))
			require.Equal(t, "missing_charset", m["warning"])
		}
		require.Equal(t, ids[0], ids[1])
		require.Len(t, e.messages(kindChatABot, "#alerts"), 2)
	})
}

func TestSlackPostMessageFaults(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		fault  map[string]any
		status int
		err    string
	}{
		{"channel_not_found", map[string]any{"kind": "chata_bot", "vendorCode": "channel_not_found"}, 200, "channel_not_found"},
		{"token_revoked", map[string]any{"kind": "chata_bot", "vendorCode": "token_revoked"}, 200, "token_revoked"},
		{"ratelimited", map[string]any{"kind": "chata_bot", "vendorCode": "ratelimited"}, 429, "ratelimited"},
		{"429", map[string]any{"kind": "chata_bot", "status": 429}, 429, "ratelimited"},
		{"500", map[string]any{"kind": "chata_bot", "status": 500}, 500, "internal_error"},
		{"401", map[string]any{"kind": "chata_bot", "status": 401}, 401, "invalid_auth"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t)
			e.fault(tc.fault)
			r := e.postJSON("/api/chat.postMessage", map[string]string{"Authorization": "Bearer xoxb-1-2-3"}, map[string]string{"channel": "C0123ABCDEF", "text": "x"})
			require.Equal(t, tc.status, r.status)
			m := r.obj(t)
			require.Equal(t, false, m["ok"])
			require.Equal(t, tc.err, m["error"])
			if tc.status == 429 {
				require.Equal(t, "1", r.header.Get("Retry-After"))
			}
			require.Empty(t, e.messages("", ""))
		})
	}
}

func TestDiscordWebhook(t *testing.T) {
	t.Parallel()
	const hook = "/api/webhooks/223456789012345678/AbCdEf-token_123"
	tests := []struct {
		name   string
		path   string
		body   string
		status int
		code   float64
	}{
		{"wait=true", hook + "?wait=true", `{"content":"hello","username":"notifyd"}`, 200, 0},
		{"versioned path", "/api/v10/webhooks/223456789012345678/AbCdEf-token_123?wait=true", `{"content":"hello"}`, 200, 0},
		{"embeds only", hook + "?wait=true", `{"embeds":[{"title":"t"}]}`, 200, 0},
		{"without wait", hook, `{"content":"hello"}`, 204, 0},
		{"wait=false", hook + "?wait=false", `{"content":"hello"}`, 204, 0},
		{"empty message", hook + "?wait=true", `{"content":""}`, 400, 50006},
		{"content too long", hook + "?wait=true", `{"content":"` + strings.Repeat("a", 2001) + `"}`, 400, 50035},
		{"too many embeds", hook + "?wait=true", `{"embeds":[{},{},{},{},{},{},{},{},{},{},{}]}`, 400, 50035},
		{"invalid JSON", hook + "?wait=true", `{`, 400, 50109},
		{"id not a snowflake", "/api/webhooks/abc/token?wait=true", `{"content":"x"}`, 400, 50035},
		{"bad wait", hook + "?wait=maybe", `{"content":"x"}`, 400, 50035},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t)
			r := e.do(http.MethodPost, tc.path, map[string]string{"Content-Type": "application/json"}, []byte(tc.body))
			require.Equal(t, tc.status, r.status, "%s", r.body)
			switch tc.status {
			case 204:
				require.Empty(t, r.body)
				require.Len(t, e.messages(kindChatBWebhook, ""), 1)
			case 200:
				m := r.obj(t)
				id := m["id"].(string)
				_, err := strconv.ParseUint(id, 10, 64)
				require.NoError(t, err)
				require.Equal(t, "223456789012345678", m["webhook_id"])
				require.NotEmpty(t, m["channel_id"])
				require.NotEmpty(t, r.header.Get("X-RateLimit-Remaining"))
				ms := e.messages(kindChatBWebhook, strings.Split(tc.path, "?")[0])
				require.Len(t, ms, 1)
				require.Equal(t, id, ms[0].ID)
			default:
				m := r.obj(t)
				require.Equal(t, tc.code, m["code"])
				require.NotEmpty(t, m["message"])
				require.Empty(t, e.messages("", ""))
			}
		})
	}
	t.Run("snowflakes increase", func(t *testing.T) {
		t.Parallel()
		e := newEnv(t)
		var last uint64
		for i := 0; i < 20; i++ {
			m := e.postJSON(hook+"?wait=true", nil, map[string]string{"content": "x"}).obj(t)
			id, err := strconv.ParseUint(m["id"].(string), 10, 64)
			require.NoError(t, err)
			require.Greater(t, id, last)
			last = id
		}
	})
}

func TestDiscordBot(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		path   string
		auth   string
		body   string
		status int
		code   float64
	}{
		{"create message", "/api/v10/channels/123456789012345678/messages", "Bot MTk4NjIy.Cl2FMQ.ZnCjm1XVW7vRze4b7Cq4se7kKWs", `{"content":"hello"}`, 200, 0},
		{"no auth", "/api/v10/channels/123456789012345678/messages", "", `{"content":"hello"}`, 401, 0},
		{"bearer is not a bot token", "/api/v10/channels/123456789012345678/messages", "Bearer abc", `{"content":"hello"}`, 401, 0},
		{"channel name", "/api/v10/channels/general/messages", "Bot t", `{"content":"hello"}`, 400, 50035},
		{"empty", "/api/v10/channels/123456789012345678/messages", "Bot t", `{}`, 400, 50006},
		{"too long", "/api/v10/channels/123456789012345678/messages", "Bot t", `{"content":"` + strings.Repeat("é", 2001) + `"}`, 400, 50035},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t)
			hdr := map[string]string{"Content-Type": "application/json"}
			if tc.auth != "" {
				hdr["Authorization"] = tc.auth
			}
			r := e.do(http.MethodPost, tc.path, hdr, []byte(tc.body))
			require.Equal(t, tc.status, r.status, "%s", r.body)
			m := r.obj(t)
			if tc.status != 200 {
				require.Equal(t, tc.code, m["code"])
				require.NotEmpty(t, m["message"])
				if tc.code == 50035 {
					require.Contains(t, m, "errors")
				}
				require.Empty(t, e.messages("", ""))
				return
			}
			require.Equal(t, "123456789012345678", m["channel_id"])
			require.Equal(t, "hello", m["content"])
			ms := e.messages(kindChatBBot, "123456789012345678")
			require.Len(t, ms, 1)
			require.Equal(t, m["id"], ms[0].ID)
		})
	}
}

func TestDiscordFaults(t *testing.T) {
	t.Parallel()
	webhook := func(e *env) *resp {
		return e.postJSON("/api/webhooks/1/tok?wait=true", nil, map[string]string{"content": "x"})
	}
	bot := func(e *env) *resp {
		return e.postJSON("/api/v10/channels/1/messages", map[string]string{"Authorization": "Bot t"}, map[string]string{"content": "x"})
	}
	tests := []struct {
		name   string
		fault  map[string]any
		call   func(*env) *resp
		status int
		code   float64
	}{
		{"webhook 10015", map[string]any{"kind": "chatb_webhook", "vendorCode": 10015}, webhook, 404, 10015},
		{"webhook 50027", map[string]any{"kind": "chatb_webhook", "vendorCode": "50027"}, webhook, 401, 50027},
		{"webhook 404 status", map[string]any{"kind": "chatb_webhook", "status": 404}, webhook, 404, 10015},
		{"webhook 401 status", map[string]any{"kind": "chatb_webhook", "status": 401}, webhook, 401, 50027},
		{"bot 10003", map[string]any{"kind": "chatb_bot", "vendorCode": 10003}, bot, 404, 10003},
		{"bot 50013", map[string]any{"kind": "chatb_bot", "vendorCode": 50013}, bot, 403, 50013},
		{"bot 50001", map[string]any{"kind": "chatb_bot", "vendorCode": 50001}, bot, 403, 50001},
		{"bot 401 status", map[string]any{"kind": "chatb_bot", "status": 401}, bot, 401, 0},
		{"bot 404 status", map[string]any{"kind": "chatb_bot", "status": 404}, bot, 404, 10003},
		{"bot 500", map[string]any{"kind": "chatb_bot", "status": 500}, bot, 500, 0},
		{"bot 429", map[string]any{"kind": "chatb_bot", "status": 429}, bot, 429, -1},
		{"webhook 429", map[string]any{"kind": "chatb_webhook", "status": 429}, webhook, 429, -1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t)
			e.fault(tc.fault)
			r := tc.call(e)
			require.Equal(t, tc.status, r.status, "%s", r.body)
			m := r.obj(t)
			require.NotEmpty(t, m["message"])
			if tc.code == -1 {
				require.Equal(t, 1.0, m["retry_after"])
				require.Equal(t, false, m["global"])
				require.Equal(t, "1", r.header.Get("Retry-After"))
				require.Equal(t, "0", r.header.Get("X-RateLimit-Remaining"))
			} else {
				require.Equal(t, tc.code, m["code"])
			}
			require.Empty(t, e.messages("", ""))
			require.Equal(t, http.StatusOK, tc.call(e).status)
		})
	}
}
