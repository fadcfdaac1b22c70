package suppressions

import (
	"context"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"strings"
	"time"

	"github.com/notifyd/notifyd/internal/bounce"
	"github.com/notifyd/notifyd/internal/groupcommit"
	"github.com/notifyd/notifyd/internal/notify"
	"github.com/notifyd/notifyd/internal/secret"
	"github.com/notifyd/notifyd/internal/usecase"
)

// ResendWebhookSecretKey is the configJson key of a Resend account holding
// the webhook's signing secret (whsec_…), which Resend generates.
const ResendWebhookSecretKey = "mailx_webhook_secret"

// SESTopicARNKey is the optional configJson key of an SES account naming
// the SNS topic its callbacks must come from.
const SESTopicARNKey = "maily_sns_topic_arn"

func callbackKind(kind string) bool {
	return kind == usecase.KindResend || kind == usecase.KindSES || kind == usecase.KindPostmark
}

// CallbackSecretView is a provider account's callback-secret state.
type CallbackSecretView struct {
	ProviderAccountID string
	Configured        bool
	RotationPending   bool // a previous secret is still accepted
	RotatedAt         *time.Time
}

// RotatedCallbackSecret is the answer of a rotation; Secret is shown once.
type RotatedCallbackSecret struct {
	CallbackSecretView
	Secret string
}

// callbackAccount is the workspace's email provider account id, with its
// callback secret (nil when it has none).
func (s *Service) callbackAccount(ctx context.Context, tx notify.Tx, a *usecase.Actor, id string) (*notify.ProviderAccount, *notify.CallbackSecret, error) {
	if !usecase.Storable(id) {
		return nil, nil, notify.NotFound("Provider")
	}
	p, err := tx.FindProviderAccount(ctx, a.WorkspaceID, id)
	if err != nil {
		return nil, nil, usecase.NotFound(err, "Provider")
	}
	if !callbackKind(p.ProviderKind) {
		return nil, nil, notify.Invalid("Callback secrets apply to email providers (mailx_email, maily_email, mailz_email); this provider is %s", p.ProviderKind)
	}
	cs, err := tx.FindCallbackSecret(ctx, p.ID)
	if err != nil && !errors.Is(err, notify.ErrNotFound) {
		return nil, nil, err
	}
	return p, cs, nil
}

func secretView(id string, cs *notify.CallbackSecret) CallbackSecretView {
	v := CallbackSecretView{ProviderAccountID: id}
	if cs != nil {
		at := cs.RotatedAt
		v.Configured, v.RotationPending, v.RotatedAt = true, cs.PreviousHash != "", &at
	}
	return v
}

// GetCallbackSecret reports whether a provider has a callback secret and
// whether a rotation is pending; never the secret.
func (s *Service) GetCallbackSecret(ctx context.Context, a *usecase.Actor, id string) (*CallbackSecretView, error) {
	var v CallbackSecretView
	err := s.Store.View(ctx, func(tx notify.Tx) error {
		p, cs, err := s.callbackAccount(ctx, tx, a, id)
		if err != nil {
			return err
		}
		v = secretView(p.ID, cs)
		return nil
	})
	return &v, err
}

// RotateCallbackSecret issues a new callback secret (audit
// maily.callback_secret.rotate). The secret it replaces stays valid until
// FinalizeCallbackSecret, so the vendor side can be switched without
// losing callbacks; a rotation during a pending one drops the oldest.
func (s *Service) RotateCallbackSecret(ctx context.Context, a *usecase.Actor, id string) (*RotatedCallbackSecret, error) {
	plain := "cbs_" + secret.RandomToken(32)
	var out RotatedCallbackSecret
	err := s.Store.Update(ctx, func(tx notify.Tx) error {
		p, old, err := s.callbackAccount(ctx, tx, a, id)
		if err != nil {
			return err
		}
		cs := &notify.CallbackSecret{ProviderAccountID: p.ID, WorkspaceID: p.WorkspaceID,
			CurrentHash: secret.HashToken(plain), RotatedAt: s.Now()}
		if old != nil {
			cs.PreviousHash = old.CurrentHash
		}
		if err := tx.PutCallbackSecret(ctx, cs); err != nil {
			return err
		}
		out = RotatedCallbackSecret{CallbackSecretView: secretView(p.ID, cs), Secret: plain}
		return s.Audit(ctx, tx, a, a.WorkspaceID, "maily.callback_secret.rotate", "provider", p.ID,
			map[string]any{"providerKind": p.ProviderKind, "previousAccepted": cs.PreviousHash != ""})
	})
	if err != nil {
		return nil, err
	}
	return &out, nil
}

