package storetest

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/notifyd/notifyd/internal/notify"
	"github.com/notifyd/notifyd/internal/store"
)

func newRecipient(ws, externalID string, at time.Time) *notify.Recipient {
	return &notify.Recipient{ID: id(), WorkspaceID: ws, ExternalID: externalID, PushTokens: []string{},
		ChatTargets: map[notify.Channel]string{}, Attributes: map[string]string{}, CreatedAt: at, UpdatedAt: at}
}

// recipientSet is two profiles of ws1 and one of ws2 with a's external id.
type recipientSet struct {
	ws1, ws2 string
	a, b     *notify.Recipient // a has every field; b is newer
	other    *notify.Recipient
}

func recipientFixture(t *testing.T, db *store.DB) *recipientSet {
	t.Helper()
	ws1, ws2 := Workspace(t, db), Workspace(t, db)
	a := newRecipient(ws1, "user-42", t0)
	a.Name, a.Phone, a.Email, a.TimeZone, a.Locale = "Kim Minji", "01012345678", "minji@example.com", "Asia/Seoul", "ko-KR"
	a.PushTokens = []string{"tok-1", "tok-2"}
	a.ChatTargets = map[notify.Channel]string{notify.ChannelChatABot: "C123"}
	a.Attributes = map[string]string{"plan": "pro", "이름": "값"}
	b := newRecipient(ws1, "auth0|100%_x", t0.Add(time.Millisecond))
	b.Name = "Émile Zola"
	other := newRecipient(ws2, "user-42", t0)
	update(t, db, func(ctx context.Context, tx notify.Tx) error {
		for _, r := range []*notify.Recipient{a, b, other} {
			created, err := tx.PutRecipient(ctx, r)
			require.NoError(t, err)
			require.True(t, created)
		}
		return nil
	})
	return &recipientSet{ws1: ws1, ws2: ws2, a: a, b: b, other: other}
}

func testRecipients(t *testing.T, open Opener) {
	runVerbs(t, open, []verb{
		{"PutRecipient", testPutRecipient, perWorkspace},
		{"FindRecipient", testFindRecipient, perWorkspace},
		{"LockRecipient", testLockRecipient, perWorkspace},
		{"FindRecipients", testFindRecipients, perWorkspace},
		{"DeleteRecipient", testDeleteRecipient, perWorkspace},
		{"UpsertRecipients", testUpsertRecipients, perWorkspace},
		{"PutConsent", testConsents, perWorkspace},
		{"FindConsents", testConsents, perWorkspace},
		{"DeleteConsent", testConsents, perWorkspace},
		{"PutSendWindow", testSendWindows, perWorkspace},
		{"FindSendWindows", testSendWindows, perWorkspace},
		{"DeleteSendWindow", testSendWindows, perWorkspace},
	})
}

