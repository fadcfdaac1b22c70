package newsletter

import (
	"context"
	"errors"
	"slices"
	"strings"
	"time"

	"github.com/notifyd/notifyd/internal/mailcheck"
	"github.com/notifyd/notifyd/internal/notify"
	"github.com/notifyd/notifyd/internal/secret"
	"github.com/notifyd/notifyd/internal/usecase"
)

// Subscriber limits (SPEC "Subscriber (newsletter)", "Other constants").
const (
	MaxSubscriberName    = 120
	MaxConsentSource     = 60
	MaxSubscriberSearch  = 320
	MaxSubscriberImport  = 5000
	subscriberTokenBytes = 32 // 43 base64url characters
)

// SubscriberInput is the body of create and update; nil is absent.
// Channel and Address are create-only.
type SubscriberInput struct {
	Channel       *string
	Address       *string
	Name          *string
	ConsentStatus *string
	ConsentSource *string
	Attributes    map[string]string // nil is absent
	// Confirmed (create only) skips double opt-in: the status is kept as
	// asked and no confirmation mail goes out.
	Confirmed bool
}

// ImportItem is one subscriber of an import; Invalid marks an item the API
// could not decode, counted as skipped.
type ImportItem struct {
	Channel    *string
	Address    *string
	Name       *string
	Attributes map[string]string
	Invalid    bool
	Confirmed  *bool // nil: the list's Confirmed
}

// ImportInput is the body of an import.
type ImportInput struct {
	Items         []ImportItem
	ConsentStatus *string // default subscribed, for the whole list
	ConsentSource *string
	// Confirmed marks every item as confirmed (double opt-in skipped)
	// unless the item says otherwise.
	Confirmed bool
}

// ImportResult counts an import; Created+Updated+Skipped = Total.
type ImportResult struct {
	Total, Created, Updated, Skipped int
	// ConfirmationsSent counts the confirmation mails queued (double
	// opt-in).
	ConfirmationsSent int
}

func newUnsubscribeToken() string { return secret.RandomToken(subscriberTokenBytes) }

// setConsent applies SPEC "Subscriber consent": becoming subscribed sets
// consentedAt and clears unsubscribedAt; becoming unsubscribed sets
// unsubscribedAt. Keeping the same status changes no timestamp.
func setConsent(s *notify.Subscriber, status string, now time.Time) {
	if s.ConsentStatus == status && !s.CreatedAt.IsZero() {
		return
	}
	s.ConsentStatus = status
	switch status {
	case notify.ConsentSubscribed:
		t := now
		s.ConsentedAt, s.UnsubscribedAt = &t, nil
	case notify.ConsentUnsubscribed:
		t := now
		s.UnsubscribedAt = &t
	}
}

func validConsentStatus(v string) error {
	if !notify.ValidConsent(v) {
		return notify.Invalid("consentStatus must be one of subscribed, unsubscribed, pending")
	}
	return nil
}

func validConsentSource(v string) error {
	if err := usecase.ValidText("consentSource", v); err != nil {
		return err
	}
	return usecase.MaxLen("consentSource", v, MaxConsentSource)
}

func validAttributes(m map[string]string) error { return usecase.CheckAttributes("attributes", m) }

// validSubscriberChannel accepts only email (SPEC: channel only email).
func validSubscriberChannel(ch *string) error {
	if ch == nil || *ch == "" {
		return notify.Invalid("channel is required")
	}
	if notify.Channel(*ch) != notify.ChannelEmail {
		return notify.Invalid("channel must be email")
	}
	return nil
}

// normalizeAddress trims, lower-cases and checks the syntax of addr and
// returns it with its domain.
func normalizeAddress(addr *string) (string, string, error) {
	if addr == nil || *addr == "" {
		return "", "", notify.Invalid("address is required")
	}
	if err := usecase.ValidText("address", *addr); err != nil {
		return "", "", err
	}
	a := mailcheck.Normalize(*addr)
	if err := usecase.MaxLen("address", a, mailcheck.MaxAddress); err != nil {
		return "", "", err
	}
	d, err := mailcheck.Domain(a)
	if err != nil {
		return "", "", notify.Invalid("address must be a valid email address")
	}
	return a, d, nil
}

