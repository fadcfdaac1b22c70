package simulator

import (
	"encoding/json"
	"net/http"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"time"
)

// Aligo codes the simulator answers. -101, -105, -201 and -301 follow the
// third-party tables PROVIDERS.md cites (UNCONFIRMED there); -10 and -107 are
// the AlimTalk token codes; -99 is the simulator's own code for a malformed
// request, which the vendor's tables do not name.
const (
	aligoOK          = 1
	aligoBadRequest  = -99
	aligoBadAuth     = -101
	aligoBadSender   = -105
	aligoNoBalance   = -201
	aligoBadReceiver = -301
	alimNoToken      = -10
	alimBadToken     = -107
)

var aligoMessages = map[int]string{
	aligoBadRequest:  "요청 형식이 올바르지 않습니다.",
	aligoBadAuth:     "인증오류입니다.",
	aligoBadSender:   "발신번호가 올바르지 않습니다.",
	aligoNoBalance:   "잔액이 부족합니다.",
	aligoBadReceiver: "수신번호가 올바르지 않습니다.",
	-302:             "등록되지 않은 발신번호입니다.",
	alimNoToken:      "토큰이 없습니다.",
	alimBadToken:     "사용할 수 없는 토큰입니다.",
	509:              "발신프로필 인증에 실패하였습니다.",
}

func aligoMessage(code int, fallback string) string {
	if fallback != "" {
		return fallback
	}
	if m, ok := aligoMessages[code]; ok {
		return m
	}
	return "오류가 발생하였습니다."
}

// The SMS host answers JSON labelled text/html, as the real apis.aligo.in
// does at times (PROVIDERS.md): adapters must not rely on the content type.
const (
	aligoSMSContentType  = "text/html; charset=UTF-8"
	aligoMsgrContentType = "application/json; charset=utf-8"
)

// aligoError answers an SMS-API error: HTTP 200 with a negative result_code.
// Error codes are JSON numbers while the success code is the string "1":
// PROVIDERS.md warns that numbers may arrive as strings, so both forms occur.
func aligoError(w http.ResponseWriter, code int, msg string) {
	writeJSONType(w, http.StatusOK, aligoSMSContentType, map[string]any{"result_code": code, "message": aligoMessage(code, msg)})
}

// alimError answers an AlimTalk error: HTTP 200 with a non-zero code.
func alimError(w http.ResponseWriter, code int, msg string) {
	writeJSONType(w, http.StatusOK, aligoMsgrContentType, map[string]any{"code": code, "message": aligoMessage(code, msg)})
}

// aligoFault answers a queued fault in the vendor's format: a vendor code
// comes in the JSON body (HTTP 200 unless a status is given), a bare status
// as the HTML page of the vendor's web server.
func aligoFault(w http.ResponseWriter, f *fault, codeField, contentType string) {
	if f.VendorCode == "" {
		writeGatewayError(w, f.Status)
		return
	}
	code, _ := strconv.Atoi(f.VendorCode)
	status := f.Status
	if status == 0 {
		status = http.StatusOK
	}
	if status == http.StatusTooManyRequests {
		w.Header().Set("Retry-After", "1")
	}
	writeJSONType(w, status, contentType, map[string]any{codeField: code, "message": aligoMessage(code, f.Message)})
}

// aligoForm parses the form; a body that is no form gets -99.
func aligoForm(w http.ResponseWriter, r *http.Request, msgr bool) (url.Values, bool) {
	form, err := parseForm(r)
	if err == nil {
		return form, true
	}
	switch {
	case isTooLarge(err):
		writeGatewayError(w, http.StatusRequestEntityTooLarge)
	case msgr:
		alimError(w, aligoBadRequest, "form 형식이 아닙니다: "+err.Error())
	default:
		aligoError(w, aligoBadRequest, "form 형식이 아닙니다: "+err.Error())
	}
	return nil, false
}

