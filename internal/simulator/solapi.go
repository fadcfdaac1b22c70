package simulator

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// solapiSkew is the vendor's clock tolerance and duplicate-signature window.
const solapiSkew = 15 * time.Minute

// Solapi statuses the simulator answers per message.
const (
	solapiAccepted    = "2000"
	solapiMissing     = "1010" // required field missing
	solapiBadFormat   = "1011" // field format
	solapiBadPfID     = "1041"
	solapiBadTemplate = "1042"
	solapiAcceptedMsg = "정상 접수(이통사로 접수 예정) "
)

var solapiStatusMessages = map[string]string{
	solapiMissing:     "필수 입력 항목이 누락되었습니다.",
	solapiBadFormat:   "입력 형식이 올바르지 않습니다.",
	"1030":            "잔액 부족",
	"2230":            "잔액 부족",
	"1060":            "수신거부된 번호입니다.",
	"1061":            "080 수신거부된 번호입니다.",
	"2060":            "수신거부된 번호입니다.",
	"2061":            "080 수신거부된 번호입니다.",
	"1062":            "등록되지 않은 발신번호입니다.",
	"2062":            "등록되지 않은 발신번호입니다.",
	solapiBadPfID:     "카카오 채널(pfId)이 올바르지 않습니다.",
	solapiBadTemplate: "알림톡 템플릿(templateId)이 올바르지 않습니다.",
	"1043":            "템플릿과 내용이 일치하지 않습니다.",
	"3010":            "수신번호 형식 오류",
	"3104":            "카카오톡 사용자가 아닙니다.",
}

// solapiAuthCodes are the HTTP-level error codes answered with 403.
var solapiAuthCodes = map[string]bool{
	"InvalidAPIKey": true, "SignatureDoesNotMatch": true, "RequestTimeTooSkewed": true, "DuplicatedSignature": true,
}

func solapiError(w http.ResponseWriter, status int, code, msg string) {
	if status == http.StatusTooManyRequests {
		w.Header().Set("Retry-After", "1")
	}
	writeJSON(w, status, map[string]string{"errorCode": code, "errorMessage": msg})
}

// solapiAuth checks the shape of "Authorization: HMAC-SHA256 apiKey=..,
// date=.., salt=.., signature=..". The secret is unknown here, so the
// signature is checked for form only; a reused signature is refused like the
// vendor does. It answers the error itself.
func (s solapiAPI) solapiAuth(w http.ResponseWriter, r *http.Request) bool {
	code, msg := s.solapiAuthError(r.Header.Get("Authorization"))
	if code == "" {
		return true
	}
	solapiError(w, http.StatusForbidden, code, msg)
	return false
}

func (s solapiAPI) solapiAuthError(h string) (code, msg string) {
	if h == "" {
		return "InvalidAPIKey", "Authorization 헤더가 없습니다."
	}
	scheme, rest, _ := strings.Cut(h, " ")
	sigLen := 0
	switch scheme {
	case "HMAC-SHA256":
		sigLen = 64
	case "HMAC-MD5":
		sigLen = 32
	default:
		return "SignatureDoesNotMatch", "인증 방식은 HMAC-SHA256 또는 HMAC-MD5여야 합니다."
	}
	parts := map[string]string{}
	for _, p := range strings.Split(rest, ",") {
		k, v, ok := strings.Cut(strings.TrimSpace(p), "=")
		if !ok {
			return "SignatureDoesNotMatch", "Authorization 헤더 형식이 올바르지 않습니다: " + strconv.Quote(p)
		}
		if _, dup := parts[k]; dup {
			return "SignatureDoesNotMatch", "중복된 항목: " + k
		}
		parts[k] = v
	}
	if parts["apiKey"] == "" {
		return "InvalidAPIKey", "apiKey가 없습니다."
	}
	for _, k := range []string{"date", "salt", "signature"} {
		if parts[k] == "" {
			return "SignatureDoesNotMatch", k + "가 없습니다."
		}
	}
	if len(parts) != 4 {
		return "SignatureDoesNotMatch", "apiKey, date, salt, signature 외의 항목이 있습니다."
	}
	date, err := time.Parse(time.RFC3339Nano, parts["date"])
	if err != nil {
		return "SignatureDoesNotMatch", "date는 ISO 8601 형식이어야 합니다: " + parts["date"]
	}
	now := s.now()
	if d := now.Sub(date); d > solapiSkew || d < -solapiSkew {
		return "RequestTimeTooSkewed", "요청 시각이 서버 시각과 15분 이상 차이납니다."
	}
	if n := len(parts["salt"]); n < 12 || n > 64 {
		return "SignatureDoesNotMatch", "salt는 12~64바이트여야 합니다."
	}
	if !isLowerHex(parts["signature"], sigLen) {
		return "SignatureDoesNotMatch", fmt.Sprintf("signature는 소문자 16진수 %d자여야 합니다.", sigLen)
	}
	if s.sigs.seenRecently(parts["apiKey"]+" "+parts["signature"], now, solapiSkew) {
		return "DuplicatedSignature", "15분 이내에 사용된 signature입니다."
	}
	return "", ""
}