// FinalizeCallbackSecret ends a rotation: only the newest secret is
// accepted from now on (audit maily.callback_secret.finalize). 409 when no
// rotation is pending.
func (s *Service) FinalizeCallbackSecret(ctx context.Context, a *usecase.Actor, id string) (*CallbackSecretView, error) {
	var v CallbackSecretView
	err := s.Store.Update(ctx, func(tx notify.Tx) error {
		p, cs, err := s.callbackAccount(ctx, tx, a, id)
		if err != nil {
			return err
		}
		if cs == nil || cs.PreviousHash == "" {
			return notify.Conflict("No callback secret rotation is pending for this provider")
		}
		cs.PreviousHash, cs.RotatedAt = "", s.Now()
		if err := tx.PutCallbackSecret(ctx, cs); err != nil {
			return err
		}
		v = secretView(p.ID, cs)
		return s.Audit(ctx, tx, a, a.WorkspaceID, "maily.callback_secret.finalize", "provider", p.ID,
			map[string]any{"providerKind": p.ProviderKind})
	})
	if err != nil {
		return nil, err
	}
	return &v, nil
}

// CallbackInput is one vendor callback as the public endpoint received it.
type CallbackInput struct {
	ProviderAccountID string
	Token             string // ?token= or the basic-auth password
	Body              []byte
	// ReadBody, when Body is nil, reads the body once the callback secret
	// is proven: an unknown caller cannot make the server buffer it.
	ReadBody func() ([]byte, error)
	Svix     bounce.SvixHeaders
}

// CallbackResult says what a callback did.
type CallbackResult struct {
	Events     int  // bounces and complaints read (duplicates included)
	Suppressed int  // addresses newly put on the list by this callback
	Confirmed  bool // an SNS subscription was confirmed
}

// errCallbackAuth answers a callback whose account is unknown or whose
// callback secret is missing or wrong alike: 404, as SPEC answers for
// another workspace's records, so the public endpoint does not tell which
// provider ids exist (it answered 404 for unknown ids and 401 for the
// others). Once the secret is proven, a bad vendor signature is 401.
var errCallbackAuth = notify.NotFound("Provider")

// ReceiveCallback authenticates a vendor callback by the provider
// account's callback secret, verifies the vendor's own signature (SNS,
// Svix), and records every bounce and complaint: a permanent bounce or a
// complaint puts the address on the workspace's suppression list, and
// each is attached to the attempt whose provider message id it names.
func (s *Service) ReceiveCallback(ctx context.Context, in CallbackInput) (*CallbackResult, error) {
	p, err := s.callbackSender(ctx, in)
	if err != nil {
		return nil, err
	}
	if in.Body == nil && in.ReadBody != nil {
		if in.Body, err = in.ReadBody(); err != nil {
			return nil, err
		}
	}
	// Every vendor posts JSON: anything else is refused before it is parsed.
	if !json.Valid(in.Body) {
		return nil, notify.Invalid("Callback body must be JSON")
	}
	now := s.Now()
	events, confirmed, err := s.vendorEvents(ctx, p, in, now)
	if err != nil {
		return nil, err
	}
	// Deliveries are receipts, not feedback (issue 35).
	feedback := events[:0:0]
	for _, ev := range events {
		if ev.Type != bounce.TypeDelivery {
			feedback = append(feedback, ev)
		}
	}
	res := &CallbackResult{Events: len(feedback), Confirmed: confirmed}
	if len(feedback) > 0 {
		if res.Suppressed, err = s.recordEvents(ctx, p, feedback, now); err != nil {
			return nil, err
		}
	}
	if err := s.applyReceipts(ctx, p, events); err != nil {
		return nil, err
	}
	return res, nil
}

// applyReceipts hands the delivery reports among a callback's events to
// the receipts port: a delivery arrived; a permanent bounce did not (a
// transient one is retried by the vendor, a complaint came after arrival).
func (s *Service) applyReceipts(ctx context.Context, p *notify.ProviderAccount, events []bounce.Event) error {
	if s.receipts == nil {
		return nil
	}
	for _, ev := range events {
		var rep *notify.VendorReport
		switch {
		case ev.Type == bounce.TypeDelivery:
			rep = &notify.VendorReport{Status: notify.ReceiptDelivered, Code: "delivered", Text: ev.Detail, At: ev.OccurredAt}
		case ev.Type == bounce.TypeBounce && ev.BounceType == bounce.Permanent:
			rep = &notify.VendorReport{Status: notify.ReceiptUndelivered, Code: "bounce", Text: ev.Detail, At: ev.OccurredAt}
		default:
			continue
		}
		if _, err := s.receipts.Apply(ctx, p.ProviderKind, ev.MessageID, rep); err != nil {
			return err
		}
	}
	return nil
}

