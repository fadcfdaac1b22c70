package ses_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net/http"
	"regexp"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"
	"github.com/stretchr/testify/require"

	"github.com/notifyd/notifyd/internal/notify"
	"github.com/notifyd/notifyd/internal/provider"
	"github.com/notifyd/notifyd/internal/provider/providertest"
	"github.com/notifyd/notifyd/internal/provider/ses"
)

const (
	accessKeyID = "AKIAEXAMPLEKEYID"
	secretKey   = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"
	region      = "ap-northeast-2"
)

var fixedNow = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

// reply is one canned answer of the fake SES.
type reply struct {
	status    int
	errorType string // X-Amzn-ErrorType header, when set
	body      string
}

// serve starts a fake SES answering the n-th call with replies[n], and
// every call after the last with the last.
func serve(t *testing.T, cfg provider.Config, replies ...reply) (*providertest.Fake, provider.Provider) {
	t.Helper()
	f := providertest.NewFake(t, func(n int, _ providertest.Request) providertest.Reply {
		rp := replies[min(n, len(replies)-1)]
		h := map[string]string{"Content-Type": "application/json"}
		if rp.errorType != "" {
			h["X-Amzn-ErrorType"] = rp.errorType
		}
		return providertest.Reply{Status: rp.status, Header: h, Body: rp.body}
	})
	return f, newProvider(t, cfg, f.URL, 2*time.Second)
}

func newProvider(t *testing.T, cfg provider.Config, baseURL string, timeout time.Duration) provider.Provider {
	t.Helper()
	full := provider.Config{
		"maily_access_key_id":     accessKeyID,
		"maily_secret_access_key": secretKey,
		"maily_region":            region,
		"maily_from_email":        "noreply@acme.test",
		"base_url":                baseURL,
	}
	for k, v := range cfg {
		full[k] = v
	}
	p, err := ses.Kind().New(full, provider.Deps{
		HTTP: providertest.Client(timeout),
		Now:  func() time.Time { return fixedNow },
	})
	require.NoError(t, err)
	return p
}

var msg = providertest.MailMessage

func requireNoSecret(t *testing.T, ex provider.Exchange) {
	t.Helper()
	providertest.RequireHidden(t, ex, secretKey, "Signature=", accessKeyID)
}

func TestKind(t *testing.T) {
	t.Parallel()
	providertest.RequireKind(t, ses.Kind(), providertest.KindWant{
		ID: "maily_email", Channel: notify.ChannelEmail,
		Required: []string{"maily_access_key_id", "maily_secret_access_key", "maily_region", "maily_from_email"},
		Optional: []string{"maily_from_name", "maily_configuration_set"},
		Batch:    provider.BatchDefaults{MaxSize: 1}, Identities: true,
	})
}

func TestNewMissingKey(t *testing.T) {
	t.Parallel()
	full := provider.Config{
		"maily_access_key_id": "a", "maily_secret_access_key": "s",
		"maily_region": "us-east-1", "maily_from_email": "a@b.test",
	}
	providertest.RequireEachRequired(t, ses.Kind(), full)
	full["maily_region"] = "evil.com/x"
	providertest.RequireInvalid(t, ses.Kind(), full)
}

var authRE = regexp.MustCompile(`^AWS4-HMAC-SHA256 Credential=` + accessKeyID + `/20260102/` + region +
	`/ses/aws4_request, SignedHeaders=content-length;content-type;host;x-amz-date, Signature=[0-9a-f]{64}$`)

func TestSendSigned(t *testing.T) {
	t.Parallel()
	f, p := serve(t, provider.Config{
		"maily_from_name":         "홍길동 상점",
		"maily_configuration_set": "transactional",
	}, reply{status: 200, body: `{"MessageId":"010001948a3f-0000"}`})
	m := msg("user@example.test")
	m.Headers = map[string]string{
		"List-Unsubscribe-Post": "List-Unsubscribe=One-Click",
		"List-Unsubscribe":      "<https://notifyd.test/u/abc>",
	}
	res := p.Send(context.Background(), []provider.Message{m})
	require.Len(t, res, 1)
	require.Nil(t, res[0].Err)
	require.Equal(t, "010001948a3f-0000", res[0].MessageID)
	requireNoSecret(t, res[0].Exchange)

	reqs := f.Received()
	require.Len(t, reqs, 1)
	got := reqs[0]
	require.Equal(t, http.MethodPost, got.Method)
	require.Equal(t, "/v2/email/outbound-emails", got.Path)
	require.Equal(t, "application/json", got.Header.Get("Content-Type"))
	require.Equal(t, "20260102T030405Z", got.Header.Get("X-Amz-Date"))
	require.Regexp(t, authRE, got.Header.Get("Authorization"))
	providertest.Golden(t, "send", got.Body)

	// Recompute the signature over what the server received, with the
	// same signer: a mismatch means the request sent differs from the one
	// signed (a header added or changed after signing).
	amzDate, err := time.Parse("20060102T150405Z", got.Header.Get("X-Amz-Date"))
	require.NoError(t, err)
	check, err := http.NewRequest(got.Method, "http://"+got.Host+got.Path, bytes.NewReader(got.Body))
	require.NoError(t, err)
	check.Header.Set("Content-Type", got.Header.Get("Content-Type"))
	sum := sha256.Sum256(got.Body)
	err = v4.NewSigner().SignHTTP(context.Background(),
		aws.Credentials{AccessKeyID: accessKeyID, SecretAccessKey: secretKey},
		check, hex.EncodeToString(sum[:]), "ses", region, amzDate)
	require.NoError(t, err)
	require.Equal(t, check.Header.Get("Authorization"), got.Header.Get("Authorization"))
}

