// Package otlp turns tracing on when the standard OTEL_* variables ask for
// it, exporting spans over OTLP (HTTP/protobuf), and traces the HTTP calls
// the server answers. With the variables unset it builds nothing: the
// daemon's Tracer stays nil and no span is ever started.
package otlp

import (
	"context"
	"fmt"
	"net/http"
	"strconv"
	"strings"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	semconv "go.opentelemetry.io/otel/semconv/v1.43.0"
	"go.opentelemetry.io/otel/trace"

	"github.com/notifyd/notifyd/internal/redact"
	"github.com/notifyd/notifyd/internal/tracing"
)

// ScopeName is the instrumentation scope of notifyd's spans.
const ScopeName = "github.com/notifyd/notifyd"

// Enabled reports whether the OTEL_* variables (read with getenv) ask for
// traces exported over OTLP: an endpoint is set
// (OTEL_EXPORTER_OTLP_TRACES_ENDPOINT or OTEL_EXPORTER_OTLP_ENDPOINT),
// OTEL_TRACES_EXPORTER, when set, names otlp, and OTEL_SDK_DISABLED is not
// true. An unsupported OTEL_EXPORTER_OTLP_PROTOCOL is an error.
func Enabled(getenv func(string) string) (bool, error) {
	if strings.EqualFold(strings.TrimSpace(getenv("OTEL_SDK_DISABLED")), "true") {
		return false, nil
	}
	if exp := strings.TrimSpace(getenv("OTEL_TRACES_EXPORTER")); exp != "" {
		otlp := false
		for _, e := range strings.Split(exp, ",") {
			switch strings.ToLower(strings.TrimSpace(e)) {
			case "none":
				return false, nil
			case "otlp":
				otlp = true
			}
		}
		if !otlp {
			return false, fmt.Errorf("OTEL_TRACES_EXPORTER=%q: notifyd exports traces over otlp only (or none)", exp)
		}
	}
	if getenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT") == "" && getenv("OTEL_EXPORTER_OTLP_ENDPOINT") == "" {
		return false, nil
	}
	proto := cmp(getenv("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL"), getenv("OTEL_EXPORTER_OTLP_PROTOCOL"))
	if proto != "" && proto != "http/protobuf" {
		return false, fmt.Errorf("OTEL_EXPORTER_OTLP_PROTOCOL=%q: notifyd exports over http/protobuf only", proto)
	}
	return true, nil
}

func cmp(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// Provider is tracing turned on: the Tracer to hand to the instrumented
// places, and the SDK's provider to flush at shutdown.
type Provider struct {
	Tracer *tracing.Tracer
	tp     *sdktrace.TracerProvider
}

// FromEnv builds the exporter when Enabled says so; nil (tracing off)
// otherwise. The exporter, the batch span processor and the sampler read
// their own standard variables (OTEL_EXPORTER_OTLP_*, OTEL_BSP_*,
// OTEL_TRACES_SAMPLER), and the resource reads OTEL_SERVICE_NAME and
// OTEL_RESOURCE_ATTRIBUTES; the service name defaults to notifyd.
func FromEnv(ctx context.Context, getenv func(string) string, version string) (*Provider, error) {
	on, err := Enabled(getenv)
	if err != nil || !on {
		return nil, err
	}
	exp, err := otlptracehttp.New(ctx)
	if err != nil {
		return nil, fmt.Errorf("otlp trace exporter: %w", err)
	}
	attrs := []attribute.KeyValue{semconv.ServiceVersion(version)}
	if getenv("OTEL_SERVICE_NAME") == "" {
		attrs = append(attrs, semconv.ServiceName("notifyd"))
	}
	// Defaults first, then ours, then the environment's, which wins.
	res, err := resource.Merge(resource.Default(), resource.NewSchemaless(attrs...))
	if err == nil {
		res, err = resource.Merge(res, resource.Environment())
	}
	if err != nil {
		return nil, fmt.Errorf("trace resource: %w", err)
	}
	tp := sdktrace.NewTracerProvider(sdktrace.WithBatcher(exp), sdktrace.WithResource(res))
	return &Provider{Tracer: tracing.New(tp.Tracer(ScopeName)), tp: tp}, nil
}

// Shutdown flushes the spans still buffered and stops the exporter. A nil
// Provider has nothing to flush.
func (p *Provider) Shutdown(ctx context.Context) error {
	if p == nil {
		return nil
	}
	return p.tp.Shutdown(ctx)
}

// propagator reads and writes W3C trace context (traceparent,
// tracestate).
var propagator = propagation.TraceContext{}

// StartServer starts the server span of call r, continuing the caller's
// traceparent (and tracestate), and returns r with the span in its
// context. Call it only when t is on; EndServer ends the span.
func StartServer(t *tracing.Tracer, r *http.Request) (*http.Request, trace.Span) {
	ctx := propagator.Extract(r.Context(), propagation.HeaderCarrier(r.Header))
	ctx, span := t.Start(ctx, r.Method, trace.WithSpanKind(trace.SpanKindServer), trace.WithAttributes(
		semconv.URLPath(redact.Path(r.URL.Path)), semconv.URLScheme(scheme(r))))
	return r.WithContext(ctx), span
}

// EndServer names the span by the route the call took (METHOD /pattern;
// a call no route took keeps its method as its name) and ends it with the
// method (the metrics' label: a standard method, or "other") and the
// status answered.
func EndServer(span trace.Span, method, route string, status int) {
	if method == "other" {
		method = "_OTHER" // the semantic conventions' name for it
	}
	span.SetAttributes(semconv.HTTPRequestMethodKey.String(method))
	if _, path, ok := strings.Cut(route, " "); ok && strings.HasPrefix(path, "/") {
		span.SetName(route)
		span.SetAttributes(semconv.HTTPRoute(path))
	}
	span.SetAttributes(semconv.HTTPResponseStatusCode(status))
	if status >= 500 {
		span.SetStatus(codes.Error, strconv.Itoa(status))
	}
	span.End()
}

func scheme(r *http.Request) string {
	if r.TLS != nil {
		return "https"
	}
	return "http"
}
