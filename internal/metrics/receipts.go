package metrics

import "github.com/prometheus/client_golang/prometheus"

// Receipts counts delivery receipts (issue 35): those created (one per
// accepted attempt of a kind that reports) and those that became final,
// by channel and provider kind. Delivered over final is the delivery rate;
// created minus final is what is still pending. Provider account ids are
// not labels: there is one per account of every workspace, an unbounded
// set; /v1/metrics answers per account (docs/DECISIONS.md "Delivery
// rates").
type Receipts struct {
	final   *prometheus.CounterVec
	created *prometheus.CounterVec
}

func newReceipts(r *prometheus.Registry) *Receipts {
	m := &Receipts{final: prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "notifyd_receipts_total",
		Help: "Delivery receipts that became final, by channel, provider kind and status (delivered, undelivered, unknown).",
	}, []string{"channel", "provider_kind", "status"}),
		created: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "notifyd_receipts_created_total",
			Help: "Delivery receipts created (pending: an accepted message awaiting its vendor's report), by channel and provider kind.",
		}, []string{"channel", "provider_kind"})}
	r.MustRegister(m.final, m.created)
	return m
}

// Final counts one receipt of channel and kind that became status.
func (m *Receipts) Final(channel, kind, status string) {
	if m == nil {
		return
	}
	m.final.WithLabelValues(channel, kind, status).Inc()
}

// Created counts n receipts of channel and kind created pending.
func (m *Receipts) Created(channel, kind string, n int) {
	if m == nil || n == 0 {
		return
	}
	m.created.WithLabelValues(channel, kind).Add(float64(n))
}
