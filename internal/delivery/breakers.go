package delivery

import (
	"context"
	"slices"
	"sync"
	"time"

	"github.com/notifyd/notifyd/internal/dispatch"
	"github.com/notifyd/notifyd/internal/notify"
)

// breakers is a job run's view of the circuits it uses: read once when
// the run starts, moved by every outcome as it arrives (so the run's later
// sends see a circuit its earlier ones opened), and written back only
// where something changed. A run whose sends all succeeded writes nothing
// unless the shared row was not already closed: the row every delivery
// through a provider would otherwise rewrite is not a lock they all queue
// on.
type breakers struct {
	mu sync.Mutex
	m  map[string]*breakerState
}

type breakerState struct {
	cur      notify.BreakerRecord
	outcomes []breakerOutcome // recorded by this run, in order
}

type breakerOutcome struct {
	success bool
	at      time.Time
}

func newBreakers(recs map[string]*notify.BreakerRecord) *breakers {
	bs := &breakers{m: map[string]*breakerState{}}
	for id, r := range recs {
		bs.m[id] = &breakerState{cur: *r}
	}
	return bs
}

func (bs *breakers) state(id string) *breakerState {
	st := bs.m[id]
	if st == nil {
		st = &breakerState{cur: notify.BreakerRecord{ProviderAccountID: id, State: notify.BreakerClosed}}
		bs.m[id] = st
	}
	return st
}

// allow applies the policy's admission to account id at now. When the
// admission claims a half-open trial, claimed is the record to store
// before the call, so other workers skip the provider meanwhile.
func (bs *breakers) allow(p dispatch.BreakerPolicy, id string, now time.Time) (allowed bool, claimed *notify.BreakerRecord) {
	if bs == nil {
		return true, nil // a test-send bypasses the circuit
	}
	bs.mu.Lock()
	defer bs.mu.Unlock()
	st := bs.state(id)
	ok, next := p.Allow(st.cur, now)
	if !ok {
		return false, nil
	}
	if next != st.cur {
		next.UpdatedAt = now
		st.cur = next
		claimed = &next
	}
	return true, claimed
}

// release gives back a trial claimed in memory but never made (the send
// stopped before its call); the claim was not stored yet.
func (bs *breakers) release(id string, claimed *notify.BreakerRecord) {
	if bs == nil || claimed == nil {
		return
	}
	bs.mu.Lock()
	defer bs.mu.Unlock()
	st := bs.state(id)
	st.cur.TrialInFlight = false
}

// record moves account id's circuit by one outcome.
func (bs *breakers) record(p dispatch.BreakerPolicy, id string, success bool, at time.Time) {
	if bs == nil {
		return
	}
	bs.mu.Lock()
	defer bs.mu.Unlock()
	st := bs.state(id)
	st.cur = p.Record(st.cur, success, at)
	st.outcomes = append(st.outcomes, breakerOutcome{success: success, at: at})
}

// outcomes is what runs learned about circuits, by account, in order.
type outcomes map[string][]breakerOutcome

// take returns the outcomes recorded since the last take and forgets
// them, so a run recorded in several writes (each send's outcome is
// written as it answers) adds each outcome to the shared row once.
func (bs *breakers) take() outcomes {
	if bs == nil {
		return nil
	}
	bs.mu.Lock()
	defer bs.mu.Unlock()
	out := outcomes{}
	for id, st := range bs.m {
		if len(st.outcomes) > 0 {
			out[id] = st.outcomes
			st.outcomes = nil
		}
	}
	return out
}

// add appends more outcomes (another run's) to o.
func (o outcomes) add(more outcomes) {
	for id, list := range more {
		o[id] = append(o[id], list...)
	}
}

// save writes the outcomes to the shared circuit rows. An account
// whose outcomes were all successes ends closed whatever its row said,
// and the row is written only when it was not closed already (usually it
// is, and nothing is written). Otherwise the row is locked, read afresh
// and moved by these outcomes in order, so the outcomes of concurrent
// runs add up. Rows are locked in id order, so two writers never wait on
// each other in a circle.
func (o outcomes) save(ctx context.Context, tx notify.Tx, p dispatch.BreakerPolicy, now time.Time) error {
	var clean, mixed []string
	for id, list := range o {
		allOK := true
		for _, oc := range list {
			allOK = allOK && oc.success
		}
		if allOK {
			clean = append(clean, id)
		} else {
			mixed = append(mixed, id)
		}
	}
	slices.Sort(clean)
	slices.Sort(mixed)
	if len(clean) > 0 {
		if err := tx.CloseBreakers(ctx, clean, now); err != nil {
			return err
		}
	}
	if len(mixed) == 0 {
		return nil
	}
	fresh, err := tx.LockBreakers(ctx, mixed)
	if err != nil {
		return err
	}
	for _, id := range mixed {
		b := notify.BreakerRecord{ProviderAccountID: id, State: notify.BreakerClosed}
		if r := fresh[id]; r != nil {
			b = *r
		}
		list := slices.Clone(o[id])
		slices.SortStableFunc(list, func(x, y breakerOutcome) int { return x.at.Compare(y.at) })
		for _, oc := range list { // mixed: at least one
			b = p.Record(b, oc.success, oc.at)
			b.UpdatedAt = oc.at
		}
		if err := tx.PutBreaker(ctx, &b); err != nil {
			return err
		}
	}
	return nil
}
