package notify

import "context"

// Lane is the priority lane of a request's delivery (issue 31, item 2):
// transactional sends (API sends, OTP, test-sends) go ahead of bulk work
// in the queue and in every dispatch budget.
type Lane string

const (
	// LaneTransactional is every send a caller waits for or a person
	// triggered: the default.
	LaneTransactional Lane = ""
	// LaneBulk is a campaign's deliveries, and the items of a bulk call
	// its caller marked as bulk work.
	LaneBulk Lane = "bulk"
)

type laneKey struct{}

// WithLane marks ctx as work of lane: a store with a single writer
// (SQLite) lets bulk work's write transactions wait behind the others.
func WithLane(ctx context.Context, lane Lane) context.Context {
	return context.WithValue(ctx, laneKey{}, lane)
}

// LaneOf is the lane ctx was marked with (transactional when none).
func LaneOf(ctx context.Context) Lane {
	l, _ := ctx.Value(laneKey{}).(Lane)
	return l
}

// Lane is the request's lane: bulk for a campaign's delivery or a
// request its caller marked so.
func (r *Request) Lane() Lane {
	if r.CampaignID != "" || r.MarkedLane == LaneBulk {
		return LaneBulk
	}
	return LaneTransactional
}
