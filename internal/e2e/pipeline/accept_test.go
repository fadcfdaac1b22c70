package pipeline_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/notifyd/notifyd/internal/notifytest"
)

// SPEC "Send a notification" rule 2: scheduledAt.
func TestScheduledAtValidation(t *testing.T) {
	t.Parallel()
	b := setup(t)
	past := notifytest.SMS("01012345678", "x")
	past["scheduledAt"] = time.Now().Add(-time.Minute).UTC().Format(time.RFC3339)
	p := notifytest.RequireProblem(t, notifytest.Signed(t, b.key, "POST", "/v1/notifications", past), http.StatusBadRequest, "SVC-40000")
	require.Equal(t, "scheduledAt must be in the future", p.Detail)

	for _, v := range []string{"", "tomorrow", "2030-01-02 15:04:05Z", "2030-01-02", "2030-01-02T15:04:05", "20300102T150405Z",
		"2030-13-02T15:04:05Z", "2030-01-02T15:04:05+0900"} {
		t.Run(v, func(t *testing.T) {
			body := notifytest.SMS("01012345678", "x")
			body["scheduledAt"] = v
			p := notifytest.RequireProblem(t, notifytest.Signed(t, b.key, "POST", "/v1/notifications", body), http.StatusBadRequest, "SVC-40000")
			require.NotEqual(t, "scheduledAt must be in the future", p.Detail)
		})
	}
	// A non-string value.
	body := notifytest.SMS("01012345678", "x")
	body["scheduledAt"] = 1767225600
	notifytest.RequireProblem(t, notifytest.Signed(t, b.key, "POST", "/v1/notifications", body), http.StatusBadRequest, "SVC-40000")
	// Bulk: a past item rejects the call.
	r := notifytest.Signed(t, b.key, "POST", "/v1/notifications/bulk", map[string]any{"items": []any{notifytest.SMS("01012345678", "ok"), past}})
	p = notifytest.RequireProblem(t, r, http.StatusBadRequest, "SVC-40000")
	require.Contains(t, p.Detail, "scheduledAt must be in the future")
	require.Zero(t, b.metrics(t, "").TotalRequests)
}

// A request scheduled 2 s ahead stays queued (job scheduled), then is sent.
func TestScheduledSend(t *testing.T) {
	t.Parallel()
	b := setup(t)
	p := b.env.SimProvider(t, "vendora_sms", "aligo", nil)
	notifytest.PutRoutes(t, b.env.Owner, notifytest.Route{Channel: "sms", ProviderAccountID: p, Priority: 1})
	at := time.Now().Add(2 * time.Second).UTC().Truncate(time.Millisecond)
	body := notifytest.SMS("01012345678", "on time")
	body["scheduledAt"] = at.In(time.FixedZone("KST", 9*3600)).Format(time.RFC3339Nano)
	res := notifytest.Send(t, b.key, body)
	require.Equal(t, "queued", res.Status)
	require.NotNil(t, res.ScheduledAt)
	got, err := time.Parse(time.RFC3339Nano, *res.ScheduledAt)
	require.NoError(t, err)
	require.True(t, got.Equal(at), "%s != %s", got, at)

	out := notifytest.Lookup(t, b.key, res.RequestID)
	require.Equal(t, "queued", out.Status)
	require.Equal(t, "scheduled", out.Job.Status)
	require.NotNil(t, out.ScheduledAt)
	jobs := b.jobs(t)
	require.Len(t, jobs, 1)
	require.Equal(t, "scheduled", jobs[0].Status)
	require.NotNil(t, jobs[0].ScheduledAt)

	out = notifytest.Wait(t, b.key, res.RequestID)
	require.Equal(t, "sent", out.Status)
	require.Len(t, out.Attempts, 1)
	started, err := time.Parse(time.RFC3339Nano, out.Attempts[0].StartedAt)
	require.NoError(t, err)
	require.False(t, started.Before(at), "sent at %s before its time %s", started, at)
	require.Empty(t, b.jobs(t))
}