// testSendWindows: the workspace's window and a category's are kept
// apart, replaced when put again, read per workspace (one category's, or
// all), deleted once, and a category's goes with its category.
func testSendWindows(t *testing.T, db *store.DB) {
	ws1, ws2 := Workspace(t, db), Workspace(t, db)
	cat := &notify.Category{ID: id(), WorkspaceID: ws1, Key: "marketing", Name: "M", CreatedAt: t0, UpdatedAt: t0}
	other := &notify.Category{ID: id(), WorkspaceID: ws1, Key: "digest", Name: "D", CreatedAt: t0, UpdatedAt: t0}
	own := &notify.SendWindow{WorkspaceID: ws1, Hours: "09:00-21:00", TimeZone: "Asia/Seoul", UpdatedAt: t0}
	update(t, db, func(ctx context.Context, tx notify.Tx) error {
		require.NoError(t, tx.CreateCategory(ctx, cat))
		require.NoError(t, tx.CreateCategory(ctx, other))
		require.NoError(t, tx.PutSendWindow(ctx, &notify.SendWindow{WorkspaceID: ws1, Hours: "08:00-20:00", UpdatedAt: t0}))
		require.NoError(t, tx.PutSendWindow(ctx, own))
		require.NoError(t, tx.PutSendWindow(ctx, &notify.SendWindow{WorkspaceID: ws1, CategoryID: cat.ID, Hours: "10:00-18:00",
			Days: []string{"mon", "fri"}, UpdatedAt: t0}))
		require.NoError(t, tx.PutSendWindow(ctx, &notify.SendWindow{WorkspaceID: ws1, CategoryID: other.ID, Hours: "00:00-06:00", UpdatedAt: t0}))
		return tx.PutSendWindow(ctx, &notify.SendWindow{WorkspaceID: ws2, Hours: "01:00-02:00", UpdatedAt: t0})
	})
	view(t, db, func(ctx context.Context, tx notify.Tx) error {
		ws, err := tx.FindSendWindows(ctx, ws1, cat.ID, false)
		require.NoError(t, err)
		require.Len(t, ws, 2)
		require.Equal(t, &notify.SendWindow{WorkspaceID: ws1, Hours: "09:00-21:00", Days: []string{}, TimeZone: "Asia/Seoul", UpdatedAt: t0}, ws[0])
		require.Equal(t, &notify.SendWindow{WorkspaceID: ws1, CategoryID: cat.ID, CategoryKey: "marketing", Hours: "10:00-18:00",
			Days: []string{"mon", "fri"}, UpdatedAt: t0}, ws[1])
		ws, err = tx.FindSendWindows(ctx, ws1, "", false)
		require.NoError(t, err)
		require.Len(t, ws, 1, "the workspace's only")
		ws, err = tx.FindSendWindows(ctx, ws1, "", true)
		require.NoError(t, err)
		require.Len(t, ws, 3)
		ws, err = tx.FindSendWindows(ctx, ws2, cat.ID, false)
		require.NoError(t, err)
		require.Len(t, ws, 1, "another workspace reads its own")
		require.Equal(t, "01:00-02:00", ws[0].Hours)
		return nil
	})
	update(t, db, func(ctx context.Context, tx notify.Tx) error {
		require.NoError(t, tx.DeleteSendWindow(ctx, ws1, ""))
		require.True(t, notify.IsNotFound(tx.DeleteSendWindow(ctx, ws1, "")))
		require.True(t, notify.IsNotFound(tx.DeleteSendWindow(ctx, ws2, cat.ID)))
		return tx.DeleteCategory(ctx, ws1, "digest")
	})
	view(t, db, func(ctx context.Context, tx notify.Tx) error {
		ws, err := tx.FindSendWindows(ctx, ws1, "", true)
		require.NoError(t, err)
		require.Len(t, ws, 1, "the category's window went with it")
		require.Equal(t, "marketing", ws[0].CategoryKey)
		return nil
	})
}

// testConsents: a consent is stored per profile and kind, replaced when
// given again, read per workspace only, deleted once, and erased with its
// profile.
func testConsents(t *testing.T, db *store.DB) {
	s := recipientFixture(t, db)
	kind := notify.ConsentNightAdvertising
	c := &notify.RecipientConsent{RecipientID: s.a.ID, WorkspaceID: s.ws1, Kind: kind, GivenAt: t0, Source: "form", RecordedBy: notify.ConsentByMember, ActorID: "u1"}
	update(t, db, func(ctx context.Context, tx notify.Tx) error {
		require.NoError(t, tx.PutConsent(ctx, c))
		again := *c
		again.GivenAt, again.Source, again.RecordedBy, again.ActorID = t0.Add(time.Hour), "call", notify.ConsentByAPI, "k1"
		require.NoError(t, tx.PutConsent(ctx, &again))
		require.NoError(t, tx.PutConsent(ctx, &notify.RecipientConsent{RecipientID: s.b.ID, WorkspaceID: s.ws1, Kind: kind, GivenAt: t0,
			RecordedBy: notify.ConsentByRecipient}))
		return nil
	})
	view(t, db, func(ctx context.Context, tx notify.Tx) error {
		m, err := tx.FindConsents(ctx, s.ws1, []string{s.a.ID, s.b.ID, s.other.ID})
		require.NoError(t, err)
		require.Len(t, m, 2)
		require.Equal(t, []*notify.RecipientConsent{{RecipientID: s.a.ID, WorkspaceID: s.ws1, Kind: kind, GivenAt: t0.Add(time.Hour),
			Source: "call", RecordedBy: notify.ConsentByAPI, ActorID: "k1"}}, m[s.a.ID])
		m, err = tx.FindConsents(ctx, s.ws2, []string{s.a.ID})
		require.NoError(t, err)
		require.Empty(t, m, "another workspace reads none")
		m, err = tx.FindConsents(ctx, s.ws1, nil)
		require.NoError(t, err)
		require.Empty(t, m)
		return nil
	})
	update(t, db, func(ctx context.Context, tx notify.Tx) error {
		require.True(t, notify.IsNotFound(tx.DeleteConsent(ctx, s.ws2, s.a.ID, kind)))
		require.NoError(t, tx.DeleteConsent(ctx, s.ws1, s.a.ID, kind))
		require.True(t, notify.IsNotFound(tx.DeleteConsent(ctx, s.ws1, s.a.ID, kind)))
		return tx.DeleteRecipient(ctx, s.ws1, s.b.ExternalID)
	})
	view(t, db, func(ctx context.Context, tx notify.Tx) error {
		m, err := tx.FindConsents(ctx, s.ws1, []string{s.a.ID, s.b.ID})
		require.NoError(t, err)
		require.Empty(t, m, "withdrawn, and erased with the profile")
		return nil
	})
}

