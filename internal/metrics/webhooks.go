package metrics

import "github.com/prometheus/client_golang/prometheus"

// Webhooks are the collectors of event webhook delivery. A nil *Webhooks
// records nothing.
type Webhooks struct {
	// Tries counts POSTs to receivers by result: "2xx", "4xx", "5xx",
	// "other" (another status) or "error" (no answer: timeout, refused,
	// SSRF guard).
	Tries *prometheus.CounterVec
	// TryDuration is how long a receiver took to answer.
	TryDuration prometheus.Histogram
	// Finished counts deliveries that ended, by outcome (delivered, failed).
	Finished *prometheus.CounterVec
}

func newWebhooks(r *prometheus.Registry) *Webhooks {
	w := &Webhooks{
		Tries: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "notifyd_webhook_tries_total", Help: "Webhook POSTs to receivers by result (2xx, 4xx, 5xx, other, error).",
		}, []string{"result"}),
		TryDuration: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name: "notifyd_webhook_try_duration_seconds", Help: "Time a webhook receiver took to answer one try.",
			Buckets: []float64{.005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10},
		}),
		Finished: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "notifyd_webhook_deliveries_finished_total", Help: "Webhook deliveries that ended, by outcome (delivered, failed).",
		}, []string{"outcome"}),
	}
	r.MustRegister(w.Tries, w.TryDuration, w.Finished)
	return w
}

// Try records one try: its HTTP status (0: no answer) and duration.
func (w *Webhooks) Try(status int, seconds float64) {
	if w == nil {
		return
	}
	result := "error"
	switch {
	case status >= 200 && status < 300:
		result = "2xx"
	case status >= 400 && status < 500:
		result = "4xx"
	case status >= 500 && status < 600:
		result = "5xx"
	case status != 0:
		result = "other"
	}
	w.Tries.WithLabelValues(result).Inc()
	if status != 0 {
		w.TryDuration.Observe(seconds)
	}
}

// Finish counts one delivery that ended with outcome.
func (w *Webhooks) Finish(outcome string) {
	if w != nil {
		w.Finished.WithLabelValues(outcome).Inc()
	}
}
