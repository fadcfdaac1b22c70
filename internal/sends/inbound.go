package sends

import (
	"context"
	"errors"
	"time"

	"github.com/notifyd/notifyd/internal/compose"
	"github.com/notifyd/notifyd/internal/notify"
)

// AcceptInbound accepts the sends an inbound hook made of one payload
// (issue 36, item 3) on the path of a signed send: the same validation,
// templates, recipient profiles, preferences and windows, and the send
// group commit that writes each request with its job row and queue job in
// one transaction. There is no API key and no nonce: the hook's token was
// the credential and the hook's own limit has been applied (internal/
// inboundhooks), so the call does not count toward the Notification API's
// request limits. A send failing validation refuses the call (the payload
// made it, so all its sends share the fault); one failing acceptance (a
// recipient profile gone, a template unpublished) is left out as a bulk
// item is, and when every send fails the first failure answers.
func (s *Service) AcceptInbound(ctx context.Context, ws string, items []*SendInput) (*BulkResult, error) {
	if len(items) == 0 {
		return nil, notify.Invalid("the hook has no recipient")
	}
	return s.acceptFrom(ctx, ws, notify.SourceHook, items)
}

// AcceptWorkflow accepts the send of a workflow's send step (issue 34) on
// the same path as AcceptInbound: no key, no nonce, no request limits (the
// trigger was counted), the send's idempotency key (of the run and the
// step) answering the request a run of the step made before a crash.
// Its request is transactional traffic (issue 31's default lane).
func (s *Service) AcceptWorkflow(ctx context.Context, ws string, in *SendInput) (*SendResult, error) {
	res, err := s.acceptFrom(ctx, ws, notify.SourceWorkflow, []*SendInput{in})
	if err != nil {
		return nil, err
	}
	return &res.Items[0], nil
}

// acceptFrom accepts items of a caller without an API key as requests of
// source.
func (s *Service) acceptFrom(ctx context.Context, ws, source string, items []*SendInput) (*BulkResult, error) {
	c := &acceptCall{ctx: ctx}
	now := s.Now()
	scheds := make([]*time.Time, len(items))
	for i, in := range items {
		sched, err := s.validateSend(in, "", now)
		if err != nil {
			return nil, err
		}
		scheds[i] = sched
	}
	rs, err := s.buildRequestsOf(ctx, ws, nil, items, scheds, now, false)
	if err != nil {
		return nil, err
	}
	var first error
	for _, b := range rs {
		if b.err != nil {
			if tl := (*compose.RenderedTooLarge)(nil); errors.As(b.err, &tl) {
				return nil, tl.Err
			}
			if first == nil {
				first = b.err
			}
			continue
		}
		b.req.Source = source
		c.accepts = append(c.accepts, &notify.Accept{Request: b.req, MaxAttempts: s.jobAttempts, Final: b.req.Status.Terminal()})
	}
	if len(c.accepts) == 0 {
		return nil, first
	}
	if err := s.accept.do(c); err != nil {
		return nil, err
	}
	out := &BulkResult{Items: make([]SendResult, len(c.accepts)), Total: len(c.accepts)}
	for i, a := range c.accepts {
		out.Items[i] = acceptResult(a)
	}
	out.Queued = out.Total
	return out, nil
}