// validSubscriberFields checks the text fields of a create, an update and
// an import row alike (issue 29, finding 8: the console's CSV import once
// stored what the API refuses).
func validSubscriberFields(name, source *string, attrs map[string]string) error {
	if name != nil {
		if err := usecase.ValidText("name", *name); err != nil {
			return err
		}
		if err := usecase.MaxLen("name", *name, MaxSubscriberName); err != nil {
			return err
		}
		if err := usecase.OneLine("name", *name); err != nil {
			return err
		}
	}
	if source != nil {
		if err := validConsentSource(*source); err != nil {
			return err
		}
	}
	return validAttributes(attrs)
}

// checkMailDomain refuses a domain DNS says cannot receive mail. When DNS
// gives no answer (timeout, SERVFAIL, no resolver) it logs and accepts:
// machines without DNS must still take subscribers.
func (s *Service) checkMailDomain(ctx context.Context, domain string) error {
	if s.mailCheck == nil {
		return nil
	}
	err := s.mailCheck.Check(ctx, domain)
	switch {
	case err == nil:
		return nil
	case errors.Is(err, mailcheck.ErrNoMail):
		return notify.Invalid("address domain %s cannot receive mail", domain)
	}
	s.Log.WarnContext(ctx, "mx check failed; subscriber accepted unchecked", "domain", domain, "err", err)
	return nil
}

func subscriberPayload(x *notify.Subscriber) map[string]any {
	return map[string]any{"channel": x.Channel, "address": x.Address, "consentStatus": x.ConsentStatus, "consentSource": x.ConsentSource}
}

// CreateSubscriber validates, checks the address domain by DNS and creates
// a subscriber with a fresh unsubscribe token (audit subscriber.create);
// 409 when the workspace has the channel and address already.
func (s *Service) CreateSubscriber(ctx context.Context, a *usecase.Actor, in SubscriberInput) (*notify.Subscriber, error) {
	if err := validSubscriberChannel(in.Channel); err != nil {
		return nil, err
	}
	addr, domain, err := normalizeAddress(in.Address)
	if err != nil {
		return nil, err
	}
	if err := validSubscriberFields(in.Name, in.ConsentSource, in.Attributes); err != nil {
		return nil, err
	}
	status := notify.ConsentSubscribed
	if in.ConsentStatus != nil {
		if err := validConsentStatus(*in.ConsentStatus); err != nil {
			return nil, err
		}
		status = *in.ConsentStatus
	}
	if err := s.checkMailDomain(ctx, domain); err != nil {
		return nil, err
	}
	now := s.Now()
	x := &notify.Subscriber{ID: usecase.NewID(), WorkspaceID: a.WorkspaceID, Channel: notify.ChannelEmail, Address: addr,
		Attributes: map[string]string{}, UnsubscribeToken: newUnsubscribeToken()}
	if in.Name != nil {
		x.Name = *in.Name
	}
	if in.ConsentSource != nil {
		x.ConsentSource = *in.ConsentSource
	}
	if in.Attributes != nil {
		x.Attributes = in.Attributes
	}
	x.CreatedAt, x.UpdatedAt = now, now
	err = s.Store.Update(ctx, func(tx notify.Tx) error {
		set, err := tx.FindNewsletterSettings(ctx, a.WorkspaceID)
		if err != nil {
			return err
		}
		st, mail := optInStatus(set.DoubleOptIn, in.Confirmed, status, "")
		setConsent(x, st, now)
		if err := tx.CreateSubscriber(ctx, x); err != nil {
			return usecase.ConflictOr(err, "A subscriber with channel %s and address %s already exists", x.Channel, x.Address)
		}
		if mail {
			if _, err := s.queueConfirmations(ctx, tx, a.WorkspaceID, []*notify.Subscriber{x}, now); err != nil {
				return err
			}
		}
		if x.ConsentStatus == notify.ConsentSubscribed {
			if err := tx.LiftUnsubscribeSuppressions(ctx, a.WorkspaceID, []string{x.Address}); err != nil {
				return err
			}
		}
		return s.Audit(ctx, tx, a, a.WorkspaceID, "subscriber.create", "subscriber", x.ID, subscriberPayload(x))
	})
	if err != nil {
		return nil, err
	}
	return x, nil
}