func TestSendMinimalPayload(t *testing.T) {
	t.Parallel()
	f, p := serve(t, nil, reply{status: 200, body: `{"MessageId":"m-1"}`})
	m := msg("user@example.test")
	m.HTML = ""
	res := p.Send(context.Background(), []provider.Message{m})
	require.Nil(t, res[0].Err)
	providertest.Golden(t, "send_minimal", f.Received()[0].Body)
}

func TestSendSeveralOneCallEach(t *testing.T) {
	t.Parallel()
	f, p := serve(t, nil,
		reply{status: 200, body: `{"MessageId":"m-1"}`},
		reply{status: 400, errorType: "MessageRejected:http://internal.amazon.com/coral/com.amazonaws.sesv2/", body: `{"message":"Email address is not verified."}`},
		reply{status: 200, body: `{"MessageId":"m-3"}`},
	)
	res := p.Send(context.Background(), []provider.Message{msg("a@x.test"), msg("b@x.test"), msg("c@x.test")})
	require.Len(t, res, 3)
	require.Equal(t, "m-1", res[0].MessageID)
	require.Nil(t, res[0].Err)
	require.NotNil(t, res[1].Err)
	require.Equal(t, notify.FailureInvalidRequest, res[1].Err.Code)
	require.Contains(t, res[1].Err.Message, "MessageRejected")
	require.Equal(t, "m-3", res[2].MessageID)
	reqs := f.Received()
	require.Len(t, reqs, 3)
	for i, to := range []string{"a@x.test", "b@x.test", "c@x.test"} {
		require.Contains(t, string(reqs[i].Body), `"ToAddresses":["`+to+`"]`)
	}
}

// TestErrorMapping pins every row of the mapping table, with the type in
// the X-Amzn-ErrorType header and, alternatively, in the body.
func TestErrorMapping(t *testing.T) {
	t.Parallel()
	cases := []struct {
		status  int
		errType string
		message string
		want    notify.FailureCode
	}{
		{400, "ThrottlingException", "Daily message quota exceeded.", notify.FailureCreditExhausted},
		{400, "ThrottlingException", "Maximum sending rate exceeded.", notify.FailureRateLimited},
		{429, "TooManyRequestsException", "Too many requests", notify.FailureRateLimited},
		{400, "LimitExceededException", "limit", notify.FailureCreditExhausted},
		{400, "SendingPausedException", "paused", notify.FailureCreditExhausted},
		{400, "AccountSuspendedException", "suspended", notify.FailureCreditExhausted},
		{403, "UnrecognizedClientException", "bad key", notify.FailureUnauthorized},
		{403, "InvalidSignatureException", "bad signature", notify.FailureUnauthorized},
		{403, "AccessDeniedException", "denied", notify.FailureUnauthorized},
		{400, "ExpiredTokenException", "expired", notify.FailureUnauthorized},
		{403, "IncompleteSignatureException", "incomplete", notify.FailureUnauthorized},
		{403, "MissingAuthenticationTokenException", "missing", notify.FailureUnauthorized},
		{400, "MessageRejected", "not verified", notify.FailureInvalidRequest},
		{400, "BadRequestException", "malformed", notify.FailureInvalidRequest},
		{400, "MailFromDomainNotVerifiedException", "mail from", notify.FailureInvalidRequest},
		{404, "NotFoundException", "no such configuration set", notify.FailureInvalidRequest},
		// Types not in the table: SPEC's status rule, then unknown.
		{500, "InternalFailure", "oops", notify.FailureTemporaryUnavailable},
		{503, "ServiceUnavailable", "oops", notify.FailureTemporaryUnavailable},
		{400, "SomethingNewException", "new", notify.FailureUnknown},
	}
	for _, c := range cases {
		for _, where := range []string{"header", "body__type", "bodycode"} {
			t.Run(c.errType+"/"+where, func(t *testing.T) {
				t.Parallel()
				rp := reply{status: c.status}
				switch where {
				case "header":
					rp.errorType = c.errType + ":http://internal.amazon.com/coral/com.amazonaws.sesv2/"
					rp.body = fmt.Sprintf(`{"message":%q}`, c.message)
				case "body__type":
					rp.body = fmt.Sprintf(`{"__type":"com.amazonaws.sesv2#%s","message":%q}`, c.errType, c.message)
				default:
					rp.body = fmt.Sprintf(`{"code":%q,"Message":%q}`, c.errType, c.message)
				}
				_, p := serve(t, nil, rp)
				res := p.Send(context.Background(), []provider.Message{msg("a@x.test")})
				providertest.RequireFailure(t, res[0], c.want, c.status)
			})
		}
	}
}

func TestTimeout(t *testing.T) {
	t.Parallel()
	p := newProvider(t, nil, providertest.Hang(t), 100*time.Millisecond)
	providertest.RequireTimeouts(t, p, msg("a@x.test"))
}