// SPEC rule 1: idempotency within the workspace.
func TestIdempotency(t *testing.T) {
	t.Parallel()
	b := setup(t)
	p := b.env.SimProvider(t, "vendora_sms", "aligo", nil)
	notifytest.PutRoutes(t, b.env.Owner, notifytest.Route{Channel: "sms", ProviderAccountID: p, Priority: 1})
	body := notifytest.SMS("01012345678", "once")
	body["idempotencyKey"] = "order-42"
	first := notifytest.Send(t, b.key, body)
	require.False(t, first.Deduplicated)
	require.NotNil(t, first.QueueJobID)
	notifytest.Wait(t, b.key, first.RequestID)

	body["content"] = map[string]any{"text": "twice, different body"}
	second := notifytest.Send(t, b.key, body)
	require.True(t, second.Deduplicated)
	require.Equal(t, first.RequestID, second.RequestID)
	require.Equal(t, "sent", second.Status)
	require.Equal(t, *first.QueueJobID, *second.QueueJobID, "dedup answers the existing job's id")
	require.Nil(t, second.ScheduledAt)
	require.Len(t, b.env.Sim.Messages("vendora_sms", "", 0), 1)

	// Another key is another request; the same key in another workspace too.
	body["idempotencyKey"] = "order-43"
	require.False(t, notifytest.Send(t, b.key, body).Deduplicated)
	other := setup(t)
	body["idempotencyKey"] = "order-42"
	o := notifytest.Send(t, other.key, body)
	require.False(t, o.Deduplicated)
	require.NotEqual(t, first.RequestID, o.RequestID)
}

// A dedup of a scheduled request returns its scheduledAt and status.
func TestIdempotencyScheduled(t *testing.T) {
	t.Parallel()
	b := setup(t)
	body := notifytest.SMS("01012345678", "later")
	body["idempotencyKey"] = "k"
	body["scheduledAt"] = time.Now().Add(time.Hour).UTC().Format(time.RFC3339)
	first := notifytest.Send(t, b.key, body)
	delete(body, "scheduledAt")
	second := notifytest.Send(t, b.key, body)
	require.True(t, second.Deduplicated)
	require.Equal(t, "queued", second.Status)
	require.Equal(t, first.ScheduledAt, second.ScheduledAt)
	b.cancel(t, first.RequestID)
	third := notifytest.Send(t, b.key, body)
	require.True(t, third.Deduplicated)
	require.Equal(t, "canceled", third.Status)
}

// Concurrent sends of one key create exactly one request.
func TestIdempotencyRace(t *testing.T) {
	t.Parallel()
	b := setup(t)
	p := b.env.SimProvider(t, "vendora_sms", "aligo", nil)
	notifytest.PutRoutes(t, b.env.Owner, notifytest.Route{Channel: "sms", ProviderAccountID: p, Priority: 1})
	const n = 20
	type result struct {
		status int
		body   string
		out    notifytest.Accepted
		err    error
	}
	results := make([]result, n)
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			body := notifytest.SMS("01012345678", "race")
			body["idempotencyKey"] = "race-key"
			<-start
			r, err := b.key.Signed(ctx, "POST", "/v1/notifications", body)
			if err != nil {
				results[i].err = err
				return
			}
			results[i].status, results[i].body = r.Status, string(r.Body)
			results[i].err = r.Data(&results[i].out)
		}(i)
	}
	close(start)
	wg.Wait()
	fresh := 0
	ids := map[string]bool{}
	jobIDs := map[string]bool{}
	for _, r := range results {
		require.NoError(t, r.err)
		require.Equal(t, http.StatusCreated, r.status, r.body)
		ids[r.out.RequestID] = true
		if !r.out.Deduplicated {
			fresh++
		}
		require.NotNil(t, r.out.QueueJobID)
		jobIDs[*r.out.QueueJobID] = true
	}
	require.Len(t, ids, 1, "all responses share one requestId")
	require.Len(t, jobIDs, 1, "and one queue job")
	require.Equal(t, 1, fresh, "exactly one deduplicated:false")
	for id := range ids {
		require.Equal(t, "sent", notifytest.Wait(t, b.key, id).Status)
	}
	require.Equal(t, 1, b.metrics(t, "").TotalRequests)
	require.Len(t, b.env.Sim.Messages("vendora_sms", "", 0), 1)
}

