package newsletter

import (
	"context"
	"strings"

	"github.com/notifyd/notifyd/internal/compose"
	"github.com/notifyd/notifyd/internal/notify"
	"github.com/notifyd/notifyd/internal/render"
	"github.com/notifyd/notifyd/internal/usecase"
)

// PreviewUnsubscribeToken stands in for the subscriber's own unsubscribe
// token in the footer links of a campaign preview (a real token is never
// shown: it would let the viewer unsubscribe that subscriber).
const PreviewUnsubscribeToken = "preview"

// previewAddress is the sample subscriber's address of a campaign preview.
const previewAddress = "subscriber@example.com"

// CampaignPreview is a campaign's mail as a subscriber with the sample
// attributes would receive it.
type CampaignPreview struct {
	Subject, Text, HTML string
	MissingVariables    []string
}

// PreviewCampaign renders a campaign for a sample subscriber through
// campaignRequest, the rendering of its fan-out (issue 21): subscriber
// attributes, the advertisement prefix, and the unsubscribe footer with
// PreviewUnsubscribeToken in its links. linkBase is the public base URL,
// used while the campaign has none fixed (before its send). It changes
// nothing.
func (s *Service) PreviewCampaign(ctx context.Context, a *usecase.Actor, id string, attributes map[string]string, linkBase string) (*CampaignPreview, error) {
	if err := validAttributes(attributes); err != nil {
		return nil, err
	}
	var c *notify.Campaign
	err := s.Store.View(ctx, func(tx notify.Tx) (err error) {
		c, err = findCampaign(ctx, tx, a.WorkspaceID, id)
		return err
	})
	if err != nil {
		return nil, err
	}
	if c.LinkBase == "" {
		c.LinkBase = strings.TrimRight(linkBase, "/")
	}
	r, err := campaignRequest(c, &notify.Subscriber{ID: "preview", Address: previewAddress, Attributes: attributes,
		UnsubscribeToken: PreviewUnsubscribeToken}, s.Now())
	if err != nil {
		return nil, err
	}
	return &CampaignPreview{Subject: r.Title, Text: r.Text, HTML: r.HTML,
		MissingVariables: compose.MissingVariables(attributes, render.NamesUnicode, c.Subject, c.ContentText, c.ContentHTML)}, nil
}
