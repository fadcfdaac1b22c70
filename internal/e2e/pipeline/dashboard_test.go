package pipeline_test

import (
	"net/http"
	"net/url"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/notifyd/notifyd/internal/notify"
	"github.com/notifyd/notifyd/internal/notifytest"
)

// SPEC "Attempt history": GET /v1/attempts.
func TestAttemptHistory(t *testing.T) {
	t.Parallel()
	b := setup(t)
	p1, p2 := b.twoRoutes(t, "vendora_sms", "vendorb_sms")
	var ids []string
	for _, text := range []string{"one", "two", "three"} {
		ids = append(ids, notifytest.Wait(t, b.key, notifytest.Send(t, b.key, notifytest.SMS("01012345678", text)).RequestID).RequestID)
	}
	fault(t, b, map[string]any{"kind": "vendora_sms", "status": 500})
	body := notifytest.SMS("01099998888", "Hello {{name}}")
	body["content"] = map[string]any{"text": "Hello {{name}}", "title": "T {{name}}", "templateVariables": map[string]string{"name": "Kim"}}
	fo := notifytest.Wait(t, b.key, notifytest.Send(t, b.key, body).RequestID)
	require.Equal(t, "sent", fo.Status)
	ids = append(ids, fo.RequestID)

	all := b.attempts(t, "")
	require.Len(t, all.Attempts, 5)
	require.False(t, all.HasNext)
	require.Nil(t, all.Cursor)
	for i := 1; i < len(all.Attempts); i++ {
		a, _ := time.Parse(time.RFC3339Nano, all.Attempts[i-1].StartedAt)
		c, _ := time.Parse(time.RFC3339Nano, all.Attempts[i].StartedAt)
		require.False(t, a.Before(c), "newest first")
	}
	newest := all.Attempts[0]
	require.Equal(t, fo.RequestID, newest.NotificationRequestID)
	require.Equal(t, p2, newest.ProviderAccountID)
	require.Equal(t, "success", newest.Status)
	require.Equal(t, "sms", newest.Channel)
	require.NotEmpty(t, newest.NotificationJobID)
	require.Equal(t, "Hello Kim", *newest.Request.RenderedContent.Text)
	require.Equal(t, "T Kim", *newest.Request.RenderedContent.Title)
	require.Equal(t, "01099998888", newest.Request.Recipient.Address)
	require.Equal(t, map[string]string{"name": "Kim"}, newest.Request.Variables)
	require.NotNil(t, newest.Response)
	require.Equal(t, http.StatusOK, newest.Response.HTTPStatus)
	failed := all.Attempts[1]
	require.Equal(t, p1, failed.ProviderAccountID)
	require.Equal(t, "failure", failed.Status)
	require.Equal(t, "temporary_unavailable", *failed.FailureCode)
	require.Equal(t, http.StatusInternalServerError, failed.Response.HTTPStatus)
	require.Equal(t, ids[0], all.Attempts[4].NotificationRequestID)
	require.Equal(t, "one", *all.Attempts[4].Request.RenderedContent.Text)

	// requestId filter.
	one := b.attempts(t, "?requestId="+fo.RequestID)
	require.Len(t, one.Attempts, 2)
	require.Equal(t, all.Attempts[0].ID, one.Attempts[0].ID)
	require.Equal(t, all.Attempts[1].ID, one.Attempts[1].ID)
	require.Empty(t, b.attempts(t, "?requestId="+uuid.NewString()).Attempts)

	// Cursor paging: 2 + 2 + 1, the same order as one page.
	var paged []string
	q := "?limit=2"
	for pages := 0; ; pages++ {
		require.Less(t, pages, 3)
		pg := b.attempts(t, q)
		for _, a := range pg.Attempts {
			paged = append(paged, a.ID)
		}
		if !pg.HasNext {
			require.Len(t, pg.Attempts, 1)
			break
		}
		require.Len(t, pg.Attempts, 2)
		require.NotNil(t, pg.Cursor)
		q = "?limit=2&cursor=" + url.QueryEscape(*pg.Cursor)
	}
	var want []string
	for _, a := range all.Attempts {
		want = append(want, a.ID)
	}
	require.Equal(t, want, paged)
	// Exactly one full page: no next.
	five := b.attempts(t, "?limit=5")
	require.Len(t, five.Attempts, 5)
	require.False(t, five.HasNext)
	// Paging within a request.
	pg := b.attempts(t, "?limit=1&requestId="+fo.RequestID)
	require.True(t, pg.HasNext)
	pg = b.attempts(t, "?limit=1&requestId="+fo.RequestID+"&cursor="+url.QueryEscape(*pg.Cursor))
	require.Len(t, pg.Attempts, 1)
	require.Equal(t, all.Attempts[1].ID, pg.Attempts[0].ID)
	require.False(t, pg.HasNext)

	// Bounds.
	require.Len(t, b.attempts(t, "?limit=1").Attempts, 1)
	require.Len(t, b.attempts(t, "?limit=500").Attempts, 5)
	for _, q := range []string{"?limit=0", "?limit=501", "?limit=-1", "?limit=x", "?requestId=nope", "?cursor=***", "?cursor=MTIzOg", "?cursor=bm9wZQ"} {
		notifytest.RequireProblem(t, notifytest.Dash(t, b.env.Owner, "GET", "/v1/attempts"+q, nil), http.StatusBadRequest, "SVC-40000")
	}
}

