package bounce_test

import (
	"context"
	"encoding/base64"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"
	"github.com/stretchr/testify/require"

	"github.com/notifyd/notifyd/internal/bounce"
	"github.com/notifyd/notifyd/internal/simulator"
)

// capture is a receiver that keeps the last callback the simulator posted.
type capture struct {
	mu     sync.Mutex
	body   []byte
	header http.Header
}

func (c *capture) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	b, _ := io.ReadAll(r.Body)
	c.mu.Lock()
	c.body, c.header = b, r.Header.Clone()
	c.mu.Unlock()
	w.WriteHeader(http.StatusOK)
}

func (c *capture) last() ([]byte, http.Header) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.body, c.header
}

type simEnv struct {
	sim  *simulator.Simulator
	host string
	rcv  *capture
	url  string
}

func startSim(t *testing.T) *simEnv {
	sim := simulator.New()
	srv := httptest.NewServer(sim)
	t.Cleanup(srv.Close)
	rcv := &capture{}
	rs := httptest.NewServer(rcv)
	t.Cleanup(rs.Close)
	u, _ := url.Parse(srv.URL)
	return &simEnv{sim: sim, host: u.Host, rcv: rcv, url: rs.URL}
}

func (e *simEnv) post(t *testing.T, req simulator.CallbackRequest) ([]byte, http.Header) {
	t.Helper()
	req.URL = e.url
	if req.CertBase == "" {
		req.CertBase = "http://" + e.host
	}
	res, err := e.sim.PostCallback(context.Background(), req)
	require.NoError(t, err)
	require.Equal(t, 200, res.Status)
	return e.rcv.last()
}

func TestSNSPolicyDefaultHosts(t *testing.T) {
	t.Parallel()
	var p bounce.SNSPolicy
	for _, ok := range []string{"https://sns.us-east-1.amazonaws.com/SimpleNotificationService-abc.pem",
		"https://sns.cn-north-1.amazonaws.com.cn/x.pem", "https://SNS.eu-west-1.amazonaws.com/x.pem"} {
		_, err := p.CheckURL(ok)
		require.NoError(t, err, ok)
	}
	for _, bad := range []string{"http://sns.us-east-1.amazonaws.com/x.pem", "https://sns.us-east-1.amazonaws.com:8443/x.pem",
		"https://s3.amazonaws.com/x.pem", "https://sns.amazonaws.com/x.pem", "https://evilsns.us-east-1.amazonaws.com/x.pem",
		"https://127.0.0.1/x.pem", "/relative.pem", "::"} {
		_, err := p.CheckURL(bad)
		require.ErrorIs(t, err, bounce.ErrSignature, bad)
	}
}

func TestParseSNSMalformed(t *testing.T) {
	t.Parallel()
	for _, b := range []string{``, `[]`, `{"Type":"Other"}`, `{"Type":"Notification","MessageId":"x"}`,
		`{"Type":"SubscriptionConfirmation","MessageId":"x","TopicArn":"t","Timestamp":"t","Signature":"s","SigningCertURL":"u"}`} {
		_, err := bounce.ParseSNS([]byte(b))
		require.ErrorIs(t, err, bounce.ErrMalformed, b)
	}
	_, err := bounce.ParseSES(`not json`, "id", time.Now())
	require.ErrorIs(t, err, bounce.ErrMalformed)
	evs, err := bounce.ParseSES(`{"eventType":"Delivery","mail":{"messageId":"m"}}`, "id", time.Now())
	require.NoError(t, err)
	require.Empty(t, evs)
	// Event publishing format (eventType) is read like notifications.
	evs, err = bounce.ParseSES(`{"eventType":"Bounce","mail":{"messageId":"m"},"bounce":{"bounceType":"Permanent","bouncedRecipients":[{"emailAddress":"X@Y.Z"},{"emailAddress":"bad"}]}}`, "sid", time.Now())
	require.NoError(t, err)
	require.Len(t, evs, 1)
	require.Equal(t, "x@y.z", evs[0].Recipient)
	require.Equal(t, "ses:sid:x@y.z", evs[0].EventID)
}

