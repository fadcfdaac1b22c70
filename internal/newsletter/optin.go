package newsletter

import (
	"context"
	"errors"
	"fmt"
	"html"
	"net/url"
	"time"

	"github.com/notifyd/notifyd/internal/notify"
	"github.com/notifyd/notifyd/internal/otp"
	"github.com/notifyd/notifyd/internal/usecase"
)

// Double opt-in (issue 21, item 5; docs/DECISIONS.md "Double opt-in").
// With the workspace setting on, a subscriber created or imported without
// a confirmation is pending and gets a confirmation mail through the
// workspace's email routes; the link's signed token confirms it.

const (
	// OptInSigningLabel derives the confirmation-link key from the master
	// key (secret.Derive): a key of its own, so no OTP verification token
	// passes for a confirmation token, nor the reverse.
	OptInSigningLabel = "notifyd newsletter confirmation v1"
	// ConfirmPurpose is the purpose claim of a confirmation token.
	ConfirmPurpose = "newsletter.confirm"
	// ConfirmationTTL is how long a confirmation link works.
	ConfirmationTTL = 72 * time.Hour
	// ConfirmationResendCooldown is the least time between two
	// confirmation mails of one subscriber by resend.
	ConfirmationResendCooldown = time.Minute
	// MaxConfirmToken bounds a confirmation token on input.
	MaxConfirmToken = 1024
	// ConfirmPath is the public confirmation page's path.
	ConfirmPath = "/v1/newsletter/confirm"
	// SourceOptIn is the request source of confirmation mails.
	SourceOptIn = "optin"
)

// GetNewsletterSettings returns the workspace's newsletter settings.
func (s *Service) GetNewsletterSettings(ctx context.Context, a *usecase.Actor) (*notify.NewsletterSettings, error) {
	var out *notify.NewsletterSettings
	err := s.Store.View(ctx, func(tx notify.Tx) (err error) {
		out, err = tx.FindNewsletterSettings(ctx, a.WorkspaceID)
		return err
	})
	return out, err
}

