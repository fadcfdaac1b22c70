package aligo

import (
	"context"
	"net/url"
	"strings"
	"time"

	"github.com/notifyd/notifyd/internal/notify"
	"github.com/notifyd/notifyd/internal/provider"
)

// Delivery reports (issue 35). Aligo answers one id per call, so both
// result APIs list the recipients of a call and the adapter picks the
// message's number:
//
//   - SMS: POST /sms_list/ (key, user_id, mid, page, page_size) ->
//     {"result_code":1,"list":[{"mdid","receiver","sms_state","send_date",..}],"next_yn"}
//   - AlimTalk: POST /akv10/history/detail/ (apikey, userid, token, mid,
//     page, limit) -> {"code":0,"list":[{"msgid","phone","rslt","rslt_message","rsltdate",..}]}
//
// The state words and result codes are in reportStates and the rslt rule
// below (UNCONFIRMED against Aligo's own pages, as PROVIDERS.md's codes).

var (
	_ provider.Reporter = (*smsProvider)(nil)
	_ provider.Reporter = (*msgrProvider)(nil)
)

// reportStates maps /sms_list/ sms_state words onto receipt statuses; an
// unlisted word is a final failure named by the word.
var reportStates = map[string]string{
	"":     notify.ReceiptPending,
	"대기":   notify.ReceiptPending, // waiting
	"전송중":  notify.ReceiptPending, // with the carrier
	"발송완료": notify.ReceiptDelivered,
	"전송완료": notify.ReceiptDelivered,
	"성공":   notify.ReceiptDelivered,
}

// callID is the id Aligo answered for the call that carried messageID
// (batchID added "-N").
func callID(messageID string) string {
	id, _, _ := strings.Cut(messageID, "-")
	return id
}

// sameNumber compares phone numbers by their digits.
func sameNumber(a, b string) bool { return digits(a) == digits(b) }

func digits(s string) string {
	return strings.Map(func(r rune) rune {
		if r >= '0' && r <= '9' {
			return r
		}
		return -1
	}, s)
}

// aligoTime reads Aligo's "2006-01-02 15:04:05" (KST).
func aligoTime(s string) time.Time {
	t, err := time.ParseInLocation("2006-01-02 15:04:05", s, time.FixedZone("KST", 9*3600))
	if err != nil {
		return time.Time{}
	}
	return t.UTC()
}

type smsListAnswer struct {
	ResultCode flexInt `json:"result_code"`
	Message    string  `json:"message"`
	List       []struct {
		MDID     provider.FlexString `json:"mdid"`
		Receiver string              `json:"receiver"`
		State    string              `json:"sms_state"`
		SendDate string              `json:"send_date"`
	} `json:"list"`
}

// Report looks up one SMS's delivery state.
func (p *smsProvider) Report(ctx context.Context, messageID, to string) (*notify.VendorReport, error) {
	form := url.Values{"key": {p.apiKey}, "user_id": {p.userID}, "userid": {p.userID},
		"mid": {callID(messageID)}, "page": {"1"}, "page_size": {"500"}}
	ex, body, err := p.post(ctx, p.smsRoot+"/sms_list/", form)
	if err != nil {
		return nil, err
	}
	var a smsListAnswer
	if err := decode(ex, body, &a); err != nil {
		return nil, err
	}
	if a.ResultCode != 1 {
		return nil, classify(int64(a.ResultCode), a.Message)
	}
	for _, it := range a.List {
		if !sameNumber(it.Receiver, to) {
			continue
		}
		st, known := reportStates[it.State]
		if !known {
			st = notify.ReceiptUndelivered
		}
		return &notify.VendorReport{Status: st, Code: it.State, Text: it.State, At: aligoTime(it.SendDate)}, nil
	}
	return &notify.VendorReport{Status: notify.ReceiptPending}, nil
}

type historyAnswer struct {
	Code    *flexInt `json:"code"`
	Message string   `json:"message"`
	List    []struct {
		Phone       string              `json:"phone"`
		Rslt        provider.FlexString `json:"rslt"`
		RsltMessage string              `json:"rslt_message"`
		RsltDate    string              `json:"rsltdate"`
	} `json:"list"`
}

// Report looks up one AlimTalk's delivery state: rslt empty is pending,
// 0 (or 0000) delivered, any other code a final failure.
func (p *msgrProvider) Report(ctx context.Context, messageID, to string) (*notify.VendorReport, error) {
	tok, _, err := p.currentToken(ctx)
	if err != nil {
		return nil, err
	}
	form := url.Values{"apikey": {p.apiKey}, "userid": {p.userID}, "token": {tok},
		"mid": {callID(messageID)}, "page": {"1"}, "limit": {"500"}}
	ex, body, err := p.post(ctx, p.msgrRoot+"/akv10/history/detail/", form)
	if err != nil {
		return nil, err
	}
	var a historyAnswer
	if err := decode(ex, body, &a); err != nil {
		return nil, err
	}
	m := msgrAnswer{Code: a.Code, Message: a.Message}
	if err := m.failure(); err != nil {
		if a.Code != nil && codes[int64(*a.Code)].refreshToken {
			p.dropToken(tok)
		}
		return nil, err
	}
	for _, it := range a.List {
		if !sameNumber(it.Phone, to) {
			continue
		}
		rep := &notify.VendorReport{Code: string(it.Rslt), Text: it.RsltMessage, At: aligoTime(it.RsltDate)}
		switch it.Rslt {
		case "":
			rep.Status = notify.ReceiptPending
		case "0", "0000":
			rep.Status = notify.ReceiptDelivered
		default:
			rep.Status = notify.ReceiptUndelivered
		}
		return rep, nil
	}
	return &notify.VendorReport{Status: notify.ReceiptPending}, nil
}