type solapiKakao struct {
	PfID       string                     `json:"pfId"`
	TemplateID string                     `json:"templateId"`
	Variables  map[string]json.RawMessage `json:"variables"`
	DisableSms bool                       `json:"disableSms"`
	Buttons    json.RawMessage            `json:"buttons"`
}

type solapiMessage struct {
	To             string            `json:"to"`
	From           string            `json:"from"`
	Text           string            `json:"text"`
	Type           string            `json:"type"`
	Subject        string            `json:"subject"`
	ImageID        string            `json:"imageId"`
	Country        string            `json:"country"`
	AutoTypeDetect *bool             `json:"autoTypeDetect"`
	CustomFields   map[string]string `json:"customFields"`
	KakaoOptions   *solapiKakao      `json:"kakaoOptions"`
}

var solapiTypes = map[string]bool{
	"SMS": true, "LMS": true, "MMS": true, "ATA": true, "CTA": true, "CTI": true,
	"RCS_SMS": true, "RCS_LMS": true, "RCS_MMS": true, "RCS_TPL": true, "NSA": true, "VOICE": true, "FAX": true,
}

// resolveType applies autoTypeDetect: Kakao options with a template make
// ATA, an image MMS, more than 90 bytes LMS.
func (m *solapiMessage) resolveType() string {
	if m.Type != "" {
		return m.Type
	}
	switch {
	case m.KakaoOptions != nil && m.KakaoOptions.TemplateID != "":
		return "ATA"
	case m.ImageID != "":
		return "MMS"
	case byteLen(m.Text) > 90:
		return "LMS"
	}
	return "SMS"
}

// validate answers the per-message status code of a registration failure,
// or "" when the message is accepted.
func (m *solapiMessage) validate() (code, msg string) {
	typ := m.resolveType()
	switch {
	case !solapiTypes[typ]:
		return solapiBadFormat, "알 수 없는 메시지 타입: " + typ
	case m.To == "":
		return solapiMissing, "to는 필수입니다."
	case !validPhone(m.To):
		return solapiBadFormat, "수신번호 형식이 올바르지 않습니다: " + m.To
	case m.Text == "":
		return solapiMissing, "text는 필수입니다."
	}
	if typ == "ATA" {
		k := m.KakaoOptions
		switch {
		case k == nil || k.PfID == "":
			return solapiBadPfID, "kakaoOptions.pfId는 필수입니다."
		case k.TemplateID == "":
			return solapiBadTemplate, "kakaoOptions.templateId는 필수입니다."
		}
		for key, raw := range k.Variables {
			var v string
			if !strings.HasPrefix(key, "#{") || !strings.HasSuffix(key, "}") {
				return solapiBadFormat, "kakaoOptions.variables의 키는 #{변수} 형식이어야 합니다: " + key
			}
			if json.Unmarshal(raw, &v) != nil {
				return solapiBadFormat, "kakaoOptions.variables의 값은 문자열이어야 합니다: " + key
			}
		}
	} else if m.From == "" {
		return solapiMissing, "from은 필수입니다."
	}
	if m.From != "" && !validSender(m.From) {
		return solapiBadFormat, "발신번호 형식이 올바르지 않습니다: " + m.From
	}
	for k, v := range m.CustomFields {
		if utf8.RuneCountInString(k) > 30 || utf8.RuneCountInString(v) > 100 {
			return solapiBadFormat, "customFields는 키 30자, 값 100자 이하여야 합니다."
		}
	}
	return "", ""
}

