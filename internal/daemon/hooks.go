package daemon

import (
	"context"

	"github.com/notifyd/notifyd/internal/inboundhooks"
	"github.com/notifyd/notifyd/internal/sends"
)

// hookAcceptor is the inbound hooks room's Acceptor: the sends room's
// acceptance path, each hook send as a send by address or by recipient
// profile. The rooms do not import each other; the composition root
// joins them here.
type hookAcceptor struct{ s *sends.Service }

func (h hookAcceptor) AcceptInbound(ctx context.Context, ws string, in []inboundhooks.Send) ([]string, error) {
	items := make([]*sends.SendInput, len(in))
	for i, x := range in {
		it := &sends.SendInput{Channel: string(x.Channel), Title: x.Title, Text: x.Text, TemplateCode: x.TemplateCode,
			TemplateVariables: x.Variables, Metadata: x.Metadata}
		if x.RecipientID != "" {
			id := x.RecipientID
			it.RecipientID = &id
		} else {
			addr := x.Address
			it.RecipientAddress = &addr
		}
		if x.Category != "" {
			c := x.Category
			it.Category = &c
		}
		items[i] = it
	}
	res, err := h.s.AcceptInbound(ctx, ws, items)
	if err != nil {
		return nil, err
	}
	ids := make([]string, len(res.Items))
	for i, r := range res.Items {
		ids[i] = r.RequestID
	}
	return ids, nil
}
