package storetest

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/notifyd/notifyd/internal/notify"
	"github.com/notifyd/notifyd/internal/store"
	"github.com/notifyd/notifyd/internal/store/sqlstore"
)

func newCategory(ws, key string, at time.Time) *notify.Category {
	return &notify.Category{ID: id(), WorkspaceID: ws, Key: key, Name: key, DefaultChannels: []notify.Channel{},
		CreatedAt: at, UpdatedAt: at}
}

// categorySet is two categories of ws1 (marketing with every field), one
// of ws2 with marketing's key, a profile in each workspace and
// preferences on all of them.
type categorySet struct {
	ws1, ws2        string
	mkt, sec, other *notify.Category
	r1, r2          *notify.Recipient
	// p1 are r1's preferences, def1 ws1's default, p2 r2's.
	p1, def1, p2 *notify.Preferences
}

func categoryFixture(t *testing.T, db *store.DB) *categorySet {
	t.Helper()
	ws1, ws2 := Workspace(t, db), Workspace(t, db)
	mkt := newCategory(ws1, "marketing", t0)
	mkt.Name, mkt.Description, mkt.Advertising = "Marketing", "Offers and news", true
	mkt.DefaultChannels = []notify.Channel{notify.ChannelEmail, notify.ChannelPush}
	mkt.FrequencyCap = &notify.FrequencyCap{Max: 3, WindowSeconds: 86400, Mode: notify.CapDefer}
	sec := newCategory(ws1, "security", t0.Add(time.Millisecond))
	sec.Required = true
	other := newCategory(ws2, "marketing", t0)
	r1, r2 := newRecipient(ws1, "user-1", t0), newRecipient(ws2, "user-1", t0)
	s := &categorySet{ws1: ws1, ws2: ws2, mkt: mkt, sec: sec, other: other, r1: r1, r2: r2,
		p1: &notify.Preferences{Channels: map[notify.Channel]bool{notify.ChannelSMS: false},
			Categories: map[string]map[notify.Channel]bool{
				"marketing": {notify.ChannelSMS: true, notify.ChannelEmail: false},
				"security":  {notify.ChannelEmail: false},
			}},
		def1: &notify.Preferences{Channels: map[notify.Channel]bool{notify.ChannelPush: false},
			Categories: map[string]map[notify.Channel]bool{"marketing": {notify.ChannelSMS: false}}},
		p2: &notify.Preferences{Channels: map[notify.Channel]bool{notify.ChannelSMS: true},
			Categories: map[string]map[notify.Channel]bool{"marketing": {notify.ChannelEmail: true}}},
	}
	update(t, db, func(ctx context.Context, tx notify.Tx) error {
		for _, c := range []*notify.Category{mkt, sec, other} {
			require.NoError(t, tx.CreateCategory(ctx, c))
		}
		for _, r := range []*notify.Recipient{r1, r2} {
			_, err := tx.PutRecipient(ctx, r)
			require.NoError(t, err)
		}
		require.NoError(t, tx.ReplacePreferences(ctx, ws1, r1.ID, s.p1))
		require.NoError(t, tx.ReplacePreferences(ctx, ws1, "", s.def1))
		require.NoError(t, tx.ReplacePreferences(ctx, ws2, r2.ID, s.p2))
		return nil
	})
	return s
}

func testCategories(t *testing.T, open Opener) {
	runVerbs(t, open, []verb{
		{"CreateCategory", testCreateCategory, perWorkspace},
		{"FindCategory", testFindCategory, perWorkspace},
		{"FindCategories", testFindCategories, perWorkspace},
		{"UpdateCategory", testUpdateCategory, perWorkspace},
		{"DeleteCategory", testDeleteCategory, perWorkspace},
		{"FindPreferences", testFindPreferences, perWorkspace},
		{"ReplacePreferences", testReplacePreferences, perWorkspace},
		{"FindSendContext", testFindSendContext, perWorkspace},
		{"FindSendPreferencesMany", testFindSendPreferencesMany, perWorkspace},
		{"PreferencesErased", testPreferencesErased, perWorkspace},
		{"TakeCapRoom", testTakeCapRoom, perWorkspace},
		{"FindCapLog", testTakeCapRoom, perWorkspace},
		{"TakeCapRoomConcurrent", testTakeCapRoomConcurrent, perWorkspace},
		{"CapLogErased", testCapLogErased, perWorkspace},
		{"DeleteCapLogs", testDeleteCapLogs, allWorkspaces},
	})
}

