package simulator

import (
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// The SES identity calls in the restJson wire format: auth checked like
// SendEmail, errors in X-Amzn-ErrorType, pending until the control API
// verifies.
func TestSESIdentityWire(t *testing.T) {
	e := newEnv(t)
	require.Equal(t, "MissingAuthenticationTokenException",
		e.do(http.MethodGet, "/v2/email/identities/example.com", nil, nil).header.Get("X-Amzn-ErrorType"))
	auth := sigv4(time.Now(), "us-east-1")
	r := e.do(http.MethodGet, "/v2/email/identities/example.com", auth, nil)
	require.Equal(t, http.StatusNotFound, r.status)
	require.Equal(t, "NotFoundException", r.header.Get("X-Amzn-ErrorType"))
	require.Contains(t, r.obj(t)["message"], "does not exist")

	r = e.postJSON("/v2/email/identities", auth, map[string]any{"EmailIdentity": "example.com"})
	require.Equal(t, http.StatusOK, r.status, string(r.body))
	dkim := r.obj(t)["DkimAttributes"].(map[string]any)
	require.Len(t, dkim["Tokens"], 3)
	require.Equal(t, "PENDING", dkim["Status"])
	r = e.postJSON("/v2/email/identities", auth, map[string]any{"EmailIdentity": "example.com"})
	require.Equal(t, http.StatusBadRequest, r.status)
	require.Equal(t, "AlreadyExistsException", r.header.Get("X-Amzn-ErrorType"))

	r = e.do(http.MethodPut, "/v2/email/identities/example.com/mail-from", auth, []byte(`{"MailFromDomain":"mail.other.com"}`))
	require.Equal(t, "BadRequestException", r.header.Get("X-Amzn-ErrorType"), "MAIL FROM outside the domain")
	r = e.do(http.MethodPut, "/v2/email/identities/example.com/mail-from", auth, []byte(`{"MailFromDomain":"mail.example.com","BehaviorOnMxFailure":"USE_DEFAULT_VALUE"}`))
	require.Equal(t, http.StatusOK, r.status, string(r.body))

	got := e.do(http.MethodGet, "/v2/email/identities/example.com", auth, nil).obj(t)
	require.Equal(t, "DOMAIN", got["IdentityType"])
	require.Equal(t, "PENDING", got["VerificationStatus"])
	require.Equal(t, false, got["VerifiedForSendingStatus"])
	require.Equal(t, "mail.example.com", got["MailFromAttributes"].(map[string]any)["MailFromDomain"])

	require.Equal(t, http.StatusNotFound, e.postJSON("/_sim/identities/verify", nil, map[string]any{"kind": "maily_email", "name": "nope.com"}).status)
	require.Equal(t, http.StatusOK, e.postJSON("/_sim/identities/verify", nil, map[string]any{"kind": "maily_email", "name": "example.com"}).status)
	got = e.do(http.MethodGet, "/v2/email/identities/example.com", auth, nil).obj(t)
	require.Equal(t, "SUCCESS", got["VerificationStatus"])
	require.Equal(t, "SUCCESS", got["MailFromAttributes"].(map[string]any)["MailFromDomainStatus"])
	require.Equal(t, http.StatusMethodNotAllowed, e.do(http.MethodDelete, "/v2/email/identities/example.com", auth, nil).status)

	e.sim.Reset()
	require.Empty(t, e.sim.Identities(""))
}

// Resend and Postmark share /domains; each answers in its own format and
// needs its own credential.
func TestDomainsWire(t *testing.T) {
	e := newEnv(t)
	r := e.postJSON("/domains", nil, map[string]any{"name": "example.com"})
	require.Equal(t, http.StatusUnauthorized, r.status)
	require.Equal(t, "missing_api_key", r.obj(t)["name"])

	bearer := map[string]string{"Authorization": "Bearer re_test"}
	r = e.postJSON("/domains", bearer, map[string]any{"name": "example.com"})
	require.Equal(t, http.StatusOK, r.status, string(r.body))
	d := r.obj(t)
	require.Equal(t, "not_started", d["status"])
	require.Len(t, d["records"], 3)
	id := d["id"].(string)
	require.Equal(t, http.StatusUnprocessableEntity, e.postJSON("/domains", bearer, map[string]any{"name": "example.com"}).status)
	require.Equal(t, http.StatusOK, e.postJSON("/domains/"+id+"/verify", bearer, nil).status)
	require.Equal(t, "pending", e.do(http.MethodGet, "/domains/"+id, bearer, nil).obj(t)["status"])
	require.Equal(t, http.StatusNotFound, e.do(http.MethodGet, "/domains/00000000-0000-0000-0000-000000000000", bearer, nil).status)

	server := map[string]string{"X-Postmark-Server-Token": "server"}
	r = e.postJSON("/domains", server, map[string]any{"Name": "example.com"})
	require.Equal(t, http.StatusUnauthorized, r.status, "the server token does not reach the account API")
	require.Equal(t, float64(10), r.obj(t)["ErrorCode"])
	account := map[string]string{"X-Postmark-Account-Token": "account"}
	r = e.postJSON("/domains", account, map[string]any{"Name": "example.com", "ReturnPathDomain": "pm-bounces.example.com"})
	require.Equal(t, http.StatusOK, r.status, string(r.body), "Postmark's account is not Resend's")
	pm := r.obj(t)
	require.Equal(t, false, pm["DKIMVerified"])
	require.NotEmpty(t, pm["DKIMPendingHost"])
	require.Equal(t, "pm.mtasv.net", pm["ReturnPathDomainCNAMEValue"])
	r = e.do(http.MethodGet, "/domains?count=10&offset=0", account, nil)
	require.Equal(t, float64(1), r.obj(t)["TotalCount"])
	require.Equal(t, float64(510), e.do(http.MethodGet, "/domains/1", account, nil).obj(t)["ErrorCode"])
	r = e.postJSON("/senders", account, map[string]any{"FromEmail": "news@example.com", "Name": "News"})
	require.Equal(t, http.StatusOK, r.status, string(r.body))
	require.Equal(t, false, r.obj(t)["Confirmed"])
	require.Equal(t, float64(504), e.postJSON("/senders", account, map[string]any{"FromEmail": "news@example.com"}).obj(t)["ErrorCode"])
	require.Len(t, e.sim.Identities("mailz_email"), 2)
	require.Len(t, e.sim.Identities("mailx_email"), 1)
}
