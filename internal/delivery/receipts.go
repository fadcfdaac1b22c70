package delivery

import (
	"context"
	"time"

	"github.com/notifyd/notifyd/internal/notify"
	"github.com/notifyd/notifyd/internal/provider"
)

// Delivery receipts (issue 35): a request sent through a kind whose vendor
// reports delivery gets a pending receipt for its accepted attempt, in the
// transaction that records the outcome; a polled kind's receipt gets its
// poll job in that transaction too, so no report is lost to a crash. A
// pushed kind's report that came before this record (early) is applied
// here.

// ReceiptPolicy is when receipts are polled and given up.
type ReceiptPolicy struct {
	// FirstPoll is the wait before the first result-API lookup.
	FirstPoll time.Duration
	// Deadline is how long a receipt waits for a final report before it
	// is unknown.
	Deadline time.Duration
}

// Receipt defaults (docs/DECISIONS.md "Delivery receipts").
const (
	DefaultReceiptFirstPoll = 10 * time.Second
	DefaultReceiptDeadline  = 72 * time.Hour
)

// saveReceipts writes the receipts of the runs whose request was sent,
// with their poll jobs, and applies early reports (their events join es;
// the receipts written join created, and those early reports made final
// join finals, counted once committed).
func (e *Engine) saveReceipts(ctx context.Context, tx notify.Tx, runs []*run, sets []settlement, settled []bool, now time.Time,
	es []*notify.Event, created, finals *[]*notify.Receipt) ([]*notify.Event, error) {
	var rs []*notify.Receipt
	var polled []bool
	pushed := map[string][]string{}
	byMsg := map[string]*notify.Receipt{}
	for i, rn := range runs {
		if !settled[i] || sets[i].event != notify.EventDelivered {
			continue
		}
		a := acceptedAttempt(rn.attempts)
		if a == nil || a.ProviderMessageID == "" {
			continue
		}
		mode := e.kinds[a.ProviderKind].Receipts
		if mode == "" {
			continue
		}
		rc := &notify.Receipt{AttemptID: a.ID, WorkspaceID: rn.req.WorkspaceID, RequestID: rn.req.ID, ProviderAccountID: a.ProviderAccountID,
			ProviderKind: a.ProviderKind, ProviderMessageID: a.ProviderMessageID, Recipient: rn.msg.RecipientAddress, Channel: rn.msg.Channel,
			FallbackStep: rn.req.FallbackStep, Status: notify.ReceiptPending, CreatedAt: now, Deadline: now.Add(e.receipts.Deadline)}
		rs, polled = append(rs, rc), append(polled, mode == notify.ReceiptsPolled)
		if mode == notify.ReceiptsPushed {
			pushed[a.ProviderKind] = append(pushed[a.ProviderKind], a.ProviderMessageID)
			byMsg[a.ProviderKind+"\x00"+a.ProviderMessageID] = rc
		}
	}
	for kind, ids := range pushed {
		early, err := tx.TakeEarlyReports(ctx, kind, ids)
		if err != nil {
			return nil, err
		}
		for id, rep := range early {
			rc := byMsg[kind+"\x00"+id]
			if rc == nil || !notify.ApplyReport(rc, rep, now) {
				continue
			}
			*finals = append(*finals, rc)
			for _, rn := range runs {
				if rn.req.ID == rc.RequestID {
					es = append(es, notify.ReceiptEvent(newID(), notify.ReceiptEventType(rc), rn.req, rc, now))
				}
			}
		}
	}
	if err := tx.CreateReceipts(ctx, rs, polled, e.receipts.FirstPoll); err != nil {
		return nil, err
	}
	*created = append(*created, rs...)
	return es, nil
}

// acceptedAttempt is the attempt of as the vendor accepted (the last).
func acceptedAttempt(as []*notify.Attempt) *notify.Attempt {
	for i := len(as) - 1; i >= 0; i-- {
		if as[i].Success {
			return as[i]
		}
	}
	return nil
}

// ReportAPI is the delivery-report lookup of account p: ok is false when
// its kind reports no delivery by polling. The adapter is the one sends
// use (vendor tokens are shared).
func (e *Engine) ReportAPI(p *notify.ProviderAccount) (api notify.ReportAPI, ok bool, err error) {
	if e.kinds[p.ProviderKind].Receipts != notify.ReceiptsPolled {
		return nil, false, nil
	}
	c, perr := e.client(p)
	if perr != nil {
		return nil, true, vendorCallError(perr)
	}
	r, ok := c.(provider.Reporter)
	if !ok {
		return nil, false, nil
	}
	return reportAPI{r}, true, nil
}

// reportAPI hands an adapter's reports on with domain errors.
type reportAPI struct{ r provider.Reporter }

func (x reportAPI) Report(ctx context.Context, messageID, to string) (*notify.VendorReport, error) {
	rep, err := x.r.Report(ctx, messageID, to)
	return rep, vendorCallError(err)
}