// testCreateCategory: a duplicate key of the workspace is ErrConflict and
// leaves the transaction usable; another workspace's key is its own.
func testCreateCategory(t *testing.T, db *store.DB) {
	s := categoryFixture(t, db)
	update(t, db, func(ctx context.Context, tx notify.Tx) error {
		require.ErrorIs(t, tx.CreateCategory(ctx, newCategory(s.ws1, "marketing", t0)), notify.ErrConflict)
		require.NoError(t, tx.CreateCategory(ctx, newCategory(s.ws2, "security", t0)), "the transaction goes on")
		return nil
	})
}

func testFindCategory(t *testing.T, db *store.DB) {
	s := categoryFixture(t, db)
	view(t, db, func(ctx context.Context, tx notify.Tx) error {
		got, err := tx.FindCategory(ctx, s.ws1, "marketing")
		require.NoError(t, err)
		require.Equal(t, s.mkt, got)
		got, err = tx.FindCategory(ctx, s.ws2, "marketing")
		require.NoError(t, err)
		require.Equal(t, s.other, got)
		_, err = tx.FindCategory(ctx, s.ws2, "security")
		require.ErrorIs(t, err, notify.ErrNotFound, "other workspace")
		return nil
	})
}

func testFindCategories(t *testing.T, db *store.DB) {
	s := categoryFixture(t, db)
	view(t, db, func(ctx context.Context, tx notify.Tx) error {
		cs, err := tx.FindCategories(ctx, s.ws1)
		require.NoError(t, err)
		require.Equal(t, []*notify.Category{s.mkt, s.sec}, cs, "by key")
		cs, err = tx.FindCategories(ctx, Workspace(t, db))
		require.NoError(t, err)
		require.Empty(t, cs)
		return nil
	})
}

// testUpdateCategory writes every field but the key, id and createdAt.
func testUpdateCategory(t *testing.T, db *store.DB) {
	s := categoryFixture(t, db)
	c := *s.mkt
	c.ID, c.CreatedAt = "ignored", t0.Add(time.Hour)
	c.Name, c.Description, c.Required, c.Advertising = "Promotions", "", true, false
	c.DefaultChannels, c.UpdatedAt = []notify.Channel{notify.ChannelSMS}, t0.Add(time.Minute)
	c.FrequencyCap = nil
	update(t, db, func(ctx context.Context, tx notify.Tx) error {
		require.NoError(t, tx.UpdateCategory(ctx, &c))
		ghost := newCategory(s.ws2, "security", t0)
		require.ErrorIs(t, tx.UpdateCategory(ctx, ghost), notify.ErrNotFound)
		return nil
	})
	view(t, db, func(ctx context.Context, tx notify.Tx) error {
		got, err := tx.FindCategory(ctx, s.ws1, "marketing")
		require.NoError(t, err)
		want := c
		want.ID, want.CreatedAt = s.mkt.ID, s.mkt.CreatedAt
		require.Equal(t, &want, got)
		got, err = tx.FindCategory(ctx, s.ws2, "marketing")
		require.NoError(t, err)
		require.Equal(t, s.other, got, "the other workspace's category of the key stays")
		return nil
	})
}

