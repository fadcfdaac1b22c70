package newsletter

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"html"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/notifyd/notifyd/internal/compose"
	"github.com/notifyd/notifyd/internal/dispatch"
	"github.com/notifyd/notifyd/internal/mailcheck"
	"github.com/notifyd/notifyd/internal/notify"
	"github.com/notifyd/notifyd/internal/render"
	"github.com/notifyd/notifyd/internal/usecase"
)

// Fan-out sizes (SPEC "Other constants").
const (
	FanoutBatch       = 500
	FanoutConcurrency = 20
)

// AdPrefix is the advertisement subject prefix (API-DECISIONS section 6).
const AdPrefix = "(광고)"

// AdSubject prefixes an advertisement's subject, not twice.
func AdSubject(subject string, ad bool) string {
	if !ad || strings.HasPrefix(subject, AdPrefix) {
		return subject
	}
	return AdPrefix + " " + subject
}

// FanoutFault, when set, runs when a fan-out run starts (n = 0) and
// after every committed batch but the last (n counts the run's batches
// from 1); an error ends the run as a failure. Tests use it to kill a
// fan-out halfway.
type FanoutFault func(campaignID string, n int) error

// SetFanoutFault installs a fan-out fault hook (tests only). With a hook
// the fan-out writes one batch at a time, so a hook holding or failing
// batch n sees nothing after batch n written.
func (s *Service) SetFanoutFault(f FanoutFault) {
	s.fanoutMu.Lock()
	s.fanoutFault = f
	s.fanoutMu.Unlock()
}

func (s fanouts) fault(campaignID string, n int) error {
	s.fanoutMu.Lock()
	f := s.fanoutFault
	s.fanoutMu.Unlock()
	if f == nil {
		return nil
	}
	return f(campaignID, n)
}

// FanoutPausedRecheck is how often the fan-out job of a paused campaign
// comes back to see whether it was resumed (a resume also enqueues a new
// job, which starts at once).
const FanoutPausedRecheck = 5 * time.Second

// pausedFanout is a *dispatch.SnoozeError when the campaign is paused and
// jobID is its current fan-out job, else nil (the run ends).
func (s fanouts) pausedFanout(ctx context.Context, tx notify.Tx, ws, campaignID string, jobID int64) error {
	c, err := tx.FindCampaign(ctx, ws, campaignID)
	if notify.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return err
	}
	if c.Status == notify.CampaignPaused && c.FanoutRef == jobID {
		return &dispatch.SnoozeError{After: FanoutPausedRecheck, Reason: "campaign paused"}
	}
	return nil
}

// errNotCurrent rolls back the start of a run of a replaced fan-out job.
var errNotCurrent = errors.New("not the campaign's current fan-out job")

// RunFanout runs one run of a campaign's fan-out job. It turns targeted
// subscribers into requests in batches of 500, each batch one transaction
// holding the requests, their queue jobs, the campaign_recipients rows
// and the counters, so a run killed anywhere resumes where the last
// committed batch ended and mails nobody twice. A run of a job that is not
// the campaign's current fan-out, or of a campaign no longer scheduled or
// sending, does nothing. After budget it stops and reports more, to be run
// again (the worker snoozes).
func (s *Service) RunFanout(ctx context.Context, ws, campaignID string, jobID int64, budget time.Duration) (more bool, err error) {
	start := time.Now()
	f := fanouts{s}
	c, aud, err := f.startFanout(ctx, ws, campaignID, jobID)
	if errors.Is(err, errNotCurrent) {
		return false, nil
	}
	if err != nil || c == nil {
		return false, err
	}
	after, err := f.resumePoint(ctx, ws, c, aud, jobID)
	if err != nil {
		return false, err
	}
	if err := f.fault(c.ID, 0); err != nil {
		return false, err
	}
	r := f.newFanoutRun(ctx, c, aud, start, budget)
	after = r.run(after)
	switch {
	case r.err != nil:
		return false, r.err
	case r.stopped:
		// Canceled, paused or replaced meanwhile: a paused campaign's job
		// comes back for the rest.
		return false, s.Store.View(ctx, func(tx notify.Tx) error { return f.pausedFanout(ctx, tx, ws, c.ID, jobID) })
	case r.ended:
		return false, nil
	}
	if r.budgetSpent {
		s.fanoutResume.Store(jobID, after)
	}
	return r.budgetSpent, nil
}

