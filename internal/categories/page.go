package categories

import (
	"context"
	"errors"
	"maps"
	"net/url"
	"slices"
	"time"

	"github.com/notifyd/notifyd/internal/notify"
	"github.com/notifyd/notifyd/internal/otp"
	"github.com/notifyd/notifyd/internal/usecase"
)

// The preference page (issue 32, item 4; docs/DECISIONS.md "Preference
// page"): a signed, expiring link to a public HTML page where the
// recipient sees and changes their own preferences. GET renders only; a
// POST changes. The token is the only authorization.

const (
	// PageSigningLabel derives the preference-link key from the master
	// key (secret.Derive): a key of its own, so no OTP, confirmation or
	// other token passes for a preference token, nor the reverse.
	PageSigningLabel = "notifyd preference page v1"
	// PagePurpose is the purpose claim of a preference token.
	PagePurpose = "recipient.preferences"
	// PageTTL is how long a preference link works.
	PageTTL = 30 * 24 * time.Hour
	// MaxPageToken bounds a preference token on input.
	MaxPageToken = 1024
	// PagePath is the public preference page's path (token in the query).
	PagePath = "/v1/preferences/page"
)

// pageToken signs the preference token of a profile: the verification
// token's compact form under the page key, naming the workspace (wsid),
// the external id (vid) and the profile row's own id (sub), so that a
// profile erased and made again under the same external id does not
// inherit the old links.
func (s *Service) pageToken(ws string, r *notify.Recipient, now time.Time) (string, time.Time) {
	exp := now.Add(PageTTL)
	return otp.SignToken(s.pageKey, otp.Claims{VID: r.ExternalID, WSID: ws, Purpose: PagePurpose, Sub: r.ID,
		IAT: now.Unix(), EXP: exp.Unix()}), exp
}

// Link is the absolute preference link of a profile (under the public
// base URL) and when it stops working. The sends room calls it for
// {{preferencesUrl}} and List-Unsubscribe, inside its own transaction.
func (s *Service) Link(ws string, r *notify.Recipient, now time.Time) (string, time.Time) {
	t, exp := s.pageToken(ws, r, now)
	return s.baseURL + PagePath + "?token=" + url.QueryEscape(t), exp
}

// PreferenceLink mints the preference link of the profile of externalID
// (404 when there is none); audit recipient.preference_link.
func (s *Service) PreferenceLink(ctx context.Context, c Caller, externalID string) (string, time.Time, error) {
	if !lookable(externalID) {
		return "", time.Time{}, notify.NotFound("Recipient")
	}
	var link string
	var exp time.Time
	err := s.Store.Update(ctx, func(tx notify.Tx) error {
		r, err := tx.FindRecipient(ctx, c.Workspace(), externalID)
		if err != nil {
			return recipientNotFound(err)
		}
		link, exp = s.Link(c.Workspace(), r, s.Now())
		return s.AuditAs(ctx, tx, c, "recipient.preference_link", "recipient", externalID,
			map[string]any{"expiresAt": exp.UTC().Format(time.RFC3339)})
	})
	return link, exp, err
}

// PageState is what a preference token leads to.
type PageState int

const (
	// PageInvalid: malformed, forged, or signed for another purpose.
	PageInvalid PageState = iota
	// PageExpired: a genuine token past its time.
	PageExpired
	// PageGone: the profile no longer exists (or is another one now).
	PageGone
	// PageShown: the page with the person's preferences.
	PageShown
)

// PageCell is one switch of the page: a category on a channel.
type PageCell struct {
	Channel notify.Channel
	On      bool
}

// PageCategory is one row of the page.
type PageCategory struct {
	Key, Name, Description string
	Required               bool
	Cells                  []PageCell
}

// PageView is what the preference page shows.
type PageView struct {
	State      PageState
	Name       string
	Channels   []notify.Channel
	Categories []PageCategory
	Saved      bool
}