// SPEC "Metrics".
func TestMetrics(t *testing.T) {
	t.Parallel()
	b := setup(t)
	p := b.env.SimProvider(t, "vendora_sms", "aligo", nil)
	notifytest.PutRoutes(t, b.env.Owner, notifytest.Route{Channel: "sms", ProviderAccountID: p, Priority: 1})
	start := time.Now().UTC().Add(-time.Second)

	empty := b.metrics(t, "")
	require.Zero(t, empty.TotalRequests)
	require.Equal(t, map[string]int{"queued": 0, "processing": 0, "sent": 0, "failed": 0, "canceled": 0}, empty.ByStatus)
	from, err := time.Parse(time.RFC3339Nano, empty.From)
	require.NoError(t, err)
	to, err := time.Parse(time.RFC3339Nano, empty.To)
	require.NoError(t, err)
	require.InDelta(t, 24*time.Hour, to.Sub(from), float64(time.Second))

	notifytest.Wait(t, b.key, notifytest.Send(t, b.key, notifytest.SMS("01012345678", "a")).RequestID)
	fault(t, b, map[string]any{"kind": "vendora_sms", "status": 500, "count": 1})
	notifytest.Wait(t, b.key, notifytest.Send(t, b.key, notifytest.SMS("01012345678", "b")).RequestID) // fails once, then sent
	notifytest.Wait(t, b.key, notifytest.Send(t, b.key, notifytest.Email("x@example.com", "s", "no route")).RequestID)
	later := notifytest.SMS("01012345678", "c")
	later["scheduledAt"] = time.Now().Add(time.Hour).UTC().Format(time.RFC3339)
	notifytest.Send(t, b.key, later)
	cancelMe := later
	cancelMe["idempotencyKey"] = "c2"
	b.cancel(t, notifytest.Send(t, b.key, cancelMe).RequestID)

	m := b.metrics(t, "")
	require.Equal(t, 5, m.TotalRequests)
	require.Equal(t, map[string]int{"queued": 1, "processing": 0, "sent": 2, "failed": 1, "canceled": 1}, m.ByStatus)
	require.Equal(t, map[string]int{"sms": 4, "email": 1}, m.ByChannel)
	require.Equal(t, 3, m.TotalAttempts)
	require.Equal(t, 2, m.SuccessAttempts)
	require.Equal(t, 1, m.FailedAttempts)

	// An explicit range around the activity, and one before it.
	q := "?from=" + url.QueryEscape(start.Format(time.RFC3339Nano)) + "&to=" + url.QueryEscape(time.Now().UTC().Add(time.Second).Format(time.RFC3339Nano))
	require.Equal(t, 5, b.metrics(t, q).TotalRequests)
	q = "?from=" + url.QueryEscape(start.Add(-time.Hour).Format(time.RFC3339)) + "&to=" + url.QueryEscape(start.Add(-time.Minute).Format(time.RFC3339))
	before := b.metrics(t, q)
	require.Zero(t, before.TotalRequests)
	require.Zero(t, before.TotalAttempts)
	require.Empty(t, before.ByChannel)

	for _, q := range []string{"?from=yesterday", "?to=2026-01-01", "?from=2026-01-02T00:00:00Z&to=2026-01-01T00:00:00Z"} {
		notifytest.RequireProblem(t, notifytest.Dash(t, b.env.Owner, "GET", "/v1/metrics"+q, nil), http.StatusBadRequest, "SVC-40000")
	}
}