// startFanout moves the campaign to sending (or keeps it there) and reads
// it with its audience; nil when it is neither scheduled nor sending (a
// paused one snoozes, pausedFanout), errNotCurrent when jobID is not its
// fan-out job any more (a replaced job: the move is undone).
func (s fanouts) startFanout(ctx context.Context, ws, campaignID string, jobID int64) (c *notify.Campaign, aud *notify.Audience, err error) {
	err = s.Store.Update(ctx, func(tx notify.Tx) error {
		now := s.Now()
		// Lock the campaign row first (a conditional move: scheduled to
		// sending, or sending kept), so a concurrent cancel or re-send is
		// either seen here or waits for this transaction.
		ok, err := tx.MoveCampaign(ctx, ws, campaignID, []notify.CampaignStatus{notify.CampaignScheduled}, notify.CampaignSending, now)
		if err == nil && !ok {
			ok, err = tx.MoveCampaign(ctx, ws, campaignID, []notify.CampaignStatus{notify.CampaignSending}, notify.CampaignSending, now)
		}
		if err != nil {
			return err
		}
		if !ok {
			return s.pausedFanout(ctx, tx, ws, campaignID, jobID) // not scheduled or sending (or gone): nothing to do
		}
		if c, err = tx.FindCampaign(ctx, ws, campaignID); err != nil {
			return err
		}
		if c.FanoutRef != jobID {
			c = nil
			return errNotCurrent // a replaced job: undo the move
		}
		if aud, err = ParseAudience(c.AudienceFilter); err != nil {
			return err
		}
		if c.StartedAt == nil {
			c.StartedAt, c.UpdatedAt = &now, now
			return tx.UpdateCampaign(ctx, c)
		}
		return nil
	})
	return c, aud, err
}

// resumePoint is the cursor a run starts after. A run going on from this
// process's previous run of the same job (which spent its budget, every
// batch it wrote committed) starts after that run's last batch and keeps
// its total: counting the audience again and reading past the handled
// subscribers from the first one cost a second or more on a campaign of
// 100,000. Any other run (another node's, a retry after a failure or a
// crash) starts from the first subscriber; its pages skip those already
// handled. Such a run sets c.TotalRecipients: handled before plus the
// remaining audience, counted outside the write transaction (on SQLite it
// holds the only writer); each batch writes it, the last one sets the
// exact handled count.
func (s fanouts) resumePoint(ctx context.Context, ws string, c *notify.Campaign, aud *notify.Audience, jobID int64) (string, error) {
	if v, ok := s.fanoutResume.LoadAndDelete(jobID); ok {
		return v.(string), nil
	}
	return "", s.Store.View(ctx, func(tx notify.Tx) error {
		done, err := tx.CountCampaignRecipients(ctx, c.ID)
		if err != nil {
			return err
		}
		left, err := tx.CountAudience(ctx, ws, c.Channel, aud, c.ID)
		c.TotalRecipients = done + left
		return err
	})
}

// fanouts is the room as the fan-out's steps see it.
type fanouts struct{ *Service }

// fanoutRun is one run of a campaign's fan-out. Batch n+1 is read and
// rendered (in a read transaction) while batch n is written: the pages
// after the cursor are disjoint from the batch being written, and the
// recipients' unique key still guards every write. Up to writers batches
// are written at once (their subscribers are disjoint too); the last one
// waits for the others, since it counts the recipients and ends the
// fan-out. A run killed with a later batch committed and an earlier one
// not resumes with the earlier one: a page skips the subscribers already
// handled.
type fanoutRun struct {
	s       fanouts
	ctx     context.Context
	c       *notify.Campaign
	aud     *notify.Audience
	start   time.Time
	budget  time.Duration
	writers int
	next    chan *fanoutPrep // the batch read ahead
	written chan fanoutWrite // the batches written

	inFlight, n                 int // batches being written; batches written
	err                         error
	stopped, ended, budgetSpent bool
}

func (s fanouts) newFanoutRun(ctx context.Context, c *notify.Campaign, aud *notify.Audience, start time.Time, budget time.Duration) *fanoutRun {
	writers := s.fanoutWriters
	s.fanoutMu.Lock()
	if s.fanoutFault != nil {
		writers = 1
	}
	s.fanoutMu.Unlock()
	return &fanoutRun{s: s, ctx: ctx, c: c, aud: aud, start: start, budget: budget, writers: writers,
		next: make(chan *fanoutPrep, 1), written: make(chan fanoutWrite, writers)}
}

