package simulator

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestSolapiAuth(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	now := time.Now()
	good := solapiHeader(now, "abcdefghijklmnop")
	sig := good[strings.LastIndex(good, "=")+1:]
	date := now.UTC().Format(time.RFC3339)
	tests := []struct {
		name   string
		header string
		code   string
	}{
		{"valid", solapiHeader(now, "0123456789abcdef0123456789abcdef"), ""},
		{"valid HMAC-MD5 shape", "HMAC-MD5 apiKey=K, date=" + date + ", salt=0123456789abcd, signature=" + strings.Repeat("a", 32), ""},
		{"valid with milliseconds", "HMAC-SHA256 apiKey=K, date=" + now.UTC().Format("2006-01-02T15:04:05.000Z") + ", salt=saltsaltsaltsalt, signature=" + strings.Repeat("0", 64), ""},
		{"missing header", "", "InvalidAPIKey"},
		{"empty apiKey", "HMAC-SHA256 apiKey=, date=" + date + ", salt=0123456789abcd, signature=" + sig, "InvalidAPIKey"},
		{"wrong scheme", "Bearer abc", "SignatureDoesNotMatch"},
		{"missing salt", "HMAC-SHA256 apiKey=K, date=" + date + ", signature=" + sig, "SignatureDoesNotMatch"},
		{"salt too short", "HMAC-SHA256 apiKey=K, date=" + date + ", salt=short, signature=" + sig, "SignatureDoesNotMatch"},
		{"salt too long", "HMAC-SHA256 apiKey=K, date=" + date + ", salt=" + strings.Repeat("s", 65) + ", signature=" + sig, "SignatureDoesNotMatch"},
		{"signature upper case", "HMAC-SHA256 apiKey=K, date=" + date + ", salt=0123456789abcd, signature=" + strings.ToUpper(sig), "SignatureDoesNotMatch"},
		{"signature too short", "HMAC-SHA256 apiKey=K, date=" + date + ", salt=0123456789abcd, signature=abc", "SignatureDoesNotMatch"},
		{"extra part", good + ", extra=1", "SignatureDoesNotMatch"},
		{"date not ISO 8601", "HMAC-SHA256 apiKey=K, date=Mon Jan 2 2026, salt=0123456789abcd, signature=" + sig, "SignatureDoesNotMatch"},
		{"date skewed", solapiHeader(now.Add(-16*time.Minute), "0123456789abcdefXX"), "RequestTimeTooSkewed"},
		{"date in the future", solapiHeader(now.Add(16*time.Minute), "0123456789abcdefYY"), "RequestTimeTooSkewed"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			r := e.do(http.MethodGet, "/cash/v1/balance", map[string]string{"Authorization": tc.header}, nil)
			if tc.code == "" {
				require.Equal(t, http.StatusOK, r.status, "%s", r.body)
				return
			}
			require.Equal(t, http.StatusForbidden, r.status, "%s", r.body)
			m := r.obj(t)
			require.Equal(t, tc.code, m["errorCode"])
			require.NotEmpty(t, m["errorMessage"])
		})
	}
	t.Run("reused signature", func(t *testing.T) {
		t.Parallel()
		e := newEnv(t)
		h := map[string]string{"Authorization": solapiHeader(time.Now(), "reused-salt-123")}
		require.Equal(t, http.StatusOK, e.do(http.MethodGet, "/cash/v1/balance", h, nil).status)
		r := e.do(http.MethodGet, "/cash/v1/balance", h, nil)
		require.Equal(t, http.StatusForbidden, r.status)
		require.Equal(t, "DuplicatedSignature", r.obj(t)["errorCode"])
	})
}

func TestSigCacheBounded(t *testing.T) {
	t.Parallel()
	var c sigCache
	c.init()
	now := time.Now()
	require.False(t, c.seenRecently("first", now, solapiSkew))
	require.True(t, c.seenRecently("first", now, solapiSkew))
	require.False(t, c.seenRecently("first", now.Add(16*time.Minute), solapiSkew), "outside the window")
	for i := 0; i < sigCacheSize+5; i++ {
		c.seenRecently(strings.Repeat("x", 1+i%7)+string(rune('a'+i%26))+time.Duration(i).String(), now, solapiSkew)
	}
	require.LessOrEqual(t, len(c.seen), sigCacheSize)
}

