package simulator

import (
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/notifyd/notifyd/internal/notify"
	"github.com/notifyd/notifyd/internal/testmode"
)

// Delivery reports (issue 35). Every message of the SMS and AlimTalk kinds
// gets a report when it is recorded: delivered after DefaultReportDelay
// unless a queued rule (POST /_sim/reports, QueueReport) says otherwise.
// Until its time the vendor's result API shows the message as still with
// the carrier; after it, the outcome. The result APIs:
//
//	vendora_sms    POST /sms_list/             key, user_id (or userid), mid [, page, page_size] ->
//	                                           {"result_code":1,"message":"success","list":[{"mdid","type","sender",
//	                                           "receiver","sms_state","reg_date","send_date","reserve_date"}],"next_yn":"N"};
//	                                           sms_state 전송중 (pending), 발송완료 (delivered), else the failure word
//	vendora_msgr   POST /akv10/history/detail/ apikey, userid, token, mid [, page, limit] ->
//	                                           {"code":0,"message","list":[{"msgid","type":"AT","sender","phone","status",
//	                                           "reqdate","sentdate","rsltdate","reportdate","rslt","rslt_message",
//	                                           "tpl_code"}],"currentPage","totalPage","totalCount"}; rslt "" pending, "0" delivered
//	vendorb_*      GET  /messages/v4/list?messageId=  HMAC header -> {"limit","startKey","nextKey","messageList":
//	                                           {"<id>":{"messageId","groupId","to","from","type","statusCode","status",
//	                                           "reason","dateCreated","dateReceived","dateUpdated"}}}; 3000 pending,
//	                                           4000 delivered, other codes failed
//
// Control:
//
//	POST   /_sim/reports   {kind, to?, outcome: delivered|undelivered, code?, text?, delayMs?, count?} -> 201:
//	                       the next count (default 1) messages of kind (to to, when given) get that report
//	GET    /_sim/reports?kind=&to=   {"reports":[{kind, id, to, outcome, code, text, readyAt, lookups}]}
//	DELETE /_sim/reports   204; rules and reports forgotten (POST /_sim/reset too)

// DefaultReportDelay is when a message's report becomes final without a
// rule.
const DefaultReportDelay = 500 * time.Millisecond

// reportKinds are the kinds whose vendors have a result API.
var reportKinds = map[string]bool{kindVendorASMS: true, kindVendorAMsgr: true, kindVendorBSMS: true, kindVendorBMsgr: true}

// Default failure codes and texts of an undelivered report per kind (the
// simulator's choice; PROVIDERS.md names 3104 "not a KakaoTalk user").
var undeliveredDefaults = map[string][2]string{
	kindVendorASMS:  {"결번", "결번"},
	kindVendorAMsgr: {"3018", "메시지를 전송할 수 없음"},
	kindVendorBSMS:  {"3059", "변작된 발신번호"},
	kindVendorBMsgr: {"3104", "카카오톡을 사용하지 않는 수신자"},
}

// ReportRule decides the report of the next Count messages of Kind (to To
// when set).
type ReportRule struct {
	Kind    string `json:"kind"`
	To      string `json:"to,omitempty"`
	Outcome string `json:"outcome"`
	Code    string `json:"code,omitempty"`
	Text    string `json:"text,omitempty"`
	DelayMs int    `json:"delayMs"`
	Count   int    `json:"count"`
}

// Report is one message's delivery report as the simulator holds it.
type Report struct {
	Kind    string    `json:"kind"`
	ID      string    `json:"id"`
	To      string    `json:"to"`
	From    string    `json:"from"`
	Outcome string    `json:"outcome"`
	Code    string    `json:"code"`
	Text    string    `json:"text"`
	SentAt  time.Time `json:"sentAt"`
	ReadyAt time.Time `json:"readyAt"`
	// Lookups counts the result-API answers that listed the message.
	Lookups int `json:"lookups"`
}

type reportState struct {
	mu    sync.Mutex
	rules []*ReportRule
	byID  map[string][]*Report // by kind and vendor id (Aligo ids are shared by a call)
	order []string
}

func reportKey(kind, id string) string { return kind + "\x00" + id }

func (st *reportState) reset() {
	st.mu.Lock()
	st.rules, st.byID, st.order = nil, nil, nil
	st.mu.Unlock()
}

