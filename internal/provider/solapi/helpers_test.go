package solapi

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"regexp"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/notifyd/notifyd/internal/provider"
	"github.com/notifyd/notifyd/internal/provider/providertest"
)

// Test credentials; tests assert none of them reaches attempt history.
const (
	testAPIKey = "NCSTESTKEY0001"
	testSecret = "TESTSECRETTESTSECRETTESTSECRET01"
	testSender = "0212345678"
)

// fixedNow and fixedSalt pin the Authorization header in golden files.
var fixedNow = time.Date(2025, 3, 1, 9, 30, 0, 0, time.FixedZone("KST", 9*3600))

const fixedSalt = "0123456789abcdef0123456789abcdef"

// captured is one request the fake vendor received.
type captured struct {
	Method        string
	Path          string
	Authorization string
	ContentType   string
	Body          string
}

// messages decodes the messages of a send request. It runs in the fake's
// handler goroutine, so it reports with Errorf rather than require.
func (c captured) messages(t *testing.T) []wireMessage {
	t.Helper()
	var r sendRequest
	if err := json.Unmarshal([]byte(c.Body), &r); err != nil {
		t.Errorf("send body is not JSON: %v", err)
	}
	return r.Messages
}

func capture(r providertest.Request) captured {
	return captured{
		Method: r.Method, Path: r.Path, Authorization: r.Header.Get("Authorization"),
		ContentType: r.Header.Get("Content-Type"), Body: string(r.Body),
	}
}

type fakeSolapi struct{ *providertest.Fake }

func newFake(t *testing.T, reply func(t *testing.T, r captured) (int, string)) *fakeSolapi {
	t.Helper()
	return &fakeSolapi{providertest.NewFake(t, func(_ int, r providertest.Request) providertest.Reply {
		status, body := reply(t, capture(r))
		return providertest.Reply{Status: status, Header: map[string]string{"Content-Type": "application/json; charset=utf-8"}, Body: body}
	})}
}

func (f *fakeSolapi) requests() []captured {
	var out []captured
	for _, r := range f.Received() {
		out = append(out, capture(r))
	}
	return out
}

// result is one entry of the fake's answer.
type result struct {
	To            string            `json:"to,omitempty"`
	MessageID     string            `json:"messageId"`
	StatusCode    string            `json:"statusCode"`
	StatusMessage string            `json:"statusMessage"`
	CustomFields  map[string]string `json:"customFields,omitempty"`
}

// answer builds a send-many/detail answer: each message gets the status
// code status(m) returns, accepted ones in messageList and the rest in
// failedMessageList, as Solapi reports them.
func answer(t *testing.T, r captured, status func(m wireMessage) string) string {
	t.Helper()
	ok, failed := []result{}, []result{}
	for _, m := range r.messages(t) {
		code := status(m)
		it := result{MessageID: "M4V" + m.CustomFields["nid"], StatusCode: code, StatusMessage: "status " + code, CustomFields: m.CustomFields}
		if code == "2000" || code == "3000" || code == "4000" {
			ok = append(ok, it)
		} else {
			it.To = m.To
			failed = append(failed, it)
		}
	}
	b, _ := json.Marshal(map[string]any{
		"groupInfo":         map[string]any{"_id": "G4V1", "count": map[string]int{"total": len(ok) + len(failed), "registeredSuccess": len(ok), "registeredFailed": len(failed)}},
		"messageList":       ok,
		"failedMessageList": failed,
	})
	return string(b)
}

// acceptAll answers every send with statusCode 2000.
func acceptAll(t *testing.T, r captured) (int, string) {
	return http.StatusOK, answer(t, r, func(wireMessage) string { return "2000" })
}

func testConfig(baseURL string) provider.Config {
	return provider.Config{keyAPIKey: testAPIKey, keyAPISecret: testSecret, keySender: testSender, keyBaseURL: baseURL}
}

// newTestSender builds kind against f with a fixed clock and salt.
func newTestSender(t *testing.T, kind provider.Kind, f *fakeSolapi) *sender {
	t.Helper()
	p, err := kind.New(testConfig(f.URL), provider.Deps{HTTP: providertest.Client(2 * time.Second), Now: func() time.Time { return fixedNow }})
	require.NoError(t, err)
	s := p.(*sender)
	s.salt = func() string { return fixedSalt }
	return s
}

var authRE = regexp.MustCompile(`^HMAC-SHA256 apiKey=([^,]+), date=([^,]+), salt=([^,]+), signature=([0-9a-f]{64})$`)

// verifyAuth checks an Authorization header the way Solapi does and
// returns its date and salt.
func verifyAuth(t *testing.T, header string) (date time.Time, salt string) {
	t.Helper()
	m := authRE.FindStringSubmatch(header)
	require.NotNil(t, m, "malformed Authorization %q", header)
	require.Equal(t, testAPIKey, m[1])
	date, err := time.Parse(time.RFC3339, m[2])
	require.NoError(t, err)
	require.Equal(t, date.UTC().Format(time.RFC3339), m[2], "date must be UTC")
	mac := hmac.New(sha256.New, []byte(testSecret))
	mac.Write([]byte(m[2] + m[3]))
	require.Equal(t, hex.EncodeToString(mac.Sum(nil)), m[4], "signature")
	return date, m[3]
}

// golden compares the exact wire request with testdata/<name>.golden.
func golden(t *testing.T, name string, r captured) {
	t.Helper()
	providertest.Golden(t, name, fmt.Appendf(nil, "%s %s\nAuthorization: %s\nContent-Type: %s\n\n%s\n", r.Method, r.Path, r.Authorization, r.ContentType, r.Body))
}

// requireNoSecrets asserts attempt history holds no credential.
func requireNoSecrets(t *testing.T, ex provider.Exchange) {
	t.Helper()
	providertest.RequireHidden(t, ex, testAPIKey, testSecret)
}
