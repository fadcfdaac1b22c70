// Package bounces_test drives the suppression list and the bounce and
// complaint intake end to end: daemon, simulator and both backends.
package bounces_test

import (
	"context"
	"encoding/base64"
	"net/http"
	"net/http/httptest"
	"net/url"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/notifyd/notifyd/client"
	"github.com/notifyd/notifyd/internal/config"
	"github.com/notifyd/notifyd/internal/notifytest"
	"github.com/notifyd/notifyd/internal/simulator"
)

var ctx = context.Background()

// resendSecret is the Resend webhook signing secret the tests configure.
var resendSecret = "whsec_" + base64.StdEncoding.EncodeToString([]byte("resend webhook secret, 32 bytes!"))

type bundle struct {
	env *notifytest.Env
	key *client.Client
	// certBase is a trusted host (NOTIFYD_SNS_CERT_HOSTS) that serves the
	// simulator: the daemon's simulator address is only known after start.
	certBase string
}

func setup(t *testing.T) *bundle {
	t.Helper()
	var sim atomic.Pointer[simulator.Simulator]
	front := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if s := sim.Load(); s != nil {
			s.ServeHTTP(w, r)
			return
		}
		w.WriteHeader(http.StatusServiceUnavailable)
	}))
	t.Cleanup(front.Close)
	u, _ := url.Parse(front.URL)
	env := notifytest.StartDaemon(t, func(c *config.Config) { c.SNSCertHosts = []string{u.Host} })
	sim.Store(env.Sim)
	return &bundle{env: env, key: env.SendKey(t), certBase: front.URL}
}

// config is the configJson of an email provider of kind on the simulator;
// Resend's carries the webhook secret the tests sign with.
func (b *bundle) config(kind string) map[string]string {
	if kind == "mailx_email" {
		return b.env.SimConfig(kind, map[string]string{"mailx_webhook_secret": resendSecret})
	}
	return b.env.SimConfig(kind, nil)
}

// provider registers an email provider of kind on the simulator and routes
// email to it.
func (b *bundle) provider(t *testing.T, kind string) string {
	t.Helper()
	return notifytest.RegisterRoute(t, b.env.Owner, "email", kind, b.config(kind))
}

type secretOut struct {
	CallbackSecret struct {
		ProviderAccountID string  `json:"providerAccountId"`
		Configured        bool    `json:"configured"`
		RotationPending   bool    `json:"rotationPending"`
		RotatedAt         *string `json:"rotatedAt"`
		CallbackURL       string  `json:"callbackUrl"`
	} `json:"callbackSecret"`
	Secret                string `json:"secret"`
	CallbackURLWithSecret string `json:"callbackUrlWithSecret"`
}

func (b *bundle) rotate(t *testing.T, pid string) secretOut {
	t.Helper()
	r := notifytest.Dash(t, b.env.Owner, "POST", "/v1/providers/"+pid+"/callback-secret/rotate", nil)
	out := notifytest.Decode[secretOut](t, r, http.StatusOK)
	require.NotEmpty(t, out.Secret)
	return out
}

func (b *bundle) callbackURL(pid, secret string) string {
	return b.env.Daemon.URL() + "/v1/callbacks/" + pid + "?token=" + url.QueryEscape(secret)
}

// post asks the simulator to post a vendor callback.
func (b *bundle) post(t *testing.T, req simulator.CallbackRequest) *simulator.CallbackResult {
	t.Helper()
	if req.Kind == "mailx_email" && req.Secret == "" {
		req.Secret = resendSecret
	}
	if req.CertBase == "" {
		req.CertBase = b.certBase
	}
	res, err := b.env.Sim.PostCallback(ctx, req)
	require.NoError(t, err)
	return res
}

// send sends an email to to and answers its request id.
func (b *bundle) send(t *testing.T, to string) string {
	t.Helper()
	return notifytest.Send(t, b.key, notifytest.Email(to, "Hello", "hi")).RequestID
}

type suppressionOut struct {
	Address   string `json:"address"`
	Reason    string `json:"reason"`
	CreatedAt string `json:"createdAt"`
}

type listOut struct {
	Suppressions []suppressionOut `json:"suppressions"`
	Cursor       *string          `json:"cursor"`
	HasNext      bool             `json:"hasNext"`
}

func (b *bundle) list(t *testing.T, c *client.Client, query string) listOut {
	t.Helper()
	return notifytest.Decode[listOut](t, notifytest.Dash(t, c, "GET", "/v1/suppressions"+query, nil), http.StatusOK)
}

func (b *bundle) reasonOf(t *testing.T, address string) string {
	t.Helper()
	l := b.list(t, b.env.Owner, "?address="+url.QueryEscape(address))
	if len(l.Suppressions) == 0 {
		return ""
	}
	return l.Suppressions[0].Reason
}

// auditActions lists the audit entries of action, whole (to search them
// for secrets).
func (b *bundle) auditActions(t *testing.T, action string) []map[string]any {
	t.Helper()
	return notifytest.Decode[struct {
		Logs []map[string]any `json:"logs"`
	}](t, notifytest.Dash(t, b.env.Owner, "GET", "/v1/audit-logs?action="+action, nil), http.StatusOK).Logs
}