// Field validation answers 400 (or 413) problem+json, never 500.
func TestSendValidation(t *testing.T) {
	t.Parallel()
	b := setup(t)
	valid := func() map[string]any { return notifytest.SMS("01012345678", "x") }
	with := func(k string, v any) map[string]any { m := valid(); m[k] = v; return m }
	cases := map[string]any{
		"unknown field":            with("priority", 1),
		"unknown nested field":     with("recipient", map[string]any{"address": "01012345678", "phone": "x"}),
		"missing channel":          map[string]any{"recipient": map[string]any{"address": "01012345678"}, "content": map[string]any{"text": "x"}},
		"bad channel":              with("channel", "fax"),
		"channel not a string":     with("channel", 1),
		"missing recipient":        map[string]any{"channel": "sms", "content": map[string]any{"text": "x"}},
		"missing address":          with("recipient", map[string]any{"name": "n"}),
		"blank address":            with("recipient", map[string]any{"address": "  "}),
		"address 321 chars":        with("recipient", map[string]any{"address": strings.Repeat("1", 321)}),
		"name 121 chars":           with("recipient", map[string]any{"address": "01012345678", "name": strings.Repeat("n", 121)}),
		"missing content":          map[string]any{"channel": "sms", "recipient": map[string]any{"address": "01012345678"}},
		"missing text":             with("content", map[string]any{"title": "t"}),
		"empty text":               with("content", map[string]any{"text": ""}),
		"title 201 chars":          with("content", map[string]any{"text": "x", "title": strings.Repeat("t", 201)}),
		"templateCode 121 chars":   with("content", map[string]any{"text": "x", "templateCode": strings.Repeat("c", 121)}),
		"templateVariables number": with("content", map[string]any{"text": "x", "templateVariables": map[string]any{"a": 1}}),
		"idempotencyKey 121 chars": with("idempotencyKey", strings.Repeat("k", 121)),
		"idempotencyKey number":    with("idempotencyKey", 5),
		"metadata number":          with("metadata", map[string]any{"a": 1}),
		"metadata object":          with("metadata", map[string]any{"a": map[string]any{}}),
		"metadata bool":            with("metadata", map[string]any{"a": true}),
		"metadata array":           with("metadata", []string{"a"}),
		"preferred not array":      with("preferredProviderAccountIds", "x"),
		"body array":               []any{valid()},
		"malformed json":           []byte(`{"channel":"sms",`),
		"trailing data":            []byte(`{"channel":"sms","recipient":{"address":"1"},"content":{"text":"x"}} {}`),
		"empty body":               []byte(``),
		"null body":                []byte(`null`),
	}
	for name, body := range cases {
		t.Run(name, func(t *testing.T) {
			r := notifytest.Signed(t, b.key, "POST", "/v1/notifications", body)
			notifytest.RequireProblem(t, r, http.StatusBadRequest, "SVC-40000")
		})
	}
	// Limits are inclusive.
	ok := with("recipient", map[string]any{"address": strings.Repeat("1", 320), "name": strings.Repeat("n", 120)})
	ok["content"] = map[string]any{"text": "x", "title": strings.Repeat("t", 200)}
	ok["idempotencyKey"] = strings.Repeat("k", 120)
	ok["metadata"] = map[string]any{"a": "b"}
	notifytest.Send(t, b.key, ok)

	// Body over 1 MB.
	big := with("content", map[string]any{"text": strings.Repeat("x", 1<<20)})
	r := notifytest.Signed(t, b.key, "POST", "/v1/notifications", big)
	require.Contains(t, []int{http.StatusBadRequest, http.StatusRequestEntityTooLarge}, r.Status, string(r.Body))
	notifytest.RequireProblem(t, r, r.Status, "")
	r = notifytest.Signed(t, b.key, "POST", "/v1/notifications/bulk", map[string]any{"items": []any{big}})
	require.Contains(t, []int{http.StatusBadRequest, http.StatusRequestEntityTooLarge}, r.Status, string(r.Body))
	notifytest.RequireProblem(t, r, r.Status, "")
	// Just under 1 MB is accepted, each field within its own bound
	// (issue 29): text 100,000 and html 500,000 characters, and 44
	// template variables of 10,000.
	vars := map[string]any{}
	for i := range 44 {
		vars[fmt.Sprintf("v%02d", i)] = strings.Repeat("v", 10_000)
	}
	under := with("content", map[string]any{"text": strings.Repeat("x", 100_000), "html": strings.Repeat("h", 500_000), "templateVariables": vars})
	raw, err := json.Marshal(under)
	require.NoError(t, err)
	require.Greater(t, len(raw), 1<<20-10_000, "just under 1 MB")
	notifytest.Send(t, b.key, under)
	require.Equal(t, 2, b.metrics(t, "").TotalRequests)
}