func TestSolapiSend(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		message map[string]any
		status  string
		typ     string
		kind    string
	}{
		{"SMS", map[string]any{"to": "01012345678", "from": "0212345678", "text": "인증번호 123456", "type": "SMS",
			"customFields": map[string]string{"nid": "req-1"}}, "2000", "SMS", kindVendorBSMS},
		{"auto LMS", map[string]any{"to": "01012345678", "from": "0212345678", "text": strings.Repeat("가", 46)}, "2000", "LMS", kindVendorBSMS},
		{"ATA", map[string]any{"to": "01012345678", "from": "0212345678", "type": "ATA", "text": "홍길동님 안녕하세요",
			"kakaoOptions": map[string]any{"pfId": "KA01PF1", "templateId": "KA01TP1", "variables": map[string]string{"#{name}": "홍길동"}, "disableSms": true}},
			"2000", "ATA", kindVendorBMsgr},
		{"ATA auto-detected without from", map[string]any{"to": "01012345678", "text": "t",
			"kakaoOptions": map[string]any{"pfId": "KA01PF1", "templateId": "KA01TP1"}}, "2000", "ATA", kindVendorBMsgr},
		{"missing to", map[string]any{"from": "0212345678", "text": "x"}, "1010", "SMS", ""},
		{"bad to", map[string]any{"to": "hello", "from": "0212345678", "text": "x"}, "1011", "SMS", ""},
		{"missing from", map[string]any{"to": "01012345678", "text": "x"}, "1010", "SMS", ""},
		{"missing text", map[string]any{"to": "01012345678", "from": "0212345678"}, "1010", "SMS", ""},
		{"unknown type", map[string]any{"to": "01012345678", "from": "0212345678", "text": "x", "type": "KAKAO"}, "1011", "KAKAO", ""},
		{"ATA without pfId", map[string]any{"to": "01012345678", "type": "ATA", "text": "x", "kakaoOptions": map[string]any{"templateId": "T"}}, "1041", "ATA", ""},
		{"ATA without templateId", map[string]any{"to": "01012345678", "type": "ATA", "text": "x", "kakaoOptions": map[string]any{"pfId": "P"}}, "1042", "ATA", ""},
		{"ATA variable key without #{}", map[string]any{"to": "01012345678", "type": "ATA", "text": "x",
			"kakaoOptions": map[string]any{"pfId": "P", "templateId": "T", "variables": map[string]string{"name": "v"}}}, "1011", "ATA", ""},
		{"ATA variable value not a string", map[string]any{"to": "01012345678", "type": "ATA", "text": "x",
			"kakaoOptions": map[string]any{"pfId": "P", "templateId": "T", "variables": map[string]any{"#{n}": 1}}}, "1011", "ATA", ""},
		{"customFields value too long", map[string]any{"to": "01012345678", "from": "0212345678", "text": "x",
			"customFields": map[string]string{"k": strings.Repeat("v", 101)}}, "1011", "SMS", ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t)
			r := e.postJSON("/messages/v4/send", freshSolapi(), map[string]any{"message": tc.message})
			require.Equal(t, http.StatusOK, r.status, "%s", r.body)
			m := r.obj(t)
			require.Equal(t, tc.status, m["statusCode"], "%s", r.body)
			require.Equal(t, tc.typ, m["type"])
			require.True(t, strings.HasPrefix(m["messageId"].(string), "M4V"))
			require.True(t, strings.HasPrefix(m["groupId"].(string), "G4V"))
			if tc.kind == "" {
				require.Empty(t, e.messages("", ""))
				return
			}
			ms := e.messages(tc.kind, "01012345678")
			require.Len(t, ms, 1)
			require.Equal(t, m["messageId"], ms[0].ID)
			require.Equal(t, tc.message["text"], ms[0].Text)
			if tc.typ == "ATA" {
				require.Equal(t, "KA01TP1", ms[0].Headers["templateId"])
			}
			if tc.name == "ATA" {
				require.Equal(t, "홍길동", ms[0].Headers["variables.#{name}"])
				require.Equal(t, "true", ms[0].Headers["disableSms"])
			}
			if tc.name == "SMS" {
				require.Equal(t, "req-1", ms[0].Headers["customFields.nid"])
				require.Equal(t, map[string]any{"nid": "req-1"}, m["customFields"])
			}
		})
	}
	t.Run("request-level validation", func(t *testing.T) {
		t.Parallel()
		e := newEnv(t)
		for _, body := range []string{`{}`, `not json`, `{"message":{"to":1}}`, `{"message":{"customFields":{"a":1}}}`} {
			r := e.postJSON("/messages/v4/send", freshSolapi(), []byte(body))
			require.Equal(t, http.StatusBadRequest, r.status, body)
			require.Equal(t, "ValidationError", r.obj(t)["errorCode"])
		}
	})
}

