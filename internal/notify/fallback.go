package notify

// Cross-channel fallback (issue 21, item 4; docs/DECISIONS.md): a send may
// carry a chain of further channels, each with its recipient and content
// rendered at acceptance. The request keeps its own channel, recipient and
// content as step 0; FallbackStep n > 0 means the delivery has moved on to
// Fallback.Steps[n-1]. A step ends when it would make the request failed
// (a final failure, or retryable failures that spent its attempt budget);
// the next step then starts, in a queue job of its own, with a fresh
// budget. Only the last step's failure fails the request.

// ChannelFallback is a request's chain of further channels.
type ChannelFallback struct {
	// Attempts is the attempt budget of each step (SVC_QUEUE_JOB_ATTEMPTS
	// at acceptance).
	Attempts int           `json:"attempts"`
	Steps    []ChannelStep `json:"steps"`
}

// ChannelStep is one step of a chain: what is sent through its channel.
type ChannelStep struct {
	Channel           Channel           `json:"channel"`
	RecipientAddress  string            `json:"recipientAddress"`
	RecipientName     string            `json:"recipientName,omitempty"`
	Title             string            `json:"title,omitempty"`
	Text              string            `json:"text,omitempty"`
	HTML              string            `json:"html,omitempty"`
	TemplateCode      string            `json:"templateCode,omitempty"`
	TemplateVariables map[string]string `json:"templateVariables,omitempty"`
	VendorTemplateID  string            `json:"vendorTemplateId,omitempty"`
	SenderProfileKey  string            `json:"senderProfileKey,omitempty"`
	// RequestContent is set in the stored chain only (StoredFallback):
	// the step's title, text and HTML are the request's own and are not
	// stored again.
	RequestContent bool `json:"requestContent,omitempty"`
}

// StoredFallback is r's chain as the store writes it (nil without one): a
// step whose title, text and HTML are the request's own (a step without
// content of its own takes the send's rendered content) keeps none of it
// and is marked RequestContent, so a chain of 7 such steps does not store
// the content 7 more times (issue 29, finding 10). r is not changed.
func (r *Request) StoredFallback() *ChannelFallback {
	if r.Fallback == nil {
		return nil
	}
	out := &ChannelFallback{Attempts: r.Fallback.Attempts, Steps: make([]ChannelStep, len(r.Fallback.Steps))}
	for i, s := range r.Fallback.Steps {
		if s.Title == r.Title && s.Text == r.Text && s.HTML == r.HTML {
			s.Title, s.Text, s.HTML, s.RequestContent = "", "", "", true
		}
		out.Steps[i] = s
	}
	return out
}

// ExpandFallback restores a stored chain (StoredFallback) on r as read:
// each marked step takes r's title, text and HTML again.
func (r *Request) ExpandFallback() {
	if r.Fallback == nil {
		return
	}
	for i := range r.Fallback.Steps {
		s := &r.Fallback.Steps[i]
		if s.RequestContent {
			s.Title, s.Text, s.HTML, s.RequestContent = r.Title, r.Text, r.HTML, false
		}
	}
}

// MaxFallbackSteps bounds a chain: every other channel once.
const MaxFallbackSteps = 7

// HasNextStep reports whether r's chain has a step after the current one.
func (r *Request) HasNextStep() bool {
	return r.Fallback != nil && r.FallbackStep < len(r.Fallback.Steps)
}

// StepChannel is the channel of r's current step.
func (r *Request) StepChannel() Channel {
	if r.Fallback == nil || r.FallbackStep == 0 || r.FallbackStep > len(r.Fallback.Steps) {
		return r.Channel
	}
	return r.Fallback.Steps[r.FallbackStep-1].Channel
}

// Target is what the current step sends: r itself at step 0 (no copy for
// a request without a chain), else a copy of r with the step's channel,
// recipient and content. The delivery engine sends and routes the target
// and records the outcome on r.
func (r *Request) Target() *Request {
	if r.Fallback == nil || r.FallbackStep == 0 || r.FallbackStep > len(r.Fallback.Steps) {
		return r
	}
	return r.withStep(&r.Fallback.Steps[r.FallbackStep-1])
}

// ForChannel is what r sends through channel ch: the step of that channel
// (a chain names each channel once), or r itself.
func (r *Request) ForChannel(ch Channel) *Request {
	if r.Fallback == nil || ch == r.Channel {
		return r
	}
	for i := range r.Fallback.Steps {
		if r.Fallback.Steps[i].Channel == ch {
			return r.withStep(&r.Fallback.Steps[i])
		}
	}
	return r
}

// withStep is a copy of r with s's channel, recipient and content.
func (r *Request) withStep(s *ChannelStep) *Request {
	c := *r
	c.Channel, c.RecipientAddress, c.RecipientName = s.Channel, s.RecipientAddress, s.RecipientName
	c.Title, c.Text, c.HTML, c.TemplateCode, c.TemplateVariables = s.Title, s.Text, s.HTML, s.TemplateCode, s.TemplateVariables
	c.VendorTemplateID, c.SenderProfileKey = s.VendorTemplateID, s.SenderProfileKey
	return &c
}

// Step statuses shown by the status lookup.
const (
	StepPending  = "pending"  // not reached yet
	StepActive   = "active"   // the request is being delivered through it
	StepSent     = "sent"     // it delivered the request
	StepFailed   = "failed"   // its channel failed (the chain moved on, or ended here)
	StepCanceled = "canceled" // the request was canceled during it
	StepSkipped  = "skipped"  // never reached: the request ended before
)

// StepStatus is the status of step n (0 is the request's own channel).
func (r *Request) StepStatus(n int) string {
	switch {
	case n < r.FallbackStep:
		return StepFailed
	case n > r.FallbackStep:
		if r.Status.Terminal() {
			return StepSkipped
		}
		return StepPending
	}
	switch r.Status {
	case StatusSent:
		return StepSent
	case StatusFailed:
		return StepFailed
	case StatusCanceled:
		return StepCanceled
	}
	return StepActive
}

// DeliveredChannel is the channel that delivered r, "" until it is sent.
func (r *Request) DeliveredChannel() Channel {
	if r.Status != StatusSent {
		return ""
	}
	return r.StepChannel()
}