// run writes batches from the one after cursor after until the audience
// ends, the run is stopped or fails, or its budget is spent, and returns
// the cursor of the last batch it handed to a writer.
func (r *fanoutRun) run(after string) string {
	r.prepare(after)
	for !r.over() {
		b := <-r.next
		if b.err != nil {
			r.err = b.err
			break
		}
		if b.last {
			for r.inFlight > 0 {
				r.collect()
			}
			if r.over() {
				break
			}
		} else {
			r.prepare(b.after)
		}
		r.inFlight++
		after = b.after
		go r.write(b)
		for r.inFlight >= r.writers || (b.last && r.inFlight > 0) {
			r.collect()
		}
		if !r.over() && r.budget > 0 && time.Since(r.start) > r.budget {
			r.budgetSpent = true
		}
	}
	for r.inFlight > 0 {
		r.collect()
	}
	return after
}

// prepare reads and renders the batch after cursor after, in the
// background, into r.next.
func (r *fanoutRun) prepare(after string) {
	go func() {
		var b *fanoutPrep
		if err := caught(func() error { b = r.s.prepareBatch(r.ctx, r.c, r.aud, after); return nil }); err != nil {
			b = &fanoutPrep{err: err}
		}
		r.next <- b
	}()
}

// write writes batch b in a transaction of its own, into r.written.
func (r *fanoutRun) write(b *fanoutPrep) {
	var w fanoutWrite
	w.last = b.last
	w.err = caught(func() error {
		return r.s.Store.Update(r.ctx, func(tx notify.Tx) error { return r.s.writeBatch(r.ctx, tx, r.c, b) })
	})
	if errors.Is(w.err, errStopFanout) {
		w.stop, w.err = true, nil
	}
	r.written <- w
}

// collect takes one written batch's outcome.
func (r *fanoutRun) collect() {
	w := <-r.written
	r.inFlight--
	switch {
	case w.err != nil:
		r.err = cmp.Or(r.err, w.err)
	case w.stop:
		r.stopped = true
	case w.last:
		r.ended = true
	default:
		r.n++
		if r.err == nil {
			r.err = r.s.fault(r.c.ID, r.n)
		}
	}
}

func (r *fanoutRun) over() bool { return r.err != nil || r.stopped || r.ended || r.budgetSpent }

// caught runs fn and turns its panic into an error: the fan-out's batch
// goroutines run outside River's worker, which would otherwise recover it
// and fail the job instead of the process.
func caught(fn func() error) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("fan-out batch panicked: %v", p)
		}
	}()
	return fn()
}

// fanoutWrite is how the write of one fan-out batch ended.
type fanoutWrite struct {
	last bool // the batch was the last
	stop bool // the campaign was no longer sending: nothing was written
	err  error
}

// errStopFanout rolls back a batch written for a campaign that is no
// longer sending (canceled, paused or replaced meanwhile).
var errStopFanout = errors.New("campaign no longer sending")

// fanoutPrep is one batch read and rendered, ready to be written.
type fanoutPrep struct {
	after   string // the cursor past this batch
	last    bool   // no subscriber after it
	now     time.Time
	accepts []*notify.Accept
	recips  []notify.CampaignRecipient
	failed  int
	err     error
}

// prepareBatch reads the next up to 500 targeted subscribers with ids
// above after, not yet handled, and renders their requests.
func (s fanouts) prepareBatch(ctx context.Context, c *notify.Campaign, aud *notify.Audience, after string) *fanoutPrep {
	b := &fanoutPrep{after: after, now: s.Now()}
	var subs []*notify.Subscriber
	b.err = s.Store.View(ctx, func(tx notify.Tx) error {
		for {
			page, err := tx.FindFanoutPage(ctx, c.WorkspaceID, c.ID, c.Channel, b.after, FanoutBatch)
			if err != nil {
				return err
			}
			for _, x := range page {
				if len(subs) == FanoutBatch {
					return nil // the rest of the page goes to the next batch
				}
				b.after = x.ID
				if aud.Match(x.Attributes) {
					subs = append(subs, x)
				}
			}
			if len(page) < FanoutBatch {
				b.last = true
				return nil
			}
			if len(subs) == FanoutBatch {
				return nil
			}
		}
	})
	if b.err == nil {
		b.accepts, b.recips, b.failed, b.err = s.renderBatch(c, subs, b.now)
	}
	return b
}

