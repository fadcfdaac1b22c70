package metrics

import "github.com/prometheus/client_golang/prometheus"

// Batch holds the adapter-batching collectors; it is the dispatcher's
// batch observer (pacing.BatchObserver).
type Batch struct {
	Size    *prometheus.HistogramVec
	Flushes *prometheus.CounterVec
	Calls   *prometheus.CounterVec
}

func newBatch(r *prometheus.Registry) *Batch {
	b := &Batch{
		Size: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "notifyd_batch_size", Help: "Messages per adapter batch, by provider kind.",
			Buckets: []float64{1, 2, 5, 10, 20, 50, 100, 200, 500, 1000},
		}, []string{"kind"}),
		Flushes: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "notifyd_batch_flushes_total", Help: "Adapter batch flushes by provider kind and reason (window, full, sync).",
		}, []string{"kind", "reason"}),
		Calls: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "notifyd_provider_api_calls_total", Help: "Vendor API calls made by the adapters, by provider kind.",
		}, []string{"kind"}),
	}
	r.MustRegister(b.Size, b.Flushes, b.Calls)
	return b
}

// Flushed records one batch of size messages sent in calls vendor calls.
func (b *Batch) Flushed(kind string, size int, reason string, calls int) {
	b.Size.WithLabelValues(kind).Observe(float64(size))
	b.Flushes.WithLabelValues(kind, reason).Inc()
	b.Calls.WithLabelValues(kind).Add(float64(calls))
}