// aligoSMSAuth checks key and user_id; the vendor's result API names the
// field userid, so both spellings are accepted.
func aligoSMSAuth(form url.Values) bool {
	return form.Get("key") != "" && (form.Get("user_id") != "" || form.Get("userid") != "")
}

// validSender accepts a pre-registered caller number: digits and hyphens,
// at most 16 bytes (PROVIDERS.md), at least 3 digits (short codes).
func validSender(s string) bool {
	if s == "" || len(s) > 16 {
		return false
	}
	digits := 0
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c >= '0' && c <= '9':
			digits++
		case c == '-':
		default:
			return false
		}
	}
	return digits >= 3
}

func validAligoType(t string) bool { return t == "SMS" || t == "LMS" || t == "MMS" }

// checkReservation validates the optional rdate (YYYYMMDD) and rtime (HHII).
func checkReservation(form url.Values) string {
	rdate, rtime := form.Get("rdate"), form.Get("rtime")
	if rdate == "" && rtime == "" {
		return ""
	}
	if _, err := time.Parse("20060102", rdate); err != nil {
		return "rdate는 YYYYMMDD 형식이어야 합니다."
	}
	if _, err := time.Parse("1504", rtime); err != nil {
		return "rtime은 HHII 형식이어야 합니다."
	}
	return ""
}

// aligoMeta is the vendor metadata recorded as Message.Headers.
func aligoMeta(form url.Values, msgType string) map[string]string {
	h := map[string]string{"sender": form.Get("sender"), "msg_type": msgType}
	for _, k := range []string{"testmode_yn", "rdate", "rtime"} {
		if v := form.Get(k); v != "" {
			h[k] = v
		}
	}
	return h
}

func (s aligoAPI) aligoMsgID() string { return strconv.FormatUint(100_000_000+s.next(), 10) }

// aligoSend serves POST /send/: one text to up to 1,000 comma-separated
// receivers.
func (s aligoAPI) aligoSend(w http.ResponseWriter, r *http.Request) {
	form, ok := aligoForm(w, r, false)
	if !ok {
		return
	}
	if !aligoSMSAuth(form) {
		aligoError(w, aligoBadAuth, "")
		return
	}
	if f, aborted := s.takeFault(r, opSend, kindVendorASMS); aborted {
		return
	} else if f != nil {
		aligoFault(w, f, "result_code", aligoSMSContentType)
		return
	}
	if !validSender(form.Get("sender")) {
		aligoError(w, aligoBadSender, "")
		return
	}
	msg := form.Get("msg")
	if msg == "" || byteLen(msg) > 2000 {
		aligoError(w, aligoBadRequest, "msg는 1~2,000byte여야 합니다.")
		return
	}
	msgType := form.Get("msg_type")
	if msgType != "" && !validAligoType(msgType) {
		aligoError(w, aligoBadRequest, "msg_type은 SMS, LMS, MMS 중 하나여야 합니다.")
		return
	}
	title := form.Get("title")
	if byteLen(title) > 44 {
		aligoError(w, aligoBadRequest, "title은 44byte 이하여야 합니다.")
		return
	}
	if m := checkReservation(form); m != "" {
		aligoError(w, aligoBadRequest, m)
		return
	}
	var receivers []string
	for _, rc := range strings.Split(form.Get("receiver"), ",") {
		if rc = strings.TrimSpace(rc); rc != "" {
			receivers = append(receivers, rc)
		}
	}
	if len(receivers) == 0 || len(receivers) > 1000 {
		aligoError(w, aligoBadReceiver, "수신번호는 1~1,000개여야 합니다.")
		return
	}
	if msgType == "" {
		msgType = autoAligoType(r, msg)
	}
	names := destinations(form.Get("destination"))
	id := s.aligoMsgID()
	meta := aligoMeta(form, msgType)
	ms := make([]Message, 0, len(receivers))
	for _, rc := range receivers {
		if !validPhone(rc) {
			continue
		}
		text := msg
		if name, ok := names[rc]; ok {
			text = strings.ReplaceAll(text, "%고객명%", name)
		}
		ms = append(ms, Message{ID: id, To: rc, Subject: title, Text: text, Headers: meta})
	}
	if len(ms) == 0 {
		aligoError(w, aligoBadReceiver, "")
		return
	}
	s.record(kindVendorASMS, ms)
	aligoOKResponse(w, id, len(ms), len(receivers)-len(ms), msgType)
}

