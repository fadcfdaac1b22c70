package aligo

import (
	"net/http"
	"net/url"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/notifyd/notifyd/internal/provider"
	"github.com/notifyd/notifyd/internal/provider/providertest"
)

// Test credentials; tests assert none of them reaches attempt history.
const (
	testUserID  = "notifyd-user"
	testAPIKey  = "sms-api-key-123"
	testMsgrKey = "msgr-api-key-456"
	testSender  = "0212345678"
	testToken   = "token-abc-789"
)

// captured is one request the fake vendor received, its form decoded.
type captured struct {
	Method      string
	Path        string
	ContentType string
	Body        string
	Form        url.Values
}

func capture(r providertest.Request) (captured, error) {
	form, err := url.ParseQuery(string(r.Body))
	return captured{Method: r.Method, Path: r.Path, ContentType: r.Header.Get("Content-Type"), Body: string(r.Body), Form: form}, err
}

// fakeAligo stands in for both Aligo hosts on one address, as base_url
// makes them.
type fakeAligo struct{ *providertest.Fake }

func newFake(t *testing.T, reply func(r captured) (int, string)) *fakeAligo {
	t.Helper()
	return &fakeAligo{providertest.NewFake(t, func(_ int, r providertest.Request) providertest.Reply {
		c, err := capture(r)
		if err != nil {
			return providertest.Reply{Status: http.StatusBadRequest, Body: err.Error()}
		}
		status, body := reply(c)
		// Aligo labels JSON as text/html at times; the adapter must not care.
		return providertest.Reply{Status: status, Header: map[string]string{"Content-Type": "text/html; charset=utf-8"}, Body: body}
	})}
}

// requests returns the captured requests to path, in order.
func (f *fakeAligo) requests(path string) []captured {
	var out []captured
	for _, r := range f.Received() {
		if r.Path == path {
			c, _ := capture(r)
			out = append(out, c)
		}
	}
	return out
}

// clock is a settable time source for token expiry.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func newClock() *clock { return &clock{t: time.Date(2025, 3, 1, 9, 0, 0, 0, time.UTC)} }

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *clock) Add(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

func smsConfig(baseURL string) provider.Config {
	return provider.Config{
		keyUserID: testUserID, keyAPIKey: testAPIKey, keySender: testSender, keyBaseURL: baseURL,
	}
}

func msgrConfig(baseURL string) provider.Config {
	return provider.Config{
		keyUserID: testUserID, keyMsgrAPIKey: testMsgrKey, keyAPIKey: testAPIKey,
		keySender: testSender, keyBaseURL: baseURL,
	}
}

func newSMSProvider(t *testing.T, f *fakeAligo) *smsProvider {
	t.Helper()
	p, err := SMSKind().New(smsConfig(f.URL), provider.Deps{HTTP: providertest.Client(2 * time.Second)})
	require.NoError(t, err)
	return p.(*smsProvider)
}

func newMsgrProvider(t *testing.T, f *fakeAligo, c *clock) *msgrProvider {
	t.Helper()
	p, err := MsgrKind().New(msgrConfig(f.URL), provider.Deps{HTTP: providertest.Client(2 * time.Second), Now: c.Now})
	require.NoError(t, err)
	return p.(*msgrProvider)
}

// golden compares the exact wire request with testdata/<name>.golden.
func golden(t *testing.T, name string, r captured) {
	t.Helper()
	providertest.Golden(t, name, []byte(r.Method+" "+r.Path+"\nContent-Type: "+r.ContentType+"\n\n"+r.Body+"\n"))
}

// requireNoSecrets asserts the logged request hides every credential.
func requireNoSecrets(t *testing.T, ex provider.Exchange) {
	t.Helper()
	providertest.RequireHidden(t, ex, testAPIKey, testMsgrKey, testToken)
}

// okSend is Aligo's SMS success answer, numbers as strings as Aligo sends them.
const okSend = `{"result_code":"1","message":"success","msg_id":"123456789","success_cnt":1,"error_cnt":0,"msg_type":"SMS"}`
