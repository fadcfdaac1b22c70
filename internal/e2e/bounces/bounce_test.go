package bounces_test

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/notifyd/notifyd/internal/notifytest"
	"github.com/notifyd/notifyd/internal/simulator"
)

type callbackOut struct {
	Events     int  `json:"events"`
	Suppressed int  `json:"suppressed"`
	Confirmed  bool `json:"confirmed"`
}

func decodeCallback(t *testing.T, res *simulator.CallbackResult) callbackOut {
	t.Helper()
	require.Equal(t, http.StatusOK, res.Status, res.Body)
	var out callbackOut
	require.NoError(t, json.Unmarshal([]byte(res.Body), &out))
	return out
}

// For each email vendor, the simulator posts a permanent bounce, a
// complaint and a transient bounce as the vendor would: the first two put
// the address on the suppression list with the right reason, show up on
// the attempt, and make a later send fail before any provider attempt; the
// transient one is recorded only.
func TestBounceAndComplaintPerVendor(t *testing.T) {
	t.Parallel()
	for _, kind := range []string{"maily_email", "mailx_email", "mailz_email"} {
		t.Run(kind, func(t *testing.T) {
			t.Parallel()
			b := setup(t)
			pid := b.provider(t, kind)
			sec := b.rotate(t, pid)
			cbURL := b.callbackURL(pid, sec.Secret)
			require.Equal(t, cbURL, sec.CallbackURLWithSecret)

			cases := []struct {
				to, typ, bounceType, reason string
			}{
				{"hard-" + kind + "@example.com", "bounce", "permanent", "hard_bounce"},
				{"spam-" + kind + "@example.com", "complaint", "", "complaint"},
				{"soft-" + kind + "@example.com", "bounce", "transient", ""},
			}
			for _, c := range cases {
				first := notifytest.Wait(t, b.key, b.send(t, c.to))
				require.Equal(t, "sent", first.Status)
				require.Len(t, first.Attempts, 1)

				res := b.post(t, simulator.CallbackRequest{Kind: kind, URL: cbURL, Type: c.typ, BounceType: c.bounceType, To: c.to})
				require.Equal(t, *first.Attempts[0].ProviderMessageID, res.MessageID)
				out := decodeCallback(t, res)
				require.Equal(t, 1, out.Events)
				require.Equal(t, c.reason, b.reasonOf(t, c.to), c.to)
				if c.reason == "" {
					require.Zero(t, out.Suppressed)
				} else {
					require.Equal(t, 1, out.Suppressed)
				}

				// The feedback is visible on the attempt, in the status
				// lookup and in the attempt history.
				got := notifytest.Lookup(t, b.key, first.RequestID)
				require.Len(t, got.Attempts[0].DeliveryFeedback, 1)
				fb := got.Attempts[0].DeliveryFeedback[0]
				require.Equal(t, c.typ, fb.Type)
				require.Equal(t, c.to, fb.Recipient)
				require.Equal(t, c.reason != "", fb.Suppressed)
				if c.typ == "bounce" {
					require.Equal(t, c.bounceType, *fb.BounceType)
				} else {
					require.Nil(t, fb.BounceType)
				}
				r := notifytest.Dash(t, b.env.Owner, "GET", "/v1/attempts?requestId="+first.RequestID, nil)
				require.Equal(t, http.StatusOK, r.Status)
				var hist struct {
					Attempts []notifytest.Attempt `json:"attempts"`
				}
				require.NoError(t, r.Decode(&hist))
				require.Len(t, hist.Attempts, 1)
				require.Len(t, hist.Attempts[0].DeliveryFeedback, 1)

				// The vendor retrying the same delivery changes nothing,
				// even after the address was taken off the list.
				if c.reason != "" {
					r := notifytest.Dash(t, b.env.Owner, "DELETE", "/v1/suppressions/"+c.to, nil)
					require.Equal(t, http.StatusNoContent, r.Status)
				}
				req, err := http.NewRequest("POST", cbURL, bytes.NewReader([]byte(res.Payload)))
				require.NoError(t, err)
				for k, v := range res.Headers {
					req.Header.Set(k, v)
				}
				resp, err := http.DefaultClient.Do(req)
				require.NoError(t, err)
				var retry callbackOut
				require.NoError(t, json.NewDecoder(resp.Body).Decode(&retry))
				resp.Body.Close()
				require.Equal(t, http.StatusOK, resp.StatusCode)
				require.Equal(t, 1, retry.Events)
				require.Zero(t, retry.Suppressed)
				require.Len(t, notifytest.Lookup(t, b.key, first.RequestID).Attempts[0].DeliveryFeedback, 1, "retried event stored once")
				require.Equal(t, "", b.reasonOf(t, c.to))
				if c.reason != "" {
					r := notifytest.Dash(t, b.env.Owner, "POST", "/v1/suppressions", map[string]any{"address": c.to, "reason": c.reason})
					require.Equal(t, http.StatusCreated, r.Status)
				}

				second := notifytest.Wait(t, b.key, b.send(t, strings.ToUpper(c.to)))
				if c.reason == "" {
					require.Equal(t, "sent", second.Status, "a transient bounce does not suppress")
					continue
				}
				require.Equal(t, "failed", second.Status)
				require.Equal(t, "invalid_request", *second.FinalErrorCode)
				require.Equal(t, "recipient address is on the suppression list", *second.FinalErrorMessage)
				require.Empty(t, second.Attempts, "refused before any provider attempt")
			}
			require.Len(t, b.env.Sim.Messages(kind, "", 0), 4, "three first sends and the transient address's second")
		})
	}
}