// testPutRecipient: a put of an existing external id replaces every field
// but the row's id and createdAt, which it hands back.
func testPutRecipient(t *testing.T, db *store.DB) {
	s := recipientFixture(t, db)
	r := newRecipient(s.ws1, "user-42", t0.Add(time.Hour))
	r.Email = "new@example.com"
	update(t, db, func(ctx context.Context, tx notify.Tx) error {
		created, err := tx.PutRecipient(ctx, r)
		require.NoError(t, err)
		require.False(t, created)
		return nil
	})
	require.Equal(t, s.a.ID, r.ID)
	require.Equal(t, t0, r.CreatedAt)
	view(t, db, func(ctx context.Context, tx notify.Tx) error {
		got, err := tx.FindRecipient(ctx, s.ws1, "user-42")
		require.NoError(t, err)
		require.Equal(t, r, got, "every field replaced, the absent ones emptied")
		got, err = tx.FindRecipient(ctx, s.ws2, "user-42")
		require.NoError(t, err)
		require.Equal(t, s.other, got, "the other workspace's profile of the same id is its own")
		return nil
	})
}

func testFindRecipient(t *testing.T, db *store.DB) {
	s := recipientFixture(t, db)
	view(t, db, func(ctx context.Context, tx notify.Tx) error {
		got, err := tx.FindRecipient(ctx, s.ws1, s.a.ExternalID)
		require.NoError(t, err)
		require.Equal(t, s.a, got)
		got, err = tx.FindRecipient(ctx, s.ws1, s.b.ExternalID)
		require.NoError(t, err)
		require.Equal(t, s.b, got)
		_, err = tx.FindRecipient(ctx, s.ws2, s.b.ExternalID)
		require.ErrorIs(t, err, notify.ErrNotFound, "other workspace")
		_, err = tx.FindRecipient(ctx, s.ws1, "USER-42")
		require.ErrorIs(t, err, notify.ErrNotFound, "external ids are case-sensitive")
		return nil
	})
}

func testLockRecipient(t *testing.T, db *store.DB) {
	s := recipientFixture(t, db)
	update(t, db, func(ctx context.Context, tx notify.Tx) error {
		got, err := tx.LockRecipient(ctx, s.ws1, s.a.ExternalID)
		require.NoError(t, err)
		require.Equal(t, s.a, got)
		_, err = tx.LockRecipient(ctx, s.ws2, s.b.ExternalID)
		require.ErrorIs(t, err, notify.ErrNotFound)
		return nil
	})
}

