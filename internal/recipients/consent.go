package recipients

import (
	"context"

	"github.com/notifyd/notifyd/internal/notify"
	"github.com/notifyd/notifyd/internal/usecase"
)

// ConsentKinds maps the kinds' names in paths to their stored names.
var ConsentKinds = map[string]string{"night-advertising": notify.ConsentNightAdvertising}

// MaxConsentSource bounds a consent's source text.
const MaxConsentSource = 200

// recordedBy names who records a consent for c, and the id of that member
// or key.
func recordedBy(c Caller) (string, string) {
	switch {
	case c.Key != nil:
		return notify.ConsentByAPI, c.Key.ID
	case c.Actor != nil:
		return notify.ConsentByMember, c.Actor.UserID
	}
	return notify.ConsentByRecipient, ""
}

// GiveConsent records the profile's consent of kind (a path name of
// ConsentKinds) now, with where it was given (source): audit
// recipient.consent_given. Giving it again replaces the record.
func (s *Service) GiveConsent(ctx context.Context, c Caller, externalID, kind, source string) (*notify.RecipientConsent, error) {
	stored, ok := ConsentKinds[kind]
	if !ok {
		return nil, notify.NotFound("Consent kind")
	}
	if CheckExternalID("externalId", externalID) != nil {
		return nil, notify.NotFound("Recipient")
	}
	if err := usecase.ValidText("source", source); err != nil {
		return nil, err
	}
	if err := usecase.MaxLen("source", source, MaxConsentSource); err != nil {
		return nil, err
	}
	if err := usecase.OneLine("source", source); err != nil {
		return nil, err
	}
	by, actor := recordedBy(c)
	con := &notify.RecipientConsent{WorkspaceID: c.Workspace(), Kind: stored, GivenAt: s.Now(), Source: source, RecordedBy: by, ActorID: actor}
	err := s.Store.Update(ctx, func(tx notify.Tx) error {
		r, err := tx.LockRecipient(ctx, c.Workspace(), externalID)
		if err != nil {
			return notFound(err)
		}
		con.RecipientID = r.ID
		if err := tx.PutConsent(ctx, con); err != nil {
			return err
		}
		return s.audit(ctx, tx, c, "recipient.consent_given", externalID, map[string]any{"kind": stored, "source": source})
	})
	if err != nil {
		return nil, err
	}
	return con, nil
}

// WithdrawConsent deletes the profile's consent of kind: audit
// recipient.consent_withdrawn; 404 when the profile or the consent is
// not there.
func (s *Service) WithdrawConsent(ctx context.Context, c Caller, externalID, kind string) error {
	stored, ok := ConsentKinds[kind]
	if !ok {
		return notify.NotFound("Consent kind")
	}
	if CheckExternalID("externalId", externalID) != nil {
		return notify.NotFound("Recipient")
	}
	return s.Store.Update(ctx, func(tx notify.Tx) error {
		r, err := tx.LockRecipient(ctx, c.Workspace(), externalID)
		if err != nil {
			return notFound(err)
		}
		if err := tx.DeleteConsent(ctx, c.Workspace(), r.ID, stored); err != nil {
			return usecase.NotFound(err, "Consent")
		}
		return s.audit(ctx, tx, c, "recipient.consent_withdrawn", externalID, map[string]any{"kind": stored})
	})
}

// Consents answers the profile's consents, by kind.
func (s *Service) Consents(ctx context.Context, c Caller, externalID string) ([]*notify.RecipientConsent, error) {
	if CheckExternalID("externalId", externalID) != nil {
		return nil, notify.NotFound("Recipient")
	}
	var out []*notify.RecipientConsent
	err := s.Store.Lookup(ctx, func(tx notify.Tx) error {
		r, err := tx.FindRecipient(ctx, c.Workspace(), externalID)
		if err != nil {
			return notFound(err)
		}
		m, err := tx.FindConsents(ctx, c.Workspace(), []string{r.ID})
		out = m[r.ID]
		return err
	})
	return out, err
}
