// Package tracing_test runs sends through the whole pipeline with tracing
// on, against a local OTLP/HTTP receiver, and reads the traces exported.
package tracing_test

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/hex"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/protobuf/proto"

	"github.com/notifyd/notifyd/client"
	"github.com/notifyd/notifyd/internal/notify"
	"github.com/notifyd/notifyd/internal/notifytest"
	"github.com/notifyd/notifyd/internal/store/sqlstore"
	"github.com/notifyd/notifyd/internal/tracing"
)

// span is one exported span as the test reads it.
type span struct {
	name             string
	kind             tracepb.Span_SpanKind
	trace, id, paren string
	attrs            map[string]any
	links            []string // "traceid/spanid"
	service          string
}

// receiver is an OTLP/HTTP trace receiver: it decodes each
// ExportTraceServiceRequest (protobuf) and keeps its spans.
type receiver struct {
	mu    sync.Mutex
	spans []span
}

func (rc *receiver) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost || r.URL.Path != "/v1/traces" || r.Header.Get("Content-Type") != "application/x-protobuf" {
		http.Error(w, "want POST /v1/traces of application/x-protobuf", http.StatusBadRequest)
		return
	}
	var body io.Reader = r.Body
	if r.Header.Get("Content-Encoding") == "gzip" {
		zr, err := gzip.NewReader(r.Body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		body = zr
	}
	raw, err := io.ReadAll(body)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	var req coltracepb.ExportTraceServiceRequest
	if err := proto.Unmarshal(raw, &req); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	rc.mu.Lock()
	for _, rs := range req.ResourceSpans {
		service := ""
		for _, kv := range rs.GetResource().GetAttributes() {
			if kv.Key == "service.name" {
				service = kv.Value.GetStringValue()
			}
		}
		for _, ss := range rs.ScopeSpans {
			for _, s := range ss.Spans {
				sp := span{name: s.Name, kind: s.Kind, trace: hex.EncodeToString(s.TraceId), id: hex.EncodeToString(s.SpanId),
					paren: hex.EncodeToString(s.ParentSpanId), attrs: map[string]any{}, service: service}
				for _, kv := range s.Attributes {
					switch v := kv.Value.GetValue().(type) {
					case *commonpb.AnyValue_StringValue:
						sp.attrs[kv.Key] = v.StringValue
					case *commonpb.AnyValue_IntValue:
						sp.attrs[kv.Key] = v.IntValue
					}
				}
				for _, l := range s.Links {
					sp.links = append(sp.links, hex.EncodeToString(l.TraceId)+"/"+hex.EncodeToString(l.SpanId))
				}
				rc.spans = append(rc.spans, sp)
			}
		}
	}
	rc.mu.Unlock()
	w.Header().Set("Content-Type", "application/x-protobuf")
	out, _ := proto.Marshal(&coltracepb.ExportTraceServiceResponse{})
	_, _ = w.Write(out)
}

// trace waits until the receiver holds spans of trace id named each of
// names, and returns the trace's spans.
func (rc *receiver) trace(t *testing.T, id string, names ...string) []span {
	t.Helper()
	var got []span
	require.Eventually(t, func() bool {
		rc.mu.Lock()
		defer rc.mu.Unlock()
		got = got[:0]
		seen := map[string]bool{}
		for _, s := range rc.spans {
			if s.trace == id {
				got = append(got, s)
				seen[s.name] = true
			}
		}
		for _, n := range names {
			if !seen[n] {
				return false
			}
		}
		return true
	}, 15*time.Second, 50*time.Millisecond, "spans %v of trace %s", names, id)
	return got
}

// all is every span received.
func (rc *receiver) all() []span {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return append([]span(nil), rc.spans...)
}

func find(t *testing.T, spans []span, name string) span {
	t.Helper()
	var out []span
	for _, s := range spans {
		if s.name == name {
			out = append(out, s)
		}
	}
	require.Len(t, out, 1, "spans named %q", name)
	return out[0]
}

// startTraced starts a daemon whose OTEL_* variables point at a new
// receiver; spans leave it every 50 ms.
func startTraced(t *testing.T) (*notifytest.Env, *receiver) {
	rc := &receiver{}
	srv := httptest.NewServer(rc)
	t.Cleanup(srv.Close)
	t.Setenv("OTEL_SDK_DISABLED", "")
	t.Setenv("OTEL_TRACES_EXPORTER", "")
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "")
	t.Setenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", srv.URL+"/v1/traces")
	t.Setenv("OTEL_BSP_SCHEDULE_DELAY", "50")
	t.Setenv("OTEL_SERVICE_NAME", "")
	return notifytest.StartDaemon(t), rc
}