func TestSvixResend(t *testing.T) {
	t.Parallel()
	e := startSim(t)
	secret := "whsec_" + base64.StdEncoding.EncodeToString([]byte("0123456789abcdef0123456789abcdef"))
	for _, typ := range []string{"bounce", "complaint"} {
		body, h := e.post(t, simulator.CallbackRequest{Kind: "mailx_email", Type: typ, To: "r@example.com", MessageID: "re-1", Secret: secret})
		sh := bounce.SvixHeaders{ID: h.Get("svix-id"), Timestamp: h.Get("svix-timestamp"), Signature: h.Get("svix-signature")}
		require.NoError(t, bounce.VerifySvix(secret, sh, body, time.Now()))

		// An independent Standard Webhooks verifier (same scheme, other
		// header names) agrees.
		wh, err := standardwebhooks.NewWebhook(secret)
		require.NoError(t, err)
		std := http.Header{}
		std.Set("webhook-id", sh.ID)
		std.Set("webhook-timestamp", sh.Timestamp)
		std.Set("webhook-signature", sh.Signature)
		require.NoError(t, wh.Verify(body, std))

		evs, err := bounce.ParseResend(body, sh.ID, time.Now())
		require.NoError(t, err)
		require.Len(t, evs, 1)
		require.Equal(t, "re-1", evs[0].MessageID)
		reason, ok := evs[0].Suppresses()
		require.True(t, ok)
		require.Equal(t, map[string]string{"bounce": "hard_bounce", "complaint": "complaint"}[typ], reason)

		tampered := append([]byte{}, body...)
		tampered[len(tampered)-2] ^= 1
		require.ErrorIs(t, bounce.VerifySvix(secret, sh, tampered, time.Now()), bounce.ErrSignature)
		other := "whsec_" + base64.StdEncoding.EncodeToString([]byte("another secret of thirty-two b.."))
		require.ErrorIs(t, bounce.VerifySvix(other, sh, body, time.Now()), bounce.ErrSignature)
		require.ErrorIs(t, bounce.VerifySvix(secret, sh, body, time.Now().Add(10*time.Minute)), bounce.ErrSignature)
		require.ErrorIs(t, bounce.VerifySvix(secret, bounce.SvixHeaders{ID: sh.ID, Timestamp: sh.Timestamp}, body, time.Now()), bounce.ErrSignature)
	}
	body, h := e.post(t, simulator.CallbackRequest{Kind: "mailx_email", Type: "bounce", BounceType: "transient", To: "r@example.com", MessageID: "re-2", Secret: secret})
	evs, err := bounce.ParseResend(body, h.Get("svix-id"), time.Now())
	require.NoError(t, err)
	require.Len(t, evs, 1)
	_, ok := evs[0].Suppresses()
	require.False(t, ok)
	// A delivery is a receipt (issue 35), not feedback: it suppresses nothing.
	evs, err = bounce.ParseResend([]byte(`{"type":"email.delivered","data":{"email_id":"x","to":["a@b.c"]}}`), "id", time.Now())
	require.NoError(t, err)
	require.Len(t, evs, 1)
	require.Equal(t, bounce.TypeDelivery, evs[0].Type)
	_, ok = evs[0].Suppresses()
	require.False(t, ok)
	_, err = bounce.ParseResend([]byte(`{"type":"email.bounced","data":{"to":["a@b.c"]}}`), "id", time.Now())
	require.ErrorIs(t, err, bounce.ErrMalformed)
}

func TestPostmark(t *testing.T) {
	t.Parallel()
	e := startSim(t)
	want := map[string]struct {
		reason string
		ok     bool
	}{"bounce/permanent": {"hard_bounce", true}, "bounce/transient": {"", false}, "complaint/permanent": {"complaint", true}}
	for key, w := range want {
		typ, bt, _ := strings.Cut(key, "/")
		body, h := e.post(t, simulator.CallbackRequest{Kind: "mailz_email", Type: typ, BounceType: bt, To: "p@example.com", MessageID: "pm-1", Secret: "s3cret"})
		_, pw, ok := (&http.Request{Header: h}).BasicAuth()
		require.True(t, ok)
		require.Equal(t, "s3cret", pw)
		evs, err := bounce.ParsePostmark(body, time.Now())
		require.NoError(t, err)
		require.Len(t, evs, 1, key)
		reason, sup := evs[0].Suppresses()
		require.Equal(t, w.ok, sup, key)
		require.Equal(t, w.reason, reason, key)
		require.Equal(t, "pm-1", evs[0].MessageID)
	}
	// A delivery is a receipt (issue 35), not feedback.
	evs, err := bounce.ParsePostmark([]byte(`{"RecordType":"Delivery","MessageID":"x","Recipient":"a@b.c"}`), time.Now())
	require.NoError(t, err)
	require.Len(t, evs, 1)
	require.Equal(t, bounce.TypeDelivery, evs[0].Type)
	_, ok := evs[0].Suppresses()
	require.False(t, ok)
	_, err = bounce.ParsePostmark([]byte(`{"RecordType":"Bounce","Type":"HardBounce"}`), time.Now())
	require.True(t, errors.Is(err, bounce.ErrMalformed))
}
