package solapi

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/notifyd/notifyd/internal/notify"
	"github.com/notifyd/notifyd/internal/provider"
	"github.com/notifyd/notifyd/internal/provider/providertest"
)

func TestKinds(t *testing.T) {
	t.Parallel()
	req, opt := []string{"vendorb_api_key", "vendorb_api_secret", "vendorb_sender"}, []string{"base_url"}
	batch := provider.BatchDefaults{CallsPerSecond: 20, Window: 500 * time.Millisecond, MaxSize: 100}
	providertest.RequireKind(t, SMSKind(), providertest.KindWant{ID: "vendorb_sms", Channel: notify.ChannelSMS, Required: req, Optional: opt, Batch: batch})
	providertest.RequireKind(t, MsgrKind(), providertest.KindWant{ID: "vendorb_msgr", Channel: notify.ChannelAlimTalk, Required: req, Optional: opt, Batch: batch})
}

func TestNewMissingKey(t *testing.T) {
	t.Parallel()
	full := testConfig("")
	for _, kind := range []provider.Kind{SMSKind(), MsgrKind()} {
		providertest.RequireEachRequired(t, kind, full)
	}
}

func TestBaseURL(t *testing.T) {
	t.Parallel()
	p, err := SMSKind().New(testConfig(""), provider.Deps{})
	require.NoError(t, err)
	require.Equal(t, "https://api.solapi.com", p.(*sender).root)

	p, err = MsgrKind().New(testConfig("http://127.0.0.1:9090/x"), provider.Deps{})
	require.NoError(t, err)
	require.Equal(t, "http://127.0.0.1:9090", p.(*sender).root)

	_, err = SMSKind().New(testConfig("api.solapi.com"), provider.Deps{})
	var perr *provider.Error
	require.True(t, errors.As(err, &perr))
	require.Equal(t, notify.FailureInvalidRequest, perr.Code)
}

func TestSignature(t *testing.T) {
	t.Parallel()
	f := newFake(t, func(t *testing.T, r captured) (int, string) {
		if r.Path == "/cash/v1/balance" {
			return http.StatusOK, `{"balance":1000,"point":0}`
		}
		return acceptAll(t, r)
	})
	// The real clock and salt: the fake checks the header as Solapi does.
	p, err := SMSKind().New(testConfig(f.URL), provider.Deps{HTTP: providertest.Client(2 * time.Second)})
	require.NoError(t, err)
	before := time.Now().Add(-time.Second)
	require.Nil(t, p.Send(context.Background(), []provider.Message{{ID: "n1", To: "01011112222", Text: "hi"}})[0].Err)
	_, err = p.(provider.QuotaChecker).Quota(context.Background())
	require.NoError(t, err)

	reqs := f.requests()
	require.Len(t, reqs, 2)
	salts := map[string]bool{}
	for _, r := range reqs {
		date, salt := verifyAuth(t, r.Authorization)
		require.WithinRange(t, date, before.Truncate(time.Second), time.Now().Add(time.Second))
		require.Len(t, salt, 32)
		salts[salt] = true
	}
	require.Len(t, salts, 2, "a new salt per request")
}

func TestSignatureFixed(t *testing.T) {
	t.Parallel()
	s := &sender{apiKey: testAPIKey, secret: testSecret, now: func() time.Time { return fixedNow }, salt: func() string { return fixedSalt }}
	// date is UTC although the clock is in KST; signature is
	// hex(HMAC-SHA256(secret, "2025-03-01T00:30:00Z" + salt)), computed
	// independently (Python hmac).
	require.Equal(t,
		"HMAC-SHA256 apiKey=NCSTESTKEY0001, date=2025-03-01T00:30:00Z, salt=0123456789abcdef0123456789abcdef, signature=09a0987394dfbb7a2b1a12b8817e493bc3ca255cc2867454d81caba6c2f79089",
		s.authorization())
}

func TestSendSingle(t *testing.T) {
	t.Parallel()
	f := newFake(t, acceptAll)
	s := newTestSender(t, SMSKind(), f)

	res := s.Send(context.Background(), []provider.Message{{ID: "req-1", To: "01011112222", Title: "공지", Text: "안녕하세요"}})
	require.Len(t, res, 1)
	require.Nil(t, res[0].Err)
	require.Equal(t, "M4Vreq-1", res[0].MessageID)
	requireNoSecrets(t, res[0].Exchange)
	require.IsType(t, sendRequest{}, res[0].Exchange.Request)

	reqs := f.requests()
	require.Len(t, reqs, 1)
	require.Equal(t, http.MethodPost, reqs[0].Method)
	require.Equal(t, "/messages/v4/send-many/detail", reqs[0].Path)
	verifyAuth(t, reqs[0].Authorization)
	m := reqs[0].messages(t)
	require.Equal(t, []wireMessage{{
		To: "01011112222", From: testSender, Text: "안녕하세요", Subject: "공지",
		CustomFields: map[string]string{"nid": "req-1"},
	}}, m)
	golden(t, "send_sms", reqs[0])
}