// add gives each message of kind its report.
func (st *reportState) add(kind string, ms []Message, now time.Time) {
	if !reportKinds[kind] {
		return
	}
	st.mu.Lock()
	defer st.mu.Unlock()
	if st.byID == nil {
		st.byID = map[string][]*Report{}
	}
	for _, m := range ms {
		rep := &Report{Kind: kind, ID: m.ID, To: m.To, From: m.Headers["sender"] + m.Headers["from"], Outcome: "delivered",
			SentAt: now, ReadyAt: now.Add(DefaultReportDelay)}
		if r := st.takeRule(kind, m.To); r != nil {
			rep.Outcome, rep.Code, rep.Text = r.Outcome, r.Code, r.Text
			rep.ReadyAt = now.Add(time.Duration(r.DelayMs) * time.Millisecond)
		} else if testmode.OutcomeOf(notify.ChannelSMS, m.To) == testmode.LateReport {
			rep.ReadyAt = now.Add(testmode.LateReportDelay) // the magic late-report number (README "Test mode")
		}
		if rep.Outcome == "undelivered" && rep.Code == "" {
			d := undeliveredDefaults[kind]
			rep.Code, rep.Text = d[0], d[1]
		}
		k := reportKey(kind, m.ID)
		if _, seen := st.byID[k]; !seen {
			st.order = append(st.order, k)
		}
		st.byID[k] = append(st.byID[k], rep)
	}
	// Bounded like the messages: the oldest ids are dropped.
	for len(st.order) > maxMessages {
		delete(st.byID, st.order[0])
		st.order = st.order[1:]
	}
}

// takeRule consumes one message of the first rule matching kind and to.
func (st *reportState) takeRule(kind, to string) *ReportRule {
	for i, r := range st.rules {
		if r.Kind != kind || (r.To != "" && r.To != to) {
			continue
		}
		c := *r
		if r.Count--; r.Count <= 0 {
			st.rules = append(st.rules[:i:i], st.rules[i+1:]...)
		}
		return &c
	}
	return nil
}

// lookup answers copies of the reports of kind and id, counting the lookup.
func (st *reportState) lookup(kind, id string) []Report {
	st.mu.Lock()
	defer st.mu.Unlock()
	reps := st.byID[reportKey(kind, id)]
	out := make([]Report, len(reps))
	for i, r := range reps {
		r.Lookups++
		out[i] = *r
	}
	return out
}

func (st *reportState) list(kind, to string) []Report {
	st.mu.Lock()
	defer st.mu.Unlock()
	out := []Report{}
	for _, k := range st.order {
		for _, r := range st.byID[k] {
			if (kind == "" || r.Kind == kind) && (to == "" || r.To == to) {
				out = append(out, *r)
			}
		}
	}
	return out
}

// QueueReport queues a report rule; it answers false for an invalid rule.
func (s *Simulator) QueueReport(r ReportRule) bool {
	if msg := r.validate(); msg != "" {
		return false
	}
	s.reports.mu.Lock()
	s.reports.rules = append(s.reports.rules, &r)
	s.reports.mu.Unlock()
	return true
}

// Reports lists the reports of kind to to (empty: all), oldest first.
func (s *Simulator) Reports(kind, to string) []Report { return s.reports.list(kind, to) }

func (r *ReportRule) validate() string {
	if !reportKinds[r.Kind] {
		return "kind must be one of vendora_sms, vendora_msgr, vendorb_sms, vendorb_msgr"
	}
	if r.Outcome != "delivered" && r.Outcome != "undelivered" {
		return "outcome must be delivered or undelivered"
	}
	if r.DelayMs < 0 || r.DelayMs > 86_400_000 {
		return "delayMs must be between 0 and 86400000"
	}
	if r.Count == 0 {
		r.Count = 1
	}
	if r.Count < 0 || r.Count > 1_000_000 {
		return "count must be between 1 and 1000000"
	}
	return ""
}

func (s *Simulator) serveReportControl(w http.ResponseWriter, r *http.Request) bool {
	if strings.TrimSuffix(r.URL.Path, "/") != "/_sim/reports" {
		return false
	}
	switch r.Method {
	case http.MethodPost:
		var rule ReportRule
		if err := decodeStrict(r, &rule); err != nil {
			controlError(w, http.StatusBadRequest, "invalid body: "+err.Error())
			return true
		}
		if msg := rule.validate(); msg != "" {
			controlError(w, http.StatusBadRequest, msg)
			return true
		}
		s.QueueReport(rule)
		writeJSON(w, http.StatusCreated, map[string]any{"rule": rule})
	case http.MethodGet:
		q := r.URL.Query()
		writeJSON(w, http.StatusOK, map[string]any{"reports": s.Reports(q.Get("kind"), q.Get("to"))})
	case http.MethodDelete:
		s.reports.reset()
		w.WriteHeader(http.StatusNoContent)
	default:
		controlError(w, http.StatusMethodNotAllowed, "simulator: GET, POST or DELETE /_sim/reports")
	}
	return true
}