// testFindRecipients: newest first, keyset pages, and a search over the
// external id, name, email and phone with LIKE wildcards taken literally.
func testFindRecipients(t *testing.T, db *store.DB) {
	s := recipientFixture(t, db)
	view(t, db, func(ctx context.Context, tx notify.Tx) error {
		page := func(f notify.RecipientFilter) []string {
			if f.Limit == 0 {
				f.Limit = 50
			}
			rs, err := tx.FindRecipients(ctx, s.ws1, f)
			require.NoError(t, err)
			ids := []string{}
			for _, r := range rs {
				ids = append(ids, r.ExternalID)
			}
			return ids
		}
		require.Equal(t, []string{"auth0|100%_x", "user-42"}, page(notify.RecipientFilter{}), "newest first")
		require.Equal(t, []string{"auth0|100%_x"}, page(notify.RecipientFilter{Limit: 1}))
		require.Equal(t, []string{"user-42"}, page(notify.RecipientFilter{Before: &notify.Cursor{At: s.b.CreatedAt, ID: s.b.ID}}))
		require.Empty(t, page(notify.RecipientFilter{Before: &notify.Cursor{At: s.a.CreatedAt, ID: s.a.ID}}))
		for q, want := range map[string][]string{
			"user-4": {"user-42"}, "KIM MINJI": {"user-42"}, "minji@EXAMPLE": {"user-42"}, "1234567": {"user-42"},
			"Émile": {"auth0|100%_x"}, "zola": {"auth0|100%_x"}, "%": {"auth0|100%_x"}, "_": {"auth0|100%_x"},
			"nobody": {},
		} {
			require.Equal(t, want, page(notify.RecipientFilter{Search: q}), "search %q", q)
		}
		rs, err := tx.FindRecipients(ctx, s.ws2, notify.RecipientFilter{Limit: 10})
		require.NoError(t, err)
		require.Equal(t, []*notify.Recipient{s.other}, rs)
		return nil
	})
}

func testDeleteRecipient(t *testing.T, db *store.DB) {
	s := recipientFixture(t, db)
	update(t, db, func(ctx context.Context, tx notify.Tx) error {
		require.NoError(t, tx.DeleteRecipient(ctx, s.ws1, s.a.ExternalID))
		require.ErrorIs(t, tx.DeleteRecipient(ctx, s.ws1, s.a.ExternalID), notify.ErrNotFound)
		require.ErrorIs(t, tx.DeleteRecipient(ctx, s.ws2, s.b.ExternalID), notify.ErrNotFound, "other workspace")
		return nil
	})
	view(t, db, func(ctx context.Context, tx notify.Tx) error {
		_, err := tx.FindRecipient(ctx, s.ws1, s.a.ExternalID)
		require.ErrorIs(t, err, notify.ErrNotFound)
		_, err = tx.FindRecipient(ctx, s.ws2, s.a.ExternalID)
		require.NoError(t, err, "the other workspace's profile of the same id stays")
		return nil
	})
}

// testUpsertRecipients: more rows than one statement holds, some of them
// existing: those keep their id and createdAt and take the new fields.
func testUpsertRecipients(t *testing.T, db *store.DB) {
	s := recipientFixture(t, db)
	later := t0.Add(time.Minute)
	rs := []*notify.Recipient{newRecipient(s.ws1, s.a.ExternalID, later)}
	rs[0].Name = "replaced"
	for i := range 2100 {
		r := newRecipient(s.ws1, fmt.Sprintf("bulk-%04d", i), later)
		r.Phone, r.Attributes = fmt.Sprintf("0101234%04d", i), map[string]string{"i": fmt.Sprint(i)}
		rs = append(rs, r)
	}
	update(t, db, func(ctx context.Context, tx notify.Tx) error {
		created, err := tx.UpsertRecipients(ctx, rs)
		require.NoError(t, err)
		require.Equal(t, 2100, created)
		return nil
	})
	view(t, db, func(ctx context.Context, tx notify.Tx) error {
		got, err := tx.FindRecipient(ctx, s.ws1, s.a.ExternalID)
		require.NoError(t, err)
		require.Equal(t, s.a.ID, got.ID)
		require.Equal(t, t0, got.CreatedAt)
		require.Equal(t, later, got.UpdatedAt)
		require.Equal(t, "replaced", got.Name)
		require.Empty(t, got.Email, "a bulk item replaces the whole profile")
		got, err = tx.FindRecipient(ctx, s.ws1, "bulk-2099")
		require.NoError(t, err)
		require.Equal(t, rs[2100], got)
		all, err := tx.FindRecipients(ctx, s.ws1, notify.RecipientFilter{Limit: 5000})
		require.NoError(t, err)
		require.Len(t, all, 2102)
		return nil
	})
}