// writeBatch writes a prepared batch in one transaction: requests and
// their queue jobs through the send pipeline's AcceptRequests, the
// recipients rows, the counters, and on the last batch the end of the
// fan-out. It returns errStopFanout, rolling the batch back, when the
// campaign is no longer sending (canceled meanwhile).
func (s fanouts) writeBatch(ctx context.Context, tx notify.Tx, c *notify.Campaign, b *fanoutPrep) error {
	now := b.now
	if len(b.accepts) > 0 {
		if err := tx.AcceptRequests(ctx, b.accepts, now); err != nil {
			return err
		}
	}
	if len(b.recips) > 0 {
		if err := tx.AddCampaignRecipients(ctx, c.ID, b.recips); err != nil {
			return err
		}
	}
	// The campaign row is locked last, so batches written at once hold it
	// only briefly; it orders this batch with a cancel, which locks it
	// before it cancels the campaign's requests: either the cancel comes
	// first and this batch rolls back, or it waits for this commit and
	// cancels this batch's requests too.
	ok, err := tx.MoveCampaign(ctx, c.WorkspaceID, c.ID, []notify.CampaignStatus{notify.CampaignSending}, notify.CampaignSending, s.Now())
	if err != nil {
		return err
	}
	if !ok {
		return errStopFanout
	}
	// A pause and a resume between two batches replace the fan-out job:
	// this run then stops, and the resumed job goes on.
	cur, err := tx.FindCampaign(ctx, c.WorkspaceID, c.ID)
	if err != nil {
		return err
	}
	if cur.FanoutRef != c.FanoutRef {
		return errStopFanout
	}
	total := c.TotalRecipients
	if b.last {
		if total, err = tx.CountCampaignRecipients(ctx, c.ID); err != nil {
			return err
		}
	}
	if err := tx.SetCampaignProgress(ctx, c.WorkspaceID, c.ID, total, len(b.accepts), b.failed, s.Now()); err != nil {
		return err
	}
	if !b.last {
		return nil
	}
	done := s.Now()
	cur.FanoutDoneAt, cur.UpdatedAt = &done, done
	return tx.UpdateCampaign(ctx, cur)
}

// renderBatch builds the requests of one batch, 20 subscribers at a time.
// A subscriber whose address cannot take mail, or whose attributes break
// the subject onto two lines, gets no request (failed). A subscriber whose
// rendering is over a bound fails the fan-out (fanoutRenderFailure).
func (s fanouts) renderBatch(c *notify.Campaign, subs []*notify.Subscriber, now time.Time) ([]*notify.Accept, []notify.CampaignRecipient, int, error) {
	reqs := make([]*notify.Request, len(subs))
	errs := make([]error, len(subs))
	var wg sync.WaitGroup
	for w := 0; w < min(FanoutConcurrency, len(subs)); w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for i := w; i < len(subs); i += FanoutConcurrency {
				reqs[i], errs[i] = campaignRequest(c, subs[i], now)
			}
		}(w)
	}
	wg.Wait()
	accepts := make([]*notify.Accept, 0, len(subs))
	recips := make([]notify.CampaignRecipient, len(subs))
	failed := 0
	for i, r := range reqs {
		if tl := (*compose.RenderedTooLarge)(nil); errors.As(errs[i], &tl) {
			return nil, nil, 0, &fanoutRenderFailure{reason: tl.Err.Detail + " (subscriber " + subs[i].ID + ")"}
		}
		recips[i].SubscriberID = subs[i].ID
		if r == nil {
			failed++
			continue
		}
		recips[i].RequestID = r.ID
		accepts = append(accepts, &notify.Accept{Request: r, MaxAttempts: s.jobAttempts})
	}
	return accepts, recips, failed, nil
}

// fanoutRenderFailure ends a campaign's fan-out for good: a recipient's
// rendering is over a bound (issue 29). Another run would fail the same
// way, so the worker fails the campaign at once, with reason in its
// campaign.fail audit entry, and does not run the job again (Permanent).
type fanoutRenderFailure struct{ reason string }

func (e *fanoutRenderFailure) Error() string   { return e.reason }
func (e *fanoutRenderFailure) Permanent() bool { return true }

