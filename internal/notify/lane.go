package notify

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

// Lane is the request's lane: bulk for a campaign's delivery or a
// request its caller marked so.
func (r *Request) Lane() Lane {
	if r.CampaignID != "" || r.MarkedLane == LaneBulk {
		return LaneBulk
	}
	return LaneTransactional
}