// ListSubscribers returns a page (limit 1 to 200, default 50) and the total.
func (s *Service) ListSubscribers(ctx context.Context, a *usecase.Actor, f notify.SubscriberFilter) ([]*notify.Subscriber, int, notify.SubscriberFilter, error) {
	if f.Limit == 0 {
		f.Limit = 50
	}
	if f.Limit < 1 || f.Limit > 200 {
		return nil, 0, f, notify.Invalid("limit must be between 1 and 200")
	}
	if f.Offset < 0 {
		return nil, 0, f, notify.Invalid("offset must be 0 or greater")
	}
	if f.Channel != "" && f.Channel != notify.ChannelEmail {
		return nil, 0, f, notify.Invalid("channel must be email")
	}
	if f.ConsentStatus != "" {
		if err := validConsentStatus(f.ConsentStatus); err != nil {
			return nil, 0, f, err
		}
	}
	if err := usecase.MaxLen("search", f.Search, MaxSubscriberSearch); err != nil {
		return nil, 0, f, err
	}
	if err := usecase.ValidText("search", f.Search); err != nil {
		return nil, 0, f, err
	}
	var out []*notify.Subscriber
	var total int
	err := s.Store.View(ctx, func(tx notify.Tx) (err error) {
		out, total, err = tx.FindSubscribers(ctx, a.WorkspaceID, f)
		return err
	})
	return out, total, f, err
}

// GetSubscriber returns one subscriber of the workspace (404 otherwise).
func (s *Service) GetSubscriber(ctx context.Context, a *usecase.Actor, id string) (*notify.Subscriber, error) {
	var x *notify.Subscriber
	err := s.Store.View(ctx, func(tx notify.Tx) (err error) {
		x, err = tx.FindSubscriber(ctx, a.WorkspaceID, id)
		return usecase.NotFound(err, "Subscriber")
	})
	return x, err
}

// UpdateSubscriber changes name, consent status and source, attributes
// (audit subscriber.update). Channel and address never change (400).
// Becoming subscribed again lifts the address's unsubscribe suppression.
func (s *Service) UpdateSubscriber(ctx context.Context, a *usecase.Actor, id string, in SubscriberInput) (*notify.Subscriber, error) {
	if in.Channel != nil || in.Address != nil {
		return nil, notify.Invalid("channel and address cannot be changed")
	}
	if err := validSubscriberFields(in.Name, in.ConsentSource, in.Attributes); err != nil {
		return nil, err
	}
	if in.ConsentStatus != nil {
		if err := validConsentStatus(*in.ConsentStatus); err != nil {
			return nil, err
		}
	}
	var x *notify.Subscriber
	err := s.Store.Update(ctx, func(tx notify.Tx) (err error) {
		// Locked: an unsubscribe committing meanwhile is kept, not
		// overwritten with the status read before it.
		if x, err = tx.LockSubscriber(ctx, a.WorkspaceID, id); err != nil {
			return usecase.NotFound(err, "Subscriber")
		}
		now := s.Now()
		if in.Name != nil {
			x.Name = *in.Name
		}
		if in.ConsentSource != nil {
			x.ConsentSource = *in.ConsentSource
		}
		if in.Attributes != nil {
			x.Attributes = in.Attributes
		}
		resubscribed := false
		if in.ConsentStatus != nil {
			resubscribed = x.ConsentStatus != notify.ConsentSubscribed && *in.ConsentStatus == notify.ConsentSubscribed
			setConsent(x, *in.ConsentStatus, now)
		}
		x.UpdatedAt = now
		if err := tx.UpdateSubscriber(ctx, x); err != nil {
			return usecase.NotFound(err, "Subscriber")
		}
		if resubscribed {
			if err := tx.LiftUnsubscribeSuppressions(ctx, a.WorkspaceID, []string{x.Address}); err != nil {
				return err
			}
		}
		return s.Audit(ctx, tx, a, a.WorkspaceID, "subscriber.update", "subscriber", x.ID, subscriberPayload(x))
	})
	if err != nil {
		return nil, err
	}
	return x, nil
}