func (m *solapiMessage) kind() string {
	if m.resolveType() == "ATA" {
		return kindVendorBMsgr
	}
	return kindVendorBSMS
}

// solapiResult is one message's outcome, in the vendor's field names.
type solapiResult struct {
	To            string            `json:"to,omitempty"`
	From          string            `json:"from,omitempty"`
	Type          string            `json:"type"`
	Country       string            `json:"country"`
	MessageID     string            `json:"messageId"`
	StatusCode    string            `json:"statusCode"`
	StatusMessage string            `json:"statusMessage"`
	CustomFields  map[string]string `json:"customFields,omitempty"`
	AccountID     string            `json:"accountId"`
}

func (s solapiAPI) solapiID(prefix string) string {
	return fmt.Sprintf("%s%s%04X%012X", prefix, s.now().UTC().Format("20060102150405"), uint16(s.instance), s.next())
}

func (s solapiAPI) solapiAccount() string {
	return fmt.Sprintf("%014d", s.instance%100_000_000_000_000)
}

// solapiProcess validates, applies a vendor-code fault and records the
// messages of one call, answering their results in input order.
func (s solapiAPI) solapiProcess(msgs []solapiMessage, f *fault) []solapiResult {
	out := make([]solapiResult, len(msgs))
	rec := make([]Message, 0, len(msgs))
	recKinds := make([]string, 0, len(msgs))
	account := s.solapiAccount()
	for i := range msgs {
		m := &msgs[i]
		country := m.Country
		if country == "" {
			country = "82"
		}
		res := solapiResult{To: m.To, From: m.From, Type: m.resolveType(), Country: country,
			MessageID: s.solapiID("M4V"), CustomFields: m.CustomFields, AccountID: account}
		code, msg := m.validate()
		if code == "" && f != nil {
			code, msg = f.VendorCode, f.Message
		}
		if code != "" {
			if msg == "" {
				msg = solapiStatusMessages[code]
			}
			res.StatusCode, res.StatusMessage = code, msg
			out[i] = res
			continue
		}
		res.StatusCode, res.StatusMessage = solapiAccepted, solapiAcceptedMsg
		out[i] = res
		h := map[string]string{"from": m.From, "type": res.Type, "country": country}
		for k, v := range m.CustomFields {
			h["customFields."+k] = v
		}
		if k := m.KakaoOptions; k != nil {
			h["pfId"], h["templateId"] = k.PfID, k.TemplateID
			h["disableSms"] = strconv.FormatBool(k.DisableSms)
			for name, raw := range k.Variables {
				var v string
				_ = json.Unmarshal(raw, &v)
				h["variables."+name] = v
			}
		}
		rec = append(rec, Message{ID: res.MessageID, To: m.To, Subject: m.Subject, Text: m.Text, Headers: h})
		recKinds = append(recKinds, m.kind())
	}
	// Group by kind so that mixed batches are recorded under the right kind.
	for start := 0; start < len(rec); {
		end := start + 1
		for end < len(rec) && recKinds[end] == recKinds[start] {
			end++
		}
		s.record(recKinds[start], rec[start:end])
		start = end
	}
	return out
}