// testDeleteCategory: the category's preferences, the recipients' and
// the default's, go with it; the others stay.
func testDeleteCategory(t *testing.T, db *store.DB) {
	s := categoryFixture(t, db)
	update(t, db, func(ctx context.Context, tx notify.Tx) error {
		require.NoError(t, tx.DeleteCategory(ctx, s.ws1, "marketing"))
		require.ErrorIs(t, tx.DeleteCategory(ctx, s.ws1, "marketing"), notify.ErrNotFound)
		require.ErrorIs(t, tx.DeleteCategory(ctx, s.ws2, "security"), notify.ErrNotFound, "other workspace")
		return nil
	})
	view(t, db, func(ctx context.Context, tx notify.Tx) error {
		_, err := tx.FindCategory(ctx, s.ws1, "marketing")
		require.ErrorIs(t, err, notify.ErrNotFound)
		p, err := tx.FindPreferences(ctx, s.ws1, s.r1.ID)
		require.NoError(t, err)
		require.Equal(t, &notify.Preferences{Channels: s.p1.Channels,
			Categories: map[string]map[notify.Channel]bool{"security": s.p1.Categories["security"]}}, p)
		p, err = tx.FindPreferences(ctx, s.ws1, "")
		require.NoError(t, err)
		require.Equal(t, &notify.Preferences{Channels: s.def1.Channels, Categories: map[string]map[notify.Channel]bool{}}, p)
		p, err = tx.FindPreferences(ctx, s.ws2, s.r2.ID)
		require.NoError(t, err)
		require.Equal(t, s.p2, p, "the other workspace's marketing keeps its preferences")
		return nil
	})
}

func testFindPreferences(t *testing.T, db *store.DB) {
	s := categoryFixture(t, db)
	view(t, db, func(ctx context.Context, tx notify.Tx) error {
		for _, c := range []struct {
			ws, rid string
			want    *notify.Preferences
		}{
			{s.ws1, s.r1.ID, s.p1}, {s.ws1, "", s.def1}, {s.ws2, s.r2.ID, s.p2},
			{s.ws2, "", emptyPrefs()}, {s.ws2, s.r1.ID, emptyPrefs()}, {s.ws1, s.r2.ID, emptyPrefs()},
		} {
			got, err := tx.FindPreferences(ctx, c.ws, c.rid)
			require.NoError(t, err)
			require.Equal(t, c.want, got, "%s %s", c.ws, c.rid)
		}
		return nil
	})
}

func emptyPrefs() *notify.Preferences {
	return &notify.Preferences{Channels: map[notify.Channel]bool{}, Categories: map[string]map[notify.Channel]bool{}}
}

// testReplacePreferences: a replace drops every earlier choice of its
// owner only; an unknown (or another workspace's) category is ErrNotFound;
// more rows than one statement holds are written.
func testReplacePreferences(t *testing.T, db *store.DB) {
	s := categoryFixture(t, db)
	next := &notify.Preferences{Channels: map[notify.Channel]bool{notify.ChannelEmail: true},
		Categories: map[string]map[notify.Channel]bool{"security": {notify.ChannelSMS: true}}}
	update(t, db, func(ctx context.Context, tx notify.Tx) error {
		require.NoError(t, tx.ReplacePreferences(ctx, s.ws1, s.r1.ID, next))
		require.NoError(t, tx.ReplacePreferences(ctx, s.ws2, s.r2.ID, emptyPrefs()))
		return nil
	})
	view(t, db, func(ctx context.Context, tx notify.Tx) error {
		got, err := tx.FindPreferences(ctx, s.ws1, s.r1.ID)
		require.NoError(t, err)
		require.Equal(t, next, got)
		got, err = tx.FindPreferences(ctx, s.ws1, "")
		require.NoError(t, err)
		require.Equal(t, s.def1, got, "the default is another owner")
		got, err = tx.FindPreferences(ctx, s.ws2, s.r2.ID)
		require.NoError(t, err)
		require.Equal(t, emptyPrefs(), got)
		return nil
	})
	err := db.Update(context.Background(), func(tx notify.Tx) error {
		return tx.ReplacePreferences(context.Background(), s.ws2, s.r2.ID,
			&notify.Preferences{Categories: map[string]map[notify.Channel]bool{"security": {notify.ChannelSMS: true}}})
	})
	require.ErrorIs(t, err, notify.ErrNotFound, "ws2 has no security category")

	// 150 categories × 8 channels: more rows than one statement holds.
	many := &notify.Preferences{Channels: map[notify.Channel]bool{}, Categories: map[string]map[notify.Channel]bool{}}
	update(t, db, func(ctx context.Context, tx notify.Tx) error {
		for i := range 150 {
			key := "c" + string(rune('a'+i/26)) + string(rune('a'+i%26))
			require.NoError(t, tx.CreateCategory(ctx, newCategory(s.ws2, key, t0)))
			many.Categories[key] = map[notify.Channel]bool{}
			for j, ch := range notify.Channels {
				many.Categories[key][ch] = (i+j)%2 == 0
			}
		}
		return tx.ReplacePreferences(ctx, s.ws2, "", many)
	})
	view(t, db, func(ctx context.Context, tx notify.Tx) error {
		got, err := tx.FindPreferences(ctx, s.ws2, "")
		require.NoError(t, err)
		require.Equal(t, many, got)
		return nil
	})
}

