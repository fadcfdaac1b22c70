package metrics

import "github.com/prometheus/client_golang/prometheus"

// Receipts counts delivery receipts (issue 35) that became final, by
// provider kind and status (delivered, undelivered, unknown): the
// vendors' arrival rates.
type Receipts struct {
	c *prometheus.CounterVec
}

func newReceipts(r *prometheus.Registry) *Receipts {
	m := &Receipts{c: prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "notifyd_receipts_total",
		Help: "Delivery receipts that became final, by provider kind and status (delivered, undelivered, unknown).",
	}, []string{"provider_kind", "status"})}
	r.MustRegister(m.c)
	return m
}

// Final counts one receipt of kind that became status.
func (m *Receipts) Final(kind, status string) {
	if m == nil {
		return
	}
	m.c.WithLabelValues(kind, status).Inc()
}
