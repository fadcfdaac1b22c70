package delivery

import (
	"context"
	"time"

	"github.com/notifyd/notifyd/internal/notify"
)

// Channel inapp (issue 33) has no provider: delivering is storing the
// message in the inbox of the recipient profile it names. A run on inapp
// takes no route; once its preferences and its category's cap let it
// through in the claim, it is decided sent without a call, and the
// transaction that records it sent stores the message, appends the
// message.created event and so wakes the profile's streams. Everything
// after is the settlement of any channel: the delivered event, metrics,
// retention, and a channel fallback that a failure hands on.

// deliverInApp decides each undecided run on inapp. A profile erased
// since acceptance has no inbox: the step fails (its fallback takes
// over).
func deliverInApp(runs []*run) {
	for _, rn := range runs {
		if rn.decided || rn.msg.Channel != notify.ChannelInApp {
			continue
		}
		rn.decided = true
		if rn.profile == "" {
			rn.out = outcome{final: true, code: notify.FailureInvalidRequest,
				msg: "recipient profile " + rn.msg.RecipientAddress + " no longer exists: it has no inbox"}
			continue
		}
		rn.out = outcome{success: true}
	}
}

// storeInbox stores the messages of the runs recorded sent on inapp
// (settled: their request was still processing), in the recording
// transaction.
func storeInbox(ctx context.Context, tx notify.Tx, runs []*run, sets []settlement, settled []bool, now time.Time) error {
	var ms []*notify.InboxMessage
	for i, rn := range runs {
		m := rn.msg
		if !settled[i] || sets[i].event != notify.EventDelivered || m.Channel != notify.ChannelInApp || rn.profile == "" {
			continue
		}
		ms = append(ms, notify.InboxMessageOf(m, newID(), rn.profile, now))
	}
	if len(ms) == 0 {
		return nil
	}
	return tx.CreateInboxMessages(ctx, ms)
}
