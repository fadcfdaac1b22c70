package daemon

import (
	"context"

	"github.com/notifyd/notifyd/internal/sends"
	"github.com/notifyd/notifyd/internal/workflows"
)

// workflowAcceptor is the workflows room's Acceptor: a send step's
// message as a send by recipient profile through the sends room's
// acceptance path. A fallback channel takes the step's rendered content.
type workflowAcceptor struct{ s *sends.Service }

func (w workflowAcceptor) AcceptWorkflowSend(ctx context.Context, ws string, x workflows.Send) (string, error) {
	res, err := w.s.AcceptWorkflow(ctx, ws, sendInput(x))
	if err != nil {
		return "", err
	}
	return res.RequestID, nil
}

func (w workflowAcceptor) CommitWorkflow(ctx context.Context, ws string, door *workflows.Door, xs []workflows.Send, write workflows.Write) error {
	items := make([]*sends.SendInput, len(xs))
	for i, x := range xs {
		items[i] = sendInput(x)
	}
	if door == nil {
		return w.s.CommitWith(ctx, ws, nil, nil, items, write)
	}
	return w.s.CommitWith(ctx, ws, door.Key, door.Nonce, items, write)
}

func sendInput(x workflows.Send) *sends.SendInput {
	id := x.RecipientID
	in := &sends.SendInput{Channel: string(x.Channel), RecipientID: &id, TemplateCode: x.TemplateCode,
		TemplateVariables: x.Variables, Metadata: x.Metadata, IdempotencyKey: x.IdempotencyKey}
	if x.Category != "" {
		c := x.Category
		in.Category = &c
	}
	if len(x.Fallback) > 0 {
		steps := make([]*sends.FallbackInput, len(x.Fallback))
		for i, ch := range x.Fallback {
			steps[i] = &sends.FallbackInput{Channel: string(ch)}
		}
		in.ChannelFallback = &steps
	}
	return in
}
