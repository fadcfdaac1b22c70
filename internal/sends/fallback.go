package sends

import (
	"context"
	"strings"

	"github.com/notifyd/notifyd/internal/compose"
	"github.com/notifyd/notifyd/internal/notify"
	"github.com/notifyd/notifyd/internal/usecase"
)

// FallbackInput is one step of a send's channelFallback as the API
// received it (cross-channel fallback, notify/fallback.go). HasRecipient
// and HasContent say whether the step gave its own recipient and content;
// without them it takes the send's recipient and rendered content.
type FallbackInput struct {
	Channel           string
	HasRecipient      bool
	RecipientAddress  *string
	RecipientID       *string // a recipient profile in place of RecipientAddress (issue 32)
	RecipientName     string
	HasContent        bool
	Text              *string
	Title             *string
	HTML              *string
	TemplateCode      string
	TemplateVariables map[string]string
	// HasInApp: the step gave content.actionUrl or content.data, which
	// are the send's own (refused).
	HasInApp bool
}

// validateFallback checks the channelFallback of a send (already checked
// itself) with the rules of the send's own fields; prefix names a bulk
// item.
func validateFallback(in *SendInput, prefix string) error {
	if in.ChannelFallback == nil {
		return nil
	}
	steps := *in.ChannelFallback
	if len(steps) == 0 || len(steps) > notify.MaxFallbackSteps {
		return notify.Invalid("%schannelFallback must hold 1 to %d steps", prefix, notify.MaxFallbackSteps)
	}
	seen := map[string]bool{in.Channel: true}
	for i, st := range steps {
		p := prefix + "channelFallback[" + itoa(int64(i)) + "]."
		f := func(name string) string { return p + name }
		if st == nil {
			return notify.Invalid("%s must be an object", strings.TrimSuffix(p, "."))
		}
		if st.Channel == "" {
			return notify.Invalid("%s is required", f("channel"))
		}
		if !notify.Channel(st.Channel).Valid() {
			return notify.Invalid("%s must be one of sms, msgr_alimtalk, email, push_mobile, chata_webhook, chatb_webhook, chata_bot, chatb_bot", f("channel"))
		}
		if seen[st.Channel] {
			return notify.Invalid("%s must differ from channel and from the other steps' channels", f("channel"))
		}
		seen[st.Channel] = true
		// A step by recipient id, or without a recipient of a send by id,
		// has its address checked when it is read from the profile.
		addr, name := "", in.RecipientName
		if in.RecipientAddress != nil {
			addr = *in.RecipientAddress
		}
		if st.HasRecipient {
			a, err := checkRecipientChoice(f, st.RecipientAddress, st.RecipientID)
			if err != nil {
				return err
			}
			addr, name = a, st.RecipientName
		}
		if err := usecase.MaxLen(f("recipient.address"), addr, 320); err != nil {
			return err
		}
		if err := usecase.MaxLen(f("recipient.name"), name, 120); err != nil {
			return err
		}
		if err := usecase.MaxLen(f("content.templateCode"), st.TemplateCode, 120); err != nil {
			return err
		}
		if err := compose.CheckContent(f, st.Title, st.Text, st.HTML, st.TemplateVariables); err != nil {
			return err
		}
		if err := usecase.CheckRecipient(f, notify.Channel(st.Channel), addr, name, st.Title); err != nil {
			return err
		}
		if st.HasInApp {
			return notify.Invalid("%s and %s are the send's: give them in the send's content", f("content.actionUrl"), f("content.data"))
		}
		if st.HasContent && st.TemplateCode == "" && (st.Text == nil || *st.Text == "") {
			return notify.Invalid("%s is required when %s is absent", f("content.text"), f("content.templateCode"))
		}
	}
	return nil
}