// testFindSendContext: the profile, the category, both owners' choices on
// the channels asked (nothing of another channel or category), the
// workspace's and the category's windows and the profile's consents, all
// of the workspace asked; an unknown profile or category reads as none.
func testFindSendContext(t *testing.T, db *store.DB) {
	s := categoryFixture(t, db)
	sms, email, push := notify.ChannelSMS, notify.ChannelEmail, notify.ChannelPush
	night := &notify.RecipientConsent{RecipientID: s.r1.ID, WorkspaceID: s.ws1, Kind: notify.ConsentNightAdvertising, GivenAt: t0,
		RecordedBy: notify.ConsentByAPI}
	own := &notify.SendWindow{WorkspaceID: s.ws1, Hours: "09:00-21:00", Days: []string{}, TimeZone: "Asia/Seoul", UpdatedAt: t0}
	mktWin := &notify.SendWindow{WorkspaceID: s.ws1, CategoryID: s.mkt.ID, CategoryKey: "marketing", Hours: "10:00-18:00",
		Days: []string{"mon"}, UpdatedAt: t0}
	update(t, db, func(ctx context.Context, tx notify.Tx) error {
		require.NoError(t, tx.PutConsent(ctx, night))
		require.NoError(t, tx.PutConsent(ctx, &notify.RecipientConsent{RecipientID: s.r2.ID, WorkspaceID: s.ws2,
			Kind: notify.ConsentNightAdvertising, GivenAt: t0, RecordedBy: notify.ConsentByAPI}))
		require.NoError(t, tx.PutSendWindow(ctx, own))
		require.NoError(t, tx.PutSendWindow(ctx, mktWin))
		require.NoError(t, tx.PutSendWindow(ctx, &notify.SendWindow{WorkspaceID: s.ws1, CategoryID: s.sec.ID, Hours: "00:00-01:00", UpdatedAt: t0}))
		return tx.PutSendWindow(ctx, &notify.SendWindow{WorkspaceID: s.ws2, Hours: "01:00-02:00", UpdatedAt: t0})
	})
	view(t, db, func(ctx context.Context, tx notify.Tx) error {
		sc, err := tx.FindSendContext(ctx, s.ws1, notify.SendContextQuery{RecipientExternalID: "user-1", CategoryKey: "marketing",
			Channels: []notify.Channel{sms}, Consents: true})
		require.NoError(t, err)
		require.Equal(t, s.r1.ID, sc.Recipient.ID)
		require.Equal(t, s.mkt, sc.Category)
		require.Equal(t, &notify.SendPreferences{Category: s.mkt, RecipientRow: s.r1.ID,
			Recipient: &notify.Preferences{Channels: map[notify.Channel]bool{sms: false},
				Categories: map[string]map[notify.Channel]bool{"marketing": {sms: true}}},
			Default: &notify.Preferences{Channels: map[notify.Channel]bool{},
				Categories: map[string]map[notify.Channel]bool{"marketing": {sms: false}}}}, sc.Preferences)
		require.Equal(t, notify.PreferenceDecision{Allowed: true, Rule: notify.RuleRecipientCategoryChannel}, sc.Preferences.Decide(sms))
		require.Equal(t, []*notify.SendWindow{own, mktWin}, sc.Windows)
		require.Equal(t, []*notify.RecipientConsent{night}, sc.Consents)

		// Two channels, another category, no consents asked.
		sc, err = tx.FindSendContext(ctx, s.ws1, notify.SendContextQuery{RecipientExternalID: "user-1", CategoryKey: "security",
			Channels: []notify.Channel{email, push}})
		require.NoError(t, err)
		require.Equal(t, &notify.Preferences{Channels: map[notify.Channel]bool{},
			Categories: map[string]map[notify.Channel]bool{"security": {email: false}}}, sc.Preferences.Recipient)
		require.Equal(t, &notify.Preferences{Channels: map[notify.Channel]bool{push: false},
			Categories: map[string]map[notify.Channel]bool{}}, sc.Preferences.Default)
		require.Equal(t, notify.PreferenceDecision{Allowed: true, Rule: notify.RuleRequired}, sc.Preferences.Decide(email))
		require.Len(t, sc.Windows, 2)
		require.Equal(t, "security", sc.Windows[1].CategoryKey)
		require.Empty(t, sc.Consents)

		// No category, no recipient: the default's switch and the
		// workspace's window alone.
		sc, err = tx.FindSendContext(ctx, s.ws1, notify.SendContextQuery{Channels: []notify.Channel{push}, Consents: true})
		require.NoError(t, err)
		require.Nil(t, sc.Recipient)
		require.Nil(t, sc.Category)
		require.Equal(t, &notify.SendPreferences{
			Default: &notify.Preferences{Channels: map[notify.Channel]bool{push: false},
				Categories: map[string]map[notify.Channel]bool{}}}, sc.Preferences)
		require.Equal(t, []*notify.SendWindow{own}, sc.Windows)

		// Unknown names read as none.
		sc, err = tx.FindSendContext(ctx, s.ws1, notify.SendContextQuery{RecipientExternalID: "nobody", CategoryKey: "deleted",
			Channels: []notify.Channel{sms}, Consents: true})
		require.NoError(t, err)
		require.Nil(t, sc.Recipient)
		require.Nil(t, sc.Category)
		require.Nil(t, sc.Preferences.Recipient)
		require.Equal(t, []*notify.SendWindow{own}, sc.Windows)
		require.Empty(t, sc.Consents)

		// ws2 reads its own profile of the same external id, its own
		// choices and window, and has no security category.
		sc, err = tx.FindSendContext(ctx, s.ws2, notify.SendContextQuery{RecipientExternalID: "user-1", CategoryKey: "security",
			Channels: []notify.Channel{sms, email}, Consents: true})
		require.NoError(t, err)
		require.Equal(t, s.r2.ID, sc.Recipient.ID)
		require.Nil(t, sc.Category)
		require.Equal(t, &notify.Preferences{Channels: map[notify.Channel]bool{sms: true},
			Categories: map[string]map[notify.Channel]bool{}}, sc.Preferences.Recipient)
		require.Len(t, sc.Windows, 1)
		require.Equal(t, "01:00-02:00", sc.Windows[0].Hours)
		require.Len(t, sc.Consents, 1)
		require.Equal(t, s.r2.ID, sc.Consents[0].RecipientID)

		// Many at once answer each as it reads alone, in their order.
		qs := []notify.SendContextQuery{
			{RecipientExternalID: "user-1", CategoryKey: "security", Channels: []notify.Channel{email, push}},
			{RecipientExternalID: "user-1", CategoryKey: "marketing", Channels: []notify.Channel{sms}},
			{RecipientExternalID: "nobody", Channels: []notify.Channel{sms}},
			{RecipientExternalID: "user-1", CategoryKey: "marketing", Channels: []notify.Channel{sms}, Consents: true},
			{Channels: []notify.Channel{push}},
		}
		many, err := tx.FindSendContexts(ctx, s.ws1, qs)
		require.NoError(t, err)
		require.Len(t, many, len(qs))
		for i, q := range qs {
			alone, err := tx.FindSendContext(ctx, s.ws1, q)
			require.NoError(t, err)
			require.Equal(t, alone, many[i], "query %d", i)
		}
		many, err = tx.FindSendContexts(ctx, s.ws2, qs[:2])
		require.NoError(t, err)
		require.Equal(t, s.r2.ID, many[0].Recipient.ID, "ws2's own profile")
		require.Nil(t, many[0].Category, "ws2 has no security category")
		require.Equal(t, s.ws2, many[1].Category.WorkspaceID, "ws2's own marketing category")
		return nil
	})
}