// state is a report's outcome as seen at now: "" while with the carrier.
func (r *Report) state(now time.Time) string {
	if now.Before(r.ReadyAt) {
		return ""
	}
	return r.Outcome
}

func kstDate(t time.Time) string {
	return t.In(time.FixedZone("KST", 9*3600)).Format("2006-01-02 15:04:05")
}

// aligoSMSList serves POST /sms_list/.
func (s aligoAPI) aligoSMSList(w http.ResponseWriter, r *http.Request) {
	form, ok := aligoForm(w, r, false)
	if !ok {
		return
	}
	if !aligoSMSAuth(form) {
		aligoError(w, aligoBadAuth, "")
		return
	}
	mid := form.Get("mid")
	if mid == "" {
		aligoError(w, aligoBadRequest, "mid 값이 없습니다.")
		return
	}
	now := s.now()
	list := []map[string]any{}
	for i, rep := range s.reports.lookup(kindVendorASMS, mid) {
		state := "전송중"
		switch rep.state(now) {
		case "delivered":
			state = "발송완료"
		case "undelivered":
			state = rep.Code
		}
		list = append(list, map[string]any{"mdid": strconv.Itoa(i + 1), "type": "SMS", "sender": rep.From, "receiver": rep.To,
			"sms_state": state, "reg_date": kstDate(rep.SentAt), "send_date": kstDate(rep.SentAt), "reserve_date": ""})
	}
	writeJSONType(w, http.StatusOK, aligoSMSContentType, map[string]any{"result_code": "1", "message": "success", "list": list, "next_yn": "N"})
}

// alimtalkHistory serves POST /akv10/history/detail/.
func (s aligoAPI) alimtalkHistory(w http.ResponseWriter, r *http.Request) {
	form, ok := aligoForm(w, r, true)
	if !ok || !s.alimtalkAuth(w, form, true) {
		return
	}
	mid := form.Get("mid")
	if mid == "" {
		alimError(w, aligoBadRequest, "mid 값이 없습니다.")
		return
	}
	now := s.now()
	list := []map[string]any{}
	for _, rep := range s.reports.lookup(kindVendorAMsgr, mid) {
		item := map[string]any{"msgid": mid, "type": "AT", "sender": rep.From, "phone": rep.To, "status": "대기",
			"reqdate": kstDate(rep.SentAt), "sentdate": kstDate(rep.SentAt), "rsltdate": "", "reportdate": "", "rslt": "", "rslt_message": ""}
		switch rep.state(now) {
		case "delivered":
			item["status"], item["rslt"], item["rslt_message"] = "완료", "0", "성공"
			item["rsltdate"], item["reportdate"] = kstDate(rep.ReadyAt), kstDate(rep.ReadyAt)
		case "undelivered":
			item["status"], item["rslt"], item["rslt_message"] = "완료", rep.Code, rep.Text
			item["rsltdate"], item["reportdate"] = kstDate(rep.ReadyAt), kstDate(rep.ReadyAt)
		}
		list = append(list, item)
	}
	writeJSONType(w, http.StatusOK, aligoMsgrContentType, map[string]any{"code": 0, "message": "정상적으로 조회되었습니다.",
		"list": list, "currentPage": 1, "totalPage": 1, "totalCount": len(list)})
}

// solapiList serves GET /messages/v4/list?messageId=.
func (s solapiAPI) solapiList(w http.ResponseWriter, r *http.Request) {
	if !s.solapiAuth(w, r) {
		return
	}
	id := r.URL.Query().Get("messageId")
	now := s.now()
	list := map[string]any{}
	for _, kind := range []string{kindVendorBSMS, kindVendorBMsgr} {
		for _, rep := range s.reports.lookup(kind, id) {
			code, status, reason := "3000", "PROCESSING", ""
			updated := rep.SentAt
			switch rep.state(now) {
			case "delivered":
				code, status, updated = "4000", "COMPLETE", rep.ReadyAt
				reason = "수신완료"
			case "undelivered":
				code, status, reason, updated = rep.Code, "COMPLETE", rep.Text, rep.ReadyAt
			}
			typ := "SMS"
			if kind == kindVendorBMsgr {
				typ = "ATA"
			}
			list[id] = map[string]any{"messageId": id, "groupId": "G4V" + id, "to": rep.To, "from": rep.From, "type": typ,
				"statusCode": code, "status": status, "reason": reason, "dateCreated": rep.SentAt.UTC().Format(time.RFC3339Nano),
				"dateReceived": updated.UTC().Format(time.RFC3339Nano), "dateUpdated": updated.UTC().Format(time.RFC3339Nano)}
		}
	}
	writeJSON(w, http.StatusOK, map[string]any{"limit": 20, "startKey": nil, "nextKey": nil, "messageList": list})
}