// SNS subscription confirmation: the service verifies the signed
// SubscriptionConfirmation and visits its SubscribeURL.
func TestSNSSubscriptionConfirmation(t *testing.T) {
	t.Parallel()
	b := setup(t)
	pid := b.provider(t, "maily_email")
	sec := b.rotate(t, pid)
	out := decodeCallback(t, b.post(t, simulator.CallbackRequest{Kind: "maily_email", URL: b.callbackURL(pid, sec.Secret),
		Type: "subscription", SignatureVersion: "2"}))
	require.True(t, out.Confirmed)
	subs := b.env.Sim.Subscriptions()
	require.Len(t, subs, 1)
	require.Contains(t, subs[0].TopicArn, "arn:aws:sns:")

	// The simulator's own address is not a trusted certificate host.
	res := b.post(t, simulator.CallbackRequest{Kind: "maily_email", URL: b.callbackURL(pid, sec.Secret), Type: "subscription",
		CertBase: b.env.SimURL})
	require.Equal(t, http.StatusUnauthorized, res.Status, res.Body)
	require.Contains(t, res.Body, "not a trusted SNS host")
	require.Len(t, b.env.Sim.Subscriptions(), 1)
}

// Signatures and credentials: a tampered SNS message, a wrong Svix secret,
// a wrong or missing callback secret, an unknown account.
func TestCallbackAuthentication(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ses, resend, pm := b.provider(t, "maily_email"), b.provider(t, "mailx_email"), b.provider(t, "mailz_email")
	b.send(t, "x@example.com")
	sesSec, resendSec, pmSec := b.rotate(t, ses), b.rotate(t, resend), b.rotate(t, pm)

	post := func(url string, body []byte, h http.Header) (int, string) {
		req, err := http.NewRequest("POST", url, bytes.NewReader(body))
		require.NoError(t, err)
		for k, v := range h {
			req.Header[k] = v
		}
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		defer resp.Body.Close()
		var p struct {
			Detail string `json:"detail"`
		}
		_ = json.NewDecoder(resp.Body).Decode(&p)
		return resp.StatusCode, p.Detail
	}

	// SNS: a genuine message passes; the same message altered does not.
	res := b.post(t, simulator.CallbackRequest{Kind: "maily_email", URL: b.callbackURL(ses, sesSec.Secret), Type: "bounce",
		To: "t@example.com", MessageID: "0100-unknown"})
	require.Equal(t, http.StatusOK, res.Status, res.Body)
	require.Equal(t, "hard_bounce", b.reasonOf(t, "t@example.com"), "a bounce for an unknown message still suppresses")
	tampered := strings.Replace(res.Payload, "t@example.com", "u@example.com", 1)
	st, detail := post(b.callbackURL(ses, sesSec.Secret), []byte(tampered), nil)
	require.Equal(t, http.StatusUnauthorized, st)
	require.Contains(t, detail, "Invalid signature")
	require.Equal(t, "", b.reasonOf(t, "u@example.com"))
	st, _ = post(b.callbackURL(ses, sesSec.Secret), []byte(`{"Type":"Notification"}`), nil)
	require.Equal(t, http.StatusBadRequest, st)
	// With maily_sns_topic_arn set, another topic is refused.
	cfg := b.config("maily_email")
	cfg["maily_sns_topic_arn"] = "arn:aws:sns:us-east-1:123456789012:other-topic"
	r := notifytest.Dash(t, b.env.Owner, "PATCH", "/v1/providers/"+ses, map[string]any{"configJson": cfg})
	require.Equal(t, http.StatusOK, r.Status, string(r.Body))
	res = b.post(t, simulator.CallbackRequest{Kind: "maily_email", URL: b.callbackURL(ses, sesSec.Secret), Type: "complaint",
		To: "v@example.com", MessageID: "0100-unknown"})
	require.Equal(t, http.StatusUnauthorized, res.Status, res.Body)
	require.Contains(t, res.Body, "TopicArn")
	cfg["maily_sns_topic_arn"] = "arn:aws:sns:us-east-1:123456789012:ses-feedback"
	r = notifytest.Dash(t, b.env.Owner, "PATCH", "/v1/providers/"+ses, map[string]any{"configJson": cfg})
	require.Equal(t, http.StatusOK, r.Status, string(r.Body))
	res = b.post(t, simulator.CallbackRequest{Kind: "maily_email", URL: b.callbackURL(ses, sesSec.Secret), Type: "complaint",
		To: "v@example.com", MessageID: "0100-unknown"})
	require.Equal(t, http.StatusOK, res.Status, res.Body)
	require.Equal(t, "complaint", b.reasonOf(t, "v@example.com"))

	// Resend: another whsec_ secret does not verify.
	res = b.post(t, simulator.CallbackRequest{Kind: "mailx_email", URL: b.callbackURL(resend, resendSec.Secret), Type: "bounce",
		To: "r@example.com", MessageID: "m", Secret: "whsec_b3RoZXIgc2VjcmV0IG9mIHRoaXJ0eS10d28gYnl0ZXMhIQ=="})
	require.Equal(t, http.StatusUnauthorized, res.Status, res.Body)
	st, _ = post(b.callbackURL(resend, resendSec.Secret), []byte(`{"type":"email.bounced","data":{}}`), nil)
	require.Equal(t, http.StatusUnauthorized, st, "no svix headers")
	require.Equal(t, "", b.reasonOf(t, "r@example.com"))

	// The callback secret: wrong, missing, another account's, and an
	// unknown account all answer the same 404 (issue 17: a wrong secret
	// was 401 and an unknown id 404, which told which ids exist); a body
	// that is not JSON is 400.
	pmBody := []byte(`{"RecordType":"Bounce","Type":"HardBounce","ID":1,"MessageID":"m","Email":"p@example.com"}`)
	for _, u := range []string{b.callbackURL(pm, "wrong"), b.env.Daemon.URL() + "/v1/callbacks/" + pm, b.callbackURL(pm, sesSec.Secret),
		b.callbackURL("01890000-0000-7000-8000-000000000000", pmSec.Secret), b.callbackURL("nope", pmSec.Secret)} {
		st, detail := post(u, pmBody, nil)
		require.Equal(t, http.StatusNotFound, st, u)
		require.Equal(t, "Provider not found", detail)
	}
	st, _ = post(b.callbackURL(pm, pmSec.Secret), []byte(`RecordType=Bounce`), nil)
	require.Equal(t, http.StatusBadRequest, st)
	// Basic auth carries the secret too (Postmark's webhook HTTP auth).
	h := http.Header{}
	req := &http.Request{Header: h}
	req.SetBasicAuth("postmark", pmSec.Secret)
	st, _ = post(b.env.Daemon.URL()+"/v1/callbacks/"+pm, pmBody, h)
	require.Equal(t, http.StatusOK, st)
	require.Equal(t, "hard_bounce", b.reasonOf(t, "p@example.com"))

	// A Resend account without mailx_webhook_secret refuses callbacks.
	r = notifytest.Dash(t, b.env.Owner, "PATCH", "/v1/providers/"+resend, map[string]any{"configJson": map[string]string{"mailx_api_key": "k", "mailx_from_email": "f@example.com"}})
	require.Equal(t, http.StatusOK, r.Status, string(r.Body))
	res = b.post(t, simulator.CallbackRequest{Kind: "mailx_email", URL: b.callbackURL(resend, resendSec.Secret), Type: "complaint",
		To: "r@example.com", MessageID: "m"})
	require.Equal(t, http.StatusUnauthorized, res.Status, res.Body)
	require.Contains(t, res.Body, "mailx_webhook_secret")
}

