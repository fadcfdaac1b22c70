package templates_test

import (
	"encoding/base64"
	"net/http"
	"net/url"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/notifyd/notifyd/client"
	"github.com/notifyd/notifyd/internal/notifytest"
)

// Template versions are bounded (issue 29, finding 3): the template answer
// carries the newest 10, the version list pages, a template holds at most
// 100, and a send reads the one version it uses.

type versionPage struct {
	Versions []versionOut `json:"versions"`
	Cursor   *string      `json:"cursor"`
	HasNext  bool         `json:"hasNext"`
}

type templateWithVersions struct {
	templateOut
	VersionsCursor  *string `json:"versionsCursor"`
	VersionsHasNext bool    `json:"versionsHasNext"`
}

func numbers(vs []versionOut) []int {
	out := make([]int, len(vs))
	for i, v := range vs {
		out[i] = v.Version
	}
	return out
}

func listVersions(t *testing.T, c *client.Client, id, query string) versionPage {
	t.Helper()
	var out versionPage
	require.NoError(t, notifytest.DashboardCall(t, c, "GET", "/v1/templates/"+id+"/versions"+query, nil, http.StatusOK).Decode(&out))
	return out
}

func TestTemplateVersionsPaged(t *testing.T) {
	t.Parallel()
	bd := setup(t)
	own := bd.env.Owner
	tp := createTemplate(t, own, map[string]any{"code": "paged", "channel": "sms", "name": "Paged"})
	for i := 1; i <= 15; i++ {
		addVersion(t, own, tp.ID, map[string]any{"text": "text " + strconv.Itoa(i)})
	}

	// The template answer: the newest 10, and where the list goes on.
	var got struct {
		Template templateWithVersions `json:"template"`
	}
	require.NoError(t, notifytest.DashboardCall(t, own, "GET", "/v1/templates/"+tp.ID, nil, http.StatusOK).Decode(&got))
	require.Equal(t, []int{15, 14, 13, 12, 11, 10, 9, 8, 7, 6}, numbers(*got.Template.Versions))
	require.Equal(t, "text 15", (*got.Template.Versions)[0].Text)
	require.True(t, got.Template.VersionsHasNext)
	require.NotNil(t, got.Template.VersionsCursor)
	rest := listVersions(t, own, tp.ID, "?cursor="+url.QueryEscape(*got.Template.VersionsCursor))
	require.Equal(t, []int{5, 4, 3, 2, 1}, numbers(rest.Versions))
	require.Equal(t, "text 1", rest.Versions[4].Text)
	require.False(t, rest.HasNext)
	require.Nil(t, rest.Cursor)

	// Pages of 4 walk every version once, newest first; a viewer reads them.
	viewer := bd.env.Member(t, "viewer")
	var all []int
	cursor := ""
	for pages := 0; ; pages++ {
		require.Less(t, pages, 5)
		p := listVersions(t, viewer, tp.ID, "?limit=4&cursor="+url.QueryEscape(cursor))
		all = append(all, numbers(p.Versions)...)
		if !p.HasNext {
			break
		}
		cursor = *p.Cursor
	}
	require.Equal(t, []int{15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1}, all)
	require.Equal(t, []int{15, 14, 13, 12, 11, 10, 9, 8, 7, 6}, numbers(listVersions(t, own, tp.ID, "").Versions), "10 by default")

	for q, detail := range map[string]string{
		"?limit=0": "limit must be between 1 and 20", "?limit=21": "limit must be between 1 and 20", "?limit=x": "limit must be an integer",
		"?cursor=!!!": "cursor is not valid", "?cursor=" + url.QueryEscape(encodeCursor("1700000000000:x")): "cursor is not valid",
		"?cursor=" + url.QueryEscape(encodeCursor("1700000000000:-3")): "cursor is not valid",
	} {
		require.Equal(t, detail, notifytest.DashboardProblem(t, own, "GET", "/v1/templates/"+tp.ID+"/versions"+q, nil, http.StatusBadRequest).Detail, q)
	}
	other, _ := bd.env.NewWorkspace(t, "Other", "other@example.com")
	notifytest.DashboardProblem(t, other, "GET", "/v1/templates/"+tp.ID+"/versions", nil, http.StatusNotFound)

	// A template without versions answers an empty list and no cursor.
	empty := createTemplate(t, own, map[string]any{"code": "empty", "channel": "sms", "name": "Empty"})
	require.NoError(t, notifytest.DashboardCall(t, own, "GET", "/v1/templates/"+empty.ID, nil, http.StatusOK).Decode(&got))
	require.Empty(t, *got.Template.Versions)
	require.False(t, got.Template.VersionsHasNext)
	require.Nil(t, got.Template.VersionsCursor)
}

