package e2e_test

import (
	"encoding/base64"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestAuditLog(t *testing.T) {
	t.Parallel()
	e := start(t)
	me := decode[meBody](t, do(t, e.Owner, "GET", "/v1/me", nil))
	adminID, admin := e.member(t, "admin") // member.add by the owner

	// 7 workspace renames by the owner, 3 key creations by the admin.
	for i := range 7 {
		requireStatus(t, do(t, e.Owner, "PATCH", "/v1/workspace", map[string]string{"name": "W" + strconv.Itoa(i)}), http.StatusOK)
	}
	var keyIDs []string
	for i := range 3 {
		keyIDs = append(keyIDs, createKey(t, admin, map[string]any{"name": "k" + strconv.Itoa(i), "scopes": []string{"otp:send"}}).APIKey.ID)
	}

	all := audit(t, e.Owner, "")
	require.Len(t, all.Logs, 11)
	require.False(t, all.HasNext)
	require.Nil(t, all.Cursor)
	// Newest first: the keys in reverse, then the renames in reverse, then member.add.
	require.Equal(t, "api_key.create", all.Logs[0].Action)
	require.Equal(t, keyIDs[2], all.Logs[0].TargetID)
	require.Equal(t, keyIDs[0], all.Logs[2].TargetID)
	require.Equal(t, "W6", all.Logs[3].Payload["name"])
	require.Equal(t, "W0", all.Logs[9].Payload["name"])
	require.Equal(t, "member.add", all.Logs[10].Action)
	var prev time.Time
	for i, l := range all.Logs {
		require.NotEmpty(t, l.ID)
		require.NotNil(t, l.ActorUserID)
		ts, err := time.Parse("2006-01-02T15:04:05.000Z", l.CreatedAt)
		require.NoError(t, err)
		if i > 0 {
			require.False(t, ts.After(prev), "newest first")
		}
		prev = ts
		if l.Action == "api_key.create" {
			require.Equal(t, adminID, *l.ActorUserID, "actorUserId is who acted")
		} else {
			require.Equal(t, me.User.ID, *l.ActorUserID)
		}
	}

	// Filters.
	ws := audit(t, e.Owner, "action=workspace.updated")
	require.Len(t, ws.Logs, 7)
	for _, l := range ws.Logs {
		require.Equal(t, "workspace.updated", l.Action)
		require.Equal(t, "workspace", l.TargetType)
		require.Equal(t, e.Workspace, l.TargetID)
	}
	kt := audit(t, e.Owner, "targetType=api_key")
	require.Len(t, kt.Logs, 3)
	require.Len(t, audit(t, e.Owner, "targetType=api_key&action=api_key.create").Logs, 3)
	require.Empty(t, audit(t, e.Owner, "targetType=workspace&action=api_key.create").Logs)
	none := audit(t, e.Owner, "action=nothing.like.this")
	require.NotNil(t, none.Logs)
	require.Empty(t, none.Logs)
	require.False(t, none.HasNext)
	require.Contains(t, string(do(t, e.Owner, "GET", "/v1/audit-logs?action=nope", nil).Body), `"logs":[]`)

	// Cursor paging, newest first, no entry twice or lost.
	var seen []string
	cursor := ""
	pages := 0
	for {
		q := "limit=4"
		if cursor != "" {
			q += "&cursor=" + url.QueryEscape(cursor)
		}
		p := audit(t, e.Owner, q)
		pages++
		require.LessOrEqual(t, len(p.Logs), 4)
		for _, l := range p.Logs {
			seen = append(seen, l.ID)
		}
		if !p.HasNext {
			require.Nil(t, p.Cursor)
			break
		}
		require.NotNil(t, p.Cursor)
		require.Len(t, p.Logs, 4)
		cursor = *p.Cursor
	}
	require.Equal(t, 3, pages)
	var want []string
	for _, l := range all.Logs {
		want = append(want, l.ID)
	}
	require.Equal(t, want, seen)
	// Paging with a filter.
	p1 := audit(t, e.Owner, "action=workspace.updated&limit=5")
	require.True(t, p1.HasNext)
	p2 := audit(t, e.Owner, "action=workspace.updated&limit=5&cursor="+url.QueryEscape(*p1.Cursor))
	require.False(t, p2.HasNext)
	require.Len(t, p2.Logs, 2)
	require.Equal(t, "W1", p2.Logs[0].Payload["name"])
	// Exactly limit entries left: hasNext false.
	exact := audit(t, e.Owner, "action=workspace.updated&limit=7")
	require.Len(t, exact.Logs, 7)
	require.False(t, exact.HasNext)

	// limit bounds.
	require.Len(t, audit(t, e.Owner, "limit=1").Logs, 1)
	require.Len(t, audit(t, e.Owner, "limit=200").Logs, 11)
	for _, q := range []string{"limit=0", "limit=201", "limit=x", "limit=-1", "limit=1.5", "limit=", "limit=99999999999999999999"} {
		path := "/v1/audit-logs?" + q
		if q == "limit=" {
			// An empty value means the default.
			requireStatus(t, do(t, e.Owner, "GET", path, nil), http.StatusOK)
			continue
		}
		e.callProblem(t, e.Owner, "GET", path, nil, 400, "SVC-40000")
	}
	// Bad cursors.
	for _, c := range []string{"x", "!!!", base64.RawURLEncoding.EncodeToString([]byte("nope")),
		base64.RawURLEncoding.EncodeToString([]byte("123:")), base64.RawURLEncoding.EncodeToString([]byte("abc:id")),
		strings.Repeat("A", 300)} {
		e.callProblem(t, e.Owner, "GET", "/v1/audit-logs?cursor="+url.QueryEscape(c), nil, 400, "SVC-40000")
	}
	// Over-long filters.
	e.callProblem(t, e.Owner, "GET", "/v1/audit-logs?action="+strings.Repeat("a", 101), nil, 400, "SVC-40000")
	e.callProblem(t, e.Owner, "GET", "/v1/audit-logs?targetType="+strings.Repeat("a", 101), nil, 400, "SVC-40000")

	// Every role reads the log.
	_, viewer := e.member(t, "viewer")
	require.NotEmpty(t, audit(t, viewer, "").Logs)
}