func TestSendBatchCorrelates(t *testing.T) {
	t.Parallel()
	f := newFake(t, func(t *testing.T, r captured) (int, string) {
		// Results in reverse order: only customFields tie them to messages.
		msgs := r.messages(t)
		list := ""
		for i := len(msgs) - 1; i >= 0; i-- {
			if list != "" {
				list += ","
			}
			nid := msgs[i].CustomFields["nid"]
			list += fmt.Sprintf(`{"messageId":"MID-%s","statusCode":"2000","statusMessage":"정상 접수","customFields":{"nid":"%s"}}`, nid, nid)
		}
		return http.StatusOK, `{"groupInfo":{},"failedMessageList":[],"messageList":[` + list + `]}`
	})
	s := newTestSender(t, SMSKind(), f)
	msgs := []provider.Message{{ID: "a", To: "01000000001", Text: "1"}, {ID: "b", To: "01000000002", Text: "2"}, {ID: "c", To: "01000000003", Text: "3"}}
	res := s.Send(context.Background(), msgs)
	for i, r := range res {
		require.Nil(t, r.Err)
		require.Equal(t, "MID-"+msgs[i].ID, r.MessageID)
	}
	reqs := f.requests()
	require.Len(t, reqs, 1, "one call for the whole batch")
	golden(t, "send_sms_batch", reqs[0])
}

func TestSendPartialFailure(t *testing.T) {
	t.Parallel()
	f := newFake(t, func(t *testing.T, r captured) (int, string) {
		return http.StatusOK, answer(t, r, func(m wireMessage) string {
			switch m.To {
			case "01000000002":
				return "1062"
			case "01000000003":
				return "1030"
			}
			return "2000"
		})
	})
	s := newTestSender(t, SMSKind(), f)
	res := s.Send(context.Background(), []provider.Message{
		{ID: "a", To: "01000000001", Text: "1"},
		{ID: "b", To: "01000000002", Text: "2"},
		{ID: "c", To: "01000000003", Text: "3"},
		{ID: "d", To: "01000000004", Text: "4"},
	})
	require.Nil(t, res[0].Err)
	require.Equal(t, "M4Va", res[0].MessageID)
	require.Equal(t, notify.FailureInvalidRequest, res[1].Err.Code)
	require.Contains(t, res[1].Err.Message, "1062")
	require.Empty(t, res[1].MessageID)
	require.Equal(t, notify.FailureCreditExhausted, res[2].Err.Code)
	require.True(t, res[2].Err.FallsBack(), "vendorB insufficient balance falls back")
	require.Nil(t, res[3].Err)
	for _, r := range res {
		require.NotNil(t, r.Exchange.Response, "every message shares the call's exchange")
	}
}

type codeCase struct {
	code string
	want notify.FailureCode // "" = accepted
}

// codeCases pins every row of the codes table.
var codeCases = []codeCase{
	{"2000", ""}, {"3000", ""}, {"4000", ""},
	{"1030", notify.FailureCreditExhausted}, {"2230", notify.FailureCreditExhausted},
	{"1062", notify.FailureInvalidRequest}, {"2062", notify.FailureInvalidRequest},
	{"1060", notify.FailureInvalidRequest}, {"1061", notify.FailureInvalidRequest},
	{"2060", notify.FailureInvalidRequest}, {"2061", notify.FailureInvalidRequest},
	{"1010", notify.FailureInvalidRequest}, {"1011", notify.FailureInvalidRequest},
	{"3010", notify.FailureInvalidRequest},
	{"1041", notify.FailureInvalidRequest}, {"1042", notify.FailureInvalidRequest},
	{"1043", notify.FailureInvalidRequest}, {"1044", notify.FailureInvalidRequest},
	{"1045", notify.FailureInvalidRequest}, {"1046", notify.FailureInvalidRequest},
	{"1047", notify.FailureInvalidRequest}, {"1048", notify.FailureInvalidRequest},
	{"1049", notify.FailureInvalidRequest}, {"1050", notify.FailureInvalidRequest},
	{"1051", notify.FailureInvalidRequest}, {"1052", notify.FailureInvalidRequest},
	{"3101", notify.FailureInvalidRequest}, {"3102", notify.FailureInvalidRequest},
	{"3103", notify.FailureInvalidRequest}, {"3104", notify.FailureInvalidRequest},
	{"3105", notify.FailureInvalidRequest}, {"3106", notify.FailureInvalidRequest},
	{"3107", notify.FailureInvalidRequest}, {"3108", notify.FailureInvalidRequest},
	{"InvalidAPIKey", notify.FailureUnauthorized},
	{"SignatureDoesNotMatch", notify.FailureUnauthorized},
	{"RequestTimeTooSkewed", notify.FailureUnauthorized},
	{"DuplicatedSignature", notify.FailureUnauthorized},
	{"ValidationError", notify.FailureInvalidRequest},
	// Not in the table.
	{"2999", notify.FailureUnknown},
	{"SomethingNew", notify.FailureUnknown},
}

