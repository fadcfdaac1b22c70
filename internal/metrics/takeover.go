package metrics

import "github.com/prometheus/client_golang/prometheus"

// Takeovers counts the requests a run took over from a run whose process
// died before recording them, by what became of them: "noted" (the dead
// run had noted its vendor call's outcome, which is recorded; nothing is
// sent again) or "resent" (no note: the request goes to the vendor again,
// a duplicate when the dead run's call had reached it). The resent count
// is the bound on duplicates after a crash (docs/DECISIONS.md
// "Duplicates after a crash").
type Takeovers struct {
	c *prometheus.CounterVec
}

func newTakeovers(r *prometheus.Registry) *Takeovers {
	t := &Takeovers{c: prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "notifyd_delivery_takeovers_total",
		Help: "Requests taken over from a dead process's run: noted (its outcome recorded, not sent again) or resent.",
	}, []string{"outcome"})}
	r.MustRegister(t.c)
	return t
}

// Add counts noted and resent takeovers.
func (t *Takeovers) Add(noted, resent int) {
	if t == nil {
		return
	}
	if noted > 0 {
		t.c.WithLabelValues("noted").Add(float64(noted))
	}
	if resent > 0 {
		t.c.WithLabelValues("resent").Add(float64(resent))
	}
}
