// Package server is the HTTP front: the root mux (the API, /healthz,
// /readyz, /metrics, /openapi.yaml) and the middleware every request goes
// through: request id, panic recovery, access log, metrics.
package server

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"log/slog"
	"net/http"
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus/promhttp"
	"go.opentelemetry.io/otel/trace"

	"github.com/notifyd/notifyd/internal/api"
	"github.com/notifyd/notifyd/internal/metrics"
	"github.com/notifyd/notifyd/internal/notify"
	"github.com/notifyd/notifyd/internal/redact"
	"github.com/notifyd/notifyd/internal/tracing"
	"github.com/notifyd/notifyd/internal/tracing/otlp"
)

// Options assemble the handler.
type Options struct {
	API     *api.API
	Metrics *metrics.Metrics
	Logger  *slog.Logger
	// Ready reports whether the database answers with a current schema.
	Ready   func(ctx context.Context) error
	OpenAPI []byte
	// Extra mounts more handlers (public web pages) by pattern.
	Extra map[string]http.Handler
	// NoMetrics leaves /metrics off this handler: it is served on an
	// address of its own (NOTIFYD_METRICS_ADDR, MetricsHandler).
	NoMetrics bool
	// Tracer traces every call, continuing the caller's traceparent
	// (README "Tracing"); nil: tracing off, nothing is read or started.
	Tracer *tracing.Tracer
}

// Merge joins handler maps by pattern (Options.Extra: the web console's
// and public pages' handlers beside the API's own by-pattern ones).
func Merge(ms ...map[string]http.Handler) map[string]http.Handler {
	out := map[string]http.Handler{}
	for _, m := range ms {
		for p, h := range m {
			out[p] = h
		}
	}
	return out
}

// MetricsHandler serves GET /metrics alone, for a listener of its own.
func MetricsHandler(m *metrics.Metrics) http.Handler {
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", promhttp.HandlerFor(m.Registry, promhttp.HandlerOpts{}))
	return mux
}

// Probes mounts GET /healthz (the process answers) and GET /readyz (ready
// reports nil within 3 s) on mux: the API listener and a worker's probes
// listener answer them alike.
func Probes(mux *http.ServeMux, ready func(ctx context.Context) error, log *slog.Logger) {
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"status":"ok"}` + "\n"))
	})
	mux.HandleFunc("GET /readyz", func(w http.ResponseWriter, r *http.Request) {
		ctx, cancel := context.WithTimeout(r.Context(), 3*time.Second)
		defer cancel()
		w.Header().Set("Content-Type", "application/json")
		if err := ready(ctx); err != nil {
			log.WarnContext(ctx, "not ready", "err", err)
			w.WriteHeader(http.StatusServiceUnavailable)
			_, _ = w.Write([]byte(`{"status":"unavailable"}` + "\n"))
			return
		}
		_, _ = w.Write([]byte(`{"status":"ready"}` + "\n"))
	})
}

// Handler builds the root handler.
func Handler(o Options) http.Handler {
	mux := http.NewServeMux()
	Probes(mux, o.Ready, o.Logger)
	if !o.NoMetrics {
		mux.Handle("GET /metrics", promhttp.HandlerFor(o.Metrics.Registry, promhttp.HandlerOpts{}))
	}
	mux.HandleFunc("GET /openapi.yaml", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/yaml")
		_, _ = w.Write(o.OpenAPI)
	})
	for pattern, h := range o.Extra {
		mux.Handle(pattern, h)
	}
	mux.Handle("/", o.API)
	return middleware(mux, o)
}

// routeLabel is the route pattern r matched, for metrics labels: the
// API's route, or the root mux's (health, metrics, OpenAPI, public
// pages). Each ServeMux records the pattern it matched in r.Pattern (the
// API's mux last), so no route is matched again here. Anything else is
// "unmatched": raw paths would grow the label set without bound.
func routeLabel(r *http.Request) string {
	if r.Method == http.MethodConnect {
		return "unmatched" // no route takes it, and the mux names a CONNECT redirect by its raw path
	}
	if r.Pattern == "" || r.Pattern == "/" {
		return "unmatched" // "/" is the API's mount: its own mux found no route
	}
	return r.Pattern
}

// methodLabel is r's method for metrics labels: the standard methods as
// they are, any other under one value (a client chooses the method).
func methodLabel(method string) string {
	switch method {
	case http.MethodGet, http.MethodHead, http.MethodPost, http.MethodPut, http.MethodPatch,
		http.MethodDelete, http.MethodOptions, http.MethodConnect, http.MethodTrace:
		return method
	}
	return "other"
}

// logPath is path as the logs show it: secrets in it redacted
// (internal/redact), and at most 256 bytes of it.
func logPath(path string) string {
	path = redact.Path(path)
	if len(path) > 256 {
		path = path[:256] + "…"
	}
	return path
}

type ctxKey struct{}

// RequestID returns the request id of ctx.
func RequestID(ctx context.Context) string {
	v, _ := ctx.Value(ctxKey{}).(string)
	return v
}

func middleware(mux *http.ServeMux, o Options) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		id := r.Header.Get("X-Request-Id")
		if id == "" || len(id) > 128 {
			b := make([]byte, 8)
			_, _ = rand.Read(b)
			id = hex.EncodeToString(b)
		}
		w.Header().Set("X-Request-Id", id)
		r = r.WithContext(context.WithValue(r.Context(), ctxKey{}, id))
		rec := &recorder{ResponseWriter: w, status: http.StatusOK}
		var span trace.Span
		if o.Tracer.On() {
			r, span = otlp.StartServer(o.Tracer, r)
		}
		defer func() {
			if p := recover(); p != nil {
				if p == http.ErrAbortHandler {
					panic(p)
				}
				o.Logger.ErrorContext(r.Context(), "panic", "request_id", id, "path", logPath(r.URL.Path), "panic", fmt.Sprint(p))
				if !rec.wrote {
					o.API.WriteProblem(rec, r, notify.Errorf(notify.CodeInternal, "An internal error occurred"))
				}
			}
			route, method := routeLabel(r), methodLabel(r.Method)
			if span != nil {
				otlp.EndServer(span, method, route, rec.status)
			}
			d := time.Since(start)
			o.Metrics.HTTPRequests.WithLabelValues(route, method, strconv.Itoa(rec.status)).Inc()
			o.Metrics.HTTPDuration.WithLabelValues(route, method).Observe(d.Seconds())
			logMethod := r.Method
			if method == "other" && len(logMethod) > 32 {
				logMethod = logMethod[:32] + "…"
			}
			o.Logger.LogAttrs(r.Context(), slog.LevelInfo, "http",
				slog.String("request_id", id), slog.String("method", logMethod), slog.String("path", logPath(r.URL.Path)),
				slog.Int("status", rec.status), slog.Duration("duration", d))
		}()
		mux.ServeHTTP(rec, r)
	})
}

type recorder struct {
	http.ResponseWriter
	status int
	wrote  bool
}

func (r *recorder) WriteHeader(code int) {
	if !r.wrote {
		r.status, r.wrote = code, true
	}
	r.ResponseWriter.WriteHeader(code)
}

func (r *recorder) Write(b []byte) (int, error) {
	r.wrote = true
	return r.ResponseWriter.Write(b)
}

// Unwrap lets http.ResponseController reach the real writer.
func (r *recorder) Unwrap() http.ResponseWriter { return r.ResponseWriter }
