package simulator

import (
	"bytes"
	"encoding/json"
	"encoding/pem"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestCallbackControl(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	var got []byte
	rcv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got, _ = io.ReadAll(r.Body)
		w.WriteHeader(http.StatusAccepted)
		_, _ = w.Write([]byte(`thanks`))
	}))
	defer rcv.Close()
	post := func(body string) (int, map[string]any) {
		resp, err := http.Post(e.srv.URL+"/_sim/callbacks", "application/json", strings.NewReader(body))
		require.NoError(t, err)
		defer resp.Body.Close()
		var out map[string]any
		require.NoError(t, json.NewDecoder(resp.Body).Decode(&out))
		return resp.StatusCode, out
	}
	for _, bad := range []string{`{"kind":"vendora_sms","url":"` + rcv.URL + `","type":"bounce","to":"a@b.c","messageId":"m"}`,
		`{"kind":"mailz_email","url":"ftp://x","type":"bounce","to":"a@b.c","messageId":"m"}`,
		`{"kind":"mailz_email","url":"` + rcv.URL + `","type":"opened","to":"a@b.c","messageId":"m"}`,
		`{"kind":"mailz_email","url":"` + rcv.URL + `","type":"subscription"}`,
		`{"kind":"mailz_email","url":"` + rcv.URL + `","type":"bounce","bounceType":"soft","to":"a@b.c","messageId":"m"}`,
		`{"kind":"mailz_email","url":"` + rcv.URL + `","type":"bounce","to":"a@b.c"}`,
		`{"kind":"mailx_email","url":"` + rcv.URL + `","type":"bounce","to":"a@b.c","messageId":"m"}`,
		`{"kind":"maily_email","url":"` + rcv.URL + `","type":"bounce","to":"a@b.c","messageId":"m","signatureVersion":"3"}`,
		`{"kind":"mailz_email","typo":1}`} {
		st, out := post(bad)
		require.Equal(t, http.StatusBadRequest, st, bad)
		require.NotEmpty(t, out["error"])
	}
	st, out := post(`{"kind":"mailz_email","url":"` + rcv.URL + `","type":"complaint","to":"a@b.c","messageId":"pm-9"}`)
	require.Equal(t, http.StatusOK, st)
	require.Equal(t, float64(http.StatusAccepted), out["status"])
	require.Equal(t, "thanks", out["body"])
	require.Equal(t, string(got), out["payload"])
	var pm map[string]any
	require.NoError(t, json.Unmarshal(got, &pm))
	require.Equal(t, "SpamComplaint", pm["RecordType"])
	require.Equal(t, "pm-9", pm["MessageID"])

	// The certificate is a PEM certificate; an unreachable target is 502.
	resp, err := http.Get(e.srv.URL + SNSCertificatePath)
	require.NoError(t, err)
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	block, _ := pem.Decode(b)
	require.NotNil(t, block)
	require.Equal(t, "CERTIFICATE", block.Type)
	dead := httptest.NewServer(http.NotFoundHandler())
	dead.Close()
	st, _ = post(`{"kind":"mailz_email","url":"` + dead.URL + `","type":"bounce","to":"a@b.c","messageId":"m"}`)
	require.Equal(t, http.StatusBadGateway, st)

	// SubscribeURL parameters are checked; a good one is recorded.
	resp, err = http.Get(e.srv.URL + "/_sim/sns/confirm?Action=ConfirmSubscription")
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusBadRequest, resp.StatusCode)
	require.Empty(t, e.sim.Subscriptions())

	// Auto callbacks need a known kind and a URL.
	req, _ := http.NewRequest("PUT", e.srv.URL+"/_sim/callbacks/auto", bytes.NewReader([]byte(`{"kind":"chata_bot","url":"x"}`)))
	resp, err = http.DefaultClient.Do(req)
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusBadRequest, resp.StatusCode)
}
