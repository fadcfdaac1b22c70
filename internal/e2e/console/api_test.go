package console_test

import (
	"encoding/json"
	"net/http"
	"net/url"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/notifyd/notifyd/internal/notify"
)

type requestPage struct {
	Requests []struct {
		RequestID        string  `json:"requestId"`
		Status           string  `json:"status"`
		RecipientAddress string  `json:"recipientAddress"`
		RecipientName    *string `json:"recipientName"`
	} `json:"requests"`
	Cursor  *string `json:"cursor"`
	HasNext bool    `json:"hasNext"`
}

func (f *fixture) list(t *testing.T, query string) requestPage {
	t.Helper()
	r, err := f.env.Owner.Dashboard(ctx, "GET", "/v1/requests?"+query, nil)
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, r.Status, string(r.Body))
	var p requestPage
	require.NoError(t, json.Unmarshal(r.Body, &p))
	return p
}

// TestRequestsAPI: GET /v1/requests filters and pages newest first, bad
// filters are 400 problems, GET /v1/requests/{id} carries the attempts'
// raw exchange, POST .../cancel cancels, GET /v1/overview counts.
func TestRequestsAPI(t *testing.T) {
	t.Parallel()
	f := setup(t)
	sent := []string{f.send(t, "010-0000-0001", "", "one", nil), f.send(t, "010-0000-0002", "", "two", nil), f.send(t, "010-0000-0003", "", "three", nil)}
	for _, id := range sent {
		f.waitStatus(t, id, notify.StatusSent)
	}
	at := time.Now().Add(time.Hour)
	later := f.send(t, "010-0000-0004", "Kim", "later", &at)

	p := f.list(t, "")
	require.Len(t, p.Requests, 4)
	require.Equal(t, later, p.Requests[0].RequestID, "newest first")
	require.False(t, p.HasNext)
	// Paging by 2 walks all four once, newest first.
	var seen []string
	q := "limit=2"
	for {
		p = f.list(t, q)
		for _, r := range p.Requests {
			seen = append(seen, r.RequestID)
		}
		if !p.HasNext {
			break
		}
		require.NotNil(t, p.Cursor)
		q = "limit=2&cursor=" + url.QueryEscape(*p.Cursor)
	}
	require.Equal(t, []string{later, sent[2], sent[1], sent[0]}, seen)

	require.Len(t, f.list(t, "status=sent").Requests, 3)
	require.Len(t, f.list(t, "status=queued").Requests, 1)
	require.Len(t, f.list(t, "channel=email").Requests, 0)
	p = f.list(t, "recipient="+url.QueryEscape("010-0000-0002"))
	require.Len(t, p.Requests, 1)
	require.Equal(t, sent[1], p.Requests[0].RequestID)
	require.Len(t, f.list(t, "requestId="+later).Requests, 1)
	require.Len(t, f.list(t, "from="+url.QueryEscape(time.Now().Add(time.Minute).Format(time.RFC3339))).Requests, 0)
	require.Len(t, f.list(t, "to="+url.QueryEscape(time.Now().Add(time.Minute).Format(time.RFC3339))).Requests, 4)

	for q, detail := range map[string]string{
		"status=bogus":   "status must be one of queued, processing, sent, failed, canceled",
		"channel=fax":    "channel is not a valid channel",
		"requestId=x":    "requestId must be a UUID",
		"from=yesterday": "from must be an ISO 8601 date-time",
		"limit=501":      "limit must be between 1 and 500",
		"cursor=%21":     "cursor is not valid",
		"from=2026-01-02T00:00:00Z&to=2026-01-01T00:00:00Z": "from must not be after to",
	} {
		r, err := f.env.Owner.Dashboard(ctx, "GET", "/v1/requests?"+q, nil)
		require.NoError(t, err)
		require.Equal(t, http.StatusBadRequest, r.Status, q)
		require.Equal(t, "application/problem+json", r.Header.Get("Content-Type"))
		require.Contains(t, string(r.Body), `"detail":"`+detail+`"`, q)
	}

	r, err := f.env.Owner.Dashboard(ctx, "GET", "/v1/requests/"+sent[0], nil)
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, r.Status)
	var d struct {
		Status   string           `json:"status"`
		Attempts []map[string]any `json:"attempts"`
	}
	require.NoError(t, json.Unmarshal(r.Body, &d))
	require.Equal(t, "sent", d.Status)
	require.Len(t, d.Attempts, 1)
	require.NotNil(t, d.Attempts[0]["providerCall"], "the raw exchange as recorded")
	require.NotNil(t, d.Attempts[0]["response"])

	// Another workspace sees none of it.
	other, _ := f.env.NewWorkspace(t, "Other", "other@example.com")
	r, err = other.Dashboard(ctx, "GET", "/v1/requests/"+sent[0], nil)
	require.NoError(t, err)
	require.Equal(t, http.StatusNotFound, r.Status)
	r, err = other.Dashboard(ctx, "GET", "/v1/requests", nil)
	require.NoError(t, err)
	require.JSONEq(t, `{"requests":[],"cursor":null,"hasNext":false}`, string(r.Body))

	r, err = f.env.Owner.Dashboard(ctx, "POST", "/v1/requests/"+later+"/cancel", nil)
	require.NoError(t, err)
	require.JSONEq(t, `{"requestId":"`+later+`","status":"canceled","canceled":true}`, string(r.Body))
	r, err = f.env.Owner.Dashboard(ctx, "POST", "/v1/requests/"+sent[0]+"/cancel", nil)
	require.NoError(t, err)
	require.JSONEq(t, `{"requestId":"`+sent[0]+`","status":"sent","canceled":false}`, string(r.Body))

	r, err = f.env.Owner.Dashboard(ctx, "GET", "/v1/overview", nil)
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, r.Status)
	var o struct {
		Last24h struct {
			ByChannelStatus map[string]map[string]int `json:"byChannelStatus"`
		} `json:"last24h"`
		QueueDepth      int   `json:"queueDepth"`
		DeadLetterCount int   `json:"deadLetterCount"`
		OpenBreakers    []any `json:"openBreakers"`
		LatestFailures  []any `json:"latestFailures"`
	}
	require.NoError(t, json.Unmarshal(r.Body, &o))
	require.Equal(t, map[string]int{"sent": 3, "canceled": 1}, o.Last24h.ByChannelStatus["sms"])
	require.Equal(t, 0, o.QueueDepth)
	require.Equal(t, 0, o.DeadLetterCount)
	require.Empty(t, o.OpenBreakers)
	require.Empty(t, o.LatestFailures)
}