// testFindSendPreferencesMany: the batch decides every query as
// FindSendContext's preferences decide it alone; an unknown category reads as
// none, an unknown profile (or another workspace's) as no preferences.
func testFindSendPreferencesMany(t *testing.T, db *store.DB) {
	s := categoryFixture(t, db)
	var qs []notify.PreferenceQuery
	for _, ext := range []string{"", s.r1.ExternalID} {
		for _, key := range []string{"", "marketing", "security"} {
			for _, ch := range []notify.Channel{notify.ChannelSMS, notify.ChannelEmail, notify.ChannelPush} {
				qs = append(qs, notify.PreferenceQuery{RecipientExternalID: ext, CategoryKey: key, Channel: ch})
			}
		}
	}
	qs = append(qs, notify.PreferenceQuery{RecipientExternalID: "nobody", CategoryKey: "deleted", Channel: notify.ChannelSMS})
	view(t, db, func(ctx context.Context, tx notify.Tx) error {
		got, err := tx.FindSendPreferencesMany(ctx, s.ws1, qs)
		require.NoError(t, err)
		require.Len(t, got, len(qs))
		for i, q := range qs[:len(qs)-1] {
			sc, err := tx.FindSendContext(ctx, s.ws1, notify.SendContextQuery{RecipientExternalID: q.RecipientExternalID,
				CategoryKey: q.CategoryKey, Channels: []notify.Channel{q.Channel}})
			require.NoError(t, err)
			one := sc.Preferences
			require.Equal(t, one.Decide(q.Channel), got[i].Decide(q.Channel), "%+v", q)
			require.Equal(t, one.Category, got[i].Category, "%+v", q)
			require.Equal(t, q.RecipientExternalID == "", got[i].Recipient == nil, "%+v", q)
		}
		last := got[len(got)-1]
		require.Nil(t, last.Category)
		require.Nil(t, last.Recipient)
		// ws2 sees its own profile of the same external id, not ws1's.
		other, err := tx.FindSendPreferencesMany(ctx, s.ws2, []notify.PreferenceQuery{{RecipientExternalID: s.r1.ExternalID,
			CategoryKey: "security", Channel: notify.ChannelEmail}})
		require.NoError(t, err)
		require.Nil(t, other[0].Category, "ws2 has no security category")
		require.NotNil(t, other[0].Recipient)
		require.Equal(t, notify.PreferenceDecision{Allowed: true, Rule: notify.RuleDefault}, other[0].Decide(notify.ChannelEmail))
		return nil
	})
}