func TestCodeCasesCoverTable(t *testing.T) {
	t.Parallel()
	providertest.RequireCovered(t, codes, codeCases, func(c codeCase) string { return c.code })
}

func TestCodes(t *testing.T) {
	t.Parallel()
	for _, tc := range codeCases {
		t.Run(tc.code, func(t *testing.T) {
			t.Parallel()
			var f *fakeSolapi
			if tc.code[0] >= '0' && tc.code[0] <= '9' {
				// Per-message status code.
				f = newFake(t, func(t *testing.T, r captured) (int, string) {
					return http.StatusOK, answer(t, r, func(wireMessage) string { return tc.code })
				})
			} else {
				// Request-level errorCode, on a status provider.Do leaves
				// to the adapter.
				f = newFake(t, func(*testing.T, captured) (int, string) {
					return http.StatusBadRequest, `{"errorCode":"` + tc.code + `","errorMessage":"msg"}`
				})
			}
			res := newTestSender(t, SMSKind(), f).Send(context.Background(), []provider.Message{{ID: "n", To: "01011112222", Text: "x"}})
			if tc.want == "" {
				require.Nil(t, res[0].Err)
				require.Equal(t, "M4Vn", res[0].MessageID)
				return
			}
			require.NotNil(t, res[0].Err)
			require.Equal(t, tc.want, res[0].Err.Code)
			require.False(t, res[0].Err.Final, "no Solapi code is final")
		})
	}
}

func TestHTTPFailures(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name   string
		status int
		body   string
		want   notify.FailureCode
	}{
		{"403 InvalidAPIKey", 403, `{"errorCode":"InvalidAPIKey","errorMessage":"invalid"}`, notify.FailureUnauthorized},
		{"403 SignatureDoesNotMatch", 403, `{"errorCode":"SignatureDoesNotMatch","errorMessage":"bad"}`, notify.FailureUnauthorized},
		{"401", 401, `{}`, notify.FailureUnauthorized},
		{"429", 429, `{}`, notify.FailureRateLimited},
		{"503 non-JSON", 503, `<html>down</html>`, notify.FailureTemporaryUnavailable},
		{"404 without errorCode", 404, `not found`, notify.FailureUnknown},
		{"200 not JSON", 200, `<html>`, notify.FailureUnknown},
		{"200 without results", 200, `{"groupInfo":{}}`, notify.FailureUnknown},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			f := newFake(t, func(*testing.T, captured) (int, string) { return tc.status, tc.body })
			res := newTestSender(t, SMSKind(), f).Send(context.Background(), []provider.Message{{ID: "a", To: "01011112222", Text: "x"}, {ID: "b", To: "01011113333", Text: "y"}})
			for _, r := range res {
				providertest.RequireFailure(t, r, tc.want, tc.status)
			}
		})
	}
}

func TestTimeout(t *testing.T) {
	t.Parallel()
	f := newFake(t, func(t *testing.T, r captured) (int, string) {
		time.Sleep(500 * time.Millisecond)
		return acceptAll(t, r)
	})
	p, err := SMSKind().New(testConfig(f.URL), provider.Deps{HTTP: providertest.Client(100 * time.Millisecond)})
	require.NoError(t, err)
	providertest.RequireTimeouts(t, p, provider.Message{ID: "a", To: "01011112222", Text: "x"})
}