// autoAligoType is the vendor's rule without msg_type: an image makes MMS,
// more than 90 bytes LMS.
func autoAligoType(r *http.Request, msg string) string {
	if r.MultipartForm != nil {
		for _, k := range []string{"image", "image1", "image2", "image3"} {
			if len(r.MultipartForm.File[k]) > 0 {
				return "MMS"
			}
		}
	}
	if byteLen(msg) > 90 {
		return "LMS"
	}
	return "SMS"
}

// destinations parses "01011112222|홍길동,01033334444|김철수" for %고객명%.
func destinations(v string) map[string]string {
	if v == "" {
		return nil
	}
	m := map[string]string{}
	for _, part := range strings.Split(v, ",") {
		if num, name, ok := strings.Cut(part, "|"); ok {
			m[strings.TrimSpace(num)] = name
		}
	}
	return m
}

func aligoOKResponse(w http.ResponseWriter, id string, ok, failed int, msgType string) {
	writeJSONType(w, http.StatusOK, aligoSMSContentType, map[string]any{
		"result_code": strconv.Itoa(aligoOK), "message": "success", "msg_id": id,
		"success_cnt": ok, "error_cnt": failed, "msg_type": msgType,
	})
}

// aligoSendMass serves POST /send_mass/: cnt pairs rec_N/msg_N (N=1..500).
func (s aligoAPI) aligoSendMass(w http.ResponseWriter, r *http.Request) {
	form, ok := aligoForm(w, r, false)
	if !ok {
		return
	}
	if !aligoSMSAuth(form) {
		aligoError(w, aligoBadAuth, "")
		return
	}
	if f, aborted := s.takeFault(r, opSend, kindVendorASMS); aborted {
		return
	} else if f != nil {
		aligoFault(w, f, "result_code", aligoSMSContentType)
		return
	}
	if !validSender(form.Get("sender")) {
		aligoError(w, aligoBadSender, "")
		return
	}
	cnt, err := strconv.Atoi(form.Get("cnt"))
	if err != nil || cnt < 1 || cnt > 500 {
		aligoError(w, aligoBadRequest, "cnt는 1~500이어야 합니다.")
		return
	}
	msgType := form.Get("msg_type")
	if !validAligoType(msgType) {
		aligoError(w, aligoBadRequest, "msg_type(SMS, LMS, MMS)은 필수입니다.")
		return
	}
	title := form.Get("title")
	if byteLen(title) > 44 {
		aligoError(w, aligoBadRequest, "title은 44byte 이하여야 합니다.")
		return
	}
	if m := checkReservation(form); m != "" {
		aligoError(w, aligoBadRequest, m)
		return
	}
	id := s.aligoMsgID()
	meta := aligoMeta(form, msgType)
	ms := make([]Message, 0, cnt)
	for i := 1; i <= cnt; i++ {
		n := strconv.Itoa(i)
		rc, msg := strings.TrimSpace(form.Get("rec_"+n)), form.Get("msg_"+n)
		if !validPhone(rc) || msg == "" || byteLen(msg) > 2000 {
			continue
		}
		ms = append(ms, Message{ID: id, To: rc, Subject: title, Text: msg, Headers: meta})
	}
	if len(ms) == 0 {
		aligoError(w, aligoBadReceiver, "")
		return
	}
	s.record(kindVendorASMS, ms)
	aligoOKResponse(w, id, len(ms), cnt-len(ms), msgType)
}

