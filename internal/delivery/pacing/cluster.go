package pacing

import (
	"sort"
	"sync"
	"time"
)

// WorkerDemand is one live worker process as its heartbeat row says: its
// id and, per limit key, how many sends per second it reserved during its
// last heartbeat interval (its demand).
type WorkerDemand struct {
	ID     string
	Demand map[string]float64
}

// Cluster divides each configured dispatch rate among the live worker
// processes so that the rate holds for the whole cluster, not per process
// (SPEC accepts N times the rate; we do better). Each process counts its
// demand per limit key, publishes it with its heartbeat, and reads every
// live worker's demand back; the rate of a key is then split max-min
// fairly over the workers that want it: a worker needing less than an
// equal part gets what it needs, the others share the rest equally, and
// when the cluster wants less than the rate the spare is spread evenly,
// so the parts always add up to the rate.
//
// A key this process has not asked for during the last interval gets an
// equal part (rate divided by the live workers) until the next heartbeat.
// Without any heartbeat (API processes, or before the first one) the
// process applies the whole rate. Cluster implements Sharer.
type Cluster struct {
	mu     sync.Mutex
	demand map[string]float64 // reservations since the last heartbeat
	rate   map[string]float64 // configured rate last seen per key
	part   map[string]float64 // key -> this process's fraction of the rate
	live   int                // live workers, this one included; 0: unknown
	since  time.Time          // start of the demand interval
}

// NewCluster returns a Cluster that knows no other worker yet.
func NewCluster() *Cluster {
	return &Cluster{demand: map[string]float64{}, rate: map[string]float64{}, part: map[string]float64{}}
}

// Share implements Sharer: it returns this process's part of rate and,
// with count, counts one unit of demand for key.
func (c *Cluster) Share(key string, rate float64, count bool) float64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	if count {
		c.demand[key]++
		c.rate[key] = rate
	}
	if f, ok := c.part[key]; ok {
		return rate * f
	}
	if c.live > 1 {
		return rate / float64(c.live)
	}
	return rate
}

// TakeDemand returns the demand per second counted since the previous
// call (at least a second is assumed for the first) and starts a new
// interval at now; the heartbeat publishes it.
func (c *Cluster) TakeDemand(now time.Time) map[string]float64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	secs := 1.0
	if !c.since.IsZero() {
		secs = max(now.Sub(c.since).Seconds(), 0.1)
	}
	d := c.demand
	for k := range d {
		d[k] /= secs
	}
	c.demand, c.since = make(map[string]float64, len(d)), now
	return d
}

// Live is the number of live workers seen by the last heartbeat (0 before
// the first).
func (c *Cluster) Live() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.live
}

// Part reports this process's fraction of key's rate and whether it was
// computed from the last heartbeat.
func (c *Cluster) Part(key string) (float64, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	f, ok := c.part[key]
	return f, ok
}

// Update recomputes the parts from the live workers' rows (self among
// them; it is counted even if its row is missing). It returns the keys
// other workers want and this one did not: their buckets here should hold
// no burst, or the cluster's burst would exceed the rate when this worker
// starts again (Limiter.Drain).
func (c *Cluster) Update(self string, workers []WorkerDemand) (idle []string) {
	live := len(workers)
	var mine map[string]float64
	for _, w := range workers {
		if w.ID == self {
			mine = w.Demand
		}
	}
	if mine == nil {
		live++
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	part := make(map[string]float64, len(mine))
	for key, d := range mine {
		rate := c.rate[key]
		if d <= 0 || rate <= 0 {
			continue
		}
		// Demands of every worker that wants key, self first.
		ds := []float64{d}
		for _, w := range workers {
			if w.ID != self && w.Demand[key] > 0 {
				ds = append(ds, w.Demand[key])
			}
		}
		part[key] = Allocate(rate, ds)[0] / rate
	}
	for key := range c.rate {
		if _, ok := mine[key]; !ok {
			delete(c.rate, key) // not asked for during the interval
		}
	}
	c.part, c.live = part, live
	seen := map[string]bool{}
	for _, w := range workers {
		for key, d := range w.Demand {
			if w.ID != self && d > 0 && mine[key] <= 0 && !seen[key] {
				seen[key] = true
				idle = append(idle, key)
			}
		}
	}
	return idle
}

// Allocate splits total max-min fairly over demands: each gets at most its
// demand while others want more, the unmet share equally, and whatever is
// left when all are met is spread evenly. The parts add up to total.
func Allocate(total float64, demands []float64) []float64 {
	n := len(demands)
	out := make([]float64, n)
	if n == 0 {
		return out
	}
	var sum float64
	for _, d := range demands {
		sum += max(d, 0)
	}
	if sum <= 0 {
		for i := range out {
			out[i] = total / float64(n)
		}
		return out
	}
	order := make([]int, n)
	for i := range order {
		order[i] = i
	}
	sort.Slice(order, func(a, b int) bool { return demands[order[a]] < demands[order[b]] })
	if sum < total {
		// Everyone is met; spread the spare evenly.
		for i, d := range demands {
			out[i] = max(d, 0) + (total-sum)/float64(n)
		}
		return out
	}
	left := total
	for k, i := range order {
		fair := left / float64(n-k)
		give := min(max(demands[i], 0), fair)
		out[i] = give
		left -= give
	}
	return out
}
