package storetest

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/notifyd/notifyd/internal/notify"
	"github.com/notifyd/notifyd/internal/store"
)

// testLayouts: layout names are unique per workspace, nothing is visible
// across workspaces, versions keep their locale and layout, a layout's
// uses are counted per workspace, and the latest published version is the
// default locale's.
func testLayouts(t *testing.T, db *store.DB) {
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
	conflict(t, db, func(ctx context.Context, tx notify.Tx) error {
		return tx.CreateLayout(ctx, &notify.Layout{ID: id(), WorkspaceID: ws1, Name: "brand", Text: "{{content}}", CreatedAt: t0, UpdatedAt: t0})
	})
	update(t, db, func(ctx context.Context, tx notify.Tx) error {
		l.Name, l.Text, l.HTML, l.UpdatedAt = "renamed", "T {{content}}", "", t0.Add(time.Minute)
		require.NoError(t, tx.UpdateLayout(ctx, l))
		foreign := *l
		foreign.WorkspaceID = ws2
		require.True(t, notify.IsNotFound(tx.UpdateLayout(ctx, &foreign)))
		require.True(t, notify.IsNotFound(tx.DeleteLayout(ctx, ws2, l.ID)))
		return nil
	})
	view(t, db, func(ctx context.Context, tx notify.Tx) error {
		got, err := tx.FindLayout(ctx, ws1, l.ID)
		require.NoError(t, err)
		require.Equal(t, l, got)
		_, err = tx.FindLayout(ctx, ws2, l.ID)
		require.True(t, notify.IsNotFound(err))
		byName, err := tx.FindLayoutByName(ctx, ws1, "renamed")
		require.NoError(t, err)
		require.Equal(t, l.ID, byName.ID)
		_, err = tx.FindLayoutByName(ctx, ws1, "brand")
		require.True(t, notify.IsNotFound(err))
		all, err := tx.FindLayouts(ctx, ws1)
		require.NoError(t, err)
		require.Len(t, all, 2)
		require.Equal(t, l.ID, all[0].ID, "oldest first")

		n, err := tx.CountLayoutUses(ctx, ws1, l.ID)
		require.NoError(t, err)
		require.Equal(t, 2, n)
		n, err = tx.CountLayoutUses(ctx, ws2, l.ID)
		require.NoError(t, err)
		require.Zero(t, n)

		vs, err := tx.FindTemplateVersions(ctx, tpl.ID)
		require.NoError(t, err)
		require.Len(t, vs, 3)
		require.Equal(t, "ko", vs[1].Locale)
		require.Equal(t, l.ID, vs[1].LayoutID)
		require.Empty(t, vs[2].Locale)
		require.Empty(t, vs[2].LayoutID)
		got2, err := tx.FindTemplate(ctx, ws1, tpl.ID)
		require.NoError(t, err)
		require.Equal(t, 1, got2.LatestPublishedVersion, "a localized version is not the default locale's")
		return nil
	})
	update(t, db, func(ctx context.Context, tx notify.Tx) error {
		second, err := tx.FindLayoutByName(ctx, ws1, "second")
		require.NoError(t, err)
		require.NoError(t, tx.DeleteLayout(ctx, ws1, second.ID))
		_, err = tx.FindLayout(ctx, ws1, second.ID)
		require.True(t, notify.IsNotFound(err))
		return nil
	})
}