// testPreferencesErased: a profile's erasure takes its preferences; the
// default and other profiles keep theirs.
func testPreferencesErased(t *testing.T, db *store.DB) {
	s := categoryFixture(t, db)
	update(t, db, func(ctx context.Context, tx notify.Tx) error {
		return tx.DeleteRecipient(ctx, s.ws1, s.r1.ExternalID)
	})
	view(t, db, func(ctx context.Context, tx notify.Tx) error {
		got, err := tx.FindPreferences(ctx, s.ws1, s.r1.ID)
		require.NoError(t, err)
		require.Equal(t, emptyPrefs(), got)
		got, err = tx.FindPreferences(ctx, s.ws1, "")
		require.NoError(t, err)
		require.Equal(t, s.def1, got)
		var n int
		require.NoError(t, tx.(*sqlstore.Tx).Conn().QueryRow(ctx, `SELECT COUNT(*) FROM preferences WHERE recipient_id = ?`,
			s.r1.ID).Scan(&n))
		require.Zero(t, n, "no row of the erased profile is left")
		return nil
	})
}

// testTakeCapRoom: a sliding log per profile and category; a send leaves
// the window windowSeconds after it was counted; a full log counts
// nothing and answers when the oldest counted send leaves.
func testTakeCapRoom(t *testing.T, db *store.DB) {
	s := categoryFixture(t, db)
	const w = time.Minute
	take := func(tx notify.Tx, r, c string, max int, at time.Time) (bool, time.Time) {
		t.Helper()
		ok, until, err := tx.TakeCapRoom(context.Background(), s.ws1, r, c, max, w, at)
		require.NoError(t, err)
		return ok, until
	}
	update(t, db, func(ctx context.Context, tx notify.Tx) error {
		for i := range 3 {
			ok, _ := take(tx, s.r1.ID, s.mkt.ID, 3, t0.Add(time.Duration(i)*time.Second))
			require.True(t, ok, "send %d", i+1)
		}
		ok, until := take(tx, s.r1.ID, s.mkt.ID, 3, t0.Add(10*time.Second))
		require.False(t, ok, "the 4th in the window")
		require.Equal(t, t0.Add(w), until, "the oldest leaves a window after it was counted")
		ok, _ = take(tx, s.r1.ID, s.sec.ID, 3, t0.Add(10*time.Second))
		require.True(t, ok, "another category of the profile counts on its own")
		return nil
	})
	view(t, db, func(ctx context.Context, tx notify.Tx) error {
		log, err := tx.FindCapLog(ctx, s.ws1, s.r1.ID, s.mkt.ID)
		require.NoError(t, err)
		require.Equal(t, []time.Time{t0, t0.Add(time.Second), t0.Add(2 * time.Second)}, log, "the refused 4th not counted")
		log, err = tx.FindCapLog(ctx, s.ws2, s.r1.ID, s.mkt.ID)
		require.NoError(t, err)
		require.Empty(t, log, "another workspace reads none")
		log, err = tx.FindCapLog(ctx, s.ws1, s.r1.ID, "no-such-category")
		require.NoError(t, err)
		require.Empty(t, log)
		return nil
	})
	r3 := newRecipient(s.ws1, "user-3", t0)
	update(t, db, func(ctx context.Context, tx notify.Tx) error {
		_, err := tx.PutRecipient(ctx, r3)
		require.NoError(t, err)
		ok, _ := take(tx, r3.ID, s.mkt.ID, 3, t0.Add(10*time.Second))
		require.True(t, ok, "another profile counts on its own")
		// The refused 4th was not counted: at t0+w the first leaves and
		// there is room for one, then none until the second leaves.
		ok, _ = take(tx, s.r1.ID, s.mkt.ID, 3, t0.Add(w))
		require.True(t, ok, "the first left the window")
		ok, until := take(tx, s.r1.ID, s.mkt.ID, 3, t0.Add(w+time.Millisecond))
		require.False(t, ok)
		require.Equal(t, t0.Add(w+time.Second), until)
		// A cap lowered to 1: room when all but none of the log are out.
		ok, until = take(tx, s.r1.ID, s.mkt.ID, 1, t0.Add(w+3*time.Second))
		require.False(t, ok)
		require.Equal(t, t0.Add(2*w), until, "the newest counted send leaves last")
		return nil
	})
	update(t, db, func(ctx context.Context, tx notify.Tx) error {
		_, _, err := tx.TakeCapRoom(ctx, s.ws1, s.r1.ID, s.mkt.ID, 0, w, t0)
		require.Error(t, err, "a cap of no sends is refused")
		return nil
	})
}