// aligoRemain serves POST /remain/. The messenger adapter may call it with
// its own key, so a vendora_msgr balance fault applies too.
func (s aligoAPI) aligoRemain(w http.ResponseWriter, r *http.Request) {
	form, ok := aligoForm(w, r, false)
	if !ok {
		return
	}
	if !aligoSMSAuth(form) {
		aligoError(w, aligoBadAuth, "")
		return
	}
	if f, aborted := s.takeFault(r, opBalance, kindVendorASMS, kindVendorAMsgr); aborted {
		return
	} else if f != nil {
		aligoFault(w, f, "result_code", aligoSMSContentType)
		return
	}
	sms, lms, mms := s.balances.vendorA()
	writeJSONType(w, http.StatusOK, aligoSMSContentType, map[string]any{
		"result_code": aligoOK, "message": "", "SMS_CNT": sms, "LMS_CNT": lms, "MMS_CNT": mms,
	})
}

// alimtalkAuth checks apikey and userid, the AlimTalk names of the
// credentials, and with token the short-lived token; it answers the error
// itself.
func (s aligoAPI) alimtalkAuth(w http.ResponseWriter, form url.Values, token bool) bool {
	if form.Get("apikey") == "" || form.Get("userid") == "" {
		alimError(w, aligoBadAuth, "")
		return false
	}
	if !token {
		return true
	}
	tok := form.Get("token")
	if tok == "" {
		alimError(w, alimNoToken, "")
		return false
	}
	if _, valid := s.checkToken("", tok); !valid {
		alimError(w, alimBadToken, "")
		return false
	}
	return true
}

var tokenUnits = map[string]time.Duration{
	"y": 365 * 24 * time.Hour, "m": 30 * 24 * time.Hour, "d": 24 * time.Hour,
	"h": time.Hour, "i": time.Minute, "s": time.Second,
}

// alimtalkToken serves POST /akv10/token/create/{n}/{unit}/: a token valid
// for n units (y, m, d, h, i = minutes, s). Tokens are signed, not stored.
func (s aligoAPI) alimtalkToken(w http.ResponseWriter, r *http.Request) {
	rest, ok := strings.CutSuffix(strings.TrimPrefix(r.URL.Path, "/akv10/token/create/"), "/")
	n, unit, ok2 := strings.Cut(rest, "/")
	num, err := strconv.Atoi(n)
	d, ok3 := tokenUnits[unit]
	if !ok || !ok2 || err != nil || num < 1 || num > 1_000_000 || !ok3 {
		alimError(w, aligoBadRequest, "토큰 유효기간 형식이 올바르지 않습니다: /akv10/token/create/{n}/{y|m|d|h|i|s}/")
		return
	}
	form, ok := aligoForm(w, r, true)
	if !ok || !s.alimtalkAuth(w, form, false) {
		return
	}
	if f, aborted := s.takeFault(r, opToken, kindVendorAMsgr); aborted {
		return
	} else if f != nil {
		aligoFault(w, f, "code", aligoMsgrContentType)
		return
	}
	// Cap the lifetime so that the expiry cannot overflow.
	life := time.Duration(num) * d
	if life > 10*365*24*time.Hour || life < 0 {
		life = 10 * 365 * 24 * time.Hour
	}
	tok := s.signedToken("", s.now().Add(life))
	writeJSONType(w, http.StatusOK, aligoMsgrContentType, map[string]any{
		"code": 0, "message": "정상적으로 생성하였습니다.", "token": tok, "urlencode": url.QueryEscape(tok),
	})
}