// Status and cancel take a UUID; another workspace's request is 404.
func TestRequestIDAndWorkspace(t *testing.T) {
	t.Parallel()
	b := setup(t)
	res := notifytest.Send(t, b.key, notifytest.SMS("01012345678", "x"))
	for _, id := range []string{"abc", "123", strings.ToUpper(res.RequestID[:35]), strings.ReplaceAll(res.RequestID, "-", "")} {
		notifytest.RequireProblem(t, notifytest.Signed(t, b.key, "GET", "/v1/notifications/"+id, nil), http.StatusBadRequest, "SVC-40000")
		notifytest.RequireProblem(t, notifytest.Signed(t, b.key, "POST", "/v1/notifications/"+id+"/cancel", nil), http.StatusBadRequest, "SVC-40000")
	}
	missing := uuid.NewString()
	notifytest.RequireProblem(t, notifytest.Signed(t, b.key, "GET", "/v1/notifications/"+missing, nil), http.StatusNotFound, "")
	notifytest.RequireProblem(t, notifytest.Signed(t, b.key, "POST", "/v1/notifications/"+missing+"/cancel", nil), http.StatusNotFound, "")

	owner, _ := b.env.NewWorkspace(t, "Other", "other@example.com")
	key, _, err := owner.CreateAPIKey(ctx, "other", "notifications:send", "notifications:read")
	require.NoError(t, err)
	r, err := key.Signed(ctx, "GET", "/v1/notifications/"+res.RequestID, nil)
	require.NoError(t, err)
	notifytest.RequireProblem(t, r, http.StatusNotFound, "")
	r, err = key.Signed(ctx, "POST", "/v1/notifications/"+res.RequestID+"/cancel", nil)
	require.NoError(t, err)
	notifytest.RequireProblem(t, r, http.StatusNotFound, "")
	require.NotEqual(t, "canceled", notifytest.Lookup(t, b.key, res.RequestID).Status)
	// The other workspace's attempt history does not show it either.
	r, err = owner.Dashboard(ctx, "GET", "/v1/attempts?requestId="+res.RequestID, nil)
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, r.Status, string(r.Body))
	var h attemptHistoryOut
	require.NoError(t, r.Decode(&h))
	require.Empty(t, h.Attempts)
}

// SPEC "Bulk send".
func TestBulkSend(t *testing.T) {
	t.Parallel()
	b := setup(t)
	p := b.env.SimProvider(t, "vendora_sms", "aligo", nil)
	notifytest.PutRoutes(t, b.env.Owner, notifytest.Route{Channel: "sms", ProviderAccountID: p, Priority: 1})
	pre := notifytest.SMS("01000000000", "pre")
	pre["idempotencyKey"] = "dup-1"
	existing := notifytest.Send(t, b.key, pre)

	items := []any{}
	for i := 0; i < 5; i++ {
		items = append(items, notifytest.SMS(fmt.Sprintf("0101111000%d", i), fmt.Sprintf("bulk %d", i)))
	}
	d1 := notifytest.SMS("01000000000", "dup of existing")
	d1["idempotencyKey"] = "dup-1"
	d2a := notifytest.SMS("01000000001", "first of a pair")
	d2a["idempotencyKey"] = "dup-2"
	d2b := notifytest.SMS("01000000001", "second of a pair")
	d2b["idempotencyKey"] = "dup-2"
	items = append(items, d1, d2a, d2b)

	r := notifytest.Signed(t, b.key, "POST", "/v1/notifications/bulk", map[string]any{"items": items})
	require.Equal(t, http.StatusCreated, r.Status, string(r.Body))
	var out struct {
		Status       string `json:"status"`
		Total        int    `json:"total"`
		Queued       int    `json:"queued"`
		Deduplicated int    `json:"deduplicated"`
		Items        []notifytest.Accepted
	}
	require.NoError(t, r.Data(&out))
	require.Equal(t, 8, out.Total)
	require.Equal(t, 2, out.Deduplicated)
	require.Equal(t, 6, out.Queued)
	require.Len(t, out.Items, 8)
	require.True(t, out.Items[5].Deduplicated)
	require.Equal(t, existing.RequestID, out.Items[5].RequestID)
	require.Equal(t, existing.QueueJobID, out.Items[5].QueueJobID)
	require.False(t, out.Items[6].Deduplicated)
	require.True(t, out.Items[7].Deduplicated)
	require.Equal(t, out.Items[6].RequestID, out.Items[7].RequestID)

	ids := map[string]bool{}
	for _, it := range out.Items {
		ids[it.RequestID] = true
	}
	require.Len(t, ids, 7)
	for id := range ids {
		o := notifytest.Wait(t, b.key, id)
		require.Equal(t, "sent", o.Status)
	}
	require.Len(t, b.env.Sim.Messages("vendora_sms", "", 0), 7)
	msgs := b.env.Sim.Messages("vendora_sms", "01000000001", 0)
	require.Len(t, msgs, 1)
	require.Equal(t, "first of a pair", msgs[0].Text)
}