// solapiFault answers a fault that is not a per-message status code, and
// reports whether it did. A numeric vendor code without a status becomes the
// statusCode of every message of the call instead.
func solapiFault(w http.ResponseWriter, f *fault) bool {
	if f == nil {
		return false
	}
	_, numErr := strconv.Atoi(f.VendorCode)
	if f.VendorCode != "" && numErr == nil && f.Status == 0 {
		return false
	}
	status, code := f.Status, f.VendorCode
	if status == 0 {
		status = http.StatusBadRequest
		if solapiAuthCodes[code] {
			status = http.StatusForbidden
		}
	}
	if status == http.StatusServiceUnavailable || status == http.StatusBadGateway || status == http.StatusGatewayTimeout {
		// Behind the vendor's load balancer these bodies are not JSON.
		writeGatewayError(w, status)
		return true
	}
	if code == "" {
		code = map[int]string{400: "ValidationError", 401: "Unauthorized", 403: "InvalidAPIKey", 404: "NotFound",
			429: "TooManyRequests", 500: "InternalError"}[status]
		if code == "" {
			code = "UnknownError"
		}
	}
	msg := f.Message
	if msg == "" {
		msg = "시뮬레이터 장애 주입: " + code
	}
	solapiError(w, status, code, msg)
	return true
}

// solapiDecode reads the JSON body into v, answering 400 ValidationError.
func solapiDecode(w http.ResponseWriter, r *http.Request, v any) bool {
	body, err := readBody(r)
	if err != nil {
		if isTooLarge(err) {
			solapiError(w, http.StatusRequestEntityTooLarge, "RequestEntityTooLarge", "요청 본문이 너무 큽니다.")
		} else {
			solapiError(w, http.StatusBadRequest, "ValidationError", err.Error())
		}
		return false
	}
	if err := json.Unmarshal(body, v); err != nil {
		solapiError(w, http.StatusBadRequest, "ValidationError", "JSON 형식이 올바르지 않습니다: "+err.Error())
		return false
	}
	return true
}

// solapiSend serves POST /messages/v4/send: {"message":{...}}. A refused
// message answers HTTP 200 with its statusCode, like the batch results.
func (s solapiAPI) solapiSend(w http.ResponseWriter, r *http.Request) {
	if !s.solapiAuth(w, r) {
		return
	}
	var body struct {
		Message *solapiMessage `json:"message"`
	}
	if !solapiDecode(w, r, &body) {
		return
	}
	if body.Message == nil {
		solapiError(w, http.StatusBadRequest, "ValidationError", "message는 필수입니다.")
		return
	}
	f, aborted := s.takeFault(r, opSend, body.Message.kind())
	if aborted || solapiFault(w, f) {
		return
	}
	res := s.solapiProcess([]solapiMessage{*body.Message}, f)[0]
	writeJSON(w, http.StatusOK, map[string]any{
		"groupId": s.solapiID("G4V"), "messageId": res.MessageID, "statusCode": res.StatusCode,
		"statusMessage": res.StatusMessage, "to": res.To, "from": res.From, "type": res.Type,
		"country": res.Country, "accountId": res.AccountID, "customFields": res.CustomFields,
	})
}

type solapiMany struct {
	Messages        []solapiMessage `json:"messages"`
	AllowDuplicates bool            `json:"allowDuplicates"`
	ShowMessageList bool            `json:"showMessageList"`
	ScheduledDate   string          `json:"scheduledDate"`
}

// solapiBatch runs the common part of send-many and send-many/detail.
func (s solapiAPI) solapiBatch(w http.ResponseWriter, r *http.Request) (*solapiMany, []solapiResult, bool) {
	if !s.solapiAuth(w, r) {
		return nil, nil, false
	}
	var body solapiMany
	if !solapiDecode(w, r, &body) {
		return nil, nil, false
	}
	if len(body.Messages) == 0 || len(body.Messages) > 10_000 {
		solapiError(w, http.StatusBadRequest, "ValidationError", "messages는 1~10,000개여야 합니다.")
		return nil, nil, false
	}
	f, aborted := s.takeFault(r, opSend, body.Messages[0].kind())
	if aborted || solapiFault(w, f) {
		return nil, nil, false
	}
	return &body, s.solapiProcess(body.Messages, f), true
}