// pageClaims checks a token's shape, signature, purpose and time.
func (s *Service) pageClaims(token string) (otp.Claims, PageState) {
	if token == "" || len(token) > MaxPageToken {
		return otp.Claims{}, PageInvalid
	}
	c, err := otp.VerifyToken(s.pageKey, token, s.Now())
	if c.Purpose != PagePurpose || !lookable(c.VID) || !usecase.Storable(c.WSID) || !usecase.Storable(c.Sub) {
		return c, PageInvalid
	}
	switch {
	case errors.Is(err, otp.ErrExpired):
		return c, PageExpired
	case err != nil:
		return c, PageInvalid
	}
	return c, PageShown
}

// pageChannels are the channels the page shows: those the workspace has
// an enabled route for, in SPEC's order of the channels, then inapp when
// the workspace uses the inbox (it has an inbox secret: a recipient token
// was minted), since inapp takes no route.
func pageChannels(ctx context.Context, tx notify.Tx, ws string) ([]notify.Channel, error) {
	routes, err := tx.FindRoutes(ctx, ws)
	if err != nil {
		return nil, err
	}
	var out []notify.Channel
	for _, ch := range notify.Channels {
		if slices.ContainsFunc(routes, func(r *notify.Route) bool { return r.Enabled && r.Channel == ch }) {
			out = append(out, ch)
		}
	}
	set, err := tx.FindInboxSettings(ctx, ws)
	switch {
	case err == nil && set.SecretSealed != "":
		out = append(out, notify.ChannelInApp)
	case err != nil && !errors.Is(err, notify.ErrNotFound):
		return nil, err
	}
	return out, nil
}

// pageRead is what the page is built from, read in one transaction.
type pageRead struct {
	recipient  *notify.Recipient
	channels   []notify.Channel
	categories []*notify.Category
	person     *notify.Preferences
	def        *notify.Preferences
}

// readPage reads the profile the claims name (lock: under its row lock,
// for a write) and what the page shows. ok is false when the profile is
// gone or is not the one the link was made for.
func readPage(ctx context.Context, tx notify.Tx, c otp.Claims, lock bool) (pageRead, bool, error) {
	var p pageRead
	var err error
	if lock {
		p.recipient, err = tx.LockRecipient(ctx, c.WSID, c.VID)
	} else {
		p.recipient, err = tx.FindRecipient(ctx, c.WSID, c.VID)
	}
	if notify.IsNotFound(err) || err == nil && p.recipient.ID != c.Sub {
		return p, false, nil
	}
	if err != nil {
		return p, false, err
	}
	if p.channels, err = pageChannels(ctx, tx, c.WSID); err != nil {
		return p, false, err
	}
	if p.categories, err = tx.FindCategories(ctx, c.WSID); err != nil {
		return p, false, err
	}
	if p.person, err = tx.FindPreferences(ctx, c.WSID, p.recipient.ID); err != nil {
		return p, false, err
	}
	if p.def, err = tx.FindPreferences(ctx, c.WSID, ""); err != nil {
		return p, false, err
	}
	return p, true, nil
}

// view is the page of p: each category on each shown channel, as a send
// would decide it now.
func (p pageRead) view() PageView {
	v := PageView{State: PageShown, Name: p.recipient.Name, Channels: p.channels}
	for _, cat := range p.categories {
		row := PageCategory{Key: cat.Key, Name: cat.Name, Description: cat.Description, Required: cat.Required}
		for _, ch := range p.channels {
			row.Cells = append(row.Cells, PageCell{Channel: ch, On: notify.DecidePreference(cat, ch, p.person, p.def).Allowed})
		}
		v.Categories = append(v.Categories, row)
	}
	return v
}

