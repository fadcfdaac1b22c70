package service

import (
	"context"
	"strings"

	"github.com/notifyd/notifyd/internal/notify"
	"github.com/notifyd/notifyd/internal/render"
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
func (s *Service) TestSend(ctx context.Context, a *Actor, providerID string, in TestSendInput) (*notify.Request, error) {
	if in.Mode != "test" && in.Mode != "instance" {
		return nil, notify.Invalid("mode must be test or instance")
	}
	for _, c := range []struct {
		f, v string
		n    int
	}{{"recipient.address", in.RecipientAddress, 320}, {"recipient.name", in.RecipientName, 120}, {"content.templateCode", in.TemplateCode, 120}} {
		if err := maxLen(c.f, c.v, c.n); err != nil {
			return nil, err
		}
	}
	if in.Title != nil {
		if err := maxLen("content.title", *in.Title, 200); err != nil {
			return nil, err
		}
	}
	now := s.now()
	var p *notify.ProviderAccount
	var rn *run
	var suppressed bool
	err := s.store.Update(ctx, func(tx notify.Tx) error {
		var err error
		if p, err = tx.FindProviderAccount(ctx, a.WorkspaceID, providerID); err != nil {
			return notFound(err, "Provider")
		}
		if in.Mode == "instance" && !p.Enabled {
			return notify.Conflict("Provider is disabled; an instance test-send needs an enabled provider")
		}
		req, err := s.testRequest(ctx, tx, a.WorkspaceID, p, in)
		if err != nil {
			return err
		}
		req.RequestedAt, req.UpdatedAt = now, now
		job := &notify.Job{ID: newID(), WorkspaceID: a.WorkspaceID, RequestID: req.ID, Status: notify.JobProcessing,
			AttemptsMade: 1, MaxAttempts: 1, QueuedAt: now, StartedAt: &now}
		if err := tx.CreateDirectRequest(ctx, req, job); err != nil {
			return err
		}
		rn = &run{req: req, job: job, touched: map[string]bool{}}
		if req.Channel == notify.ChannelEmail {
			if suppressed, err = tx.IsSuppressed(ctx, a.WorkspaceID, req.RecipientAddress); err != nil {
				return err
			}
		}
		return s.audit(ctx, tx, a, a.WorkspaceID, "provider.test_send", "provider", p.ID,
			map[string]any{"mode": in.Mode, "requestId": req.ID, "channel": p.Channel})
	})
	if err != nil {
		return nil, err
	}
	var out outcome
	if suppressed {
		out = outcome{code: notify.FailureInvalidRequest, msg: "recipient address is on the suppression list", final: true}
	} else {
		c := candidate{account: p}
		_ = s.waitDispatchLimits(ctx, rn, p) // synchronous: takes tokens, never waits
		start := s.now()
		res, _ := s.send(ctx, rn.req, p) // synchronous: never waits in a batch
		rn.attempts = append(rn.attempts, s.attempt(rn, c, start, s.now(), res))
		if res.Err == nil {
			out = outcome{success: true, accountID: p.ID, messageID: res.MessageID}
		} else {
			out = outcome{code: res.Err.Code, msg: res.Err.Message, final: true}
		}
	}
	err = s.store.Update(ctx, func(tx notify.Tx) error {
		if err := tx.CreateAttempts(ctx, rn.attempts); err != nil {
			return err
		}
		return s.finish(ctx, tx, rn, out, s.now())
	})
	if err != nil {
		return nil, err
	}
	if !out.success {
		return nil, notify.Errorf(notify.CodeProviderFailed, "Provider send failed: %s: %s", out.code, out.msg)
	}
	return rn.req, nil
}

// testRequest builds the request of a test-send. For msgr_alimtalk the
// approved template bound to this provider supplies the body.
func (s *Service) testRequest(ctx context.Context, tx notify.Tx, ws string, p *notify.ProviderAccount, in TestSendInput) (*notify.Request, error) {
	webhook := p.Channel == notify.ChannelChatAWebhook || p.Channel == notify.ChannelChatBWebhook
	addr := strings.TrimSpace(in.RecipientAddress)
	if addr == "" && !webhook {
		return nil, notify.Invalid("recipient.address is required for channel %s", p.Channel)
	}
	if addr == "" {
		addr = "webhook"
	}
	req := &notify.Request{ID: newID(), WorkspaceID: ws, Source: notify.SourceTest, Channel: p.Channel, Status: notify.StatusProcessing,
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
		_, v, err := s.resolveTemplate(ctx, tx, ws, nil, in.TemplateCode, p.Channel)
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
	req.Title = render.Substitute(req.Title, in.TemplateVariables)
	req.Text = render.Substitute(req.Text, in.TemplateVariables)
	return req, nil
}

func isUUID(s string) bool {
	if len(s) != 36 {
		return false
	}
	for i := 0; i < 36; i++ {
		c := s[i]
		if i == 8 || i == 13 || i == 18 || i == 23 {
			if c != '-' {
				return false
			}
			continue
		}
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F') {
			return false
		}
	}
	return true
}