// solapiGroup builds groupInfo. Prices are the simulator's; balances are
// not consumed.
func (s solapiAPI) solapiGroup(results []solapiResult, scheduled string) map[string]any {
	failed, cost := 0, 0.0
	price := map[string]float64{"SMS": 18, "LMS": 45, "MMS": 110, "ATA": 13}
	for _, res := range results {
		if res.StatusCode != solapiAccepted {
			failed++
			continue
		}
		cost += price[res.Type]
	}
	gid := s.solapiID("G4V")
	now := s.now().UTC().Format(time.RFC3339Nano)
	status := "SENDING"
	if scheduled != "" {
		status = "SCHEDULED"
	}
	return map[string]any{
		"_id": gid, "groupId": gid, "accountId": s.solapiAccount(), "status": status,
		"count": map[string]int{"total": len(results), "sentTotal": 0, "sentFailed": 0, "sentSuccess": 0,
			"sentPending": 0, "sentReplacement": 0, "refund": 0, "registeredFailed": failed,
			"registeredSuccess": len(results) - failed},
		"balance":     map[string]float64{"requested": cost, "replacement": 0, "refund": 0, "sum": cost},
		"point":       map[string]float64{"requested": 0, "replacement": 0, "refund": 0, "sum": 0},
		"dateCreated": now, "dateUpdated": now, "scheduledDate": scheduled,
	}
}

// solapiSendMany serves POST /messages/v4/send-many: the group summary only.
func (s solapiAPI) solapiSendMany(w http.ResponseWriter, r *http.Request) {
	body, results, ok := s.solapiBatch(w, r)
	if !ok {
		return
	}
	writeJSON(w, http.StatusOK, s.solapiGroup(results, body.ScheduledDate))
}

// solapiSendManyDetail serves POST /messages/v4/send-many/detail: groupInfo,
// failedMessageList (with to and customFields) and, with showMessageList,
// messageList of the accepted messages (no to: correlate by customFields).
func (s solapiAPI) solapiSendManyDetail(w http.ResponseWriter, r *http.Request) {
	body, results, ok := s.solapiBatch(w, r)
	if !ok {
		return
	}
	failed := []solapiResult{}
	var list []solapiResult
	for _, res := range results {
		if res.StatusCode != solapiAccepted {
			failed = append(failed, res)
			continue
		}
		if body.ShowMessageList {
			res.To, res.From = "", ""
			list = append(list, res)
		}
	}
	out := map[string]any{"groupInfo": s.solapiGroup(results, body.ScheduledDate), "failedMessageList": failed}
	if body.ShowMessageList {
		if list == nil {
			list = []solapiResult{}
		}
		out["messageList"] = list
	}
	writeJSON(w, http.StatusOK, out)
}

// solapiBalance serves GET /cash/v1/balance, shared by both vendorB kinds.
func (s solapiAPI) solapiBalance(w http.ResponseWriter, r *http.Request) {
	if !s.solapiAuth(w, r) {
		return
	}
	f, aborted := s.takeFault(r, opBalance, kindVendorBSMS, kindVendorBMsgr)
	if aborted {
		return
	}
	if f != nil {
		if f.Status == 0 {
			// A per-message code means nothing here; answer it as an error code.
			f.Status = http.StatusBadRequest
		}
		solapiFault(w, f)
		return
	}
	bal, pt := s.balances.vendorB()
	writeJSON(w, http.StatusOK, map[string]any{
		"balance": bal, "point": pt, "accountId": s.solapiAccount(), "autoRecharge": 0, "rechargeTo": 0,
		"minimumCash": 0, "deposit": 0, "balanceOnly": bal,
		"lowBalanceAlert": map[string]any{"enabled": false, "currentBalance": bal, "balances": []float64{}, "notificationBalance": 0},
	})
}
