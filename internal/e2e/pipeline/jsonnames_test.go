package pipeline_test

import (
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/notifyd/notifyd/internal/notifytest"
)

// TestJSONNamesExact (issue 17, finding 10): field names match in exact
// case and a name given twice is refused, so a body means what it reads.
func TestJSONNamesExact(t *testing.T) {
	t.Parallel()
	b := setup(t)
	for body, detail := range map[string]string{
		`{"channel":"sms","CHANNEL":"email","recipient":{"address":"01012345678"},"content":{"text":"x"}}`:            "CHANNEL is not an allowed field",
		`{"Channel":"sms","recipient":{"address":"01012345678"},"content":{"text":"x"}}`:                              "Channel is not an allowed field",
		`{"channel":"sms","recipient":{"Address":"01012345678"},"content":{"text":"x"}}`:                              "Address is not an allowed field",
		`{"channel":"email","channel":"sms","recipient":{"address":"01012345678"},"content":{"text":"x"}}`:            "Request body is not valid JSON: channel is given more than once",
		`{"channel":"sms","recipient":{"address":"01012345678","address":"x"},"content":{"text":"x"}}`:                "Request body is not valid JSON: address is given more than once",
		`{"channel":"sms","recipient":{"address":"01012345678"},"content":{"text":"x"},"metadata":{"a":"1","a":"2"}}`: "Request body is not valid JSON: a is given more than once",
	} {
		p := notifytest.RequireProblem(t, notifytest.Signed(t, b.key, "POST", "/v1/notifications", []byte(body)), http.StatusBadRequest, "SVC-40000")
		require.Equal(t, detail, p.Detail, body)
		// In a bulk call a duplicate is found reading the whole body.
		p = notifytest.RequireProblem(t, notifytest.Signed(t, b.key, "POST", "/v1/notifications/bulk", []byte(`{"items":[`+body+`]}`)), http.StatusBadRequest, "SVC-40000")
		require.Contains(t, []string{"items[0]: " + detail, detail}, p.Detail, body)
	}
	p := notifytest.RequireProblem(t, notifytest.Signed(t, b.key, "POST", "/v1/notifications/bulk", []byte(`{"items":[],"ITEMS":[]}`)), http.StatusBadRequest, "SVC-40000")
	require.Equal(t, "ITEMS is not an allowed field", p.Detail)
	p = notifytest.RequireProblem(t, notifytest.Dash(t, b.env.Owner, "PUT", "/v1/limits/dispatch", []byte(`{"scope":"workspace","ratePerSecond":5,"ratePerSecond":1000000}`)),
		http.StatusBadRequest, "SVC-40000")
	require.Equal(t, "Request body is not valid JSON: ratePerSecond is given more than once", p.Detail)
	require.Zero(t, b.metrics(t, "").TotalRequests, "nothing was accepted")
}
