package providers

import (
	"context"
	"strings"

	"github.com/notifyd/notifyd/internal/compose"
	"github.com/notifyd/notifyd/internal/notify"
	"github.com/notifyd/notifyd/internal/usecase"
)

// TestSendInput is the body of a provider test-send.
type TestSendInput struct {
	Mode              string
	RecipientAddress  string
	RecipientName     string
	Text              *string
	Title             *string
	TemplateCode      string
	TemplateVariables map[string]string
}

// TestSend sends once, synchronously, through one provider only: no
// routing, no fallback, no retry, no circuit breaker (SPEC "Providers").
// The request and its attempt are recorded like a normal send; a provider
// failure answers 502 SVC-50200 with the reason.
func (s *Service) TestSend(ctx context.Context, a *usecase.Actor, providerID string, in TestSendInput) (*notify.Request, error) {
	if in.Mode != "test" && in.Mode != "instance" {
		return nil, notify.Invalid("mode must be test or instance")
	}
	for _, c := range []struct {
		f, v string
		n    int
	}{{"recipient.address", in.RecipientAddress, 320}, {"recipient.name", in.RecipientName, 120}, {"content.templateCode", in.TemplateCode, 120}} {
		if err := usecase.MaxLen(c.f, c.v, c.n); err != nil {
			return nil, err
		}
	}
	if err := compose.CheckContent(func(f string) string { return f }, in.Title, in.Text, nil, in.TemplateVariables); err != nil {
		return nil, err
	}
	now := s.Now()
	var p *notify.ProviderAccount
	var req *notify.Request
	var job *notify.Job
	err := s.Store.Update(ctx, func(tx notify.Tx) error {
		var err error
		if p, err = tx.FindProviderAccount(ctx, a.WorkspaceID, providerID); err != nil {
			return usecase.NotFound(err, "Provider")
		}
		if in.Mode == "instance" && !p.Enabled {
			return notify.Conflict("Provider is disabled; an instance test-send needs an enabled provider")
		}
		if req, err = s.testRequest(ctx, tx, a.WorkspaceID, p, in); err != nil {
			return err
		}
		req.RequestedAt, req.UpdatedAt = now, now
		job = &notify.Job{ID: usecase.NewID(), WorkspaceID: a.WorkspaceID, RequestID: req.ID, Status: notify.JobProcessing,
			AttemptsMade: 1, MaxAttempts: 1, QueuedAt: now, StartedAt: &now}
		if err := tx.CreateDirectRequest(ctx, req, job); err != nil {
			return err
		}
		return s.Audit(ctx, tx, a, a.WorkspaceID, "provider.test_send", "provider", p.ID,
			map[string]any{"mode": in.Mode, "requestId": req.ID, "channel": p.Channel})
	})
	if err != nil {
		return nil, err
	}
	// A test-send goes through this provider alone, circuit bypassed (a
	// diagnostic of one provider).
	out := s.engine.SendNow(ctx, notify.DirectSend{Request: req, Job: job, Account: p})
	if err := s.Store.Update(ctx, func(tx notify.Tx) error { return out.Record(ctx, tx) }); err != nil {
		return nil, err
	}
	if !out.Succeeded() {
		code, msg := out.Failure()
		// An unverified sender is the likely cause of an e-mail refusal:
		// the detail says so (identity.go).
		if w, err := usecase.SenderWarning(ctx, s.Store, s.box, a.WorkspaceID, p.ID); err == nil && w != "" {
			return nil, notify.Errorf(notify.CodeProviderFailed, "Provider send failed: %s: %s (%s)", code, msg, w)
		}
		return nil, notify.Errorf(notify.CodeProviderFailed, "Provider send failed: %s: %s", code, msg)
	}
	return req, nil
}

// testRequest builds the request of a test-send. For msgr_alimtalk the
// approved template bound to this provider supplies the body.
func (s *Service) testRequest(ctx context.Context, tx notify.Tx, ws string, p *notify.ProviderAccount, in TestSendInput) (*notify.Request, error) {
	webhook := p.Channel == notify.ChannelChatAWebhook || p.Channel == notify.ChannelChatBWebhook
	addr := strings.TrimSpace(in.RecipientAddress)
	if addr == "" && !webhook {
		return nil, notify.Invalid("recipient.address is required for channel %s", p.Channel)
	}
	if err := usecase.CheckRecipient(func(f string) string { return f }, p.Channel, in.RecipientAddress, in.RecipientName, in.Title); err != nil {
		return nil, err
	}
	if addr == "" {
		addr = "webhook"
	}
	req := &notify.Request{ID: usecase.NewID(), WorkspaceID: ws, Source: notify.SourceTest, Channel: p.Channel, Status: notify.StatusProcessing,
		RecipientAddress: addr, RecipientName: in.RecipientName, TemplateCode: in.TemplateCode, TemplateVariables: in.TemplateVariables}
	if p.Channel == notify.ChannelEmail {
		req.RecipientAddress = strings.ToLower(addr)
	}
	if in.Mode == "test" {
		req.Metadata = map[string]string{"test": "true"}
	}
	if p.Channel == notify.ChannelAlimTalk {
		if in.TemplateCode == "" {
			return nil, notify.Invalid("content.templateCode is required for msgr_alimtalk")
		}
		t, err := tx.FindTemplateByCode(ctx, ws, in.TemplateCode, p.Channel)
		if notify.IsNotFound(err) {
			return nil, notify.Invalid("Template %s does not exist", in.TemplateCode)
		}
		if err != nil {
			return nil, err
		}
		if t.ProviderAccountID != p.ID {
			return nil, notify.Forbidden("Template is not bound to this provider")
		}
		_, v, err := compose.ResolveTemplate(ctx, tx, ws, nil, in.TemplateCode, p.Channel, "")
		if err != nil {
			return nil, err
		}
		req.Title, req.Text, req.HTML = v.Title, v.Text, v.HTML
		req.VendorTemplateID, req.SenderProfileKey = t.VendorTemplateID, t.SenderProfileKey
	} else {
		if in.Text == nil || *in.Text == "" {
			return nil, notify.Invalid("content.text is required for channel %s", p.Channel)
		}
		req.Text = *in.Text
		if in.Title != nil {
			req.Title = *in.Title
		}
	}
	// The text and title as a send renders them, bounds included (an
	// alimtalk version's HTML, unused by the channel, is kept as it is).
	m, err := compose.Render(compose.Message{Title: req.Title, Text: req.Text}, nil, in.TemplateVariables, "")
	if err != nil {
		return nil, err
	}
	req.Title, req.Text = m.Title, m.Text
	return req, nil
}