// Rotation keeps the old secret valid until finalize; both steps are
// audited; roles and kinds are enforced.
func TestCallbackSecretRotation(t *testing.T) {
	t.Parallel()
	b := setup(t)
	pid := b.provider(t, "mailz_email")
	body := func(n int) []byte {
		return []byte(`{"RecordType":"Bounce","Type":"HardBounce","ID":` + string(rune('0'+n)) + `,"MessageID":"m","Email":"p` +
			string(rune('0'+n)) + `@example.com"}`)
	}
	status := func(secret string, n int) int {
		resp, err := http.Post(b.callbackURL(pid, secret), "application/json", bytes.NewReader(body(n)))
		require.NoError(t, err)
		resp.Body.Close()
		return resp.StatusCode
	}

	r := notifytest.Dash(t, b.env.Owner, "GET", "/v1/providers/"+pid+"/callback-secret", nil)
	require.Equal(t, http.StatusOK, r.Status)
	var st secretOut
	require.NoError(t, r.Decode(&st))
	require.False(t, st.CallbackSecret.Configured)
	require.Equal(t, b.env.Daemon.URL()+"/v1/callbacks/"+pid, st.CallbackSecret.CallbackURL)
	notifytest.RequireProblem(t, notifytest.Dash(t, b.env.Owner, "POST", "/v1/providers/"+pid+"/callback-secret/finalize", nil), http.StatusConflict, "SVC-40900")

	first := b.rotate(t, pid)
	require.True(t, first.CallbackSecret.Configured)
	require.False(t, first.CallbackSecret.RotationPending)
	require.Equal(t, http.StatusOK, status(first.Secret, 1))

	second := b.rotate(t, pid)
	require.NotEqual(t, first.Secret, second.Secret)
	require.True(t, second.CallbackSecret.RotationPending)
	require.Equal(t, http.StatusOK, status(first.Secret, 2), "old secret accepted during the overlap")
	require.Equal(t, http.StatusOK, status(second.Secret, 3))

	r = notifytest.Dash(t, b.env.Owner, "POST", "/v1/providers/"+pid+"/callback-secret/finalize", nil)
	require.Equal(t, http.StatusOK, r.Status, string(r.Body))
	require.NoError(t, r.Decode(&st))
	require.False(t, st.CallbackSecret.RotationPending)
	require.Equal(t, http.StatusNotFound, status(first.Secret, 4), "old secret refused after finalize")
	require.Equal(t, http.StatusOK, status(second.Secret, 5))
	notifytest.RequireProblem(t, notifytest.Dash(t, b.env.Owner, "POST", "/v1/providers/"+pid+"/callback-secret/finalize", nil), http.StatusConflict, "SVC-40900")

	rot := b.auditActions(t, "maily.callback_secret.rotate")
	require.Len(t, rot, 2)
	require.Equal(t, pid, rot[0]["targetId"])
	require.NotContains(t, string(mustJSON(t, rot)), second.Secret, "the secret is never audited")
	fin := b.auditActions(t, "maily.callback_secret.finalize")
	require.Len(t, fin, 1)
	require.Equal(t, pid, fin[0]["targetId"])

	// Roles, kinds and workspaces.
	viewer := b.env.Member(t, "viewer")
	operator := b.env.Member(t, "operator")
	notifytest.RequireProblem(t, notifytest.Dash(t, viewer, "POST", "/v1/providers/"+pid+"/callback-secret/rotate", nil), http.StatusForbidden, "SVC-40300")
	r = notifytest.Dash(t, viewer, "GET", "/v1/providers/"+pid+"/callback-secret", nil)
	require.Equal(t, http.StatusOK, r.Status)
	require.NotContains(t, string(r.Body), second.Secret)
	r = notifytest.Dash(t, operator, "POST", "/v1/providers/"+pid+"/callback-secret/rotate", nil)
	require.Equal(t, http.StatusOK, r.Status, string(r.Body))
	r = notifytest.Dash(t, b.env.Owner, "POST", "/v1/providers", map[string]any{"providerKind": "vendora_sms", "displayName": "sms",
		"configJson": map[string]string{"vendora_user_id": "u"}})
	require.Equal(t, http.StatusCreated, r.Status)
	var sms struct {
		Provider struct {
			ID string `json:"id"`
		} `json:"provider"`
	}
	require.NoError(t, r.Decode(&sms))
	notifytest.RequireProblem(t, notifytest.Dash(t, b.env.Owner, "POST", "/v1/providers/"+sms.Provider.ID+"/callback-secret/rotate", nil), http.StatusBadRequest, "SVC-40000")
	other, _ := b.env.NewWorkspace(t, "Other", "other@example.com")
	notifytest.RequireProblem(t, notifytest.Dash(t, other, "POST", "/v1/providers/"+pid+"/callback-secret/rotate", nil), http.StatusNotFound, "SVC-40400")
	notifytest.RequireProblem(t, notifytest.Dash(t, b.env.Owner, "POST", "/v1/providers/"+pid+"/callback-secret/rotate", map[string]any{"x": 1}), http.StatusBadRequest, "SVC-40000")
}