// callbackSender is the provider account a callback names, once its
// callback secret is proven (the current one or, during a rotation, the
// previous one); errCallbackAuth otherwise.
func (s *Service) callbackSender(ctx context.Context, in CallbackInput) (*notify.ProviderAccount, error) {
	if !usecase.IsUUID(in.ProviderAccountID) || in.Token == "" || len(in.Token) > 200 {
		return nil, errCallbackAuth
	}
	p, cs, err := s.findSender(ctx, in.ProviderAccountID)
	if errors.Is(err, notify.ErrNotFound) {
		return nil, errCallbackAuth
	}
	if err != nil {
		return nil, err
	}
	h := secret.HashToken(in.Token)
	cur := subtle.ConstantTimeCompare([]byte(h), []byte(cs.CurrentHash))
	prev := subtle.ConstantTimeCompare([]byte(h), []byte(cs.PreviousHash))
	if cur|prev != 1 || !callbackKind(p.ProviderKind) {
		return nil, errCallbackAuth
	}
	return p, nil
}

// senderReaders is how many account lookups of callbacks run at once
// (one: the callers that arrive during a lookup share the next);
// senderBatch bounds the callers one lookup answers.
const senderReaders, senderBatch = 1, 256

// senderCall is a callback waiting for its account's lookup.
type senderCall struct {
	ctx  context.Context
	id   string
	p    *notify.ProviderAccount
	cs   *notify.CallbackSecret
	done chan error
}

func (c *senderCall) Context() context.Context { return c.ctx }
func (c *senderCall) Answer(err error)         { c.done <- err }

// findSender reads provider account id with its callback secret
// (FindCallbackSender: one statement, no transaction). The callbacks
// that ask while another lookup runs share the next one: a burst of a
// vendor's callbacks names the same account, and its lookups are one
// statement instead of one each. A lookup starts after every caller it
// answers arrived, so none sees a secret older than its own arrival.
func (s *Service) findSender(ctx context.Context, id string) (*notify.ProviderAccount, *notify.CallbackSecret, error) {
	if s.senders == nil {
		return s.lookupSender(ctx, id)
	}
	c := &senderCall{ctx: ctx, id: id, done: make(chan error, 1)}
	if err := groupcommit.Wait(ctx, s.senders, c, c.done); err != nil {
		return nil, nil, err
	}
	// Each caller gets its own copies: the rows are shared by the batch.
	p, cs := *c.p, *c.cs
	return &p, &cs, nil
}

// lookupSenders answers a batch of findSender's callers, one lookup an
// account.
func (s *Service) lookupSenders(calls []*senderCall) {
	live := groupcommit.Live(calls)
	byID := map[string][]*senderCall{}
	var ids []string
	for _, c := range live {
		if byID[c.id] == nil {
			ids = append(ids, c.id)
		}
		byID[c.id] = append(byID[c.id], c)
	}
	for _, id := range ids {
		p, cs, err := s.lookupSender(context.Background(), id)
		for _, c := range byID[id] {
			c.p, c.cs = p, cs
			c.Answer(err)
		}
	}
}

func (s *Service) lookupSender(ctx context.Context, id string) (p *notify.ProviderAccount, cs *notify.CallbackSecret, err error) {
	err = s.Store.Lookup(ctx, func(tx notify.Tx) error {
		var err error
		p, cs, err = tx.FindCallbackSender(ctx, id)
		return err
	})
	return p, cs, err
}

// vendorEvents verifies the vendor's signature of the callback and reads
// its bounces and complaints; confirmed is an SNS subscription confirmed
// (a confirmation carries no events).
func (s *Service) vendorEvents(ctx context.Context, p *notify.ProviderAccount, in CallbackInput, now time.Time) (events []bounce.Event, confirmed bool, err error) {
	switch p.ProviderKind {
	case usecase.KindSES:
		return s.sesEvents(ctx, p, in.Body, now)
	case usecase.KindResend:
		events, err = s.resendEvents(p, in, now)
	case usecase.KindPostmark:
		if events, err = bounce.ParsePostmark(in.Body, now); err != nil {
			err = callbackError(err)
		}
	}
	return events, false, err
}