func TestResultShapes(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name string
		body string
		want []string // message id, or "!" + failure code
	}{
		{
			"messageList keyed by message id",
			`{"messageList":{"M1":{"statusCode":"2000","customFields":{"nid":"a"}},"M2":{"statusCode":2000,"customFields":{"nid":"b"}}}}`,
			[]string{"M1", "M2"},
		},
		{
			"failed entry without customFields matched by number",
			`{"messageList":[{"messageId":"M1","statusCode":"2000","customFields":{"nid":"a"}}],"failedMessageList":[{"to":"010-0000-0002","messageId":"M2","statusCode":"1060","statusMessage":"blocked"}]}`,
			[]string{"M1", "!invalid_request"},
		},
		{
			"failed list wins over messageList",
			`{"messageList":[{"messageId":"M1","statusCode":"2000","customFields":{"nid":"a"}},{"messageId":"M2","statusCode":"2000","customFields":{"nid":"b"}}],"failedMessageList":[{"messageId":"M2","statusCode":"2000","customFields":{"nid":"b"}}]}`,
			[]string{"M1", "!unknown"},
		},
		{
			"message missing from the answer",
			`{"messageList":[{"messageId":"M1","statusCode":"2000","customFields":{"nid":"a"}}],"failedMessageList":[]}`,
			[]string{"M1", "!unknown"},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			f := newFake(t, func(*testing.T, captured) (int, string) { return http.StatusOK, tc.body })
			res := newTestSender(t, SMSKind(), f).Send(context.Background(), []provider.Message{{ID: "a", To: "01000000001", Text: "x"}, {ID: "b", To: "01000000002", Text: "y"}})
			for i, want := range tc.want {
				if want[0] == '!' {
					require.NotNil(t, res[i].Err, i)
					require.Equal(t, notify.FailureCode(want[1:]), res[i].Err.Code, i)
					continue
				}
				require.Nil(t, res[i].Err, i)
				require.Equal(t, want, res[i].MessageID)
			}
		})
	}
}

func TestDuplicateIDsStayDistinct(t *testing.T) {
	t.Parallel()
	f := newFake(t, func(t *testing.T, r captured) (int, string) {
		return http.StatusOK, answer(t, r, func(m wireMessage) string {
			if m.Text == "bad" {
				return "1011"
			}
			return "2000"
		})
	})
	s := newTestSender(t, SMSKind(), f)
	res := s.Send(context.Background(), []provider.Message{
		{ID: "same", To: "01000000001", Text: "ok"},
		{ID: "same", To: "01000000001", Text: "bad"},
		{ID: "", To: "01000000002", Text: "ok"},
	})
	require.Nil(t, res[0].Err)
	require.Equal(t, notify.FailureInvalidRequest, res[1].Err.Code)
	require.Nil(t, res[2].Err)
	var nids []string
	for _, m := range f.requests()[0].messages(t) {
		nids = append(nids, m.CustomFields["nid"])
	}
	require.Equal(t, []string{"same", "same#1", "#2"}, nids)
}

func TestSendSkipsEmpty(t *testing.T) {
	t.Parallel()
	f := newFake(t, acceptAll)
	res := newTestSender(t, SMSKind(), f).Send(context.Background(), []provider.Message{{ID: "a", To: "", Text: "x"}, {ID: "b", To: "010", Text: ""}})
	for _, r := range res {
		require.Equal(t, notify.FailureInvalidRequest, r.Err.Code)
	}
	require.Empty(t, f.requests())
}

func TestQuota(t *testing.T) {
	t.Parallel()
	f := newFake(t, func(*testing.T, captured) (int, string) {
		return http.StatusOK, `{"balance":12345.5,"point":100,"accountId":"ACC","autoRecharge":0,"rechargeTo":0,"minimumCash":0}`
	})
	s := newTestSender(t, MsgrKind(), f)
	q, err := s.Quota(context.Background())
	require.NoError(t, err)
	require.Equal(t, provider.Quota{Period: "current", RemainingCredit: 12345.5, Currency: "KRW"}, q)
	reqs := f.requests()
	require.Len(t, reqs, 1)
	require.Equal(t, http.MethodGet, reqs[0].Method)
	require.Empty(t, reqs[0].Body)
	verifyAuth(t, reqs[0].Authorization)
	golden(t, "balance", reqs[0])
}

func TestQuotaFailures(t *testing.T) {
	t.Parallel()
	cases := []struct {
		status int
		body   string
		want   notify.FailureCode
	}{
		{403, `{"errorCode":"InvalidAPIKey","errorMessage":"x"}`, notify.FailureUnauthorized},
		{200, `{"point":1}`, notify.FailureUnknown},
		{200, `nope`, notify.FailureUnknown},
		{500, `x`, notify.FailureTemporaryUnavailable},
	}
	for _, tc := range cases {
		t.Run(fmt.Sprint(tc.status, tc.body), func(t *testing.T) {
			t.Parallel()
			f := newFake(t, func(*testing.T, captured) (int, string) { return tc.status, tc.body })
			_, err := newTestSender(t, SMSKind(), f).Quota(context.Background())
			var perr *provider.Error
			require.True(t, errors.As(err, &perr))
			require.Equal(t, tc.want, perr.Code)
		})
	}
}