// DeleteSubscriber removes a subscriber (audit subscriber.delete).
func (s *Service) DeleteSubscriber(ctx context.Context, a *usecase.Actor, id string) error {
	return s.Store.Update(ctx, func(tx notify.Tx) error {
		x, err := tx.FindSubscriber(ctx, a.WorkspaceID, id)
		if err != nil {
			return usecase.NotFound(err, "Subscriber")
		}
		if err := tx.DeleteSubscriber(ctx, a.WorkspaceID, id); err != nil {
			return usecase.NotFound(err, "Subscriber")
		}
		return s.Audit(ctx, tx, a, a.WorkspaceID, "subscriber.delete", "subscriber", id, subscriberPayload(x))
	})
}

// importEntry is one valid import item after normalization; later items of
// the same address fold into the first.
type importEntry struct {
	address    string
	name       *string
	attributes map[string]string
	confirmed  *bool
	repeats    int // further items of the same address
}

// importRow checks one import item, from the API or the console's CSV
// file alike, and returns its normalized address; an error skips it.
func importRow(it ImportItem) (string, error) {
	if it.Invalid {
		return "", notify.Invalid("The item could not be read")
	}
	if err := validSubscriberChannel(it.Channel); err != nil {
		return "", err
	}
	if err := validSubscriberFields(it.Name, nil, it.Attributes); err != nil {
		return "", err
	}
	addr, _, err := normalizeAddress(it.Address)
	return addr, err
}

// ImportSubscribers upserts 1 to 5,000 subscribers by channel and address
// in one transaction (audit subscriber.import). An item that fails
// validation is skipped; no MX check. The list's consentStatus and
// consentSource apply to every item; an item's absent name or attributes
// keep the stored ones. A repeated address counts as an update of the
// first. Unlike an update, an import lifts no unsubscribe suppression: an
// old list imported again must not undo the unsubscribes since.
func (s *Service) ImportSubscribers(ctx context.Context, a *usecase.Actor, in ImportInput) (*ImportResult, error) {
	status, err := importStatus(in)
	if err != nil {
		return nil, err
	}
	res := &ImportResult{Total: len(in.Items)}
	order := mergeImportRows(in.Items, res)
	if len(order) == 0 {
		return res, nil
	}
	err = s.Store.Update(ctx, func(tx notify.Tx) error { return subscriberImport{s}.importInTx(ctx, tx, a, in, status, order, res) })
	if err != nil {
		return nil, err
	}
	return res, nil
}

// subscriberImport is the room as an import's steps see it.
type subscriberImport struct{ *Service }

// importStatus checks an import's list-level fields and answers the
// consent status it gives (default subscribed).
func importStatus(in ImportInput) (string, error) {
	if len(in.Items) == 0 || len(in.Items) > MaxSubscriberImport {
		return "", notify.Invalid("subscribers must hold 1 to %d items", MaxSubscriberImport)
	}
	status := notify.ConsentSubscribed
	if in.ConsentStatus != nil {
		if err := validConsentStatus(*in.ConsentStatus); err != nil {
			return "", err
		}
		status = *in.ConsentStatus
	}
	if in.ConsentSource != nil {
		if err := validConsentSource(*in.ConsentSource); err != nil {
			return "", err
		}
	}
	return status, nil
}

// mergeImportRows checks each row (a bad one is skipped and counted in
// res) and merges the rows of one address, later values winning, in the
// order of first appearance.
func mergeImportRows(items []ImportItem, res *ImportResult) []*importEntry {
	byAddr := map[string]*importEntry{}
	var order []*importEntry
	for _, it := range items {
		addr, err := importRow(it)
		if err != nil {
			res.Skipped++
			continue
		}
		e := byAddr[addr]
		if e == nil {
			e = &importEntry{address: addr}
			byAddr[addr] = e
			order = append(order, e)
		} else {
			e.repeats++
		}
		if it.Name != nil {
			e.name = it.Name
		}
		if it.Attributes != nil {
			e.attributes = it.Attributes
		}
		if it.Confirmed != nil {
			e.confirmed = it.Confirmed
		}
	}
	return order
}

