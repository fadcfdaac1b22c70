package aligo

import (
	"context"
	"net/url"

	"github.com/notifyd/notifyd/internal/provider"
)

// remainAnswer is the body of /remain/.
type remainAnswer struct {
	ResultCode flexInt `json:"result_code"`
	Message    string  `json:"message"`
	SMS        flexInt `json:"SMS_CNT"`
	LMS        flexInt `json:"LMS_CNT"`
	MMS        flexInt `json:"MMS_CNT"`
}

// remain asks the SMS host for the balance with key. SPEC's quota is the
// sum of the three counts; Aligo derives them from the current prepaid
// money, so there is no period limit and nothing "used".
func (a *account) remain(ctx context.Context, key string) (provider.Quota, error) {
	form := url.Values{"key": {key}, "user_id": {a.userID}}
	ex, body, err := a.post(ctx, a.smsRoot+"/remain/", form)
	if err != nil {
		return provider.Quota{}, err
	}
	var r remainAnswer
	if err := decode(ex, body, &r); err != nil {
		return provider.Quota{}, err
	}
	if r.ResultCode != 1 {
		return provider.Quota{}, classify(int64(r.ResultCode), r.Message)
	}
	return provider.Quota{
		Period:          "current",
		RemainingCredit: float64(r.SMS + r.LMS + r.MMS),
		Currency:        "count",
	}, nil
}
