// Package tracing is notifyd's side of OpenTelemetry tracing: a Tracer
// that is nil when tracing is off, so every instrumented place pays one
// nil check and nothing else (no context, span or attribute is built),
// and the W3C traceparent text that carries a request's trace across the
// queue from its acceptance to its dispatch (docs/DECISIONS.md,
// "Tracing"). The exporter and the HTTP side live in tracing/otlp; this
// package reaches no network, so rooms may use it.
package tracing

import (
	"context"
	"encoding/hex"
	"net/url"
	"strconv"

	"go.opentelemetry.io/otel/attribute"
	semconv "go.opentelemetry.io/otel/semconv/v1.43.0"
	"go.opentelemetry.io/otel/trace"
)

// Tracer starts notifyd's spans. A nil *Tracer is tracing turned off:
// On answers false and callers start nothing.
type Tracer struct {
	t trace.Tracer
}

// New wraps t; a nil t gives a nil Tracer (off).
func New(t trace.Tracer) *Tracer {
	if t == nil {
		return nil
	}
	return &Tracer{t: t}
}

// On reports whether spans are recorded at all. Callers check it before
// building anything a span needs.
func (t *Tracer) On() bool { return t != nil }

// Start starts a span; only call it when On.
func (t *Tracer) Start(ctx context.Context, name string, opts ...trace.SpanStartOption) (context.Context, trace.Span) {
	return t.t.Start(ctx, name, opts...)
}

// Attribute keys of notifyd's own span attributes (the OpenTelemetry
// semantic conventions' keys are used where one fits).
const (
	KeyRequestID       = attribute.Key("notifyd.request.id")
	KeyWorkspaceID     = attribute.Key("notifyd.workspace.id")
	KeyChannel         = attribute.Key("notifyd.channel")
	KeyProviderKind    = attribute.Key("notifyd.provider.kind")
	KeyProviderAccount = attribute.Key("notifyd.provider.account_id")
	KeyProviderName    = attribute.Key("notifyd.provider.name")
	KeyOutcome         = attribute.Key("notifyd.outcome")
	KeyFailureCode     = attribute.Key("notifyd.failure.code")
	KeyBatchSize       = attribute.Key("notifyd.batch.size")
	KeyBatchIndex      = attribute.Key("notifyd.batch.index")
	KeyQueueJobID      = attribute.Key("notifyd.queue_job.id")
	KeyGroupCommit     = attribute.Key("notifyd.group_commit")
	KeyWebhookID       = attribute.Key("notifyd.webhook.id")
	KeyEventType       = attribute.Key("notifyd.event.type")
)

// Parent is the W3C traceparent of the span ctx carries, for a job to
// carry across the queue; "" when that span records nothing (tracing off,
// or a trace not sampled: its dispatch need not be traced either).
func Parent(ctx context.Context) string {
	sc := trace.SpanFromContext(ctx)
	if !sc.IsRecording() {
		return ""
	}
	return Format(sc.SpanContext())
}

// Format writes sc as a version 00 traceparent.
func Format(sc trace.SpanContext) string {
	var b [55]byte
	tid, sid := sc.TraceID(), sc.SpanID()
	b[0], b[1], b[2] = '0', '0', '-'
	hex.Encode(b[3:35], tid[:])
	b[35] = '-'
	hex.Encode(b[36:52], sid[:])
	b[52] = '-'
	hex.Encode(b[53:55], []byte{byte(sc.TraceFlags())})
	return string(b[:])
}

// ParseParent reads a traceparent written by Format (or sent by a
// caller): version 00's layout, lowercase hex, ids not all zero. Another
// version is read by its first four fields, as the W3C recommendation
// asks. The span context it returns is remote.
func ParseParent(s string) (trace.SpanContext, bool) {
	if len(s) < 55 || (len(s) > 55 && (s[:2] == "00" || s[55] != '-')) || s[2] != '-' || s[35] != '-' || s[52] != '-' || s[:2] == "ff" {
		return trace.SpanContext{}, false
	}
	var ver [1]byte
	var tid trace.TraceID
	var sid trace.SpanID
	var flags [1]byte
	if !lowerHex(s[:2]) || !lowerHex(s[3:35]) || !lowerHex(s[36:52]) || !lowerHex(s[53:55]) {
		return trace.SpanContext{}, false
	}
	if _, err := hex.Decode(ver[:], []byte(s[:2])); err != nil {
		return trace.SpanContext{}, false
	}
	if _, err := hex.Decode(tid[:], []byte(s[3:35])); err != nil {
		return trace.SpanContext{}, false
	}
	if _, err := hex.Decode(sid[:], []byte(s[36:52])); err != nil {
		return trace.SpanContext{}, false
	}
	if _, err := hex.Decode(flags[:], []byte(s[53:55])); err != nil {
		return trace.SpanContext{}, false
	}
	sc := trace.NewSpanContext(trace.SpanContextConfig{TraceID: tid, SpanID: sid,
		TraceFlags: trace.TraceFlags(flags[0]) & trace.FlagsSampled, Remote: true})
	return sc, sc.IsValid()
}

func lowerHex(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}

// parentsKey keys the traceparents of a queue job's requests in a
// context.
type parentsKey struct{}

// WithParents gives ctx the traceparents of a queue job's requests (by
// request id), which the job carried from their acceptance. An empty map
// leaves ctx as it is: a job accepted with tracing off costs nothing.
func WithParents(ctx context.Context, parents map[string]string) context.Context {
	if len(parents) == 0 {
		return ctx
	}
	return context.WithValue(ctx, parentsKey{}, parents)
}

// WithParent is WithParents for a job of one request.
func WithParent(ctx context.Context, requestID, parent string) context.Context {
	if parent == "" {
		return ctx
	}
	return context.WithValue(ctx, parentsKey{}, map[string]string{requestID: parent})
}

// ParentOf is the span context request requestID was accepted under, as
// its queue job carried it; invalid when the job carried none.
func ParentOf(ctx context.Context, requestID string) trace.SpanContext {
	parents, _ := ctx.Value(parentsKey{}).(map[string]string)
	if parents == nil {
		return trace.SpanContext{}
	}
	sc, _ := ParseParent(parents[requestID])
	return sc
}

// Peer marks span, the span of an outbound call to rawURL, with its peer
// (server.address, server.port) and the answer's HTTP status (0: none
// came). Only the host and port of rawURL are kept: a webhook's path may
// be its credential.
func Peer(span trace.Span, rawURL string, status int) {
	if u, err := url.Parse(rawURL); err == nil && u.Host != "" {
		span.SetAttributes(semconv.ServerAddress(u.Hostname()))
		port, _ := strconv.Atoi(u.Port())
		if port == 0 {
			port = map[string]int{"http": 80, "https": 443}[u.Scheme]
		}
		if port > 0 {
			span.SetAttributes(semconv.ServerPort(port))
		}
	}
	if status > 0 {
		span.SetAttributes(semconv.HTTPResponseStatusCode(status))
	}
}
