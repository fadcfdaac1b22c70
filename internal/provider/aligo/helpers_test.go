package aligo

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
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

// captured is one request the fake vendor received.
type captured struct {
	Method      string
	Path        string
	ContentType string
	Body        string
	Form        url.Values
}

// fakeAligo stands in for both Aligo hosts on one address, as base_url
// makes them.
type fakeAligo struct {
	srv   *httptest.Server
	mu    sync.Mutex
	reqs  []captured
	reply func(r captured) (status int, body string)
}

func newFake(t *testing.T, reply func(r captured) (int, string)) *fakeAligo {
	t.Helper()
	f := &fakeAligo{reply: reply}
	f.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		raw, err := io.ReadAll(r.Body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		form, err := url.ParseQuery(string(raw))
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		c := captured{Method: r.Method, Path: r.URL.Path, ContentType: r.Header.Get("Content-Type"), Body: string(raw), Form: form}
		f.mu.Lock()
		f.reqs = append(f.reqs, c)
		f.mu.Unlock()
		status, body := f.reply(c)
		// Aligo labels JSON as text/html at times; the adapter must not care.
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.WriteHeader(status)
		_, _ = io.WriteString(w, body)
	}))
	t.Cleanup(f.srv.Close)
	return f
}

// requests returns the captured requests to path, in order.
func (f *fakeAligo) requests(path string) []captured {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []captured
	for _, r := range f.reqs {
		if r.Path == path {
			out = append(out, r)
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

func testClient(timeout time.Duration) *http.Client {
	return provider.NewHTTPClient(provider.HTTPOptions{AllowPrivate: true, Timeout: timeout})
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
	p, err := SMSKind().New(smsConfig(f.srv.URL), provider.Deps{HTTP: testClient(2 * time.Second)})
	require.NoError(t, err)
	return p.(*smsProvider)
}

func newMsgrProvider(t *testing.T, f *fakeAligo, c *clock) *msgrProvider {
	t.Helper()
	p, err := MsgrKind().New(msgrConfig(f.srv.URL), provider.Deps{HTTP: testClient(2 * time.Second), Now: c.Now})
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
	b, err := json.Marshal(ex)
	require.NoError(t, err)
	for _, s := range []string{testAPIKey, testMsgrKey, testToken} {
		require.NotContains(t, string(b), s)
	}
}

// okSend is Aligo's SMS success answer, numbers as strings as Aligo sends them.
const okSend = `{"result_code":"1","message":"success","msg_id":"123456789","success_cnt":1,"error_cnt":0,"msg_type":"SMS"}`
