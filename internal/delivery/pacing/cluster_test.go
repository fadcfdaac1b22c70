package pacing

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestAllocate(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		total   float64
		demands []float64
		want    []float64
	}{
		{"none", 10, nil, []float64{}},
		{"one takes all", 10, []float64{100}, []float64{10}},
		{"saturated split equally", 50, []float64{300, 200}, []float64{25, 25}},
		{"small demand met, rest to the other", 50, []float64{5, 200}, []float64{5, 45}},
		{"under capacity spreads the spare", 50, []float64{10, 20}, []float64{20, 30}},
		{"no demand splits evenly", 9, []float64{0, 0, 0}, []float64{3, 3, 3}},
		{"three with one small", 30, []float64{2, 100, 100}, []float64{2, 14, 14}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := Allocate(tc.total, tc.demands)
			require.InDeltaSlice(t, tc.want, got, 1e-9)
		})
	}
}

func TestClusterShare(t *testing.T) {
	t.Parallel()
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	c := NewCluster()
	// Before any heartbeat the process applies the whole rate.
	require.Equal(t, 50.0, c.Share("workspace:w", 50, true))
	for range 99 {
		c.Share("workspace:w", 50, true)
	}
	d := c.TakeDemand(t0)
	require.Equal(t, map[string]float64{"workspace:w": 100}, d, "the first interval counts as one second")
	c.Share("workspace:w", 50, true)
	require.Equal(t, map[string]float64{"workspace:w": 2}, c.TakeDemand(t0.Add(500*time.Millisecond)), "per second")

	// Two saturated workers split the rate.
	for range 80 {
		c.Share("workspace:w", 50, true)
	}
	mine := c.TakeDemand(t0.Add(1500 * time.Millisecond))
	idle := c.Update("me", []WorkerDemand{{ID: "me", Demand: mine}, {ID: "other", Demand: map[string]float64{"workspace:w": 70, "apiKey:w:k": 3}}})
	require.Equal(t, []string{"apiKey:w:k"}, idle, "keys only others want")
	require.Equal(t, 2, c.Live())
	require.InDelta(t, 25, c.Share("workspace:w", 50, true), 1e-9)
	// A changed configured rate applies at once, as the same fraction.
	require.InDelta(t, 50, c.Share("workspace:w", 100, true), 1e-9)
	// A key not asked for in the interval gets rate / live workers.
	require.InDelta(t, 5, c.Share("provider:w:p", 10, true), 1e-9)

	// The other worker went idle on the key: this one takes it all.
	for range 60 {
		c.Share("workspace:w", 50, true)
	}
	mine = c.TakeDemand(t0.Add(2500 * time.Millisecond))
	c.Update("me", []WorkerDemand{{ID: "me", Demand: mine}, {ID: "other", Demand: map[string]float64{}}})
	f, ok := c.Part("workspace:w")
	require.True(t, ok)
	require.InDelta(t, 1, f, 1e-9)

	// Its own row missing (deleted as stale), it still counts itself.
	c.Update("me", []WorkerDemand{{ID: "other"}})
	require.Equal(t, 2, c.Live())
}