type testSendOut struct {
	RequestID         string  `json:"requestId"`
	Status            string  `json:"status"`
	Mode              string  `json:"mode"`
	Channel           string  `json:"channel"`
	ProviderMessageID *string `json:"providerMessageId"`
	AcceptedAt        string  `json:"acceptedAt"`
}

// SPEC "Providers": POST /v1/providers/:id/test-send.
func TestProviderTestSend(t *testing.T) {
	t.Parallel()
	b := setup(t)
	p := b.env.SimProvider(t, "vendora_sms", "aligo", nil)
	ts := func(id string, body map[string]any) (*testSendOut, int, string) {
		r := notifytest.Dash(t, b.env.Owner, "POST", "/v1/providers/"+id+"/test-send", body)
		if r.Status != http.StatusOK {
			return nil, r.Status, string(r.Body)
		}
		var out testSendOut
		require.NoError(t, r.Decode(&out))
		return &out, r.Status, string(r.Body)
	}
	body := func(mode string) map[string]any {
		return map[string]any{"mode": mode, "recipient": map[string]any{"address": "01012345678"},
			"content": map[string]any{"text": "test " + mode}}
	}

	for _, mode := range []string{"test", "instance"} {
		out, st, raw := ts(p, body(mode))
		require.Equal(t, http.StatusOK, st, raw)
		require.Equal(t, mode, out.Mode)
		require.Equal(t, "sent", out.Status)
		require.Equal(t, "sms", out.Channel)
		require.NotNil(t, out.ProviderMessageID)
		require.NotEmpty(t, *out.ProviderMessageID)
		require.NotEmpty(t, out.AcceptedAt)
		h := b.attempts(t, "?requestId="+out.RequestID)
		require.Len(t, h.Attempts, 1)
		require.Equal(t, "success", h.Attempts[0].Status)
		require.Equal(t, p, h.Attempts[0].ProviderAccountID)
		require.Equal(t, *out.ProviderMessageID, *h.Attempts[0].ProviderMessageID)
		require.Equal(t, "test "+mode, *h.Attempts[0].Request.RenderedContent.Text)
	}
	require.Len(t, b.env.Sim.Messages("vendora_sms", "", 0), 2)

	// Provider failure: 502 with the reason, recorded as failed.
	fault(t, b, map[string]any{"kind": "vendora_sms", "status": 500})
	r := notifytest.Dash(t, b.env.Owner, "POST", "/v1/providers/"+p+"/test-send", body("instance"))
	pr := notifytest.RequireProblem(t, r, http.StatusBadGateway, "SVC-50200")
	require.Contains(t, pr.Detail, "temporary_unavailable")
	h := b.attempts(t, "?limit=1")
	require.Equal(t, "failure", h.Attempts[0].Status)
	require.Equal(t, "temporary_unavailable", *h.Attempts[0].FailureCode)

	// Disabled provider: instance 409, test allowed.
	r = notifytest.Dash(t, b.env.Owner, "PATCH", "/v1/providers/"+p, map[string]any{"enabled": false})
	require.Equal(t, http.StatusOK, r.Status, string(r.Body))
	notifytest.RequireProblem(t, notifytest.Dash(t, b.env.Owner, "POST", "/v1/providers/"+p+"/test-send", body("instance")), http.StatusConflict, "SVC-40900")
	out, st, raw := ts(p, body("test"))
	require.Equal(t, http.StatusOK, st, raw)
	require.Equal(t, "sent", out.Status)

	// Unknown, foreign and malformed provider ids: 404.
	notifytest.RequireProblem(t, notifytest.Dash(t, b.env.Owner, "POST", "/v1/providers/"+uuid.NewString()+"/test-send", body("test")), http.StatusNotFound, "SVC-40400")
	notifytest.RequireProblem(t, notifytest.Dash(t, b.env.Owner, "POST", "/v1/providers/nope/test-send", body("test")), http.StatusNotFound, "SVC-40400")
	other := setup(t)
	foreign := other.env.SimProvider(t, "vendora_sms", "theirs", nil)
	notifytest.RequireProblem(t, notifytest.Dash(t, b.env.Owner, "POST", "/v1/providers/"+foreign+"/test-send", body("test")), http.StatusNotFound, "SVC-40400")

	// Body validation.
	for name, bb := range map[string]map[string]any{
		"bad mode":      body("live"),
		"missing mode":  {"recipient": map[string]any{"address": "01012345678"}, "content": map[string]any{"text": "x"}},
		"no address":    {"mode": "test", "content": map[string]any{"text": "x"}},
		"no text":       {"mode": "test", "recipient": map[string]any{"address": "01012345678"}},
		"unknown field": {"mode": "test", "recipient": map[string]any{"address": "01012345678"}, "content": map[string]any{"text": "x"}, "x": 1},
	} {
		t.Run(name, func(t *testing.T) {
			notifytest.RequireProblem(t, notifytest.Dash(t, b.env.Owner, "POST", "/v1/providers/"+p+"/test-send", bb), http.StatusBadRequest, "SVC-40000")
		})
	}
}

