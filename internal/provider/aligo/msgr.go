package aligo

import (
	"context"
	"net/url"
	"strconv"
	"sync"
	"time"

	"github.com/notifyd/notifyd/internal/notify"
	"github.com/notifyd/notifyd/internal/provider"
)

var (
	_ provider.Provider     = (*msgrProvider)(nil)
	_ provider.QuotaChecker = (*msgrProvider)(nil)
)

// The AlimTalk token is created for tokenLifetime and dropped tokenMargin
// early, so that a send started just before expiry does not carry a token
// that dies on the way.
const (
	tokenPath     = "/akv10/token/create/30/s/"
	tokenLifetime = 30 * time.Second
	tokenMargin   = 5 * time.Second
)

// msgrProvider sends AlimTalk through the Aligo KakaoTalk API.
type msgrProvider struct {
	account

	// mu guards the cached token. It is held while a token is created so
	// that concurrent sends wait for one token call instead of each
	// making their own.
	mu      sync.Mutex
	token   string
	expires time.Time
}

func newMsgr(c Config, deps provider.Deps) (provider.Provider, error) {
	a, err := newAccount(c, c.MsgrAPIKey, deps)
	if err != nil {
		return nil, err
	}
	return &msgrProvider{account: a}, nil
}

// msgrAnswer is the body of the token and send calls. Code is a pointer
// because its absence must not read as 0, which is success here.
type msgrAnswer struct {
	Code    *flexInt `json:"code"`
	Message string   `json:"message"`
	Token   string   `json:"token"`
	Info    struct {
		MID  provider.FlexString `json:"mid"`
		SCnt flexInt             `json:"scnt"`
		FCnt flexInt             `json:"fcnt"`
	} `json:"info"`
}

// failure returns the classified error of a, nil when a is a success.
func (a *msgrAnswer) failure() *provider.Error {
	if a.Code == nil {
		return provider.Errorf(notify.FailureUnknown, "aligo answer has no code: %s", a.Message)
	}
	if *a.Code != 0 {
		return classify(int64(*a.Code), a.Message)
	}
	return nil
}

// templateID is the vendor's template code: the id registered at Kakao
// when the approved template has one, else our template code.
func templateID(m provider.Message) string {
	if m.VendorTemplateID != "" {
		return m.VendorTemplateID
	}
	return m.TemplateCode
}

// Send groups msgs by sender profile and template (one of each per call)
// and sends each group as one call with up to 500 receivers.
func (p *msgrProvider) Send(ctx context.Context, msgs []provider.Message) []provider.Result {
	out := make([]provider.Result, len(msgs))
	type group struct {
		senderKey, tpl string
		idx            []int
	}
	var groups []*group
	byKey := map[[2]string]*group{}
	for i, m := range msgs {
		if err := checkMsgr(m); err != nil {
			out[i].Err = err
			continue
		}
		k := [2]string{m.SenderProfileKey, templateID(m)}
		g := byKey[k]
		if g == nil {
			g = &group{senderKey: k[0], tpl: k[1]}
			byKey[k] = g
			groups = append(groups, g)
		}
		g.idx = append(g.idx, i)
	}
	for _, g := range groups {
		for _, idx := range chunks(g.idx) {
			for j, r := range p.sendGroup(ctx, msgs, idx, g.senderKey, g.tpl) {
				out[idx[j]] = r
			}
		}
	}
	return out
}

func checkMsgr(m provider.Message) *provider.Error {
	if err := checkRecipient(m); err != nil {
		return err
	}
	if m.SenderProfileKey == "" {
		return provider.Errorf(notify.FailureInvalidRequest, "sender profile key is missing (injected from the approved template)")
	}
	if templateID(m) == "" {
		return provider.Errorf(notify.FailureInvalidRequest, "template id is missing (injected from the approved template)")
	}
	return nil
}

// sendGroup sends the messages msgs[idx] in one call. A refused token
// (-10/-107) is replaced and the call repeated once.
func (p *msgrProvider) sendGroup(ctx context.Context, msgs []provider.Message, idx []int, senderKey, tpl string) []provider.Result {
	n := len(idx)
	for attempt := 0; ; attempt++ {
		tok, ex, err := p.currentToken(ctx)
		if err != nil {
			return failN(n, err, ex)
		}
		// No failover field: Aligo's own SMS fallback stays off, since
		// SPEC falls back only through routing.
		form := url.Values{
			"apikey":    {p.apiKey},
			"userid":    {p.userID},
			"token":     {tok},
			"senderkey": {senderKey},
			"tpl_code":  {tpl},
			"sender":    {p.sender},
		}
		for j, i := range idx {
			m, s := msgs[i], strconv.Itoa(j+1)
			form.Set("receiver_"+s, m.To)
			form.Set("recvname_"+s, m.ToName)
			form.Set("subject_"+s, m.Title)
			form.Set("message_"+s, m.Text)
		}
		ex, body, err := p.post(ctx, p.msgrRoot+"/akv10/alimtalk/send/", form)
		if err != nil {
			return failN(n, err, ex)
		}
		var a msgrAnswer
		if err := decode(ex, body, &a); err != nil {
			return failN(n, err, ex)
		}
		if err := a.failure(); err != nil {
			if attempt == 0 && a.Code != nil && codes[int64(*a.Code)].refreshToken {
				p.dropToken(tok)
				continue
			}
			return failN(n, err, ex)
		}
		if a.Info.SCnt == 0 && a.Info.FCnt > 0 {
			return failN(n, provider.Errorf(notify.FailureUnknown,
				"aligo accepted the call but rejected every recipient (fcnt %d): %s", a.Info.FCnt, a.Message), ex)
		}
		out := make([]provider.Result, n)
		for j := range out {
			out[j] = provider.Result{MessageID: batchID(string(a.Info.MID), j+1, n), Exchange: ex}
		}
		return out
	}
}

// currentToken returns the cached token, creating one when there is none
// or it is about to expire. The exchange is returned only with an error:
// a successful token answer carries the token and must not reach history.
func (p *msgrProvider) currentToken(ctx context.Context) (string, provider.Exchange, *provider.Error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.token != "" && p.now().Before(p.expires) {
		return p.token, provider.Exchange{}, nil
	}
	p.token = ""
	start := p.now()
	form := url.Values{"apikey": {p.apiKey}, "userid": {p.userID}}
	ex, body, err := p.post(ctx, p.msgrRoot+tokenPath, form)
	if err != nil {
		return "", ex, err
	}
	var a msgrAnswer
	if err := decode(ex, body, &a); err != nil {
		return "", ex, err
	}
	if err := a.failure(); err != nil {
		return "", ex, err
	}
	if a.Token == "" {
		return "", ex, provider.Errorf(notify.FailureUnknown, "aligo token answer has no token")
	}
	p.token, p.expires = a.Token, start.Add(tokenLifetime-tokenMargin)
	return p.token, provider.Exchange{}, nil
}

// dropToken forgets tok unless another send has already replaced it.
func (p *msgrProvider) dropToken(tok string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.token == tok {
		p.token = ""
	}
}

// Quota reads /remain/ on the SMS host with the messenger API key.
func (p *msgrProvider) Quota(ctx context.Context) (provider.Quota, error) {
	return p.remain(ctx, p.apiKey)
}