// TestTemplateVersionCap: the 101st version is 409 naming the limit; a
// version no send uses can be deleted to make room, numbers are never
// given twice, and the versions sends use cannot be deleted.
func TestTemplateVersionCap(t *testing.T) {
	t.Parallel()
	bd := setup(t)
	own := bd.env.Owner
	tp := createTemplate(t, own, map[string]any{"code": "capped", "channel": "sms", "name": "Capped"})
	for i := 1; i <= 100; i++ {
		body := map[string]any{"text": "text " + strconv.Itoa(i)}
		if i == 3 || i == 4 {
			body["locale"] = "ko"
		}
		addVersion(t, own, tp.ID, body)
	}
	path := "/v1/templates/" + tp.ID + "/versions"
	p := notifytest.DashboardProblem(t, own, "POST", path, map[string]any{"text": "one more"}, http.StatusConflict)
	require.Equal(t, "A template holds at most 100 versions; delete one that no send uses first", p.Detail)
	require.Equal(t, "SVC-40900", p.Code)

	publish(t, own, tp.ID, 1)
	publish(t, own, tp.ID, 3)
	publish(t, own, tp.ID, 4)
	del := func(v int, status int) string {
		t.Helper()
		if status == http.StatusNoContent {
			notifytest.DashboardCall(t, own, "DELETE", path+"/"+strconv.Itoa(v), nil, status)
			return ""
		}
		return notifytest.DashboardProblem(t, own, "DELETE", path+"/"+strconv.Itoa(v), nil, status).Detail
	}
	require.Equal(t, "Version 100 is the newest version of this template and cannot be deleted", del(100, http.StatusConflict))
	require.Equal(t, "Version 1 is the published version sends use; publish a newer version first", del(1, http.StatusConflict))
	require.Equal(t, "Version 4 is the published version sends use; publish a newer version first", del(4, http.StatusConflict))
	del(3, http.StatusNoContent) // superseded by 4 in ko
	del(2, http.StatusNoContent) // a draft
	require.Equal(t, "Template version not found", del(2, http.StatusNotFound))
	require.Equal(t, "Template version not found", del(0, http.StatusNotFound))
	notifytest.DashboardProblem(t, bd.env.Member(t, "viewer"), "DELETE", path+"/5", nil, http.StatusForbidden)

	require.Equal(t, 101, addVersion(t, own, tp.ID, map[string]any{"text": "room again"}).Version, "numbers are never given twice")
	require.Equal(t, 102, addVersion(t, own, tp.ID, map[string]any{"text": "the last room"}).Version)
	require.Equal(t, "A template holds at most 100 versions; delete one that no send uses first",
		notifytest.DashboardProblem(t, own, "POST", path, map[string]any{"text": "full again"}, http.StatusConflict).Detail)

	// Sends still use the versions that could not be deleted.
	require.Equal(t, "text 1", preview(t, own, tp.ID, map[string]any{}).Text)
	require.Equal(t, "text 4", preview(t, own, tp.ID, map[string]any{"locale": "ko-KR"}).Text)

	var logs struct {
		Logs []struct {
			Payload map[string]any `json:"payload"`
		} `json:"logs"`
	}
	require.NoError(t, notifytest.DashboardCall(t, own, "GET", "/v1/audit-logs?action=template.version.delete", nil, http.StatusOK).Decode(&logs))
	require.Len(t, logs.Logs, 2)
	require.EqualValues(t, 2, logs.Logs[0].Payload["version"])
	require.Equal(t, "ko", logs.Logs[1].Payload["locale"])
}