// PageLanding reads the page of a token and changes nothing.
func (s *Service) PageLanding(ctx context.Context, token string) (PageView, error) {
	c, st := s.pageClaims(token)
	if st != PageShown {
		return PageView{State: st}, nil
	}
	var v PageView
	err := s.Store.View(ctx, func(tx notify.Tx) error {
		p, ok, err := readPage(ctx, tx, c, false)
		if err != nil || !ok {
			v.State = PageGone
			return err
		}
		v = p.view()
		return nil
	})
	return v, err
}

// PageSave applies the page's form: on holds "category:channel" for each
// box ticked. Only a cell the page shows and may change is read (required
// categories and channels without a route are left as they are), and only
// where the person's answer differs from what a send would decide now is
// a choice written, so submitting the page unchanged writes nothing and
// defaults stay defaults. Audit preference.replace with the recipient as
// the actor (via preference_page).
func (s *Service) PageSave(ctx context.Context, token string, on map[string]bool) (PageView, error) {
	return s.pageWrite(ctx, token, func(p pageRead) map[string]map[notify.Channel]bool {
		set := map[string]map[notify.Channel]bool{}
		for _, cat := range p.categories {
			if cat.Required {
				continue
			}
			for _, ch := range p.channels {
				want := on[cat.Key+":"+string(ch)]
				if want != notify.DecidePreference(cat, ch, p.person, p.def).Allowed {
					if set[cat.Key] == nil {
						set[cat.Key] = map[notify.Channel]bool{}
					}
					set[cat.Key][ch] = want
				}
			}
		}
		return set
	})
}

// PageOptOut is the RFC 8058 one-click POST of a category mail: the
// person's email switch of that category turns off (an explicit choice,
// even where a default already keeps it off). A required category, one
// the workspace no longer has, or one already off by the person's choice
// changes nothing.
func (s *Service) PageOptOut(ctx context.Context, token, category string) (PageView, error) {
	return s.pageWrite(ctx, token, func(p pageRead) map[string]map[notify.Channel]bool {
		for _, cat := range p.categories {
			if on, set := p.person.Categories[category][notify.ChannelEmail]; set && !on {
				return nil // already off by the person's own choice: idempotent
			}
			if cat.Key == category && !cat.Required {
				return map[string]map[notify.Channel]bool{category: {notify.ChannelEmail: false}}
			}
		}
		return nil
	})
}

// pageWrite sets the choices change answers on top of the person's
// stored preferences, under the profile's lock, and answers the page
// after.
func (s *Service) pageWrite(ctx context.Context, token string, change func(pageRead) map[string]map[notify.Channel]bool) (PageView, error) {
	c, st := s.pageClaims(token)
	if st != PageShown {
		return PageView{State: st}, nil
	}
	var v PageView
	err := s.Store.Update(ctx, func(tx notify.Tx) error {
		p, ok, err := readPage(ctx, tx, c, true)
		if err != nil || !ok {
			v.State = PageGone
			return err
		}
		set := change(p)
		if len(set) > 0 {
			next := &notify.Preferences{Channels: p.person.Channels, Categories: map[string]map[notify.Channel]bool{}}
			for k, m := range p.person.Categories {
				next.Categories[k] = maps.Clone(m)
			}
			for k, m := range set {
				if next.Categories[k] == nil {
					next.Categories[k] = map[notify.Channel]bool{}
				}
				for ch, on := range m {
					next.Categories[k][ch] = on
				}
			}
			if next.Channels == nil {
				next.Channels = map[notify.Channel]bool{}
			}
			if err := tx.ReplacePreferences(ctx, c.WSID, p.recipient.ID, next); err != nil {
				return categoryGone(err)
			}
			caller := Caller{Page: &usecase.PageActor{WorkspaceID: c.WSID, ExternalID: c.VID}}
			if err := s.AuditAs(ctx, tx, caller, "preference.replace", "recipient", c.VID, auditBody(next)); err != nil {
				return err
			}
			p.person = next
		}
		v = p.view()
		v.Saved = true
		return nil
	})
	if err != nil {
		return PageView{}, err
	}
	return v, nil
}
