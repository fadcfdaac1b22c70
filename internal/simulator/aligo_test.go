package simulator

import (
	"bytes"
	"mime/multipart"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func aligoAuth(extra url.Values) url.Values {
	v := url.Values{"key": {"apikey123"}, "user_id": {"notifyd"}, "sender": {"010-1111-2222"}}
	for k, vs := range extra {
		v[k] = vs
	}
	return v
}

func TestAligoSend(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("가", 46) // 92 bytes in EUC-KR: LMS
	tests := []struct {
		name     string
		form     url.Values
		code     any // result_code: "1" on success, a number on error
		okCnt    float64
		errCnt   float64
		msgType  string
		recorded []string
	}{
		{"one receiver", aligoAuth(url.Values{"receiver": {"01012345678"}, "msg": {"인증번호 123456"}}), "1", 1, 0, "SMS", []string{"01012345678"}},
		{"many receivers, one invalid", aligoAuth(url.Values{"receiver": {"01012345678, 010-9999-8888,abc"}, "msg": {"hi"}, "testmode_yn": {"Y"}}), "1", 2, 1, "SMS", []string{"01012345678", "010-9999-8888"}},
		{"userid alias", url.Values{"key": {"k"}, "userid": {"u"}, "sender": {"0212345678"}, "receiver": {"01012345678"}, "msg": {"x"}}, "1", 1, 0, "SMS", []string{"01012345678"}},
		{"auto LMS over 90 bytes", aligoAuth(url.Values{"receiver": {"01012345678"}, "msg": {long}}), "1", 1, 0, "LMS", []string{"01012345678"}},
		{"explicit LMS with title", aligoAuth(url.Values{"receiver": {"01012345678"}, "msg": {"x"}, "msg_type": {"LMS"}, "title": {"제목"}}), "1", 1, 0, "LMS", []string{"01012345678"}},
		{"missing key", url.Values{"user_id": {"u"}, "sender": {"0212345678"}, "receiver": {"01012345678"}, "msg": {"x"}}, float64(-101), 0, 0, "", nil},
		{"missing user_id", url.Values{"key": {"k"}, "sender": {"0212345678"}, "receiver": {"01012345678"}, "msg": {"x"}}, float64(-101), 0, 0, "", nil},
		{"bad sender", aligoAuth(url.Values{"sender": {"+82 10 1111"}, "receiver": {"01012345678"}, "msg": {"x"}}), float64(-105), 0, 0, "", nil},
		{"sender too long", aligoAuth(url.Values{"sender": {"01234567890123456"}, "receiver": {"01012345678"}, "msg": {"x"}}), float64(-105), 0, 0, "", nil},
		{"no receiver", aligoAuth(url.Values{"msg": {"x"}}), float64(-301), 0, 0, "", nil},
		{"only invalid receivers", aligoAuth(url.Values{"receiver": {"abc,12"}, "msg": {"x"}}), float64(-301), 0, 0, "", nil},
		{"too many receivers", aligoAuth(url.Values{"receiver": {strings.Repeat("01012345678,", 1001)}, "msg": {"x"}}), float64(-301), 0, 0, "", nil},
		{"empty msg", aligoAuth(url.Values{"receiver": {"01012345678"}}), float64(-99), 0, 0, "", nil},
		{"msg over 2000 bytes", aligoAuth(url.Values{"receiver": {"01012345678"}, "msg": {strings.Repeat("가", 1001)}}), float64(-99), 0, 0, "", nil},
		{"bad msg_type", aligoAuth(url.Values{"receiver": {"01012345678"}, "msg": {"x"}, "msg_type": {"KAKAO"}}), float64(-99), 0, 0, "", nil},
		{"title over 44 bytes", aligoAuth(url.Values{"receiver": {"01012345678"}, "msg": {"x"}, "msg_type": {"LMS"}, "title": {strings.Repeat("가", 23)}}), float64(-99), 0, 0, "", nil},
		{"bad reservation", aligoAuth(url.Values{"receiver": {"01012345678"}, "msg": {"x"}, "rdate": {"2026-01-01"}, "rtime": {"1200"}}), float64(-99), 0, 0, "", nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t)
			r := e.form("/send/", tc.form)
			require.Equal(t, http.StatusOK, r.status)
			require.Equal(t, aligoSMSContentType, r.header.Get("Content-Type"))
			m := r.obj(t)
			require.Equal(t, tc.code, m["result_code"], "%s", r.body)
			ms := e.messages(kindVendorASMS, "")
			if tc.code != "1" {
				require.NotEmpty(t, m["message"])
				require.Empty(t, ms)
				return
			}
			require.Equal(t, "success", m["message"])
			require.Equal(t, tc.okCnt, m["success_cnt"])
			require.Equal(t, tc.errCnt, m["error_cnt"])
			require.Equal(t, tc.msgType, m["msg_type"])
			require.NotEmpty(t, m["msg_id"])
			var tos []string
			for _, msg := range ms {
				tos = append(tos, msg.To)
				require.Equal(t, m["msg_id"], msg.ID)
				require.Equal(t, tc.msgType, msg.Headers["msg_type"])
				require.Equal(t, tc.form.Get("sender"), msg.Headers["sender"])
				require.Equal(t, tc.form.Get("msg"), msg.Text)
				require.Equal(t, tc.form.Get("title"), msg.Subject)
			}
			require.Equal(t, tc.recorded, tos)
		})
	}
}

