package aligo

import (
	"context"
	"net/url"
	"strconv"

	"github.com/notifyd/notifyd/internal/notify"
	"github.com/notifyd/notifyd/internal/provider"
)

var (
	_ provider.Provider     = (*smsProvider)(nil)
	_ provider.QuotaChecker = (*smsProvider)(nil)
)

// smsProvider sends through the Aligo SMS API.
type smsProvider struct {
	account
}

func newSMS(c Config, deps provider.Deps) (provider.Provider, error) {
	a, err := newAccount(c, c.APIKey, deps)
	if err != nil {
		return nil, err
	}
	return &smsProvider{account: a}, nil
}

// smsAnswer is the body of /send/ and /send_mass/.
type smsAnswer struct {
	ResultCode flexInt             `json:"result_code"`
	Message    string              `json:"message"`
	MsgID      provider.FlexString `json:"msg_id"`
	SuccessCnt flexInt             `json:"success_cnt"`
	ErrorCnt   flexInt             `json:"error_cnt"`
}

// Send uses /send/ for a single message and /send_mass/ (distinct texts)
// for several, at most 500 per call.
func (p *smsProvider) Send(ctx context.Context, msgs []provider.Message) []provider.Result {
	out := make([]provider.Result, len(msgs))
	var valid []int
	for i, m := range msgs {
		if err := checkSMS(m); err != nil {
			out[i].Err = err
			continue
		}
		valid = append(valid, i)
	}
	for _, idx := range chunks(valid) {
		if len(idx) == 1 {
			out[idx[0]] = p.sendOne(ctx, msgs[idx[0]])
			continue
		}
		for j, r := range p.sendMass(ctx, msgs, idx) {
			out[idx[j]] = r
		}
	}
	return out
}

// checkSMS adds the SMS API's text limit to checkRecipient.
func checkSMS(m provider.Message) *provider.Error {
	if err := checkRecipient(m); err != nil {
		return err
	}
	if n := smsBytes(m.Text); n > msgMaxBytes {
		return provider.Errorf(notify.FailureInvalidRequest, "message text is %d bytes, Aligo allows %d", n, msgMaxBytes)
	}
	return nil
}

func (p *smsProvider) form() url.Values {
	return url.Values{"key": {p.apiKey}, "user_id": {p.userID}, "sender": {p.sender}}
}

func (p *smsProvider) sendOne(ctx context.Context, m provider.Message) provider.Result {
	form := p.form()
	form.Set("receiver", m.To)
	form.Set("msg", m.Text)
	// msg_type is sent explicitly so the type (and price) does not depend
	// on how Aligo counts bytes.
	if smsBytes(m.Text) > smsMaxBytes {
		form.Set("msg_type", "LMS")
		if title := fitBytes(m.Title, titleMaxBytes); title != "" {
			form.Set("title", title)
		}
	} else {
		form.Set("msg_type", "SMS")
	}
	rs := p.call(ctx, "/send/", form, 1)
	return rs[0]
}

func (p *smsProvider) sendMass(ctx context.Context, msgs []provider.Message, idx []int) []provider.Result {
	form := p.form()
	msgType, title := "SMS", ""
	for n, i := range idx {
		m := msgs[i]
		form.Set("rec_"+strconv.Itoa(n+1), m.To)
		form.Set("msg_"+strconv.Itoa(n+1), m.Text)
		if smsBytes(m.Text) > smsMaxBytes {
			msgType = "LMS"
		}
		if title == "" {
			title = m.Title
		}
	}
	// One msg_type per call: a single long text makes the whole call LMS.
	form.Set("cnt", strconv.Itoa(len(idx)))
	form.Set("msg_type", msgType)
	if title = fitBytes(title, titleMaxBytes); msgType == "LMS" && title != "" {
		form.Set("title", title)
	}
	return p.call(ctx, "/send_mass/", form, len(idx))
}

// call posts one send request carrying n messages and returns n results.
func (p *smsProvider) call(ctx context.Context, path string, form url.Values, n int) []provider.Result {
	ex, body, err := p.post(ctx, p.smsRoot+path, form)
	if err != nil {
		return failN(n, err, ex)
	}
	var a smsAnswer
	if err := decode(ex, body, &a); err != nil {
		return failN(n, err, ex)
	}
	if a.ResultCode != 1 {
		return failN(n, classify(int64(a.ResultCode), a.Message), ex)
	}
	// Accepted as a call but every number refused: not a success.
	if a.SuccessCnt == 0 && a.ErrorCnt > 0 {
		return failN(n, provider.Errorf(notify.FailureUnknown,
			"aligo accepted the call but rejected every recipient (error_cnt %d): %s", a.ErrorCnt, a.Message), ex)
	}
	out := make([]provider.Result, n)
	for i := range out {
		out[i] = provider.Result{MessageID: batchID(string(a.MsgID), i+1, n), Exchange: ex}
	}
	return out
}

// failN is provider.FailAll for a count instead of a slice of messages.
func failN(n int, err *provider.Error, ex provider.Exchange) []provider.Result {
	return provider.FailAll(make([]provider.Message, n), err, ex)
}

// Quota reads /remain/ with this account's key.
func (p *smsProvider) Quota(ctx context.Context) (provider.Quota, error) {
	return p.remain(ctx, p.apiKey)
}