// Test-send to a suppressed email address: 502, no provider call.
func TestProviderTestSendSuppressed(t *testing.T) {
	t.Parallel()
	b := setup(t)
	p := b.env.SimProvider(t, "mailx_email", "mail", nil)
	b.suppress(t, "blocked@example.com")
	body := map[string]any{"mode": "test", "recipient": map[string]any{"address": "Blocked@Example.com"},
		"content": map[string]any{"text": "hi", "title": "subject"}}
	r := notifytest.Dash(t, b.env.Owner, "POST", "/v1/providers/"+p+"/test-send", body)
	pr := notifytest.RequireProblem(t, r, http.StatusBadGateway, "SVC-50200")
	require.Contains(t, pr.Detail, "suppression")
	require.Empty(t, b.env.Sim.Messages("mailx_email", "", 0))

	body["recipient"] = map[string]any{"address": "fine@example.com"}
	r = notifytest.Dash(t, b.env.Owner, "POST", "/v1/providers/"+p+"/test-send", body)
	require.Equal(t, http.StatusOK, r.Status, string(r.Body))
	require.Len(t, b.env.Sim.Messages("mailx_email", "fine@example.com", 0), 1)
}

// SPEC "Dispatch flow" step 1: a suppressed email address fails with
// invalid_request and no attempt, even with a usable route.
func TestEmailSuppressionPreBlock(t *testing.T) {
	t.Parallel()
	b := setup(t)
	p := b.env.SimProvider(t, "mailx_email", "mail", nil)
	notifytest.PutRoutes(t, b.env.Owner, notifytest.Route{Channel: "email", ProviderAccountID: p, Priority: 1})
	b.suppress(t, "gone@example.com")

	out := notifytest.Wait(t, b.key, notifytest.Send(t, b.key, notifytest.Email("GONE@example.com", "s", "x")).RequestID)
	require.Equal(t, "failed", out.Status)
	require.Equal(t, "invalid_request", *out.FinalErrorCode)
	require.Empty(t, out.Attempts)
	require.Equal(t, "failed", out.Job.Status)
	require.Empty(t, b.env.Sim.Messages("mailx_email", "", 0))

	// Other addresses are delivered.
	out = notifytest.Wait(t, b.key, notifytest.Send(t, b.key, notifytest.Email("ok@example.com", "s", "x")).RequestID)
	require.Equal(t, "sent", out.Status)
	require.Len(t, b.env.Sim.Messages("mailx_email", "ok@example.com", 0), 1)
}

// suppress puts address on the workspace's suppression list.
func (b *bundle) suppress(t *testing.T, address string) {
	t.Helper()
	require.NoError(t, b.env.Daemon.DB.Update(ctx, func(tx notify.Tx) error {
		return tx.PutSuppression(ctx, b.env.Workspace, address, "unsubscribe", time.Now())
	}))
}
