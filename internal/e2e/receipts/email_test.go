package receipts_test

import (
	"encoding/base64"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/notifyd/notifyd/internal/config"
	"github.com/notifyd/notifyd/internal/notify"
	"github.com/notifyd/notifyd/internal/notifytest"
	"github.com/notifyd/notifyd/internal/simulator"
)

// resendSecret is the Resend webhook signing secret the tests configure.
var resendSecret = "whsec_" + base64.StdEncoding.EncodeToString([]byte("resend webhook secret, 32 bytes!"))

type mailBundle struct {
	*bundle
	cbURL, secret, certBase string
}

// mailSetup starts a daemon whose email route is kind, with its callback
// secret, and a trusted SNS certificate host serving the simulator.
func mailSetup(t *testing.T, kind string) *mailBundle {
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
	env := notifytest.StartDaemon(t, fastPolls(30*time.Second), func(c *config.Config) { c.SNSCertHosts = []string{u.Host} })
	sim.Store(env.Sim)
	b := &mailBundle{bundle: &bundle{env: env, key: env.SendKey(t), accounts: map[string]string{}}, certBase: front.URL}
	cfg := env.SimConfig(kind, nil)
	if kind == "mailx_email" {
		cfg["mailx_webhook_secret"] = resendSecret
		b.secret = resendSecret
	}
	pid := notifytest.RegisterRoute(t, env.Owner, "email", kind, cfg)
	var sec struct {
		Secret string `json:"secret"`
	}
	b.dashOK(t, "POST", "/v1/providers/"+pid+"/callback-secret/rotate", nil, &sec)
	b.cbURL = env.Daemon.URL() + "/v1/callbacks/" + pid + "?token=" + url.QueryEscape(sec.Secret)
	if kind == "mailz_email" {
		b.secret = sec.Secret
	}
	return b
}

func (b *mailBundle) post(t *testing.T, kind, typ, to string) {
	t.Helper()
	res, err := b.env.Sim.PostCallback(ctx, simulator.CallbackRequest{Kind: kind, URL: b.cbURL, Type: typ, To: to,
		Secret: b.secret, CertBase: b.certBase})
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, res.Status, res.Body)
}

// Each e-mail vendor's delivery callback, on the existing callback
// endpoint, moves the receipt to delivered and announces it once; the
// same callback again and a bounce after it change nothing more.
func TestEmailDeliveryCallbacks(t *testing.T) {
	t.Parallel()
	for _, kind := range []string{"maily_email", "mailx_email", "mailz_email"} {
		t.Run(kind, func(t *testing.T) {
			t.Parallel()
			b := mailSetup(t, kind)
			rc := b.webhook(t)
			to := "reader@example.com"
			id := b.send(t, notifytest.Email(to, "Hello", "hi"))
			out := notifytest.Wait(t, b.key, id)
			require.Equal(t, "sent", out.Status)
			require.Equal(t, "pending", out.DeliveryStatus.Status)

			b.post(t, kind, "delivery", to)
			out = b.waitReceipt(t, id, "delivered")
			require.Equal(t, "sent", out.Status)
			require.Equal(t, "delivered", out.Attempts[0].DeliveryStatus.Status)
			rc.AwaitEvent(t, id, notify.EventArrived)

			b.post(t, kind, "delivery", to)
			b.post(t, kind, "bounce", to) // out of order: the bounce is feedback only now
			time.Sleep(time.Second)
			again := notifytest.Lookup(t, b.key, id)
			require.Equal(t, out.DeliveryStatus, again.DeliveryStatus)
			require.Len(t, again.Attempts[0].DeliveryFeedback, 1, "the bounce is still recorded as feedback")
			require.Equal(t, 1, count(rc, id, notify.EventArrived))
			require.Zero(t, count(rc, id, notify.EventUndelivered))
		})
	}
}

// A permanent bounce is an undelivered receipt; a delivery callback that
// outruns the vendor's answer (the send is not recorded yet) is kept and
// applied once the send is.
func TestEmailBounceAndEarlyDelivery(t *testing.T) {
	t.Parallel()
	b := mailSetup(t, "mailz_email")
	rc := b.webhook(t)
	id := b.send(t, notifytest.Email("gone@example.com", "Hello", "hi"))
	notifytest.Wait(t, b.key, id)
	b.post(t, "mailz_email", "bounce", "gone@example.com")
	out := b.waitReceipt(t, id, "undelivered")
	require.Equal(t, "bounce", *out.DeliveryStatus.VendorCode)
	rc.AwaitEvent(t, id, notify.EventUndelivered)

	b.env.Sim.SetAutoCallback(simulator.AutoCallback{Kind: "mailz_email", URL: b.cbURL, Secret: b.secret}, b.certBase)
	early := b.send(t, notifytest.Email(simulator.SESSuccessAddress, "Hello", "hi"))
	out = b.waitReceipt(t, early, "delivered")
	require.Equal(t, "sent", out.Status)
	evs := rc.AwaitEvent(t, early, notify.EventArrived)
	require.Equal(t, 1, count(rc, early, notify.EventArrived), "%v", evs)
	for status, n := range map[string]float64{"delivered": 1, "undelivered": 1} {
		require.Equal(t, n, notifytest.Counter(t, b.env.Daemon.Metrics.Registry, "notifyd_receipts_total",
			map[string]string{"provider_kind": "mailz_email", "status": status}), status)
	}
}

// A burst of delivery callbacks from several connections at once, each
// report posted twice, is applied in batches that yield to other writers
// (receipts.Options.ReportShare): every receipt ends delivered and each
// arrival is announced once.
func TestEmailDeliveryCallbackBurst(t *testing.T) {
	t.Parallel()
	b := mailSetup(t, "mailz_email")
	rc := b.webhook(t)
	const n = 24
	ids := make([]string, n)
	for i := range ids {
		ids[i] = b.send(t, notifytest.Email(fmt.Sprintf("burst%02d@example.com", i), "Hello", "hi"))
	}
	for _, id := range ids {
		require.Equal(t, "sent", notifytest.Wait(t, b.key, id).Status)
	}
	var wg sync.WaitGroup
	errs := make(chan error, 2*n)
	for i := range 2 * n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			res, err := b.env.Sim.PostCallback(ctx, simulator.CallbackRequest{Kind: "mailz_email", URL: b.cbURL, Type: "delivery",
				To: fmt.Sprintf("burst%02d@example.com", i%n), Secret: b.secret, CertBase: b.certBase})
			if err == nil && res.Status != http.StatusOK {
				err = fmt.Errorf("callback: %d %s", res.Status, res.Body)
			}
			errs <- err
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}
	for _, id := range ids {
		b.waitReceipt(t, id, "delivered")
		rc.AwaitEvent(t, id, notify.EventArrived)
	}
	time.Sleep(500 * time.Millisecond)
	for _, id := range ids {
		require.Equal(t, 1, count(rc, id, notify.EventArrived), id)
	}
	require.Equal(t, float64(n), notifytest.Counter(t, b.env.Daemon.Metrics.Registry, "notifyd_receipts_total",
		map[string]string{"provider_kind": "mailz_email", "status": "delivered"}))
}