// importInTx writes the merged rows (created or updated, with the consent
// double opt-in gives them), queues the confirmation mails they need, and
// audits the import.
func (s subscriberImport) importInTx(ctx context.Context, tx notify.Tx, a *usecase.Actor, in ImportInput, status string, order []*importEntry, res *ImportResult) error {
	addrs := make([]string, len(order))
	for i, e := range order {
		addrs[i] = e.address
	}
	existing, err := tx.FindSubscribersByAddress(ctx, a.WorkspaceID, notify.ChannelEmail, addrs)
	if err != nil {
		return err
	}
	set, err := tx.FindNewsletterSettings(ctx, a.WorkspaceID)
	if err != nil {
		return err
	}
	now := s.Now()
	subs, toMail, created, updated := importedRows(a.WorkspaceID, in, status, set.DoubleOptIn, order, existing, now)
	// Rows in address order: concurrent imports (and other writers) then
	// take their locks in one order and never deadlock.
	slices.SortFunc(subs, func(p, q *notify.Subscriber) int { return strings.Compare(p.Address, q.Address) })
	if err := tx.UpsertSubscribers(ctx, subs); err != nil {
		return err
	}
	res.Created, res.Updated = created, updated
	payload := map[string]any{"total": res.Total, "created": res.Created, "updated": res.Updated, "skipped": res.Skipped, "consentStatus": status}
	if len(toMail) > 0 {
		if res.ConfirmationsSent, err = s.confirmImported(ctx, tx, a.WorkspaceID, toMail, now); err != nil {
			return err
		}
		payload["confirmationsSent"] = res.ConfirmationsSent
	}
	return s.Audit(ctx, tx, a, a.WorkspaceID, "subscriber.import", "subscriber", "", payload)
}

// importedRows builds the subscriber rows of an import over the existing
// ones, counts those created and updated, and lists the addresses a
// confirmation mail goes to.
func importedRows(ws string, in ImportInput, status string, doubleOptIn bool, order []*importEntry,
	existing map[string]*notify.Subscriber, now time.Time) (subs []*notify.Subscriber, toMail []string, created, updated int) {
	subs = make([]*notify.Subscriber, len(order))
	for i, e := range order {
		x := existing[e.address]
		prev := ""
		if x != nil {
			prev = x.ConsentStatus
		}
		confirmed := in.Confirmed
		if e.confirmed != nil {
			confirmed = *e.confirmed
		}
		st, mail := optInStatus(doubleOptIn, confirmed, status, prev)
		if mail {
			toMail = append(toMail, e.address)
		}
		if x == nil {
			created++
			x = &notify.Subscriber{ID: usecase.NewID(), WorkspaceID: ws, Channel: notify.ChannelEmail, Address: e.address,
				Attributes: map[string]string{}, UnsubscribeToken: newUnsubscribeToken()}
		} else {
			updated++
		}
		updated += e.repeats
		if e.name != nil {
			x.Name = *e.name
		}
		if e.attributes != nil {
			x.Attributes = e.attributes
		}
		if in.ConsentSource != nil {
			x.ConsentSource = *in.ConsentSource
		}
		setConsent(x, st, now)
		if x.CreatedAt.IsZero() {
			x.CreatedAt = now
		}
		x.UpdatedAt = now
		subs[i] = x
	}
	return subs, toMail, created, updated
}

// confirmImported queues the confirmation mails of the imported addresses
// still pending as stored (a row inserted meanwhile by another writer
// kept its own id) and answers how many.
func (s subscriberImport) confirmImported(ctx context.Context, tx notify.Tx, ws string, toMail []string, now time.Time) (int, error) {
	stored, err := tx.FindSubscribersByAddress(ctx, ws, notify.ChannelEmail, toMail)
	if err != nil {
		return 0, err
	}
	pending := make([]*notify.Subscriber, 0, len(toMail))
	for _, addr := range toMail {
		if x := stored[addr]; x != nil && x.ConsentStatus == notify.ConsentPending {
			pending = append(pending, x)
		}
	}
	sent, err := s.queueConfirmations(ctx, tx, ws, pending, now)
	return len(sent), err
}
