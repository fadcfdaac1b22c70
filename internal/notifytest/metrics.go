package notifytest

import (
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	"github.com/stretchr/testify/require"
)

// Gauge is the value of the first series of the gauge name in reg (0 when
// it has none yet).
func Gauge(t testing.TB, reg *prometheus.Registry, name string) float64 {
	t.Helper()
	if ms := series(t, reg, name); len(ms) > 0 {
		return ms[0].GetGauge().GetValue()
	}
	return 0
}

// CounterSum adds the counter name over all its series in reg.
func CounterSum(t testing.TB, reg *prometheus.Registry, name string) float64 {
	t.Helper()
	var n float64
	for _, m := range series(t, reg, name) {
		n += m.GetCounter().GetValue()
	}
	return n
}

// HistogramCount adds the sample counts of the histogram name over all its
// series in reg.
func HistogramCount(t testing.TB, reg *prometheus.Registry, name string) uint64 {
	t.Helper()
	var n uint64
	for _, m := range series(t, reg, name) {
		n += m.GetHistogram().GetSampleCount()
	}
	return n
}

func series(t testing.TB, reg *prometheus.Registry, name string) []*dto.Metric {
	t.Helper()
	mfs, err := reg.Gather()
	require.NoError(t, err)
	for _, mf := range mfs {
		if mf.GetName() == name {
			return mf.GetMetric()
		}
	}
	return nil
}

// Counter is the value of the counter name's series whose labels include
// every pair of labels (0 when there is none).
func Counter(t testing.TB, reg *prometheus.Registry, name string, labels map[string]string) float64 {
	t.Helper()
	var n float64
next:
	for _, m := range series(t, reg, name) {
		have := map[string]string{}
		for _, l := range m.GetLabel() {
			have[l.GetName()] = l.GetValue()
		}
		for k, v := range labels {
			if have[k] != v {
				continue next
			}
		}
		n += m.GetCounter().GetValue()
	}
	return n
}