// UpdateNewsletterSettings changes the settings given (nil keeps one);
// audit newsletter.settings.update. Turning double opt-in on or off
// changes no existing subscriber.
func (s *Service) UpdateNewsletterSettings(ctx context.Context, a *usecase.Actor, doubleOptIn *bool) (*notify.NewsletterSettings, error) {
	var out *notify.NewsletterSettings
	err := s.Store.Update(ctx, func(tx notify.Tx) (err error) {
		if out, err = tx.FindNewsletterSettings(ctx, a.WorkspaceID); err != nil {
			return err
		}
		if doubleOptIn != nil {
			out.DoubleOptIn = *doubleOptIn
		}
		now := s.Now()
		out.UpdatedAt = &now
		if err := tx.PutNewsletterSettings(ctx, out); err != nil {
			return err
		}
		return s.Audit(ctx, tx, a, a.WorkspaceID, "newsletter.settings.update", "workspace", a.WorkspaceID,
			map[string]any{"doubleOptIn": out.DoubleOptIn})
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// optInStatus applies double opt-in to the consent status a create or an
// import asks for. With the setting off, or a row marked confirmed, the
// status is kept as asked and no mail goes out (SPEC behaviour). With it
// on: unsubscribed stays unsubscribed; subscribed or pending becomes
// pending with a confirmation mail, except that a subscriber already
// subscribed stays subscribed (an import never demotes a confirmed
// subscriber) and one already pending is not mailed again (resend is
// explicit). prev is the stored status, "" for a new subscriber.
func optInStatus(on, confirmed bool, asked, prev string) (status string, mail bool) {
	switch {
	case !on || confirmed || asked == notify.ConsentUnsubscribed:
		return asked, false
	case prev == notify.ConsentSubscribed && asked == notify.ConsentSubscribed:
		return notify.ConsentSubscribed, false
	case prev == notify.ConsentPending:
		return notify.ConsentPending, false
	}
	return notify.ConsentPending, true
}

// confirmToken signs the confirmation token of a subscriber: the
// verification token's compact form (SPEC "Verification token") under
// the opt-in key, with the purpose newsletter.confirm.
func (s *Service) confirmToken(x *notify.Subscriber, now time.Time) string {
	return otp.SignToken(s.optInKey, otp.Claims{VID: x.ID, WSID: x.WorkspaceID, Purpose: ConfirmPurpose,
		Channel: string(notify.ChannelEmail), IAT: now.Unix(), EXP: now.Add(ConfirmationTTL).Unix()})
}

// queueConfirmations queues one confirmation mail per subscriber in tx,
// through the send pipeline (the workspace's email routes, retries and
// suppression pre-block like any mail), and records them. Every path
// (create, import from the API or the console, resend) comes here, so
// every mail carries the same link (confirmLink).
func (s *Service) queueConfirmations(ctx context.Context, tx notify.Tx, ws string, subs []*notify.Subscriber, now time.Time) ([]notify.ConfirmationSent, error) {
	if len(subs) == 0 {
		return nil, nil
	}
	w, err := tx.FindWorkspace(ctx, ws)
	if err != nil {
		return nil, err
	}
	accepts := make([]*notify.Accept, len(subs))
	sent := make([]notify.ConfirmationSent, len(subs))
	for i, x := range subs {
		r := s.confirmationRequest(w.Name, x, now)
		accepts[i] = &notify.Accept{Request: r, MaxAttempts: s.jobAttempts}
		sent[i] = notify.ConfirmationSent{WorkspaceID: ws, SubscriberID: x.ID, RequestID: r.ID, SentAt: now}
	}
	if err := tx.AcceptRequests(ctx, accepts, now); err != nil {
		return nil, err
	}
	if err := tx.PutConfirmationsSent(ctx, ws, sent); err != nil {
		return nil, err
	}
	return sent, nil
}

// confirmLink is the confirmation link of a subscriber: absolute, under
// the public base URL the service was built with (Options.BaseURL).
func (s *Service) confirmLink(x *notify.Subscriber, now time.Time) string {
	return s.baseURL + ConfirmPath + "?token=" + url.QueryEscape(s.confirmToken(x, now))
}

// confirmationRequest renders the confirmation mail of one subscriber.
func (s *Service) confirmationRequest(workspace string, x *notify.Subscriber, now time.Time) *notify.Request {
	link := s.confirmLink(x, now)
	hours := int(ConfirmationTTL / time.Hour)
	text := fmt.Sprintf("Please confirm that you want to receive newsletters from %s:\n%s\n\n"+
		"The link works for %d hours. If you did not ask for this, ignore this mail: you will not be subscribed.\n",
		workspace, link, hours)
	l := html.EscapeString(link)
	body := fmt.Sprintf(`<p>Please confirm that you want to receive newsletters from %s.</p><p><a href="%s">Confirm my subscription</a></p>`+
		`<p>The link works for %d hours. If you did not ask for this, ignore this mail: you will not be subscribed.</p>`,
		html.EscapeString(workspace), l, hours)
	return &notify.Request{ID: usecase.NewID(), WorkspaceID: x.WorkspaceID, Source: SourceOptIn, Channel: notify.ChannelEmail,
		Status: notify.StatusQueued, RecipientAddress: x.Address, RecipientName: x.Name, RequestedAt: now, UpdatedAt: now,
		Title: "Confirm your subscription", Text: text, HTML: body,
		Metadata: map[string]string{"subscriberId": x.ID, "purpose": ConfirmPurpose}}
}

// ResendConfirmation queues a new confirmation mail for a pending
// subscriber (audit subscriber.resend_confirmation): 404 outside the
// workspace, 409 when not pending, 429 within a minute of the last mail.
// It works whether or not the setting is on: a subscriber created pending
// with the setting off gets its first mail this way.
func (s *Service) ResendConfirmation(ctx context.Context, a *usecase.Actor, id string) (*notify.ConfirmationSent, error) {
	if !usecase.Storable(id) {
		return nil, notify.NotFound("Subscriber")
	}
	var out *notify.ConfirmationSent
	err := s.Store.Update(ctx, func(tx notify.Tx) error {
		x, err := tx.LockSubscriber(ctx, a.WorkspaceID, id)
		if err != nil {
			return usecase.NotFound(err, "Subscriber")
		}
		if x.ConsentStatus != notify.ConsentPending {
			return notify.Conflict("Subscriber is not pending confirmation")
		}
		now := s.Now()
		last, err := tx.FindConfirmationSent(ctx, a.WorkspaceID, id)
		if err != nil && !notify.IsNotFound(err) {
			return err
		}
		if err == nil && now.Before(last.SentAt.Add(ConfirmationResendCooldown)) {
			e := notify.Errorf(notify.CodeTooManyRequests, "Confirmation resend cooldown active")
			e.RetryAfter = last.SentAt.Add(ConfirmationResendCooldown).Sub(now)
			return e
		}
		if _, err := s.queueConfirmations(ctx, tx, a.WorkspaceID, []*notify.Subscriber{x}, now); err != nil {
			return err
		}
		if out, err = tx.FindConfirmationSent(ctx, a.WorkspaceID, id); err != nil {
			return err
		}
		return s.Audit(ctx, tx, a, a.WorkspaceID, "subscriber.resend_confirmation", "subscriber", x.ID,
			map[string]any{"channel": x.Channel, "address": x.Address, "requestId": out.RequestID})
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// ConfirmState is what a confirmation token leads to.
type ConfirmState int

const (
	// ConfirmInvalid: malformed, forged, or signed for another purpose.
	ConfirmInvalid ConfirmState = iota
	// ConfirmExpired: a genuine token past its time, of a subscriber not
	// confirmed.
	ConfirmExpired
	// ConfirmGone: the subscriber no longer exists.
	ConfirmGone
	// ConfirmRefused: the subscriber unsubscribed (or was unsubscribed)
	// since; a confirmation link never undoes that.
	ConfirmRefused
	// ConfirmPending: a subscriber awaiting confirmation (GET only).
	ConfirmPending
	// ConfirmDone: the subscriber is subscribed, now or before.
	ConfirmDone
)

// ConfirmView is what the confirmation page shows.
type ConfirmView struct {
	State   ConfirmState
	Address string
}

// confirmClaims checks a token's shape, signature, purpose and time.
// expired is true for a genuine token past its time.
func (s *Service) confirmClaims(token string) (c otp.Claims, ok, expired bool) {
	if token == "" || len(token) > MaxConfirmToken {
		return c, false, false
	}
	c, err := otp.VerifyToken(s.optInKey, token, s.Now())
	switch {
	case errors.Is(err, otp.ErrExpired):
		expired = true
	case err != nil:
		return c, false, false
	}
	if c.Purpose != ConfirmPurpose || c.Channel != string(notify.ChannelEmail) || !usecase.Storable(c.VID) || !usecase.Storable(c.WSID) {
		return c, false, false
	}
	return c, true, expired
}

// confirmView sorts a subscriber's state for a token (expired or not).
func confirmView(x *notify.Subscriber, expired bool) ConfirmView {
	v := ConfirmView{Address: x.Address}
	switch {
	case x.ConsentStatus == notify.ConsentSubscribed:
		v.State = ConfirmDone
	case expired:
		v.State = ConfirmExpired
	case x.ConsentStatus == notify.ConsentUnsubscribed:
		v.State = ConfirmRefused
	default:
		v.State = ConfirmPending
	}
	return v
}

// ConfirmLanding looks a token up for the confirmation page and changes
// nothing.
func (s *Service) ConfirmLanding(ctx context.Context, token string) (ConfirmView, error) {
	c, ok, expired := s.confirmClaims(token)
	if !ok {
		return ConfirmView{}, nil
	}
	var v ConfirmView
	err := s.Store.View(ctx, func(tx notify.Tx) error {
		x, err := tx.FindSubscriber(ctx, c.WSID, c.VID)
		if notify.IsNotFound(err) {
			v.State = ConfirmGone
			return nil
		}
		if err != nil {
			return err
		}
		v = confirmView(x, expired)
		return nil
	})
	return v, err
}

// Confirm performs the confirmation of a token: a pending subscriber
// becomes subscribed (consentedAt set, an unsubscribe suppression of the
// address lifted, audit subscriber.confirm by the system). Under the
// subscriber row's lock, so two confirmations at once confirm once and
// both answer done.
func (s *Service) Confirm(ctx context.Context, token string) (ConfirmView, error) {
	c, ok, expired := s.confirmClaims(token)
	if !ok {
		return ConfirmView{}, nil
	}
	var v ConfirmView
	err := s.Store.Update(ctx, func(tx notify.Tx) error {
		x, err := tx.LockSubscriber(ctx, c.WSID, c.VID)
		if notify.IsNotFound(err) {
			v = ConfirmView{State: ConfirmGone}
			return nil
		}
		if err != nil {
			return err
		}
		if v = confirmView(x, expired); v.State != ConfirmPending {
			return nil
		}
		now := s.Now()
		setConsent(x, notify.ConsentSubscribed, now)
		x.UpdatedAt = now
		if err := tx.UpdateSubscriber(ctx, x); err != nil {
			return err
		}
		if err := tx.LiftUnsubscribeSuppressions(ctx, x.WorkspaceID, []string{x.Address}); err != nil {
			return err
		}
		v.State = ConfirmDone
		return s.Audit(ctx, tx, nil, x.WorkspaceID, "subscriber.confirm", "subscriber", x.ID,
			map[string]any{"channel": x.Channel, "address": x.Address})
	})
	if err != nil {
		return ConfirmView{}, err
	}
	return v, nil
}
