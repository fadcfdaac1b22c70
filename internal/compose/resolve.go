package compose

import (
	"context"

	"github.com/notifyd/notifyd/internal/notify"
)

// Overlay puts the sent title, text and HTML over base (the
// template version's, or nothing) and, when a template or variables are
// given, renders them with Render (SPEC rules 3.4 and 3.5, and the
// version's layout), naming the fields after prefix.
func Overlay(base Message, layout *notify.Layout, title, text, html *string, templated bool, vars map[string]string, prefix string) (Message, error) {
	c := base
	if text != nil {
		c.Text = *text
	}
	if title != nil {
		c.Title = *title
	}
	if html != nil {
		c.HTML = *html
	}
	if templated || len(vars) > 0 {
		m, err := Render(c, layout, vars, prefix)
		if err != nil {
			return Message{}, err
		}
		c = m
	}
	return c, nil
}

// ResolveTemplate applies SPEC rules 3.1, 3.2, 3.3 and 3.6; locale (a
// canonical tag, or "") chooses the version (PublishedVersion).
func ResolveTemplate(ctx context.Context, tx notify.Tx, ws string, key *notify.APIKey, code string, ch notify.Channel, locale string) (*notify.Template, *notify.TemplateVersion, error) {
	t, err := tx.FindTemplateByCode(ctx, ws, code, ch)
	if notify.IsNotFound(err) || (err == nil && t.Status != "active") {
		return nil, nil, notify.Invalid("Template %s is not an active template of channel %s", code, ch)
	}
	if err != nil {
		return nil, nil, err
	}
	if key != nil && !key.AllowsTemplate(code) {
		return nil, nil, notify.Forbidden("Template %s is not allowed for this API key", code)
	}
	v, err := PublishedVersion(ctx, tx, t, locale)
	if err != nil {
		return nil, nil, err
	}
	if ch == notify.ChannelAlimTalk && t.ReviewStatus != "APPROVED" {
		return nil, nil, notify.Invalid("Template %s is not approved", code)
	}
	return t, v, nil
}