// SES mailbox-simulator addresses trigger the simulator's automatic
// callbacks, like the real mailbox simulator.
func TestMailboxSimulatorAddresses(t *testing.T) {
	t.Parallel()
	b := setup(t)
	pid := b.provider(t, "maily_email")
	sec := b.rotate(t, pid)
	body, _ := json.Marshal(simulator.AutoCallback{Kind: "maily_email", URL: b.callbackURL(pid, sec.Secret), SignatureVersion: "2"})
	req, err := http.NewRequest("PUT", b.certBase+"/_sim/callbacks/auto", bytes.NewReader(body))
	require.NoError(t, err)
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)

	notifytest.Wait(t, b.key, b.send(t, simulator.SESBounceAddress))
	notifytest.Wait(t, b.key, b.send(t, simulator.SESComplaintAddress))
	notifytest.Wait(t, b.key, b.send(t, "someone@example.com"))
	deadline := time.Now().Add(10 * time.Second)
	for b.reasonOf(t, simulator.SESBounceAddress) == "" || b.reasonOf(t, simulator.SESComplaintAddress) == "" {
		require.True(t, time.Now().Before(deadline), "automatic callbacks did not arrive")
		time.Sleep(50 * time.Millisecond)
	}
	require.Equal(t, "hard_bounce", b.reasonOf(t, simulator.SESBounceAddress))
	require.Equal(t, "complaint", b.reasonOf(t, simulator.SESComplaintAddress))
	require.Equal(t, "", b.reasonOf(t, "someone@example.com"))
}

