package storetest

import (
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/notifyd/notifyd/internal/notify"
	"github.com/notifyd/notifyd/internal/store"
)

// versionSet is a template of ws1 with six versions (newest first: 6 ja
// draft, 5 ko, 4 default draft, 3 ko-KR, 2 ko, 1 default; the others
// published), a template of ws1 with no default-locale version (3
// zh-Hant, 2 zh, 1 zh-Hant-TW draft), and a workspace ws2.
type versionSet struct {
	ws1, ws2 string
	tpl, zh  *notify.Template
}

func versionFixture(t *testing.T, db *store.DB) *versionSet {
	t.Helper()
	s := &versionSet{ws1: Workspace(t, db), ws2: Workspace(t, db)}
	s.tpl = &notify.Template{ID: id(), WorkspaceID: s.ws1, Code: "hello", Channel: notify.ChannelEmail, Name: "Hello", Status: "active", CreatedAt: t0, UpdatedAt: t0}
	s.zh = &notify.Template{ID: id(), WorkspaceID: s.ws1, Code: "zh", Channel: notify.ChannelEmail, Name: "Zh", Status: "active", CreatedAt: t0, UpdatedAt: t0}
	pub := t0.Add(time.Minute)
	v := func(tp *notify.Template, n int, locale string, published bool) *notify.TemplateVersion {
		// The body names the version, so a test sees whose bodies it read.
		out := &notify.TemplateVersion{TemplateID: tp.ID, Version: n, Title: "title " + locale, Text: tp.Code + " text " + strconv.Itoa(n),
			HTML: "<p>" + tp.Code + " html " + strconv.Itoa(n) + "</p>", Locale: locale, CreatedAt: t0.Add(time.Duration(n) * time.Second)}
		if published {
			out.PublishedAt = &pub
		}
		return out
	}
	update(t, db, func(ctx context.Context, tx notify.Tx) error {
		require.NoError(t, tx.CreateTemplate(ctx, s.tpl))
		require.NoError(t, tx.CreateTemplate(ctx, s.zh))
		for _, x := range []*notify.TemplateVersion{v(s.tpl, 1, "", true), v(s.tpl, 2, "ko", true), v(s.tpl, 3, "ko-KR", true),
			v(s.tpl, 4, "", false), v(s.tpl, 5, "ko", true), v(s.tpl, 6, "ja", false),
			v(s.zh, 1, "zh-Hant-TW", false), v(s.zh, 2, "zh", true), v(s.zh, 3, "zh-Hant", true)} {
			require.NoError(t, tx.CreateTemplateVersion(ctx, x))
		}
		return nil
	})
	return s
}

// testTemplateVersions: versions are read a page, one or the published
// one at a time, never across workspaces (issue 29).
func testTemplateVersions(t *testing.T, open Opener) {
	runVerbs(t, open, []verb{
		{"FindTemplateVersions", testFindTemplateVersions, perWorkspace},
		{"FindTemplateVersion", testFindTemplateVersion, perWorkspace},
		{"FindPublishedTemplateVersion", testFindPublishedTemplateVersion, perWorkspace},
		{"CountTemplateVersions", testCountTemplateVersions, perWorkspace},
		{"DeleteTemplateVersion", testDeleteTemplateVersion, perWorkspace},
	})
}

func versionNumbers(vs []*notify.TemplateVersion) []int {
	out := make([]int, len(vs))
	for i, v := range vs {
		out[i] = v.Version
	}
	return out
}

// testFindTemplateVersions: newest first, Limit and Before page, Summary
// leaves the bodies out and keeps the rest.
func testFindTemplateVersions(t *testing.T, db *store.DB) {
	s := versionFixture(t, db)
	view(t, db, func(ctx context.Context, tx notify.Tx) error {
		vs, err := tx.FindTemplateVersions(ctx, s.ws1, s.tpl.ID, notify.TemplateVersionFilter{Limit: 2})
		require.NoError(t, err)
		require.Equal(t, []int{6, 5}, versionNumbers(vs))
		require.Equal(t, "hello text 5", vs[1].Text)
		require.Equal(t, "<p>hello html 5</p>", vs[1].HTML)
		vs, err = tx.FindTemplateVersions(ctx, s.ws1, s.tpl.ID, notify.TemplateVersionFilter{Limit: 3, Before: 5})
		require.NoError(t, err)
		require.Equal(t, []int{4, 3, 2}, versionNumbers(vs))
		vs, err = tx.FindTemplateVersions(ctx, s.ws1, s.tpl.ID, notify.TemplateVersionFilter{Limit: 10, Before: 2})
		require.NoError(t, err)
		require.Equal(t, []int{1}, versionNumbers(vs))

		full, err := tx.FindTemplateVersion(ctx, s.ws1, s.tpl.ID, 3)
		require.NoError(t, err)
		vs, err = tx.FindTemplateVersions(ctx, s.ws1, s.tpl.ID, notify.TemplateVersionFilter{Limit: 10, Summary: true})
		require.NoError(t, err)
		require.Equal(t, []int{6, 5, 4, 3, 2, 1}, versionNumbers(vs))
		summary := *full
		summary.Text, summary.HTML = "", ""
		require.Equal(t, &summary, vs[3], "a summary is the version without its bodies")

		vs, err = tx.FindTemplateVersions(ctx, s.ws2, s.tpl.ID, notify.TemplateVersionFilter{Limit: 10})
		require.NoError(t, err)
		require.Empty(t, vs, "another workspace's template has no versions for ws2")
		return nil
	})
}