// TestSendReadsOnlyItsVersion: with many versions of the largest size, a
// preview and a send choose the right version and allocate about the size
// of that one version, not of them all (the 60 versions hold 36 MB). Not
// parallel: it measures the process's allocations.
func TestSendReadsOnlyItsVersion(t *testing.T) {
	bd := setup(t)
	own := bd.env.Owner
	bd.mailSetup(t)
	tp := createTemplate(t, own, map[string]any{"code": "big", "channel": "email", "name": "Big"})
	big := func(tag string) map[string]any {
		return map[string]any{"title": tag + " {{name}}", "text": tag + " {{name}} " + strings.Repeat("t", 100_000-len(tag)-10),
			"html": "<p>" + tag + " {{name}}</p>" + strings.Repeat("h", 500_000-len(tag)-20)}
	}
	// 1 the default locale's published version, the oldest; 2 to 58
	// drafts; 59 ko published; 60 a default-locale draft, the newest.
	for i := 1; i <= 60; i++ {
		body := big("v" + strconv.Itoa(i))
		if i == 59 {
			body["locale"] = "ko"
		}
		addVersion(t, own, tp.ID, body)
	}
	publish(t, own, tp.ID, 1)
	publish(t, own, tp.ID, 59)

	vars := map[string]string{"name": "Kim"}
	var p previewOut
	var scheduled string
	allocated := allocatedBy(func() {
		p = preview(t, own, tp.ID, map[string]any{"variables": vars})
		scheduled = notifytest.Send(t, bd.key, map[string]any{"channel": "email", "recipient": map[string]any{"address": "later@example.com"},
			"content": map[string]any{"templateCode": "big", "templateVariables": vars}, "locale": "ko-KR",
			"scheduledAt": time.Now().Add(time.Hour).UTC().Format(time.RFC3339)}).RequestID
	})
	require.Equal(t, 1, p.Version)
	require.Equal(t, "v1 Kim", deref(p.Title))
	require.NotEmpty(t, scheduled)
	t.Logf("a preview and a send allocated %d MB", allocated>>20)
	require.Less(t, allocated, uint64(30<<20), "a preview and a send must not read every version's bodies (36 MB)")

	got := bd.delivered(t, "mailx_email", "kim@example.com", mail("kim@example.com", map[string]any{"templateCode": "big", "templateVariables": vars}))
	require.Equal(t, "v1 Kim", got.Subject)
	require.True(t, strings.HasPrefix(got.Text, "v1 Kim t"))
	got = bd.delivered(t, "mailx_email", "lee@example.com", map[string]any{"channel": "email", "recipient": map[string]any{"address": "lee@example.com"},
		"content": map[string]any{"templateCode": "big", "templateVariables": vars}, "locale": "ko-KR"})
	require.Equal(t, "v59 Kim", got.Subject)
	require.True(t, strings.HasPrefix(got.HTML, "<p>v59 Kim</p>h"))

	// The template answer carries 10 versions: about 6 MB, not 36.
	r := notifytest.DashboardCall(t, own, "GET", "/v1/templates/"+tp.ID, nil, http.StatusOK)
	require.Len(t, *decodeTemplate(t, r).Versions, 10)
}

// encodeCursor makes a cursor of the API's opaque form from its text.
func encodeCursor(s string) string { return base64.RawURLEncoding.EncodeToString([]byte(s)) }

// allocatedBy answers the bytes the process allocated while fn ran.
func allocatedBy(fn func()) uint64 {
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	fn()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}
