package sends

import (
	"context"
	"slices"
	"strings"
	"time"

	"github.com/notifyd/notifyd/internal/notify"
	"github.com/notifyd/notifyd/internal/usecase"
)

// Sends to a recipient profile (issue 32, item 2): a send, a bulk item or
// a fallback step may name recipient.id in place of recipient.address.
// The address for the channel is read from the profile at acceptance and
// recorded on the request, so a later change of the profile changes no
// accepted request.

// checkRecipientChoice checks that a send gives exactly one of
// recipient.address and recipient.id, and answers the address ("" for a
// send by id). Without either, SPEC's rule answers: recipient.address is
// required.
func checkRecipientChoice(f func(string) string, addr, id *string) (string, error) {
	if id != nil {
		if addr != nil {
			return "", notify.Invalid("%s and %s are exclusive: give one of them", f("recipient.address"), f("recipient.id"))
		}
		return "", notify.CheckExternalID(f("recipient.id"), *id)
	}
	if addr == nil || strings.TrimSpace(*addr) == "" {
		return "", notify.Invalid("%s is required", f("recipient.address"))
	}
	return *addr, nil
}

// sendContext reads what a send by recipient id or category, or with a
// window of its own, needs at acceptance, in one store call (nil for a
// send that needs none of it): the profile, the category, the preferences
// on every channel it may use, the windows and, when it may reach a
// phone, the profile's consents.
func sendContext(ctx context.Context, tx notify.Tx, ws string, in *SendInput) (*notify.SendContext, error) {
	q, ok := sendContextQuery(in)
	if !ok {
		return nil, nil
	}
	return tx.FindSendContext(ctx, ws, q)
}

// sendContextQuery is the acceptance read in needs; false when it needs
// none.
func sendContextQuery(in *SendInput) (notify.SendContextQuery, bool) {
	if in.RecipientID == nil && in.Category == nil && in.SendWindow == nil {
		return notify.SendContextQuery{}, false
	}
	q := notify.SendContextQuery{Channels: []notify.Channel{notify.Channel(in.Channel)}}
	if in.RecipientID != nil {
		q.RecipientExternalID = *in.RecipientID
	}
	if in.Category != nil {
		q.CategoryKey = *in.Category
	}
	if in.ChannelFallback != nil {
		for _, st := range *in.ChannelFallback {
			if st != nil && !slices.Contains(q.Channels, notify.Channel(st.Channel)) {
				q.Channels = append(q.Channels, notify.Channel(st.Channel))
			}
		}
	}
	for _, ch := range q.Channels {
		q.Consents = q.Consents || (q.RecipientExternalID != "" && phoneChannel(ch))
	}
	return q, true
}

// findProfile answers the send's profile from sc; a missing one is the
// caller's mistake, a 400 that queues nothing (prefix names a bulk item).
func findProfile(sc *notify.SendContext, id, prefix string) (*notify.Recipient, error) {
	if sc.Recipient == nil {
		return nil, noProfile(id, prefix)
	}
	return sc.Recipient, nil
}

// readProfile reads the profile a fallback step names of its own.
func readProfile(ctx context.Context, tx notify.Tx, ws, id, prefix string) (*notify.Recipient, error) {
	p, err := tx.FindRecipient(ctx, ws, id)
	if notify.IsNotFound(err) {
		return nil, noProfile(id, prefix)
	}
	return p, err
}

func noProfile(id, prefix string) error {
	return notify.Invalid("%srecipient.id: no recipient profile %s in this workspace", prefix, id)
}

// profileAddress is p's address for a send on ch, checked as a send's
// recipient.address is; a profile without one answers a 400 naming the
// channel. f names the recipient's fields ("recipient.", or a bulk item's
// or fallback step's).
func profileAddress(p *notify.Recipient, ch notify.Channel, name string, title *string, field string) (string, error) {
	addr := p.AddressFor(ch)
	if addr == "" {
		return "", notify.Invalid("%sid: recipient profile %s has no address for channel %s", field, p.ExternalID, ch)
	}
	f := func(n string) string { return strings.TrimSuffix(field, "recipient.") + n }
	if err := usecase.CheckRecipient(f, ch, addr, name, title); err != nil {
		return "", err
	}
	return addr, nil
}

// addressDecision records that the address of a send on ch was read from
// profile p (issue 32, item 7).
func addressDecision(p *notify.Recipient, ch notify.Channel, now time.Time) notify.Decision {
	return notify.Decision{Stage: notify.StageAcceptance, At: now, Kind: notify.DecisionAddress, Channel: ch,
		Outcome: notify.OutcomeResolved, Rule: "profile." + notify.AddressField(ch), Detail: "recipient profile " + p.ExternalID}
}