func mustJSON(t *testing.T, v any) []byte {
	b, err := json.Marshal(v)
	require.NoError(t, err)
	return b
}

// TestSvixSignatureOneSpelling is issue 29 finding 10: a Resend callback's
// Svix signature is compared as the text Svix sends; another spelling of
// the same bytes (base64 with an unused bit set) is refused and suppresses
// nobody, the genuine one is taken.
func TestSvixSignatureOneSpelling(t *testing.T) {
	t.Parallel()
	b := setup(t)
	resend := b.provider(t, "mailx_email")
	sec := b.rotate(t, resend)
	body := []byte(`{"type":"email.bounced","created_at":"` + time.Now().UTC().Format(time.RFC3339Nano) + `","data":{"email_id":"m",` +
		`"to":["spelling@example.com"],"bounce":{"message":"no such user","subType":"General","type":"Permanent"}}}`)
	key, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(resendSecret, "whsec_"))
	require.NoError(t, err)
	id, ts := "msg_spelling", strconv.FormatInt(time.Now().Unix(), 10)
	mac := hmac.New(sha256.New, key)
	mac.Write([]byte(id + "." + ts + "."))
	mac.Write(body)
	sig := base64.StdEncoding.EncodeToString(mac.Sum(nil))

	post := func(sig string) int {
		req, err := http.NewRequest("POST", b.callbackURL(resend, sec.Secret), bytes.NewReader(body))
		require.NoError(t, err)
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("svix-id", id)
		req.Header.Set("svix-timestamp", ts)
		req.Header.Set("svix-signature", "v1,"+sig)
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		_ = resp.Body.Close()
		return resp.StatusCode
	}
	require.Equal(t, http.StatusUnauthorized, post(notifytest.OtherSpelling(t, sig)))
	require.Equal(t, "", b.reasonOf(t, "spelling@example.com"))
	require.Equal(t, http.StatusOK, post(sig))
	require.Equal(t, "hard_bounce", b.reasonOf(t, "spelling@example.com"))
}