func testFindTemplateVersion(t *testing.T, db *store.DB) {
	s := versionFixture(t, db)
	view(t, db, func(ctx context.Context, tx notify.Tx) error {
		v, err := tx.FindTemplateVersion(ctx, s.ws1, s.tpl.ID, 3)
		require.NoError(t, err)
		require.Equal(t, 3, v.Version)
		require.Equal(t, "ko-KR", v.Locale)
		require.Equal(t, "title ko-KR", v.Title)
		require.Equal(t, "hello text 3", v.Text)
		require.NotNil(t, v.PublishedAt)
		require.Equal(t, t0.Add(3*time.Second), v.CreatedAt)
		_, err = tx.FindTemplateVersion(ctx, s.ws1, s.tpl.ID, 7)
		require.True(t, notify.IsNotFound(err))
		_, err = tx.FindTemplateVersion(ctx, s.ws2, s.tpl.ID, 3)
		require.True(t, notify.IsNotFound(err), "scoped by workspace")
		return nil
	})
}

// testFindPublishedTemplateVersion pins the version choice of a send
// (docs/DECISIONS.md, locales): the highest published version of the
// first tag that has one, else the default locale's highest published
// version; drafts never; no sideways match.
func testFindPublishedTemplateVersion(t *testing.T, db *store.DB) {
	s := versionFixture(t, db)
	view(t, db, func(ctx context.Context, tx notify.Tx) error {
		for _, c := range []struct {
			tpl     *notify.Template
			locales []string
			want    int // 0: none
		}{
			{s.tpl, nil, 1},
			{s.tpl, []string{"ko"}, 5},
			{s.tpl, []string{"ko-KR", "ko"}, 3},
			{s.tpl, []string{"ko-KP", "ko"}, 5},
			{s.tpl, []string{"ja"}, 1},
			{s.tpl, []string{"fr"}, 1},
			{s.zh, []string{"zh-Hant-TW", "zh-Hant", "zh"}, 3},
			{s.zh, []string{"zh-Hans", "zh"}, 2},
			{s.zh, []string{"zh"}, 2},
			{s.zh, nil, 0},
			{s.zh, []string{"fr"}, 0},
		} {
			v, err := tx.FindPublishedTemplateVersion(ctx, s.ws1, c.tpl.ID, c.locales)
			if c.want == 0 {
				require.True(t, notify.IsNotFound(err), "%s %v", c.tpl.Code, c.locales)
				continue
			}
			require.NoError(t, err, c.locales)
			require.Equal(t, c.want, v.Version, "%s %v", c.tpl.Code, c.locales)
			require.Equal(t, c.tpl.Code+" text "+strconv.Itoa(c.want), v.Text, "the chosen version's own bodies")
			require.Equal(t, "<p>"+c.tpl.Code+" html "+strconv.Itoa(c.want)+"</p>", v.HTML)
		}
		_, err := tx.FindPublishedTemplateVersion(ctx, s.ws2, s.tpl.ID, nil)
		require.True(t, notify.IsNotFound(err), "scoped by workspace")
		return nil
	})
}

func testCountTemplateVersions(t *testing.T, db *store.DB) {
	s := versionFixture(t, db)
	empty := &notify.Template{ID: id(), WorkspaceID: s.ws1, Code: "empty", Channel: notify.ChannelSMS, Name: "E", Status: "active", CreatedAt: t0, UpdatedAt: t0}
	update(t, db, func(ctx context.Context, tx notify.Tx) error { return tx.CreateTemplate(ctx, empty) })
	view(t, db, func(ctx context.Context, tx notify.Tx) error {
		for _, c := range []struct {
			ws, tpl        string
			n, highestWant int
		}{{s.ws1, s.tpl.ID, 6, 6}, {s.ws1, s.zh.ID, 3, 3}, {s.ws1, empty.ID, 0, 0}, {s.ws2, s.tpl.ID, 0, 0}} {
			n, highest, err := tx.CountTemplateVersions(ctx, c.ws, c.tpl)
			require.NoError(t, err)
			require.Equal(t, c.n, n)
			require.Equal(t, c.highestWant, highest)
		}
		return nil
	})
}

// testDeleteTemplateVersion: with draft, a published version stays; the
// count and the highest number follow a delete.
func testDeleteTemplateVersion(t *testing.T, db *store.DB) {
	s := versionFixture(t, db)
	update(t, db, func(ctx context.Context, tx notify.Tx) error {
		require.True(t, notify.IsNotFound(tx.DeleteTemplateVersion(ctx, s.tpl.ID, 2, true)), "version 2 is published")
		require.NoError(t, tx.DeleteTemplateVersion(ctx, s.tpl.ID, 2, false))
		require.NoError(t, tx.DeleteTemplateVersion(ctx, s.tpl.ID, 4, true))
		require.True(t, notify.IsNotFound(tx.DeleteTemplateVersion(ctx, s.tpl.ID, 4, false)), "already gone")
		require.NoError(t, tx.DeleteTemplateVersion(ctx, s.tpl.ID, 6, false))
		return nil
	})
	view(t, db, func(ctx context.Context, tx notify.Tx) error {
		n, highest, err := tx.CountTemplateVersions(ctx, s.ws1, s.tpl.ID)
		require.NoError(t, err)
		require.Equal(t, 3, n)
		require.Equal(t, 5, highest)
		vs, err := tx.FindTemplateVersions(ctx, s.ws1, s.tpl.ID, notify.TemplateVersionFilter{Limit: 10, Summary: true})
		require.NoError(t, err)
		require.Equal(t, []int{5, 3, 1}, versionNumbers(vs))
		return nil
	})
}
