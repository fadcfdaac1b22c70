package metrics

import "github.com/prometheus/client_golang/prometheus"

// InboxStreams registers notifyd_inbox_streams: the in-app inbox streams
// open on this process, as open reads it (the inbox room's count) at each
// scrape.
func (m *Metrics) InboxStreams(open func() int) {
	m.Registry.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name: "notifyd_inbox_streams", Help: "In-app inbox streams (Server-Sent Events) open on this process.",
	}, func() float64 { return float64(open()) }))
}