// buildFallback renders the steps of in's channelFallback onto r (the
// send's request, already rendered): templates are resolved as for the
// send itself (SPEC rules 3.1 to 3.6, on the step's channel). A step
// without content takes the send's rendered title, text and HTML; a step
// without templateVariables takes the send's. prefix names a bulk item.
func (s *Service) buildFallback(ctx context.Context, tx notify.Tx, key *notify.APIKey, in *SendInput, r *notify.Request,
	prof *notify.Recipient, locale, prefix string) error {
	if in.ChannelFallback == nil {
		return nil
	}
	fb := &notify.ChannelFallback{Attempts: s.jobAttempts}
	for i, in2 := range *in.ChannelFallback {
		ch := notify.Channel(in2.Channel)
		sp := prefix + "channelFallback[" + itoa(int64(i)) + "]."
		st := notify.ChannelStep{Channel: ch, RecipientAddress: r.RecipientAddress, RecipientName: r.RecipientName}
		switch {
		case in2.HasRecipient && in2.RecipientID != nil:
			p, err := readProfile(ctx, tx, r.WorkspaceID, *in2.RecipientID, sp)
			if err != nil {
				return err
			}
			name := in2.RecipientName
			if name == "" {
				name = p.Name
			}
			if st.RecipientAddress, err = profileAddress(p, ch, name, in2.Title, sp+"recipient."); err != nil {
				return err
			}
			st.RecipientName = name
			r.Decisions = append(r.Decisions, addressDecision(p, ch, r.RequestedAt))
		case in2.HasRecipient:
			st.RecipientAddress, st.RecipientName = strings.TrimSpace(*in2.RecipientAddress), in2.RecipientName
		case prof != nil:
			// A step without a recipient of a send by id: the same person's
			// address for the step's channel.
			var err error
			if st.RecipientAddress, err = profileAddress(prof, ch, r.RecipientName, in2.Title, sp+"recipient."); err != nil {
				return err
			}
			r.Decisions = append(r.Decisions, addressDecision(prof, ch, r.RequestedAt))
		}
		if ch == notify.ChannelEmail {
			st.RecipientAddress = strings.ToLower(st.RecipientAddress)
		}
		if !in2.HasContent {
			st.Title, st.Text, st.HTML = r.Title, r.Text, r.HTML
			fb.Steps = append(fb.Steps, st)
			continue
		}
		var base compose.Message
		var layout *notify.Layout
		if in2.TemplateCode != "" {
			t, v, err := compose.ResolveTemplate(ctx, tx, r.WorkspaceID, key, in2.TemplateCode, ch, locale)
			if err == nil {
				layout, err = compose.VersionLayout(ctx, tx, r.WorkspaceID, v)
			}
			if err != nil {
				if e, ok := notify.AsError(err); ok {
					return notify.Errorf(e.Code, "channelFallback[%d]: %s", i, e.Detail)
				}
				return err
			}
			base = compose.Message{Title: v.Title, Text: v.Text, HTML: v.HTML}
			st.VendorTemplateID, st.SenderProfileKey = t.VendorTemplateID, t.SenderProfileKey
		}
		vars := in2.TemplateVariables
		if vars == nil {
			vars = in.TemplateVariables
		}
		c, err := compose.Overlay(base, layout, in2.Title, in2.Text, in2.HTML, in2.TemplateCode != "", vars,
			prefix+"channelFallback["+itoa(int64(i))+"].")
		if err != nil {
			return err
		}
		st.Title, st.Text, st.HTML = c.Title, c.Text, c.HTML
		st.TemplateCode, st.TemplateVariables = in2.TemplateCode, vars
		fb.Steps = append(fb.Steps, st)
	}
	r.Fallback = fb
	return nil
}

// fallbackReads reports whether in's channelFallback needs the database
// (a step with a template or a recipient profile).
func fallbackReads(in *SendInput) bool {
	if in.ChannelFallback == nil {
		return false
	}
	for _, st := range *in.ChannelFallback {
		if st != nil && (st.TemplateCode != "" || st.RecipientID != nil) {
			return true
		}
	}
	return false
}