func TestAligoSendFormats(t *testing.T) {
	t.Parallel()
	t.Run("multipart with image is MMS", func(t *testing.T) {
		t.Parallel()
		e := newEnv(t)
		var buf bytes.Buffer
		mw := multipart.NewWriter(&buf)
		for k, v := range map[string]string{"key": "k", "user_id": "u", "sender": "0212345678", "receiver": "01012345678", "msg": "사진"} {
			require.NoError(t, mw.WriteField(k, v))
		}
		fw, err := mw.CreateFormFile("image1", "a.jpg")
		require.NoError(t, err)
		_, _ = fw.Write([]byte{0xff, 0xd8, 0xff})
		require.NoError(t, mw.Close())
		r := e.do(http.MethodPost, "/send/", map[string]string{"Content-Type": mw.FormDataContentType()}, buf.Bytes())
		m := r.obj(t)
		require.Equal(t, "1", m["result_code"], "%s", r.body)
		require.Equal(t, "MMS", m["msg_type"])
	})
	t.Run("destination fills the name", func(t *testing.T) {
		t.Parallel()
		e := newEnv(t)
		r := e.form("/send/", aligoAuth(url.Values{"receiver": {"01011112222,01033334444"}, "msg": {"%고객명%님 안녕하세요"},
			"destination": {"01011112222|홍길동,01033334444|김철수"}}))
		require.Equal(t, "1", r.obj(t)["result_code"])
		ms := e.messages(kindVendorASMS, "")
		require.Equal(t, "홍길동님 안녕하세요", ms[0].Text)
		require.Equal(t, "김철수님 안녕하세요", ms[1].Text)
	})
	t.Run("JSON body is not a form", func(t *testing.T) {
		t.Parallel()
		e := newEnv(t)
		r := e.postJSON("/send/", nil, map[string]string{"key": "k"})
		require.EqualValues(t, -99, r.obj(t)["result_code"])
	})
}

func TestAligoSendMass(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		form   url.Values
		code   any
		okCnt  float64
		errCnt float64
	}{
		{"three pairs", aligoAuth(url.Values{"cnt": {"3"}, "msg_type": {"SMS"}, "rec_1": {"01011110001"}, "msg_1": {"a"},
			"rec_2": {"01011110002"}, "msg_2": {"b"}, "rec_3": {"01011110003"}, "msg_3": {"c"}}), "1", 3, 0},
		{"one pair incomplete", aligoAuth(url.Values{"cnt": {"2"}, "msg_type": {"LMS"}, "title": {"t"}, "rec_1": {"01011110001"}, "msg_1": {"a"},
			"rec_2": {"01011110002"}}), "1", 1, 1},
		{"cnt missing", aligoAuth(url.Values{"msg_type": {"SMS"}, "rec_1": {"01011110001"}, "msg_1": {"a"}}), float64(-99), 0, 0},
		{"cnt over 500", aligoAuth(url.Values{"cnt": {"501"}, "msg_type": {"SMS"}}), float64(-99), 0, 0},
		{"msg_type required", aligoAuth(url.Values{"cnt": {"1"}, "rec_1": {"01011110001"}, "msg_1": {"a"}}), float64(-99), 0, 0},
		{"no valid pair", aligoAuth(url.Values{"cnt": {"1"}, "msg_type": {"SMS"}, "rec_1": {"x"}, "msg_1": {"a"}}), float64(-301), 0, 0},
		{"bad auth", url.Values{"key": {"k"}, "cnt": {"1"}}, float64(-101), 0, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t)
			r := e.form("/send_mass/", tc.form)
			m := r.obj(t)
			require.Equal(t, tc.code, m["result_code"], "%s", r.body)
			if tc.code != "1" {
				require.Empty(t, e.messages("", ""))
				return
			}
			require.Equal(t, tc.okCnt, m["success_cnt"])
			require.Equal(t, tc.errCnt, m["error_cnt"])
			ms := e.messages(kindVendorASMS, "")
			require.Len(t, ms, int(tc.okCnt))
			require.Equal(t, "01011110001", ms[0].To)
			require.Equal(t, "a", ms[0].Text)
			require.Equal(t, m["msg_id"], ms[0].ID)
		})
	}
}

