package newsletter

import (
	"context"

	"github.com/notifyd/notifyd/internal/notify"
)

// MaxUnsubscribeToken is the longest unsubscribe token accepted on input
// (SPEC "Other constants").
const MaxUnsubscribeToken = 64

// UnsubscribeState is what an unsubscribe token leads to.
type UnsubscribeState int

const (
	// UnsubscribeInvalid: the token is malformed or names no subscriber.
	UnsubscribeInvalid UnsubscribeState = iota
	// UnsubscribePending: a subscriber that has not unsubscribed yet.
	UnsubscribePending
	// UnsubscribeDone: the subscriber is unsubscribed (now or before).
	UnsubscribeDone
)

// UnsubscribeTokenShape sorts a token given on input: empty or longer than
// 64 characters is a bad request (the caller answers 400); otherwise
// wellFormed says whether it can be a token at all (base64url characters).
func UnsubscribeTokenShape(token string) (badRequest, wellFormed bool) {
	if token == "" || len([]rune(token)) > MaxUnsubscribeToken {
		return true, false
	}
	for i := 0; i < len(token); i++ {
		c := token[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_') {
			return false, false
		}
	}
	return false, true
}

// UnsubscribeView is what the confirmation page shows.
type UnsubscribeView struct {
	State   UnsubscribeState
	Address string // the subscriber's address, when the token is known
}

// UnsubscribeLanding looks a token up for the confirmation page and
// changes nothing.
func (s *Service) UnsubscribeLanding(ctx context.Context, token string) (UnsubscribeView, error) {
	if bad, ok := UnsubscribeTokenShape(token); bad || !ok {
		return UnsubscribeView{}, nil
	}
	var v UnsubscribeView
	err := s.Store.View(ctx, func(tx notify.Tx) error {
		x, err := tx.FindSubscriberByToken(ctx, token)
		if notify.IsNotFound(err) {
			return nil
		}
		if err != nil {
			return err
		}
		v.Address, v.State = x.Address, UnsubscribePending
		if x.ConsentStatus == notify.ConsentUnsubscribed {
			v.State = UnsubscribeDone
		}
		return nil
	})
	return v, err
}

// Unsubscribe performs the unsubscribe of a token: the subscriber becomes
// unsubscribed (unsubscribedAt set) and its address joins the workspace's
// email suppression list with reason unsubscribe, unless it is listed
// already (a bounce or complaint reason is kept). Repeating it is
// harmless. The caller has refused empty and over-long tokens.
func (s *Service) Unsubscribe(ctx context.Context, token string) (UnsubscribeView, error) {
	var v UnsubscribeView
	if bad, ok := UnsubscribeTokenShape(token); bad || !ok {
		return v, nil
	}
	err := s.Store.Update(ctx, func(tx notify.Tx) error {
		x, err := tx.FindSubscriberByToken(ctx, token)
		if err == nil {
			// Read again under the row's lock: a concurrent update's
			// fields are kept, not overwritten.
			x, err = tx.LockSubscriber(ctx, x.WorkspaceID, x.ID)
		}
		if notify.IsNotFound(err) {
			return nil
		}
		if err != nil {
			return err
		}
		v.State, v.Address = UnsubscribeDone, x.Address
		now := s.Now()
		if x.ConsentStatus != notify.ConsentUnsubscribed {
			setConsent(x, notify.ConsentUnsubscribed, now)
			x.UpdatedAt = now
			if err := tx.UpdateSubscriber(ctx, x); err != nil {
				return err
			}
			if err := s.Audit(ctx, tx, nil, x.WorkspaceID, "subscriber.unsubscribe", "subscriber", x.ID,
				map[string]any{"channel": x.Channel, "address": x.Address}); err != nil {
				return err
			}
		}
		if x.Channel != notify.ChannelEmail {
			return nil
		}
		suppressed, err := tx.IsSuppressed(ctx, x.WorkspaceID, x.Address)
		if err != nil || suppressed {
			return err
		}
		return tx.PutSuppression(ctx, x.WorkspaceID, x.Address, notify.SuppressionUnsubscribe, now)
	})
	if err != nil {
		return UnsubscribeView{}, err
	}
	return v, nil
}