func TestSolapiSendManyDetail(t *testing.T) {
	t.Parallel()
	msgs := []map[string]any{
		{"to": "01011110001", "from": "0212345678", "text": "a", "customFields": map[string]string{"nid": "n1"}},
		{"to": "bad", "from": "0212345678", "text": "b", "customFields": map[string]string{"nid": "n2"}},
		{"to": "01011110003", "from": "0212345678", "text": "c", "type": "ATA", "customFields": map[string]string{"nid": "n3"},
			"kakaoOptions": map[string]any{"pfId": "P", "templateId": "T", "disableSms": true}},
	}
	tests := []struct {
		name     string
		show     bool
		wantList bool
	}{
		{"with messageList", true, true},
		{"without messageList", false, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t)
			r := e.postJSON("/messages/v4/send-many/detail", freshSolapi(), map[string]any{"messages": msgs, "allowDuplicates": false, "showMessageList": tc.show})
			require.Equal(t, http.StatusOK, r.status, "%s", r.body)
			m := r.obj(t)
			gi := m["groupInfo"].(map[string]any)
			require.Equal(t, gi["_id"], gi["groupId"])
			count := gi["count"].(map[string]any)
			require.EqualValues(t, 3, count["total"])
			require.EqualValues(t, 1, count["registeredFailed"])
			require.EqualValues(t, 2, count["registeredSuccess"])
			failed := m["failedMessageList"].([]any)
			require.Len(t, failed, 1)
			f := failed[0].(map[string]any)
			require.Equal(t, "bad", f["to"])
			require.Equal(t, "1011", f["statusCode"])
			require.Equal(t, map[string]any{"nid": "n2"}, f["customFields"])
			if !tc.wantList {
				require.NotContains(t, m, "messageList")
			} else {
				list := m["messageList"].([]any)
				require.Len(t, list, 2)
				first := list[0].(map[string]any)
				require.NotContains(t, first, "to", "the vendor gives no to: correlate by customFields")
				require.Equal(t, "2000", first["statusCode"])
				require.Equal(t, map[string]any{"nid": "n1"}, first["customFields"])
				require.Equal(t, "n3", list[1].(map[string]any)["customFields"].(map[string]any)["nid"])
			}
			require.Len(t, e.messages(kindVendorBSMS, ""), 1)
			require.Len(t, e.messages(kindVendorBMsgr, ""), 1)
		})
	}
	t.Run("limits", func(t *testing.T) {
		t.Parallel()
		e := newEnv(t)
		r := e.postJSON("/messages/v4/send-many/detail", freshSolapi(), map[string]any{"messages": []any{}})
		require.Equal(t, http.StatusBadRequest, r.status)
		r = e.postJSON("/messages/v4/send-many/detail", freshSolapi(), map[string]any{"messages": make([]map[string]any, 10_001)})
		require.Equal(t, http.StatusBadRequest, r.status)
	})
}

func TestSolapiSendMany(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	r := e.postJSON("/messages/v4/send-many", freshSolapi(), map[string]any{"messages": []map[string]any{
		{"to": "01011110001", "from": "0212345678", "text": "a"},
		{"to": "01011110002", "from": "0212345678", "text": "b"},
	}})
	require.Equal(t, http.StatusOK, r.status, "%s", r.body)
	m := r.obj(t)
	require.NotEmpty(t, m["groupId"])
	require.EqualValues(t, 2, m["count"].(map[string]any)["registeredSuccess"])
	require.Len(t, e.messages(kindVendorBSMS, ""), 2)
}

func TestSolapiBalance(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	m := e.do(http.MethodGet, "/cash/v1/balance", freshSolapi(), nil).obj(t)
	require.EqualValues(t, 100000, m["balance"])
	for _, k := range []string{"point", "accountId", "autoRecharge", "rechargeTo", "minimumCash", "lowBalanceAlert"} {
		require.Contains(t, m, k)
	}
	require.Equal(t, http.StatusOK, e.do(http.MethodPut, "/_sim/balance", nil, []byte(`{"kind":"vendorb_msgr","value":42}`)).status)
	require.EqualValues(t, 42, e.do(http.MethodGet, "/cash/v1/balance", freshSolapi(), nil).obj(t)["balance"])
}