func TestAligoRemain(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	r := e.form("/remain/", url.Values{"key": {"k"}, "user_id": {"u"}})
	m := r.obj(t)
	require.EqualValues(t, 1, m["result_code"])
	require.EqualValues(t, 1000, m["SMS_CNT"])
	require.EqualValues(t, 500, m["LMS_CNT"])
	require.EqualValues(t, 200, m["MMS_CNT"])

	require.Equal(t, http.StatusOK, e.do(http.MethodPut, "/_sim/balance", nil, []byte(`{"kind":"vendora_msgr","value":3}`)).status)
	m = e.form("/remain/", url.Values{"key": {"k"}, "user_id": {"u"}}).obj(t)
	require.EqualValues(t, 3, m["SMS_CNT"])
	require.EqualValues(t, 0, m["LMS_CNT"])

	require.EqualValues(t, -101, e.form("/remain/", url.Values{"key": {"k"}}).obj(t)["result_code"])
}

// alimToken creates an AlimTalk token like the vendor's samples.
func alimToken(e *env) string {
	e.t.Helper()
	r := e.form("/akv10/token/create/30/s/", url.Values{"apikey": {"k"}, "userid": {"u"}})
	m := r.obj(e.t)
	require.EqualValues(e.t, 0, m["code"], "%s", r.body)
	require.NotEmpty(e.t, m["urlencode"])
	return m["token"].(string)
}

func alimForm(token string, extra url.Values) url.Values {
	v := url.Values{"apikey": {"k"}, "userid": {"u"}, "token": {token}, "senderkey": {"sk123"}, "tpl_code": {"TA_0001"}, "sender": {"0212345678"}}
	for k, vs := range extra {
		v[k] = vs
	}
	return v
}

func TestAlimtalkToken(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	tests := []struct {
		path string
		form url.Values
		code float64
	}{
		{"/akv10/token/create/30/s/", url.Values{"apikey": {"k"}, "userid": {"u"}}, 0},
		{"/akv10/token/create/1/i/", url.Values{"apikey": {"k"}, "userid": {"u"}}, 0},
		{"/akv10/token/create/2/y/", url.Values{"apikey": {"k"}, "userid": {"u"}}, 0},
		{"/akv10/token/create/30/x/", url.Values{"apikey": {"k"}, "userid": {"u"}}, -99},
		{"/akv10/token/create/0/s/", url.Values{"apikey": {"k"}, "userid": {"u"}}, -99},
		{"/akv10/token/create/30/s", url.Values{"apikey": {"k"}, "userid": {"u"}}, -99},
		{"/akv10/token/create/30/s/", url.Values{"apikey": {"k"}, "user_id": {"u"}}, -101}, // AlimTalk names it userid
	}
	for _, tc := range tests {
		t.Run(tc.path, func(t *testing.T) {
			t.Parallel()
			m := e.form(tc.path, tc.form).obj(t)
			require.Equal(t, tc.code, m["code"], "%v", m)
			if tc.code == 0 {
				require.Len(t, m["token"], 64)
			}
		})
	}
}

