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

	"github.com/notifyd/notifyd/internal/api"
	"github.com/notifyd/notifyd/internal/metrics"
	"github.com/notifyd/notifyd/internal/notify"
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
}

// Handler builds the root handler.
func Handler(o Options) http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"status":"ok"}` + "\n"))
	})
	mux.HandleFunc("GET /readyz", func(w http.ResponseWriter, r *http.Request) {
		ctx, cancel := context.WithTimeout(r.Context(), 3*time.Second)
		defer cancel()
		w.Header().Set("Content-Type", "application/json")
		if err := o.Ready(ctx); err != nil {
			o.Logger.WarnContext(ctx, "not ready", "err", err)
			w.WriteHeader(http.StatusServiceUnavailable)
			_, _ = w.Write([]byte(`{"status":"unavailable"}` + "\n"))
			return
		}
		_, _ = w.Write([]byte(`{"status":"ready"}` + "\n"))
	})
	mux.Handle("GET /metrics", promhttp.HandlerFor(o.Metrics.Registry, promhttp.HandlerOpts{}))
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

type ctxKey struct{}

// RequestID returns the request id of ctx.
func RequestID(ctx context.Context) string {
	v, _ := ctx.Value(ctxKey{}).(string)
	return v
}

func middleware(next http.Handler, o Options) http.Handler {
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
		defer func() {
			if p := recover(); p != nil {
				if p == http.ErrAbortHandler {
					panic(p)
				}
				o.Logger.ErrorContext(r.Context(), "panic", "request_id", id, "path", r.URL.Path, "panic", fmt.Sprint(p))
				if !rec.wrote {
					o.API.WriteProblem(rec, r, notify.Errorf(notify.CodeInternal, "An internal error occurred"))
				}
			}
			route := o.API.Pattern(r)
			if route == "" {
				route = "unmatched" // raw paths would grow the label set without bound
			}
			d := time.Since(start)
			o.Metrics.HTTPRequests.WithLabelValues(route, r.Method, strconv.Itoa(rec.status)).Inc()
			o.Metrics.HTTPDuration.WithLabelValues(route, r.Method).Observe(d.Seconds())
			o.Logger.LogAttrs(r.Context(), slog.LevelInfo, "http",
				slog.String("request_id", id), slog.String("method", r.Method), slog.String("path", r.URL.Path),
				slog.Int("status", rec.status), slog.Duration("duration", d))
		}()
		next.ServeHTTP(rec, r)
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
