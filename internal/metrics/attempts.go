package metrics

import "github.com/prometheus/client_golang/prometheus"

// Attempts counts provider attempts by kind, result (success or the
// failure code) and mode: "test" for test requests (issue 36), whose
// calls reach only the in-process simulator, "live" for the others.
type Attempts struct{ v *prometheus.CounterVec }

func newAttempts() *Attempts {
	return &Attempts{v: prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "notifyd_provider_attempts_total",
		Help: "Provider attempts by kind, result (success or failure code) and mode (live, or test: a test-mode key's, answered by the built-in simulator).",
	}, []string{"kind", "result", "mode"})}
}

// Observe counts one attempt; a nil Attempts counts nothing.
func (a *Attempts) Observe(kind, result string, test bool) {
	if a == nil {
		return
	}
	mode := "live"
	if test {
		mode = "test"
	}
	a.v.WithLabelValues(kind, result, mode).Inc()
}