func TestAlimtalkSend(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	token := alimToken(e)
	button := `{"button":[{"name":"확인","linkType":"WL","linkMo":"https://x.io","linkPc":"https://x.io"}]}`
	tests := []struct {
		name       string
		form       url.Values
		code       float64
		scnt, fcnt float64
	}{
		{"two receivers", alimForm(token, url.Values{"receiver_1": {"01011112222"}, "recvname_1": {"홍길동"}, "subject_1": {"주문"},
			"message_1": {"홍길동님 주문이 접수되었습니다."}, "button_1": {button}, "receiver_2": {"01033334444"}, "message_2": {"김철수님 주문이 접수되었습니다."}}), 0, 2, 0},
		{"one receiver without message", alimForm(token, url.Values{"receiver_1": {"01011112222"}, "message_1": {"a"}, "receiver_2": {"01033334444"}}), 0, 1, 1},
		{"missing token", alimForm("", url.Values{"receiver_1": {"01011112222"}, "message_1": {"a"}}), -10, 0, 0},
		{"unknown token", alimForm(strings.Repeat("ab", 32), url.Values{"receiver_1": {"01011112222"}, "message_1": {"a"}}), -107, 0, 0},
		{"bad auth", url.Values{"apikey": {"k"}, "token": {token}}, -101, 0, 0},
		{"missing senderkey", alimForm(token, url.Values{"senderkey": {""}, "receiver_1": {"01011112222"}, "message_1": {"a"}}), -99, 0, 0},
		{"missing tpl_code", alimForm(token, url.Values{"tpl_code": {""}, "receiver_1": {"01011112222"}, "message_1": {"a"}}), -99, 0, 0},
		{"bad sender", alimForm(token, url.Values{"sender": {""}, "receiver_1": {"01011112222"}, "message_1": {"a"}}), -105, 0, 0},
		{"no receivers", alimForm(token, nil), -301, 0, 0},
		{"receiver index over 500", alimForm(token, url.Values{"receiver_501": {"01011112222"}, "message_501": {"a"}}), -99, 0, 0},
		{"button not JSON", alimForm(token, url.Values{"receiver_1": {"01011112222"}, "message_1": {"a"}, "button_1": {"[확인]"}}), -99, 0, 0},
		{"button without button key", alimForm(token, url.Values{"receiver_1": {"01011112222"}, "message_1": {"a"}, "button_1": {`[{"name":"x"}]`}}), -99, 0, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			r := e.form("/akv10/alimtalk/send/", tc.form)
			require.Equal(t, http.StatusOK, r.status)
			m := r.obj(t)
			require.Equal(t, tc.code, m["code"], "%s", r.body)
			if tc.code != 0 {
				return
			}
			info := m["info"].(map[string]any)
			require.Equal(t, "AT", info["type"])
			require.Equal(t, tc.scnt, info["scnt"])
			require.Equal(t, tc.fcnt, info["fcnt"])
			require.NotZero(t, info["mid"])
		})
	}
	t.Run("recorded", func(t *testing.T) {
		t.Parallel()
		e := newEnv(t)
		r := e.form("/akv10/alimtalk/send/", alimForm(alimToken(e), url.Values{"receiver_1": {"01011112222"}, "recvname_1": {"홍길동"},
			"subject_1": {"주문"}, "message_1": {"본문\n둘째 줄"}, "button_1": {button}}))
		m := r.obj(t)
		ms := e.messages(kindVendorAMsgr, "01011112222")
		require.Len(t, ms, 1)
		require.Equal(t, "본문\n둘째 줄", ms[0].Text)
		require.Equal(t, "주문", ms[0].Subject)
		require.Equal(t, "sk123", ms[0].Headers["senderkey"])
		require.Equal(t, "TA_0001", ms[0].Headers["tpl_code"])
		require.Equal(t, "홍길동", ms[0].Headers["recvname"])
		require.Equal(t, button, ms[0].Headers["button"])
		require.EqualValues(t, m["info"].(map[string]any)["mid"], mustFloat(t, ms[0].ID))
	})
}

func mustFloat(t *testing.T, s string) float64 {
	t.Helper()
	var f float64
	for _, c := range s {
		require.True(t, c >= '0' && c <= '9', s)
		f = f*10 + float64(c-'0')
	}
	return f
}

func TestAlimtalkTokenExpiry(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	now := time.Now()
	e.sim.now = func() time.Time { return now }
	token := alimToken(e) // 30 seconds
	form := alimForm(token, url.Values{"receiver_1": {"01011112222"}, "message_1": {"a"}})
	require.EqualValues(t, 0, e.form("/akv10/alimtalk/send/", form).obj(t)["code"])
	e.sim.now = func() time.Time { return now.Add(31 * time.Second) }
	require.EqualValues(t, -107, e.form("/akv10/alimtalk/send/", form).obj(t)["code"])
	// A token of another simulator is unknown here.
	other := newEnv(t)
	require.EqualValues(t, -107, other.form("/akv10/alimtalk/send/", alimForm(alimToken(e), url.Values{"receiver_1": {"01011112222"}, "message_1": {"a"}})).obj(t)["code"])
}

