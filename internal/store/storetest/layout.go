package storetest

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/notifyd/notifyd/internal/notify"
	"github.com/notifyd/notifyd/internal/store"
)

// layoutSet is two layouts of ws1 ("brand" and "second"), a "brand" of
// ws2, and a template of ws1 with three versions, two on layout l.
type layoutSet struct {
	ws1, ws2 string
	l        *notify.Layout
	tpl      *notify.Template
}

func layoutFixture(t *testing.T, db *store.DB) *layoutSet {
	t.Helper()
	ws1, ws2 := Workspace(t, db), Workspace(t, db)
	l := &notify.Layout{ID: id(), WorkspaceID: ws1, Name: "brand", HTML: "<b>{{content}}</b>", CreatedAt: t0, UpdatedAt: t0}
	tpl := &notify.Template{ID: id(), WorkspaceID: ws1, Code: "news", Channel: notify.ChannelEmail, Name: "News",
		Status: "active", CreatedAt: t0, UpdatedAt: t0}
	update(t, db, func(ctx context.Context, tx notify.Tx) error {
		require.NoError(t, tx.CreateLayout(ctx, l))
		require.NoError(t, tx.CreateLayout(ctx, &notify.Layout{ID: id(), WorkspaceID: ws1, Name: "second", Text: "{{content}}",
			CreatedAt: t0.Add(time.Second), UpdatedAt: t0}))
		require.NoError(t, tx.CreateLayout(ctx, &notify.Layout{ID: id(), WorkspaceID: ws2, Name: "brand", Text: "{{content}}",
			CreatedAt: t0, UpdatedAt: t0}))
		require.NoError(t, tx.CreateTemplate(ctx, tpl))
		for _, v := range []*notify.TemplateVersion{
			{TemplateID: tpl.ID, Version: 1, Text: "default", CreatedAt: t0, PublishedAt: &t0},
			{TemplateID: tpl.ID, Version: 2, Text: "ko", Locale: "ko", LayoutID: l.ID, CreatedAt: t0, PublishedAt: &t0},
			{TemplateID: tpl.ID, Version: 3, Text: "draft", LayoutID: l.ID, CreatedAt: t0},
		} {
			require.NoError(t, tx.CreateTemplateVersion(ctx, v))
		}
		return nil
	})
	return &layoutSet{ws1: ws1, ws2: ws2, l: l, tpl: tpl}
}

// testLayouts: layout names are unique per workspace, nothing is visible
// across workspaces, versions keep their locale and layout, a layout's
// uses are counted per workspace, and the latest published version is the
// default locale's.
func testLayouts(t *testing.T, open Opener) {
	runVerbs(t, open, []verb{
		{"CreateLayout", testCreateLayout, perWorkspace},
		{"UpdateLayout", testUpdateLayout, perWorkspace},
		{"FindLayout", testFindLayout, perWorkspace},
		{"FindLayouts", testFindLayouts, perWorkspace},
		{"CountLayoutUses", testCountLayoutUses, perWorkspace},
		{"CreateTemplateVersion", testCreateTemplateVersion, perWorkspace},
		{"DeleteLayout", testDeleteLayout, perWorkspace},
	})
}

func testCreateLayout(t *testing.T, db *store.DB) {
	s := layoutFixture(t, db)
	conflict(t, db, func(ctx context.Context, tx notify.Tx) error {
		return tx.CreateLayout(ctx, &notify.Layout{ID: id(), WorkspaceID: s.ws1, Name: "brand", Text: "{{content}}", CreatedAt: t0, UpdatedAt: t0})
	})
}

func testUpdateLayout(t *testing.T, db *store.DB) {
	s := layoutFixture(t, db)
	l := s.l
	update(t, db, func(ctx context.Context, tx notify.Tx) error {
		l.Name, l.Text, l.HTML, l.UpdatedAt = "renamed", "T {{content}}", "", t0.Add(time.Minute)
		require.NoError(t, tx.UpdateLayout(ctx, l))
		foreign := *l
		foreign.WorkspaceID = s.ws2
		require.True(t, notify.IsNotFound(tx.UpdateLayout(ctx, &foreign)))
		return nil
	})
	view(t, db, func(ctx context.Context, tx notify.Tx) error {
		got, err := tx.FindLayout(ctx, s.ws1, l.ID)
		require.NoError(t, err)
		require.Equal(t, l, got)
		byName, err := tx.FindLayoutByName(ctx, s.ws1, "renamed")
		require.NoError(t, err)
		require.Equal(t, l.ID, byName.ID)
		_, err = tx.FindLayoutByName(ctx, s.ws1, "brand")
		require.True(t, notify.IsNotFound(err))
		return nil
	})
}

func testFindLayout(t *testing.T, db *store.DB) {
	s := layoutFixture(t, db)
	view(t, db, func(ctx context.Context, tx notify.Tx) error {
		_, err := tx.FindLayout(ctx, s.ws2, s.l.ID)
		require.True(t, notify.IsNotFound(err))
		return nil
	})
}

func testFindLayouts(t *testing.T, db *store.DB) {
	s := layoutFixture(t, db)
	view(t, db, func(ctx context.Context, tx notify.Tx) error {
		all, err := tx.FindLayouts(ctx, s.ws1)
		require.NoError(t, err)
		require.Len(t, all, 2)
		require.Equal(t, s.l.ID, all[0].ID, "oldest first")
		return nil
	})
}

func testCountLayoutUses(t *testing.T, db *store.DB) {
	s := layoutFixture(t, db)
	view(t, db, func(ctx context.Context, tx notify.Tx) error {
		n, err := tx.CountLayoutUses(ctx, s.ws1, s.l.ID)
		require.NoError(t, err)
		require.Equal(t, 2, n)
		n, err = tx.CountLayoutUses(ctx, s.ws2, s.l.ID)
		require.NoError(t, err)
		require.Zero(t, n)
		return nil
	})
}

func testCreateTemplateVersion(t *testing.T, db *store.DB) {
	s := layoutFixture(t, db)
	view(t, db, func(ctx context.Context, tx notify.Tx) error {
		vs, err := tx.FindTemplateVersions(ctx, s.ws1, s.tpl.ID, notify.TemplateVersionFilter{Limit: 10})
		require.NoError(t, err)
		require.Len(t, vs, 3)
		require.Equal(t, "ko", vs[1].Locale)
		require.Equal(t, s.l.ID, vs[1].LayoutID)
		require.Empty(t, vs[2].Locale)
		require.Empty(t, vs[2].LayoutID)
		got2, err := tx.FindTemplate(ctx, s.ws1, s.tpl.ID)
		require.NoError(t, err)
		require.Equal(t, 1, got2.LatestPublishedVersion, "a localized version is not the default locale's")
		return nil
	})
}

func testDeleteLayout(t *testing.T, db *store.DB) {
	s := layoutFixture(t, db)
	update(t, db, func(ctx context.Context, tx notify.Tx) error {
		require.True(t, notify.IsNotFound(tx.DeleteLayout(ctx, s.ws2, s.l.ID)))
		second, err := tx.FindLayoutByName(ctx, s.ws1, "second")
		require.NoError(t, err)
		require.NoError(t, tx.DeleteLayout(ctx, s.ws1, second.ID))
		_, err = tx.FindLayout(ctx, s.ws1, second.ID)
		require.True(t, notify.IsNotFound(err))
		return nil
	})
}
