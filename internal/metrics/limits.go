package metrics

import "github.com/prometheus/client_golang/prometheus"

// Limits are the collectors of dispatch limits (token buckets toward
// providers) and of request rate limits. A nil *Limits records nothing.
type Limits struct {
	// DispatchWait is the wait a dispatch limit imposed on one send, per
	// applied scope (workspace, provider, apiKey); zero waits count too.
	DispatchWait *prometheus.HistogramVec
	// DispatchSnoozes counts job runs put back in the queue because the
	// wait was too long to hold a worker slot, by binding scope.
	DispatchSnoozes *prometheus.CounterVec
	// ClusterWorkers is the number of live worker processes the last
	// heartbeat saw (the rate is split among them).
	ClusterWorkers prometheus.Gauge
	// Waiting is how many sends are sleeping on a dispatch limit now.
	Waiting prometheus.Gauge
	// Rejected counts 429 answers by error code (SVC-4290, SVC-4291,
	// SVC-42900).
	Rejected *prometheus.CounterVec
	// OTPFraudRefusals counts OTP sends refused by the fraud guard, by rule
	// (fraudguard.go).
	OTPFraudRefusals *prometheus.CounterVec
}

func newLimits(r *prometheus.Registry) *Limits {
	l := &Limits{
		DispatchWait: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "notifyd_dispatch_limit_wait_seconds", Help: "Wait imposed by a dispatch limit on one send, by scope.",
			Buckets: []float64{0, .01, .05, .1, .25, .5, 1, 2, 5, 10},
		}, []string{"scope"}),
		DispatchSnoozes: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "notifyd_dispatch_limit_snoozes_total", Help: "Dispatch job runs snoozed by a dispatch limit instead of waiting, by binding scope.",
		}, []string{"scope"}),
		ClusterWorkers: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "notifyd_dispatch_cluster_workers", Help: "Live worker processes sharing the dispatch limits, as of the last heartbeat.",
		}),
		Waiting: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "notifyd_dispatch_limit_waiting", Help: "Sends currently waiting on a dispatch limit in this process.",
		}),
		Rejected: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "notifyd_requests_rejected_total", Help: "Requests answered 429 by a request or OTP limit, by error code.",
		}, []string{"code"}),
		OTPFraudRefusals: newFraudRefused(),
	}
	r.MustRegister(l.DispatchWait, l.DispatchSnoozes, l.ClusterWorkers, l.Waiting, l.Rejected, l.OTPFraudRefusals)
	return l
}

// ObserveWait records one send's wait under scope.
func (l *Limits) ObserveWait(scope string, seconds float64) {
	if l != nil {
		l.DispatchWait.WithLabelValues(scope).Observe(seconds)
	}
}

// Snoozed counts one snoozed run bound by scope.
func (l *Limits) Snoozed(scope string) {
	if l != nil {
		l.DispatchSnoozes.WithLabelValues(scope).Inc()
	}
}

// SetWorkers records the live worker count.
func (l *Limits) SetWorkers(n int) {
	if l != nil {
		l.ClusterWorkers.Set(float64(n))
	}
}

// AddWaiting moves the waiting gauge by d.
func (l *Limits) AddWaiting(d float64) {
	if l != nil {
		l.Waiting.Add(d)
	}
}

// Reject counts one 429 answer of code.
func (l *Limits) Reject(code string) {
	if l != nil {
		l.Rejected.WithLabelValues(code).Inc()
	}
}
