package metrics

import "github.com/prometheus/client_golang/prometheus"

// Retention counts the rows the retention purge deleted. A nil *Retention
// records nothing.
type Retention struct {
	// Deleted is by table (notification_requests, notification_jobs,
	// attempts, events, campaign_recipients, audit_logs).
	Deleted *prometheus.CounterVec
}

func newRetention(r *prometheus.Registry) *Retention {
	m := &Retention{Deleted: prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "notifyd_retention_deleted_total", Help: "Rows deleted by the retention purge, by table.",
	}, []string{"table"})}
	r.MustRegister(m.Deleted)
	return m
}

// Add records n rows deleted from table.
func (m *Retention) Add(table string, n int) {
	if m == nil || n <= 0 {
		return
	}
	m.Deleted.WithLabelValues(table).Add(float64(n))
}