// call makes a signed (key) or dashboard (bearer) call carrying
// traceparent.
func call(t *testing.T, c *client.Client, signed bool, method, path string, body []byte, traceparent string) *client.Response {
	t.Helper()
	req, err := http.NewRequestWithContext(context.Background(), method, c.BaseURL+path, bytes.NewReader(body))
	require.NoError(t, err)
	req.Header.Set("traceparent", traceparent)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if signed {
		c.SignHeaders(req, body)
	} else {
		req.Header.Set("Authorization", "Bearer "+c.Token)
	}
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	rb, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return &client.Response{Status: resp.StatusCode, Header: resp.Header, Body: rb}
}

// TestTraceFromAPICallToVendor: one send's trace, exported over OTLP,
// holds the API call's span (continuing the caller's traceparent), the
// dispatch span of its message (a child of the API span, across the
// queue) and the vendor call's client span (a child of the dispatch,
// naming the vendor as its peer); the group commit's and the job run's
// spans link to them. A dashboard call's span continues its caller's
// trace too.
func TestTraceFromAPICallToVendor(t *testing.T) {
	env, rc := startTraced(t)
	key := env.SendKey(t)
	account := env.SimRoute(t, "sms", "vendora_sms", nil)
	hook := notifytest.NewReceiver(t, nil)
	notifytest.Dash(t, env.Owner, "POST", "/v1/webhooks", map[string]any{"url": hook.URL, "events": []string{"notification.delivered"}})

	const traceID, callerSpan = "4bf92f3577b34da6a3ce929d0e0e4736", "00f067aa0ba902b7"
	body := []byte(`{"channel":"sms","recipient":{"address":"01012345678"},"content":{"text":"traced"}}`)
	res := call(t, key, true, "POST", "/v1/notifications", body, "00-"+traceID+"-"+callerSpan+"-01")
	require.Equal(t, http.StatusCreated, res.Status, string(res.Body))
	var accepted struct {
		RequestID string `json:"requestId"`
	}
	require.NoError(t, res.Data(&accepted))
	require.Equal(t, "sent", notifytest.Wait(t, key, accepted.RequestID).Status)

	spans := rc.trace(t, traceID, "POST /v1/notifications", "dispatch", "vendora_sms send")
	apiSpan := find(t, spans, "POST /v1/notifications")
	require.Equal(t, callerSpan, apiSpan.paren, "the API span continues the caller's span")
	require.Equal(t, tracepb.Span_SPAN_KIND_SERVER, apiSpan.kind)
	require.Equal(t, "/v1/notifications", apiSpan.attrs["http.route"])
	require.Equal(t, "POST", apiSpan.attrs["http.request.method"])
	require.EqualValues(t, http.StatusCreated, apiSpan.attrs["http.response.status_code"])
	require.Equal(t, "notifyd", apiSpan.service)

	dispatch := find(t, spans, "dispatch")
	require.Equal(t, apiSpan.id, dispatch.paren, "the dispatch continues the API call's trace across the queue")
	require.Equal(t, accepted.RequestID, dispatch.attrs["notifyd.request.id"])
	require.Equal(t, "delivered", dispatch.attrs["notifyd.outcome"])
	require.Len(t, dispatch.links, 1, "the dispatch links to its job run's span")

	vendor := find(t, spans, "vendora_sms send")
	require.Equal(t, dispatch.id, vendor.paren)
	require.Equal(t, tracepb.Span_SPAN_KIND_CLIENT, vendor.kind)
	require.Equal(t, "127.0.0.1", vendor.attrs["server.address"], "the vendor is the peer")
	require.NotZero(t, vendor.attrs["server.port"])
	require.Equal(t, "vendora_sms", vendor.attrs["notifyd.provider.kind"])
	require.Equal(t, account, vendor.attrs["notifyd.provider.account_id"])
	require.EqualValues(t, http.StatusOK, vendor.attrs["http.response.status_code"])

	// The group commit that accepted the send, the queue job's run and
	// the group commit that wrote the outcome are spans of their own
	// (each serves many traces), linked to the message's spans.
	link := traceID + "/" + apiSpan.id
	var commit, job, record *span
	require.Eventually(t, func() bool {
		for _, s := range rc.all() {
			switch {
			case s.name == "groupcommit accept" && contains(s.links, link):
				commit = &s
			case s.name == "dispatch job" && dispatch.links[0] == s.trace+"/"+s.id:
				job = &s
			case s.name == "groupcommit record" && contains(s.links, traceID+"/"+dispatch.id):
				record = &s
			}
		}
		return commit != nil && job != nil && record != nil
	}, 15*time.Second, 50*time.Millisecond, "the group commits' and the job's spans")
	require.NotEqual(t, traceID, commit.trace)
	require.EqualValues(t, 1, commit.attrs["notifyd.batch.size"])
	require.Equal(t, tracepb.Span_SPAN_KIND_CONSUMER, job.kind)

	// The webhook try is a client span whose traceparent the receiver
	// got.
	hook.AwaitEvent(t, accepted.RequestID, "notification.delivered")
	got := hook.Requests()[0].Header
	sent, ok := tracing.ParseParent(got.Get("traceparent"))
	require.True(t, ok, "the webhook carries a traceparent: %q", got.Get("traceparent"))
	post := find(t, rc.trace(t, sent.TraceID().String(), "webhook POST"), "webhook POST")
	require.Equal(t, sent.SpanID().String(), post.id)
	require.Equal(t, tracepb.Span_SPAN_KIND_CLIENT, post.kind)
	require.Equal(t, got.Get("webhook-id"), post.attrs["notifyd.webhook.id"])
	require.Equal(t, "127.0.0.1", post.attrs["server.address"])
	require.EqualValues(t, http.StatusOK, post.attrs["http.response.status_code"])

	// The Dashboard API honours traceparent too.
	const dashTrace = "0af7651916cd43dd8448eb211c80319c"
	r := call(t, env.Owner, false, "GET", "/v1/jobs", nil, "00-"+dashTrace+"-b7ad6b7169203331-01")
	require.Equal(t, http.StatusOK, r.Status, string(r.Body))
	dash := rc.trace(t, dashTrace, "GET /v1/jobs")
	require.Equal(t, "b7ad6b7169203331", find(t, dash, "GET /v1/jobs").paren)
}

