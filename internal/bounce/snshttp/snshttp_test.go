package snshttp_test

import (
	"context"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"math/big"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/notifyd/notifyd/internal/bounce"
	"github.com/notifyd/notifyd/internal/bounce/snshttp"
	"github.com/notifyd/notifyd/internal/simulator"
)

// simEnv is the simulator, which signs SNS messages and serves its
// signing certificate, and a receiver the callbacks are posted to.
type simEnv struct {
	sim  *simulator.Simulator
	host string
	url  string
}

func startSim(t *testing.T) *simEnv {
	sim := simulator.New()
	srv := httptest.NewServer(sim)
	t.Cleanup(srv.Close)
	rcv := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	t.Cleanup(rcv.Close)
	u, _ := url.Parse(srv.URL)
	return &simEnv{sim: sim, host: u.Host, url: rcv.URL}
}

// post has the simulator post one callback and returns its body and
// headers as sent.
func (e *simEnv) post(t *testing.T, req simulator.CallbackRequest) ([]byte, http.Header) {
	t.Helper()
	req.URL = e.url
	if req.CertBase == "" {
		req.CertBase = "http://" + e.host
	}
	res, err := e.sim.PostCallback(context.Background(), req)
	require.NoError(t, err)
	require.Equal(t, 200, res.Status)
	h := http.Header{}
	for k, v := range res.Headers {
		h.Set(k, v)
	}
	return []byte(res.Payload), h
}

func (e *simEnv) verifier() *snshttp.Verifier {
	return &snshttp.Verifier{Client: http.DefaultClient, Policy: bounce.SNSPolicy{ExtraHosts: []string{e.host}, AllowHTTP: true}}
}

func TestSNSAcceptsSimulatorMessages(t *testing.T) {
	t.Parallel()
	e := startSim(t)
	ctx := context.Background()
	for _, v := range []string{"1", "2"} {
		for _, typ := range []string{"bounce", "complaint"} {
			body, h := e.post(t, simulator.CallbackRequest{Kind: "maily_email", Type: typ, To: "Someone@Example.com", MessageID: "0100-abc", SignatureVersion: v})
			require.Equal(t, "Notification", h.Get("x-amz-sns-message-type"))
			m, err := bounce.ParseSNS(body)
			require.NoError(t, err)
			require.NoError(t, e.verifier().Verify(ctx, m), "version %s %s", v, typ)
			evs, err := bounce.ParseSES(m.Message, m.MessageID, time.Now())
			require.NoError(t, err)
			require.Len(t, evs, 1)
			require.Equal(t, "someone@example.com", evs[0].Recipient)
			require.Equal(t, "0100-abc", evs[0].MessageID)
			reason, ok := evs[0].Suppresses()
			require.True(t, ok)
			if typ == "bounce" {
				require.Equal(t, "hard_bounce", reason)
				require.Equal(t, bounce.Permanent, evs[0].BounceType)
			} else {
				require.Equal(t, "complaint", reason)
			}
		}
	}
	// A transient bounce is read but does not suppress.
	body, _ := e.post(t, simulator.CallbackRequest{Kind: "maily_email", Type: "bounce", BounceType: "transient", To: "a@example.com", MessageID: "m1"})
	m, err := bounce.ParseSNS(body)
	require.NoError(t, err)
	require.NoError(t, e.verifier().Verify(ctx, m))
	evs, err := bounce.ParseSES(m.Message, m.MessageID, time.Now())
	require.NoError(t, err)
	require.Len(t, evs, 1)
	require.Equal(t, bounce.Transient, evs[0].BounceType)
	_, ok := evs[0].Suppresses()
	require.False(t, ok)

	// Subscription confirmation: verified, then confirmed at the simulator.
	body, _ = e.post(t, simulator.CallbackRequest{Kind: "maily_email", Type: "subscription", SignatureVersion: "2"})
	m, err = bounce.ParseSNS(body)
	require.NoError(t, err)
	require.Equal(t, bounce.SNSSubscriptionConfirmation, m.Type)
	require.NoError(t, e.verifier().Verify(ctx, m))
	require.NoError(t, e.verifier().Confirm(ctx, m))
	subs := e.sim.Subscriptions()
	require.Len(t, subs, 1)
	require.Equal(t, m.Token, subs[0].Token)
}