// campaignRequest renders one subscriber's mail (SPEC "Campaign", API-
// DECISIONS section 6): {{variable}} from the subscriber's attributes
// (any Unicode name; missing is empty; HTML-escaped in the HTML part), the
// advertisement prefix, the unsubscribe footer with the subscriber's own
// link, and the List-Unsubscribe headers (one-click, RFC 8058). nil
// without error when the address cannot take mail.
//
// Each part is held to its campaign field's bound while it is rendered
// (subject before the advertisement prefix, text and HTML before the
// footer): over it, the error is a compose.RenderedTooLarge naming the field. A
// subject the attributes break onto two lines (control characters, as a
// send's content.title refuses) is a plain 400 error: the fan-out skips
// that subscriber, the preview refuses.
func campaignRequest(c *notify.Campaign, x *notify.Subscriber, now time.Time) (*notify.Request, error) {
	if _, err := mailcheck.Domain(x.Address); err != nil {
		return nil, nil
	}
	subject, ok := render.SubstituteUnicode(c.Subject, x.Attributes, MaxCampaignSubject)
	if !ok {
		return nil, compose.TooLarge("subject", MaxCampaignSubject, "subscriber attributes")
	}
	if usecase.HasControl(subject) {
		return nil, notify.Invalid("subject must not contain control characters after subscriber attributes are put in")
	}
	text, ok := render.SubstituteUnicode(c.ContentText, x.Attributes, MaxCampaignText)
	if !ok {
		return nil, compose.TooLarge("contentText", MaxCampaignText, "subscriber attributes")
	}
	token := url.QueryEscape(x.UnsubscribeToken)
	page := c.LinkBase + "/v1/newsletter/unsubscribe?token=" + token
	oneClick := c.LinkBase + "/v1/newsletter/unsubscribe/one-click?token=" + token
	r := &notify.Request{ID: usecase.NewID(), WorkspaceID: c.WorkspaceID, Source: notify.SourceCampaign, Channel: c.Channel,
		Status: notify.StatusQueued, RecipientAddress: x.Address, RecipientName: x.Name, CampaignID: c.ID,
		RequestedAt: now, UpdatedAt: now, Title: AdSubject(subject, c.IsAdvertisement), Text: text,
		Headers: map[string]string{"List-Unsubscribe": "<" + oneClick + ">",
			"List-Unsubscribe-Post": "List-Unsubscribe=One-Click"},
		Metadata: map[string]string{"campaignId": c.ID, "subscriberId": x.ID}}
	if c.ContentHTML != "" {
		if r.HTML, ok = render.SubstituteUnicode(c.ContentHTML, render.HTMLEscapeVars(x.Attributes), MaxCampaignHTML); !ok {
			return nil, compose.TooLarge("contentHtml", MaxCampaignHTML, "subscriber attributes")
		}
	}
	if c.IsAdvertisement || c.IncludeUnsubscribe {
		r.Text += TextFooter(page)
		if r.HTML != "" {
			r.HTML = withHTMLFooter(r.HTML, page)
		}
	}
	return r, nil
}

// TextFooter is the unsubscribe footer of the text part.
func TextFooter(link string) string {
	return "\n\n--\n수신을 원하지 않으시면 수신거부를 눌러 주세요. / To stop receiving these emails, unsubscribe here:\n" + link + "\n"
}

// withHTMLFooter adds the unsubscribe footer before </body>, or at the end.
func withHTMLFooter(body, link string) string {
	footer := `<hr><p style="font-size:12px;color:#666">수신을 원하지 않으시면 <a href="` + html.EscapeString(link) +
		`">수신거부 (Unsubscribe)</a>를 눌러 주세요.</p>`
	if i := lastBodyClose(body); i >= 0 {
		return body[:i] + footer + body[i:]
	}
	return body + footer
}

// lastBodyClose finds the last "</body>" in any letter case without
// copying the body (it runs once per recipient).
func lastBodyClose(s string) int {
	for i := strings.LastIndex(s, "</"); i >= 0; i = strings.LastIndex(s[:i], "</") {
		if len(s)-i >= 7 && strings.EqualFold(s[i:i+7], "</body>") {
			return i
		}
	}
	return -1
}

// FailFanout marks the campaign failed after its fan-out job spent its
// attempts (SPEC "Campaign": sending, fan-out failure, failed). A run of a
// replaced job changes nothing.
func (s *Service) FailFanout(ctx context.Context, ws, campaignID string, jobID int64, cause error) error {
	return s.Store.Update(ctx, func(tx notify.Tx) error {
		c, err := tx.FindCampaign(ctx, ws, campaignID)
		if notify.IsNotFound(err) {
			return nil
		}
		if err != nil || c.FanoutRef != jobID {
			return err
		}
		now := s.Now()
		ok, err := tx.MoveCampaign(ctx, ws, campaignID, []notify.CampaignStatus{notify.CampaignScheduled, notify.CampaignSending, notify.CampaignPaused},
			notify.CampaignFailed, now)
		if err != nil || !ok {
			return err
		}
		msg := ""
		if cause != nil {
			msg = cause.Error()
		}
		s.Log.WarnContext(ctx, "campaign fan-out failed", "campaign", campaignID, "err", msg)
		return s.Audit(ctx, tx, nil, ws, "campaign.fail", "campaign", campaignID, map[string]any{"reason": msg})
	})
}