// sesEvents reads an SNS delivery of SES events: its signature checked by
// the SNS port, its topic the account's when it names one; a subscription
// confirmation is confirmed, an unsubscribe confirmation is taken.
func (s *Service) sesEvents(ctx context.Context, p *notify.ProviderAccount, body []byte, now time.Time) ([]bounce.Event, bool, error) {
	m, err := bounce.ParseSNS(body)
	if err != nil {
		return nil, false, callbackError(err)
	}
	if err := s.sns.Verify(ctx, m); err != nil {
		return nil, false, callbackError(err)
	}
	// AWS advises refusing unexpected topics; the account may name its
	// topic, else any topic signed by SNS is taken.
	cfg, err := usecase.OpenProviderConfig(s.box, p)
	if err != nil {
		return nil, false, err
	}
	if want := cfg[SESTopicARNKey]; want != "" && subtle.ConstantTimeCompare([]byte(want), []byte(m.TopicArn)) != 1 {
		return nil, false, notify.Unauthorized("Invalid signature: TopicArn is not the provider's %s", SESTopicARNKey)
	}
	switch m.Type {
	case bounce.SNSSubscriptionConfirmation:
		if err := s.sns.Confirm(ctx, m); err != nil {
			return nil, false, callbackError(err)
		}
		s.Log.Info("SNS subscription confirmed", "providerAccountId", p.ID, "topicArn", m.TopicArn)
		return nil, true, nil
	case bounce.SNSUnsubscribeConfirmation:
		return nil, false, nil
	}
	events, err := bounce.ParseSES(m.Message, m.MessageID, now)
	if err != nil {
		return nil, false, callbackError(err)
	}
	return events, false, nil
}

// resendEvents reads a Resend webhook, Svix-signed with the account's
// webhook secret.
func (s *Service) resendEvents(p *notify.ProviderAccount, in CallbackInput, now time.Time) ([]bounce.Event, error) {
	cfg, err := usecase.OpenProviderConfig(s.box, p)
	if err != nil {
		return nil, err
	}
	whsec := cfg[ResendWebhookSecretKey]
	if whsec == "" {
		return nil, notify.Unauthorized("Invalid signature: the provider has no %s configured", ResendWebhookSecretKey)
	}
	if err := bounce.VerifySvix(whsec, in.Svix, in.Body, now); err != nil {
		return nil, callbackError(err)
	}
	events, err := bounce.ParseResend(in.Body, in.Svix.ID, now)
	if err != nil {
		return nil, callbackError(err)
	}
	return events, nil
}

// recordEvents stores a callback's events in one transaction and counts
// the addresses they newly suppressed.
func (s *Service) recordEvents(ctx context.Context, p *notify.ProviderAccount, events []bounce.Event, now time.Time) (int, error) {
	suppressed := 0
	err := s.Store.Update(ctx, func(tx notify.Tx) error {
		suppressed = 0
		for _, ev := range events {
			n, err := s.recordFeedback(ctx, tx, p, ev, now)
			if err != nil {
				return err
			}
			suppressed += n
		}
		return nil
	})
	return suppressed, err
}

// recordFeedback stores one event and suppresses its address when it calls
// for it; a vendor retry of an event already stored changes nothing.
func (s *Service) recordFeedback(ctx context.Context, tx notify.Tx, p *notify.ProviderAccount, ev bounce.Event, now time.Time) (int, error) {
	reason, suppress := ev.Suppresses()
	f := &notify.DeliveryFeedback{ID: usecase.NewID(), WorkspaceID: p.WorkspaceID, ProviderAccountID: p.ID, ProviderMessageID: ev.MessageID,
		RecipientAddress: ev.Recipient, Type: ev.Type, BounceType: ev.BounceType, Detail: ev.Detail, Suppressed: suppress,
		VendorEventID: ev.EventID, OccurredAt: ev.OccurredAt, ReceivedAt: now}
	if ev.MessageID != "" {
		at, err := tx.FindAttemptByMessageID(ctx, p.WorkspaceID, p.ID, ev.MessageID)
		switch {
		case err == nil:
			f.RequestID, f.AttemptID = at.RequestID, at.ID
		case !errors.Is(err, notify.ErrNotFound):
			return 0, err
		}
	}
	inserted, err := tx.CreateDeliveryFeedback(ctx, f)
	if err != nil || !inserted || !suppress {
		return 0, err
	}
	if err := tx.PutSuppression(ctx, p.WorkspaceID, ev.Recipient, reason, now); err != nil {
		return 0, err
	}
	return 1, nil
}

// callbackError maps the bounce package's errors onto API errors.
func callbackError(err error) error {
	msg := err.Error()
	if i := strings.LastIndex(msg, "\n"); i >= 0 {
		msg = msg[i+1:]
	}
	switch {
	case errors.Is(err, bounce.ErrMalformed):
		return notify.Invalid("%s", msg)
	case errors.Is(err, bounce.ErrFetch):
		return notify.Errorf(notify.CodeProviderFailed, "%s", msg)
	case errors.Is(err, bounce.ErrSignature):
		return notify.Unauthorized("Invalid signature: %s", strings.TrimPrefix(msg, bounce.ErrSignature.Error()+": "))
	}
	return err
}