func TestAlimtalkHeartinfo(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	token := alimToken(e)
	m := e.form("/akv10/heartinfo/", url.Values{"apikey": {"k"}, "userid": {"u"}, "token": {token}}).obj(t)
	require.EqualValues(t, 0, m["code"])
	list := m["list"].(map[string]any)
	require.EqualValues(t, 1000, list["SMS_CNT"])
	require.EqualValues(t, 500, list["LMS_CNT"])
	require.EqualValues(t, 200, list["MMS_CNT"])
	require.EqualValues(t, -10, e.form("/akv10/heartinfo/", url.Values{"apikey": {"k"}, "userid": {"u"}}).obj(t)["code"])
}

func TestAligoFaults(t *testing.T) {
	t.Parallel()
	sms := func(e *env) *resp {
		return e.form("/send/", aligoAuth(url.Values{"receiver": {"01012345678"}, "msg": {"x"}}))
	}
	mass := func(e *env) *resp {
		return e.form("/send_mass/", aligoAuth(url.Values{"cnt": {"1"}, "msg_type": {"SMS"}, "rec_1": {"01012345678"}, "msg_1": {"x"}}))
	}
	alim := func(e *env) *resp {
		return e.form("/akv10/alimtalk/send/", alimForm(alimToken(e), url.Values{"receiver_1": {"01011112222"}, "message_1": {"a"}}))
	}
	remain := func(e *env) *resp { return e.form("/remain/", url.Values{"key": {"k"}, "user_id": {"u"}}) }
	heart := func(e *env) *resp {
		return e.form("/akv10/heartinfo/", url.Values{"apikey": {"k"}, "userid": {"u"}, "token": {alimToken(e)}})
	}
	tokenCall := func(e *env) *resp {
		return e.form("/akv10/token/create/30/s/", url.Values{"apikey": {"k"}, "userid": {"u"}})
	}
	tests := []struct {
		name   string
		fault  map[string]any
		call   func(*env) *resp
		status int
		field  string
		code   float64
		kind   string
	}{
		{"sms -201 insufficient balance", map[string]any{"kind": "vendora_sms", "vendorCode": "-201"}, sms, 200, "result_code", -201, kindVendorASMS},
		{"send_mass -101", map[string]any{"kind": "vendora_sms", "vendorCode": -101}, mass, 200, "result_code", -101, kindVendorASMS},
		{"sms status 500", map[string]any{"kind": "vendora_sms", "status": 500}, sms, 500, "", 0, kindVendorASMS},
		{"sms status 429", map[string]any{"kind": "vendora_sms", "status": 429}, sms, 429, "", 0, kindVendorASMS},
		{"alimtalk -201", map[string]any{"kind": "vendora_msgr", "vendorCode": -201}, alim, 200, "code", -201, kindVendorAMsgr},
		{"alimtalk 509", map[string]any{"kind": "vendora_msgr", "vendorCode": 509}, alim, 200, "code", 509, kindVendorAMsgr},
		{"alimtalk status 503", map[string]any{"kind": "vendora_msgr", "status": 503}, alim, 503, "", 0, kindVendorAMsgr},
		{"remain balance fault", map[string]any{"kind": "vendora_sms", "op": "balance", "status": 500}, remain, 500, "", 0, ""},
		{"remain hit by msgr balance fault", map[string]any{"kind": "vendora_msgr", "op": "balance", "vendorCode": -101}, remain, 200, "result_code", -101, ""},
		{"heartinfo balance fault", map[string]any{"kind": "vendora_msgr", "op": "balance", "vendorCode": -99}, heart, 200, "code", -99, ""},
		{"token fault", map[string]any{"kind": "vendora_msgr", "op": "token", "vendorCode": -101}, tokenCall, 200, "code", -101, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t)
			e.fault(tc.fault)
			r := tc.call(e)
			require.Equal(t, tc.status, r.status, "%s", r.body)
			if tc.field != "" {
				m := r.obj(t)
				require.Equal(t, tc.code, m[tc.field])
				require.NotEmpty(t, m["message"])
			} else {
				require.Contains(t, string(r.body), "<html>")
				if tc.status == 429 {
					require.Equal(t, "1", r.header.Get("Retry-After"))
				}
			}
			if tc.kind != "" {
				require.Empty(t, e.messages(tc.kind, ""))
				// The fault is spent: the next call succeeds.
				r = tc.call(e)
				require.Equal(t, http.StatusOK, r.status)
				require.Len(t, e.messages(tc.kind, ""), 1)
			}
		})
	}
}