// TestTraceAcrossRetry: a message whose first vendor call fails
// temporarily is retried by a queue job of its own, whose delivery
// continues the same trace under the first delivery.
func TestTraceAcrossRetry(t *testing.T) {
	env, rc := startTraced(t)
	key := env.SendKey(t)
	env.SimRoute(t, "sms", "vendora_sms", nil)
	env.Fault(t, map[string]any{"kind": "vendora_sms", "status": 500, "count": 1})

	const traceID = "5bf92f3577b34da6a3ce929d0e0e4737"
	body := []byte(`{"channel":"sms","recipient":{"address":"01012345678"},"content":{"text":"again"}}`)
	res := call(t, key, true, "POST", "/v1/notifications", body, "00-"+traceID+"-10f067aa0ba902b7-01")
	require.Equal(t, http.StatusCreated, res.Status, string(res.Body))
	var accepted struct {
		RequestID string `json:"requestId"`
	}
	require.NoError(t, res.Data(&accepted))
	out := notifytest.Wait(t, key, accepted.RequestID)
	require.Equal(t, "sent", out.Status)
	require.Len(t, out.Attempts, 2)

	var dispatches, sends []span
	require.Eventually(t, func() bool {
		dispatches, sends = nil, nil
		for _, s := range rc.all() {
			if s.trace != traceID {
				continue
			}
			switch s.name {
			case "dispatch":
				dispatches = append(dispatches, s)
			case "vendora_sms send":
				sends = append(sends, s)
			}
		}
		return len(dispatches) == 2 && len(sends) == 2
	}, 15*time.Second, 50*time.Millisecond, "two deliveries and two vendor calls in the trace")
	api := find(t, rc.trace(t, traceID, "POST /v1/notifications"), "POST /v1/notifications")
	first, second := dispatches[0], dispatches[1]
	if first.paren != api.id {
		first, second = second, first
	}
	require.Equal(t, api.id, first.paren)
	require.Equal(t, first.id, second.paren, "the retry continues from the first delivery")
	require.Equal(t, "failed", first.attrs["notifyd.outcome"], "this delivery failed; the request is retried")
	require.Equal(t, "delivered", second.attrs["notifyd.outcome"])
	byParent := map[string]span{}
	for _, s := range sends {
		byParent[s.paren] = s
	}
	require.EqualValues(t, http.StatusInternalServerError, byParent[first.id].attrs["http.response.status_code"])
	require.Equal(t, "temporary_unavailable", byParent[first.id].attrs["notifyd.failure.code"])
	require.EqualValues(t, http.StatusOK, byParent[second.id].attrs["http.response.status_code"])
}

