// Package metrics is the one place where metric names and collectors are
// declared. Each daemon has its own registry, so tests can run several.
package metrics

import (
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
)

// Metrics holds every collector of one process.
type Metrics struct {
	Registry     *prometheus.Registry
	HTTPRequests *prometheus.CounterVec
	HTTPDuration *prometheus.HistogramVec
	// ProviderAttempt counts provider attempts (attempts.go).
	ProviderAttempt *Attempts
	// Dispatch limits and request limits (limits.go).
	Limits   *Limits
	Batch    *Batch    // adapter batching (batch.go)
	Webhooks *Webhooks // event webhooks (webhooks.go)
	// Retention counts what the retention purge deleted (retention.go).
	Retention *Retention
	// Takeovers counts requests taken over from dead runs (takeover.go).
	Takeovers *Takeovers
	// Receipts counts delivery receipts that became final (receipts.go).
	Receipts *Receipts
}

// New registers the collectors on a fresh registry.
func New() *Metrics {
	m := &Metrics{
		Registry: prometheus.NewRegistry(),
		HTTPRequests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "notifyd_http_requests_total", Help: "HTTP requests by route pattern, method and status.",
		}, []string{"route", "method", "status"}),
		HTTPDuration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "notifyd_http_request_duration_seconds", Help: "HTTP request latency by route pattern.",
			Buckets: []float64{.001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5},
		}, []string{"route", "method"}),
		ProviderAttempt: newAttempts(),
	}
	m.Limits = newLimits(m.Registry)
	m.Registry.MustRegister(m.HTTPRequests, m.HTTPDuration, m.ProviderAttempt.v,
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	m.Batch = newBatch(m.Registry)
	m.Webhooks = newWebhooks(m.Registry)
	m.Retention = newRetention(m.Registry)
	m.Takeovers = newTakeovers(m.Registry)
	m.Receipts = newReceipts(m.Registry)
	return m
}