func TestSolapiFaults(t *testing.T) {
	t.Parallel()
	sms := map[string]any{"to": "01012345678", "from": "0212345678", "text": "x"}
	ata := map[string]any{"to": "01012345678", "type": "ATA", "text": "x", "kakaoOptions": map[string]any{"pfId": "P", "templateId": "T"}}
	send := func(m map[string]any) func(*env) *resp {
		return func(e *env) *resp {
			return e.postJSON("/messages/v4/send", freshSolapi(), map[string]any{"message": m})
		}
	}
	detail := func(e *env) *resp {
		return e.postJSON("/messages/v4/send-many/detail", freshSolapi(), map[string]any{"messages": []any{sms, sms}, "showMessageList": true})
	}
	balance := func(e *env) *resp { return e.do(http.MethodGet, "/cash/v1/balance", freshSolapi(), nil) }
	tests := []struct {
		name       string
		fault      map[string]any
		call       func(*env) *resp
		status     int
		statusCode string // per-message code on /send
		errorCode  string // HTTP-level errorCode
	}{
		{"send 1030 insufficient balance", map[string]any{"kind": "vendorb_sms", "vendorCode": "1030"}, send(sms), 200, "1030", ""},
		{"send 2230 as a number", map[string]any{"kind": "vendorb_sms", "vendorCode": 2230}, send(sms), 200, "2230", ""},
		{"ATA fault hits msgr kind", map[string]any{"kind": "vendorb_msgr", "vendorCode": "3104"}, send(ata), 200, "3104", ""},
		{"sms fault does not hit ATA", map[string]any{"kind": "vendorb_sms", "vendorCode": "1030"}, send(ata), 200, "2000", ""},
		{"status 500", map[string]any{"kind": "vendorb_sms", "status": 500}, send(sms), 500, "", "InternalError"},
		{"status 429", map[string]any{"kind": "vendorb_sms", "status": 429}, send(sms), 429, "", "TooManyRequests"},
		{"status 503 is not JSON", map[string]any{"kind": "vendorb_sms", "status": 503}, send(sms), 503, "", ""},
		{"InvalidAPIKey word", map[string]any{"kind": "vendorb_sms", "vendorCode": "InvalidAPIKey"}, send(sms), 403, "", "InvalidAPIKey"},
		{"code with status", map[string]any{"kind": "vendorb_sms", "vendorCode": "NotEnoughBalance", "status": 402}, send(sms), 402, "", "NotEnoughBalance"},
		{"balance op", map[string]any{"kind": "vendorb_sms", "op": "balance", "status": 500}, balance, 500, "", "InternalError"},
		{"balance op via msgr kind", map[string]any{"kind": "vendorb_msgr", "op": "balance", "vendorCode": "1030"}, balance, 400, "", "1030"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t)
			e.fault(tc.fault)
			r := tc.call(e)
			require.Equal(t, tc.status, r.status, "%s", r.body)
			switch {
			case tc.statusCode != "":
				m := r.obj(t)
				require.Equal(t, tc.statusCode, m["statusCode"])
				require.NotEmpty(t, m["statusMessage"])
				if tc.statusCode == "2000" {
					require.Len(t, e.messages("", ""), 1)
				} else {
					require.Empty(t, e.messages("", ""))
				}
			case tc.errorCode != "":
				m := r.obj(t)
				require.Equal(t, tc.errorCode, m["errorCode"])
				require.NotEmpty(t, m["errorMessage"])
				if tc.status == 429 {
					require.Equal(t, "1", r.header.Get("Retry-After"))
				}
			default:
				require.Contains(t, string(r.body), "<html>")
			}
		})
	}
	t.Run("detail with 1030 fails every message", func(t *testing.T) {
		t.Parallel()
		e := newEnv(t)
		e.fault(map[string]any{"kind": "vendorb_sms", "vendorCode": "1030"})
		m := detail(e).obj(t)
		require.Len(t, m["failedMessageList"], 2)
		require.Empty(t, m["messageList"])
		require.Equal(t, "1030", m["failedMessageList"].([]any)[0].(map[string]any)["statusCode"])
		require.EqualValues(t, 2, m["groupInfo"].(map[string]any)["count"].(map[string]any)["registeredFailed"])
		require.Empty(t, e.messages("", ""))
		m = detail(e).obj(t)
		require.Len(t, m["messageList"], 2)
		require.Len(t, e.messages("", ""), 2)
	})
}