// testTakeCapRoomConcurrent: transactions counting the same pair at once
// let exactly max through (PostgreSQL's row lock; SQLite's one writer).
func testTakeCapRoomConcurrent(t *testing.T, db *store.DB) {
	s := categoryFixture(t, db)
	const n, max = 8, 3
	oks := make(chan bool, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			err := db.Update(context.Background(), func(tx notify.Tx) error {
				ok, _, err := tx.TakeCapRoom(context.Background(), s.ws1, s.r1.ID, s.mkt.ID, max, time.Hour,
					t0.Add(time.Duration(i)*time.Millisecond))
				if err == nil {
					oks <- ok
				}
				return err
			})
			if err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	close(oks)
	got := 0
	for ok := range oks {
		if ok {
			got++
		}
	}
	require.Equal(t, max, got)
}

// testCapLogErased: the log goes with the profile and with the category.
func testCapLogErased(t *testing.T, db *store.DB) {
	s := categoryFixture(t, db)
	update(t, db, func(ctx context.Context, tx notify.Tx) error {
		for _, c := range []string{s.mkt.ID, s.sec.ID} {
			_, _, err := tx.TakeCapRoom(ctx, s.ws1, s.r1.ID, c, 3, time.Hour, t0)
			require.NoError(t, err)
		}
		require.NoError(t, tx.DeleteCategory(ctx, s.ws1, "marketing"))
		return nil
	})
	count := func() int {
		var n int
		view(t, db, func(ctx context.Context, tx notify.Tx) error {
			return tx.(*sqlstore.Tx).Conn().QueryRow(ctx, `SELECT COUNT(*) FROM frequency_cap_log WHERE recipient_id = ?`,
				s.r1.ID).Scan(&n)
		})
		return n
	}
	require.Equal(t, 1, count(), "the deleted category's log went")
	update(t, db, func(ctx context.Context, tx notify.Tx) error {
		return tx.DeleteRecipient(ctx, s.ws1, s.r1.ExternalID)
	})
	require.Zero(t, count(), "the erased profile's log went")
}

// testDeleteCapLogs deletes the logs whose newest counted send is before
// the bound, and keeps the others.
func testDeleteCapLogs(t *testing.T, db *store.DB) {
	s := categoryFixture(t, db)
	update(t, db, func(ctx context.Context, tx notify.Tx) error {
		for _, c := range []struct {
			id string
			at time.Time
		}{{s.mkt.ID, t0}, {s.sec.ID, t0.Add(time.Hour)}} {
			_, _, err := tx.TakeCapRoom(ctx, s.ws1, s.r1.ID, c.id, 3, 24*time.Hour, c.at)
			require.NoError(t, err)
		}
		n, err := tx.DeleteCapLogs(ctx, t0.Add(time.Minute))
		require.NoError(t, err)
		require.Equal(t, 1, n)
		return nil
	})
	update(t, db, func(ctx context.Context, tx notify.Tx) error {
		// marketing's log went: its count starts afresh; security's stays.
		for range 3 {
			ok, _, err := tx.TakeCapRoom(ctx, s.ws1, s.r1.ID, s.mkt.ID, 3, 24*time.Hour, t0.Add(2*time.Hour))
			require.NoError(t, err)
			require.True(t, ok)
		}
		for i, want := range []bool{true, true, false} {
			ok, _, err := tx.TakeCapRoom(ctx, s.ws1, s.r1.ID, s.sec.ID, 3, 24*time.Hour, t0.Add(2*time.Hour))
			require.NoError(t, err)
			require.Equal(t, want, ok, "security send %d", i+2)
		}
		return nil
	})
}