// TestQueueCarriesTraceOnlyWhenOn: with the OTEL_* variables unset a
// caller's traceparent is not even read: the queue job carries nothing;
// with tracing on, the job carries the acceptance's trace.
func TestQueueCarriesTraceOnlyWhenOn(t *testing.T) {
	const traceID = "6bf92f3577b34da6a3ce929d0e0e4738"
	send := func(env *notifytest.Env) string {
		key := env.SendKey(t)
		body := []byte(`{"channel":"sms","recipient":{"address":"01012345678"},"content":{"text":"queued"}}`)
		res := call(t, key, true, "POST", "/v1/notifications", body, "00-"+traceID+"-20f067aa0ba902b7-01")
		require.Equal(t, http.StatusCreated, res.Status, string(res.Body))
		var accepted struct {
			QueueJobID string `json:"queueJobId"`
		}
		require.NoError(t, res.Data(&accepted))
		var args string
		require.NoError(t, env.Daemon.DB.View(context.Background(), func(tx notify.Tx) error {
			return tx.(*sqlstore.Tx).Conn().QueryRow(context.Background(), `SELECT CAST(args AS TEXT) FROM river_job WHERE id = ?`,
				accepted.QueueJobID).Scan(&args)
		}))
		return args
	}
	for _, k := range []string{"OTEL_EXPORTER_OTLP_ENDPOINT", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"} {
		t.Setenv(k, "")
	}
	// No workers: the job stays in the queue to be read.
	off := send(notifytest.StartDaemon(t, notifytest.WithRole("api")))
	require.NotContains(t, off, "tp")
	require.NotContains(t, off, traceID)

	rc := &receiver{}
	srv := httptest.NewServer(rc)
	t.Cleanup(srv.Close)
	t.Setenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", srv.URL+"/v1/traces")
	on := send(notifytest.StartDaemon(t, notifytest.WithRole("api")))
	// (SQLite keeps args as binary JSON: the test looks for the texts.)
	require.Contains(t, on, "tp")
	require.Contains(t, on, "00-"+traceID+"-")
}

// TestTraceOfBatchedVendorCall: the messages of a bulk send share one
// queue job and, at a vendor with a batch API, vendor calls; each message
// still has its own delivery span under the API call's span, and its own
// client span naming its place in the shared call.
func TestTraceOfBatchedVendorCall(t *testing.T) {
	env, rc := startTraced(t)
	key := env.SendKey(t)
	env.SimRoute(t, "sms", "vendorb_sms", nil)
	const n = 5
	items := make([]string, n)
	for i := range items {
		items[i] = fmt.Sprintf(`{"channel":"sms","recipient":{"address":"0109999%04d"},"content":{"text":"batched %d"}}`, i, i)
	}
	const traceID = "7bf92f3577b34da6a3ce929d0e0e4739"
	res := call(t, key, true, "POST", "/v1/notifications/bulk", []byte(`{"items":[`+strings.Join(items, ",")+`]}`),
		"00-"+traceID+"-30f067aa0ba902b7-01")
	require.Equal(t, http.StatusCreated, res.Status, string(res.Body))
	var out struct {
		Items []struct {
			RequestID string `json:"requestId"`
		} `json:"items"`
	}
	require.NoError(t, res.Data(&out))
	require.Len(t, out.Items, n)
	for _, it := range out.Items {
		require.Equal(t, "sent", notifytest.Wait(t, key, it.RequestID).Status)
	}

	var dispatches, sends []span
	require.Eventually(t, func() bool {
		dispatches, sends = nil, nil
		for _, s := range rc.all() {
			if s.trace != traceID {
				continue
			}
			switch s.name {
			case "dispatch":
				dispatches = append(dispatches, s)
			case "vendorb_sms send":
				sends = append(sends, s)
			}
		}
		return len(dispatches) == n && len(sends) == n
	}, 15*time.Second, 50*time.Millisecond, "a delivery and a vendor call span per message")
	api := find(t, rc.trace(t, traceID, "POST /v1/notifications/bulk"), "POST /v1/notifications/bulk")
	byID := map[string]span{}
	requests := map[any]bool{}
	for _, d := range dispatches {
		require.Equal(t, api.id, d.paren)
		byID[d.id] = d
		requests[d.attrs["notifyd.request.id"]] = true
	}
	require.Len(t, requests, n, "one delivery span per request")
	largest := int64(0)
	for _, s := range sends {
		d, ok := byID[s.paren]
		require.True(t, ok, "each vendor call span is under a delivery")
		require.Equal(t, d.attrs["notifyd.request.id"], s.attrs["notifyd.request.id"])
		if size, ok := s.attrs["notifyd.batch.size"].(int64); ok {
			require.Less(t, s.attrs["notifyd.batch.index"], size)
			largest = max(largest, size)
		}
	}
	require.Greater(t, largest, int64(1), "the messages shared vendor calls")
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}
