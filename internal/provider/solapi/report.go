package solapi

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"time"

	"github.com/notifyd/notifyd/internal/notify"
	"github.com/notifyd/notifyd/internal/provider"
)

// Delivery reports (issue 35): GET /messages/v4/list?messageId=<id>
// answers {"messageList":{"<id>":{messageId, statusCode, reason, status,
// dateReceived, ...}}}. statusCode 2000 (registered) and 3000 (with the
// carrier) are not final, 4000 is delivered, any other code is a final
// failure whose reason is the vendor's text (PROVIDERS.md: 3xxx arrive in
// delivery reports, e.g. 3104 not a KakaoTalk user).
const listPath = "/messages/v4/list"

var _ provider.Reporter = (*sender)(nil)

type listAnswer struct {
	MessageList map[string]listItem `json:"messageList"`
}

type listItem struct {
	MessageID     string              `json:"messageId"`
	StatusCode    provider.FlexString `json:"statusCode"`
	StatusMessage string              `json:"statusMessage"`
	Reason        string              `json:"reason"`
	DateReceived  string              `json:"dateReceived"`
	DateUpdated   string              `json:"dateUpdated"`
}

// reportStatus maps a statusCode onto a receipt status.
func reportStatus(code string) string {
	switch code {
	case "", "2000", "3000":
		return notify.ReceiptPending
	case "4000":
		return notify.ReceiptDelivered
	}
	return notify.ReceiptUndelivered
}

// Report looks up the delivery state of one message.
func (s *sender) Report(ctx context.Context, messageID, _ string) (*notify.VendorReport, error) {
	ex, body, err := s.call(ctx, http.MethodGet, listPath+"?messageId="+url.QueryEscape(messageID), nil, nil)
	if err != nil {
		return nil, err
	}
	if !ok(ex.Response.HTTPStatus) {
		return nil, requestFailure(ex.Response.HTTPStatus, body)
	}
	var a listAnswer
	if jerr := json.Unmarshal(body, &a); jerr != nil {
		return nil, provider.Errorf(notify.FailureUnknown, "solapi list answer is not JSON: %s", provider.Snippet(body, 200))
	}
	it, found := a.MessageList[messageID]
	if !found {
		// Not listed yet: the message is still being registered.
		return &notify.VendorReport{Status: notify.ReceiptPending}, nil
	}
	code := string(it.StatusCode)
	rep := &notify.VendorReport{Status: reportStatus(code), Code: code, Text: it.Reason}
	if rep.Text == "" {
		rep.Text = it.StatusMessage
	}
	for _, d := range []string{it.DateReceived, it.DateUpdated} {
		if t, perr := time.Parse(time.RFC3339Nano, d); perr == nil {
			rep.At = t.UTC()
			break
		}
	}
	return rep, nil
}