func TestBulkValidation(t *testing.T) {
	t.Parallel()
	b := setup(t)
	items := make([]any, 501)
	for i := range items {
		items[i] = notifytest.SMS("01012345678", "x")
	}
	notifytest.RequireProblem(t, notifytest.Signed(t, b.key, "POST", "/v1/notifications/bulk", map[string]any{"items": items}), http.StatusBadRequest, "SVC-40000")

	bad := notifytest.SMS("01012345678", "x")
	delete(bad, "channel")
	p := notifytest.RequireProblem(t, notifytest.Signed(t, b.key, "POST", "/v1/notifications/bulk", map[string]any{"items": []any{notifytest.SMS("01012345678", "a"), bad}}),
		http.StatusBadRequest, "SVC-40000")
	require.Contains(t, p.Detail, "items[1]")
	unknown := notifytest.SMS("01012345678", "x")
	unknown["extra"] = true
	notifytest.RequireProblem(t, notifytest.Signed(t, b.key, "POST", "/v1/notifications/bulk", map[string]any{"items": []any{notifytest.SMS("01012345678", "a"), unknown}}),
		http.StatusBadRequest, "SVC-40000")
	for name, body := range map[string]any{
		"no items":      map[string]any{},
		"empty items":   map[string]any{"items": []any{}},
		"items object":  map[string]any{"items": map[string]any{}},
		"unknown field": map[string]any{"items": []any{notifytest.SMS("01012345678", "a")}, "x": 1},
		"item not obj":  map[string]any{"items": []any{"x"}},
	} {
		t.Run(name, func(t *testing.T) {
			notifytest.RequireProblem(t, notifytest.Signed(t, b.key, "POST", "/v1/notifications/bulk", body), http.StatusBadRequest, "SVC-40000")
		})
	}
	require.Zero(t, b.metrics(t, "").TotalRequests, "nothing created")

	// Exactly 500 is accepted.
	r := notifytest.Signed(t, b.key, "POST", "/v1/notifications/bulk", map[string]any{"items": items[:500]})
	require.Equal(t, http.StatusCreated, r.Status, string(r.Body))
	var out struct {
		Total  int `json:"total"`
		Queued int `json:"queued"`
	}
	require.NoError(t, r.Data(&out))
	require.Equal(t, 500, out.Total)
	require.Equal(t, 500, out.Queued)
}

// An item that passes validation but fails acceptance (unknown template)
// is left out of a bulk answer; the others are accepted.
func TestBulkAcceptanceFailureLeftOut(t *testing.T) {
	t.Parallel()
	b := setup(t)
	tpl := map[string]any{"channel": "sms", "recipient": map[string]any{"address": "01012345678"},
		"content": map[string]any{"templateCode": "no-such-template"}}
	r := notifytest.Signed(t, b.key, "POST", "/v1/notifications/bulk", map[string]any{"items": []any{notifytest.SMS("01012345678", "a"), tpl, notifytest.SMS("01012345678", "b")}})
	require.Equal(t, http.StatusCreated, r.Status, string(r.Body))
	var out struct {
		Total        int                   `json:"total"`
		Queued       int                   `json:"queued"`
		Deduplicated int                   `json:"deduplicated"`
		Items        []notifytest.Accepted `json:"items"`
	}
	require.NoError(t, r.Data(&out))
	require.Equal(t, 2, out.Total)
	require.Equal(t, 2, out.Queued)
	require.Zero(t, out.Deduplicated)
	require.Len(t, out.Items, 2)
	require.Equal(t, 2, b.metrics(t, "").TotalRequests)
	// The same item alone is a 400.
	notifytest.RequireProblem(t, notifytest.Signed(t, b.key, "POST", "/v1/notifications", tpl), http.StatusBadRequest, "SVC-40000")
}