// alimtalkSend serves POST /akv10/alimtalk/send/ with receiver_N etc. for
// N = 1..500.
func (s aligoAPI) alimtalkSend(w http.ResponseWriter, r *http.Request) {
	form, ok := aligoForm(w, r, true)
	if !ok || !s.alimtalkAuth(w, form, true) {
		return
	}
	if f, aborted := s.takeFault(r, opSend, kindVendorAMsgr); aborted {
		return
	} else if f != nil {
		aligoFault(w, f, "code", aligoMsgrContentType)
		return
	}
	for _, k := range []string{"senderkey", "tpl_code"} {
		if form.Get(k) == "" {
			alimError(w, aligoBadRequest, k+"는 필수입니다.")
			return
		}
	}
	if !validSender(form.Get("sender")) {
		alimError(w, aligoBadSender, "")
		return
	}
	var idx []int
	for k := range form {
		if v, ok := strings.CutPrefix(k, "receiver_"); ok {
			i, err := strconv.Atoi(v)
			if err != nil || i < 1 || i > 500 {
				alimError(w, aligoBadRequest, "수신자는 receiver_1 ~ receiver_500 입니다.")
				return
			}
			idx = append(idx, i)
		}
	}
	if len(idx) == 0 {
		alimError(w, aligoBadReceiver, "수신자 정보가 없습니다.")
		return
	}
	sort.Ints(idx)
	mid := 100_000 + s.next()
	id := strconv.FormatUint(mid, 10)
	ms := make([]Message, 0, len(idx))
	for _, i := range idx {
		n := strconv.Itoa(i)
		rc, msg, button := strings.TrimSpace(form.Get("receiver_"+n)), form.Get("message_"+n), form.Get("button_"+n)
		if button != "" {
			var b struct {
				Button []map[string]any `json:"button"`
			}
			if err := json.Unmarshal([]byte(button), &b); err != nil || b.Button == nil {
				alimError(w, aligoBadRequest, "button_"+n+"은 {\"button\":[...]} 형식의 JSON이어야 합니다.")
				return
			}
		}
		if !validPhone(rc) || msg == "" {
			continue
		}
		h := map[string]string{"senderkey": form.Get("senderkey"), "tpl_code": form.Get("tpl_code"), "sender": form.Get("sender")}
		for k, v := range map[string]string{"recvname": form.Get("recvname_" + n), "button": button,
			"failover": form.Get("failover"), "testMode": form.Get("testMode"), "senddate": form.Get("senddate")} {
			if v != "" {
				h[k] = v
			}
		}
		ms = append(ms, Message{ID: id, To: rc, Subject: form.Get("subject_" + n), Text: msg, Headers: h})
	}
	if len(ms) == 0 {
		alimError(w, aligoBadReceiver, "")
		return
	}
	s.record(kindVendorAMsgr, ms)
	sms, _, _ := s.balances.vendorA()
	const unit = 6.5
	writeJSONType(w, http.StatusOK, aligoMsgrContentType, map[string]any{
		"code": 0, "message": "성공적으로 전송요청 하였습니다.",
		"info": map[string]any{"type": "AT", "mid": mid, "current": float64(sms), "unit": unit,
			"total": unit * float64(len(ms)), "scnt": len(ms), "fcnt": len(idx) - len(ms)},
	})
}

// alimtalkHeartinfo serves POST /akv10/heartinfo/: the counts of the shared
// vendorA balance.
func (s aligoAPI) alimtalkHeartinfo(w http.ResponseWriter, r *http.Request) {
	form, ok := aligoForm(w, r, true)
	if !ok || !s.alimtalkAuth(w, form, true) {
		return
	}
	if f, aborted := s.takeFault(r, opBalance, kindVendorAMsgr, kindVendorASMS); aborted {
		return
	} else if f != nil {
		aligoFault(w, f, "code", aligoMsgrContentType)
		return
	}
	sms, lms, mms := s.balances.vendorA()
	writeJSONType(w, http.StatusOK, aligoMsgrContentType, map[string]any{
		"code": 0, "message": "",
		"list": map[string]int64{"SMS_CNT": sms, "LMS_CNT": lms, "MMS_CNT": mms, "ALT_CNT": sms},
	})
}