func TestSNSRejectsTamperedAndUntrusted(t *testing.T) {
	t.Parallel()
	e := startSim(t)
	ctx := context.Background()
	body, _ := e.post(t, simulator.CallbackRequest{Kind: "maily_email", Type: "bounce", To: "a@example.com", MessageID: "m1", SignatureVersion: "2"})
	var raw map[string]string
	require.NoError(t, json.Unmarshal(body, &raw))

	mutate := func(f func(m map[string]string)) *bounce.SNSMessage {
		c := map[string]string{}
		for k, v := range raw {
			c[k] = v
		}
		f(c)
		b, _ := json.Marshal(c)
		m, err := bounce.ParseSNS(b)
		require.NoError(t, err)
		return m
	}
	good := mutate(func(map[string]string) {})
	require.NoError(t, e.verifier().Verify(ctx, good))

	cases := map[string]func(m map[string]string){
		"message": func(m map[string]string) {
			m["Message"] = strings.Replace(m["Message"], "a@example.com", "b@example.com", 1)
		},
		"topic":           func(m map[string]string) { m["TopicArn"] += "x" },
		"subject added":   func(m map[string]string) { m["Subject"] = "" },
		"version":         func(m map[string]string) { m["SignatureVersion"] = "1" },
		"unknown version": func(m map[string]string) { m["SignatureVersion"] = "3" },
		"signature":       func(m map[string]string) { m["Signature"] = base64.StdEncoding.EncodeToString([]byte("nope")) },
		"foreign host":    func(m map[string]string) { m["SigningCertURL"] = "https://evil.example.com/cert.pem" },
		"look-alike host": func(m map[string]string) { m["SigningCertURL"] = "https://sns.us-east-1.amazonaws.com.evil.com/c.pem" },
		"not pem":         func(m map[string]string) { m["SigningCertURL"] = "http://" + e.host + "/_sim/sns/subscriptions" },
		"userinfo":        func(m map[string]string) { m["SigningCertURL"] = "http://x@" + e.host + simulator.SNSCertificatePath },
	}
	for name, f := range cases {
		err := e.verifier().Verify(ctx, mutate(f))
		require.ErrorIs(t, err, bounce.ErrSignature, name)
	}

	// The simulator's host over plain http is refused unless allowed.
	strict := &snshttp.Verifier{Client: http.DefaultClient, Policy: bounce.SNSPolicy{ExtraHosts: []string{e.host}}}
	require.ErrorIs(t, strict.Verify(ctx, good), bounce.ErrSignature)
	none := &snshttp.Verifier{Client: http.DefaultClient}
	require.ErrorIs(t, none.Verify(ctx, good), bounce.ErrSignature)
}

// A certificate served from a trusted host but not the signer's fails.
func TestSNSWrongCertificate(t *testing.T) {
	t.Parallel()
	e := startSim(t)
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	require.NoError(t, err)
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "other"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour)}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	require.NoError(t, err)
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_ = pem.Encode(w, &pem.Block{Type: "CERTIFICATE", Bytes: der})
	}))
	defer other.Close()
	ou, _ := url.Parse(other.URL)
	body, _ := e.post(t, simulator.CallbackRequest{Kind: "maily_email", Type: "complaint", To: "a@example.com", MessageID: "m1",
		CertBase: other.URL})
	m, err := bounce.ParseSNS(body)
	require.NoError(t, err)
	v := &snshttp.Verifier{Client: http.DefaultClient, Policy: bounce.SNSPolicy{ExtraHosts: []string{ou.Host}, AllowHTTP: true}}
	require.ErrorIs(t, v.Verify(context.Background(), m), bounce.ErrSignature)
}
