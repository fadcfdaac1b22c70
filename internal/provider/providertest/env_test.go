package providertest

import (
	"bytes"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/notifyd/notifyd/internal/provider"
	"github.com/notifyd/notifyd/internal/provider/kinds"
	"github.com/notifyd/notifyd/internal/simulator"
)

// Account values shared by the configs and the expectations.
const (
	aligoSender   = "0212345678"
	solapiSender  = "0298765432"
	mailFrom      = "noreply@example.com"
	resendFrom    = "Notifyd <" + mailFrom + ">"
	sesFromName   = "알림 서비스" // non-ASCII: must reach SES RFC 2047-encoded
	postmarkName  = "Notifyd Mail"
	slackHookPath = "/services/T000/B000/XXXX"
	discordHook   = "/api/webhooks/123456/token"
	slackChannel  = "C0123ABCD9"
	discordChan   = "123456789012345678"
	fcmProject    = "demo"
)

// secrets are configJson values that must never show in an Exchange.
var secrets = []string{
	"aligo-secret-key", "aligo-msgr-secret-key", "solapi-secret-api-key", "solapi-api-secret-value",
	"re_secret_resend_key", "AKIASECRETKEYID0001", "ses-secret-access-key", "postmark-secret-token",
	"xoxb-secret-slack-token", "discord-secret-bot-token",
}

// fcmKey is one fresh RSA key per test run, for the generated service account.
var fcmKey = sync.OnceValue(func() []byte {
	k, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		panic(err)
	}
	der, err := x509.MarshalPKCS8PrivateKey(k)
	if err != nil {
		panic(err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der})
})

// env is one simulator behind its own httptest server: each subtest gets
// one, so that faults and recorded messages never interfere.
type env struct {
	t   *testing.T
	sim *simulator.Simulator
	url string
}

func newEnv(t *testing.T) *env {
	t.Helper()
	sim := simulator.New()
	srv := httptest.NewServer(sim)
	t.Cleanup(srv.Close)
	return &env{t: t, sim: sim, url: srv.URL}
}

// control calls the simulator's control API and fails the test on an error answer.
func (e *env) control(method, path string, body any) {
	e.t.Helper()
	b, err := json.Marshal(body)
	require.NoError(e.t, err)
	req, err := http.NewRequest(method, e.url+path, bytes.NewReader(b))
	require.NoError(e.t, err)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	require.NoError(e.t, err)
	defer resp.Body.Close()
	out, _ := io.ReadAll(resp.Body)
	require.Truef(e.t, resp.StatusCode >= 200 && resp.StatusCode <= 299,
		"%s %s %s: HTTP %d %s", method, path, b, resp.StatusCode, out)
}

// fault queues f (POST /_sim/faults).
func (e *env) fault(f map[string]any) { e.control(http.MethodPost, "/_sim/faults", f) }

// serviceAccount is a Google service-account key file whose token_uri is
// this simulator.
func (e *env) serviceAccount() string {
	b, err := json.Marshal(map[string]string{
		"type":           "service_account",
		"project_id":     fcmProject,
		"private_key_id": "0123456789abcdef0123456789abcdef01234567",
		"private_key":    string(fcmKey()),
		"client_email":   "notifyd@demo.iam.gserviceaccount.com",
		"client_id":      "100000000000000000001",
		"token_uri":      e.url + "/token",
	})
	require.NoError(e.t, err)
	return string(b)
}

// config is the configJson of an account of kind pointed at this simulator.
func (e *env) config(kind string) provider.Config {
	switch kind {
	case "vendora_sms":
		return provider.Config{"vendora_user_id": "notifyd", "vendora_api_key": "aligo-secret-key",
			"vendora_sender": aligoSender, "base_url": e.url}
	case "vendora_msgr":
		return provider.Config{"vendora_user_id": "notifyd", "vendora_msgr_api_key": "aligo-msgr-secret-key",
			"vendora_sender": aligoSender, "base_url": e.url}
	case "vendorb_sms", "vendorb_msgr":
		return provider.Config{"vendorb_api_key": "solapi-secret-api-key", "vendorb_api_secret": "solapi-api-secret-value",
			"vendorb_sender": solapiSender, "base_url": e.url}
	case "push_gateway":
		return provider.Config{"push_service_account_json": e.serviceAccount(), "base_url": e.url}
	case "mailx_email":
		return provider.Config{"mailx_api_key": "re_secret_resend_key", "mailx_from_email": resendFrom, "base_url": e.url}
	case "maily_email":
		return provider.Config{"maily_access_key_id": "AKIASECRETKEYID0001", "maily_secret_access_key": "ses-secret-access-key",
			"maily_region": "us-east-1", "maily_from_email": mailFrom, "maily_from_name": sesFromName,
			"maily_configuration_set": "newsletters", "base_url": e.url}
	case "mailz_email":
		return provider.Config{"mailz_api_key": "postmark-secret-token", "mailz_from_email": mailFrom,
			"mailz_from_name": postmarkName, "base_url": e.url}
	case "chata_webhook":
		return provider.Config{"chata_webhook_url": e.url + slackHookPath}
	case "chata_bot":
		return provider.Config{"chata_bot_token": "xoxb-secret-slack-token", "base_url": e.url}
	case "chatb_webhook":
		return provider.Config{"chatb_webhook_url": e.url + discordHook}
	case "chatb_bot":
		return provider.Config{"chatb_bot_token": "discord-secret-bot-token", "base_url": e.url}
	}
	e.t.Fatalf("no config for kind %s", kind)
	return nil
}

// provider builds an adapter of kind from the registry, with the
// SSRF guard off (the simulator is on loopback) and the given timeout (0:
// the default).
func (e *env) provider(kind string, timeout time.Duration) provider.Provider {
	e.t.Helper()
	k, ok := kinds.All()[kind]
	require.True(e.t, ok, "kind %s is not registered", kind)
	p, err := k.New(e.config(kind), provider.Deps{
		HTTP: provider.NewHTTPClient(provider.HTTPOptions{AllowPrivate: true, Timeout: timeout}),
	})
	require.NoError(e.t, err)
	return p
}
