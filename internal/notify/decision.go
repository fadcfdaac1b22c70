package notify

import "time"

// A Decision is one thing notifyd decided about a request and why (issue
// 32, item 7): the address a profile gave, the preference rule that let
// a channel through or stopped it, the send window that held it, the
// frequency cap. Decisions are recorded on the request when it is
// accepted and when it is dispatched, so "why did user 42 not get it?"
// is answered by the request itself. A send by address without a
// category records none.
type Decision struct {
	Stage   string     `json:"stage"` // StageAcceptance or StageDispatch
	At      time.Time  `json:"at"`
	Kind    string     `json:"kind"` // DecisionAddress, DecisionPreference, DecisionWindow, DecisionCap
	Channel Channel    `json:"channel,omitempty"`
	Outcome string     `json:"outcome"` // OutcomeAllowed, OutcomeBlocked, OutcomeHeld, ...
	Rule    string     `json:"rule,omitempty"`
	Detail  string     `json:"detail,omitempty"`
	Until   *time.Time `json:"until,omitempty"` // a hold's end
}

// Decision stages.
const (
	StageAcceptance = "acceptance"
	StageDispatch   = "dispatch"
)

// Decision kinds.
const (
	DecisionAddress    = "address"
	DecisionPreference = "preference"
	DecisionWindow     = "window"
	DecisionCap        = "cap"
)

// Decision outcomes.
const (
	OutcomeResolved = "resolved" // an address read from the profile
	OutcomeAllowed  = "allowed"
	OutcomeBlocked  = "blocked"
	OutcomeHeld     = "held"
	OutcomeDropped  = "dropped"
	OutcomeDeferred = "deferred"
)

// Final error codes of requests stopped by the recipient layer.
const (
	CodePreferenceOptOut = "preference_opt_out"
	CodeFrequencyCapped  = "frequency_capped"
)
