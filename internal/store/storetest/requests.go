package storetest

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/notifyd/notifyd/internal/notify"
	"github.com/notifyd/notifyd/internal/store"
)

// FindRequests is the request list of the API (GET /v1/requests) and the
// console.

type requestSet struct {
	ws, other string
	// a to e in ws, oldest first; d and e share their requestedAt.
	a, b, c, d, e *notify.Request
	// foreign is in other, newer than all, with a's recipient and status.
	foreign *notify.Request
}

func requestFixture(t *testing.T, db *store.DB) *requestSet {
	s := &requestSet{ws: Workspace(t, db), other: Workspace(t, db)}
	mk := func(ws string, ch notify.Channel, st notify.RequestStatus, to string, at time.Time) *notify.Request {
		r := newRequest(ws, "")
		r.Channel, r.Status, r.RecipientAddress, r.RequestedAt, r.UpdatedAt = ch, st, to, at, at
		j := &notify.Job{ID: id(), WorkspaceID: ws, RequestID: r.ID, Status: notify.JobQueued, MaxAttempts: 3, QueuedAt: at}
		update(t, db, func(ctx context.Context, tx notify.Tx) error { return tx.CreateDirectRequest(ctx, r, j) })
		return r
	}
	s.a = mk(s.ws, notify.ChannelSMS, notify.StatusQueued, "01011110000", t0)
	s.b = mk(s.ws, notify.ChannelEmail, notify.StatusSent, "a@example.com", t0.Add(time.Second))
	s.c = mk(s.ws, notify.ChannelSMS, notify.StatusFailed, "01011110000", t0.Add(2*time.Second))
	s.d = mk(s.ws, notify.ChannelSMS, notify.StatusSent, "01022220000", t0.Add(3*time.Second))
	s.e = mk(s.ws, notify.ChannelSMS, notify.StatusSent, "01022220000", t0.Add(3*time.Second))
	s.foreign = mk(s.other, notify.ChannelSMS, notify.StatusQueued, "01011110000", t0.Add(4*time.Second))
	return s
}

// findRequests returns the ids FindRequests answers.
func findRequests(t *testing.T, db *store.DB, ws string, f notify.RequestFilter) []string {
	t.Helper()
	if f.Limit == 0 {
		f.Limit = 100
	}
	var ids []string
	view(t, db, func(ctx context.Context, tx notify.Tx) error {
		rs, err := tx.FindRequests(ctx, ws, f)
		for _, r := range rs {
			ids = append(ids, r.ID)
		}
		return err
	})
	return ids
}

func requestIDs(rs ...*notify.Request) []string {
	out := make([]string, len(rs))
	for i, r := range rs {
		out[i] = r.ID
	}
	return out
}

func timePtr(t time.Time) *time.Time { return &t }

// testFindRequests: a workspace's requests, newest first (the id breaks a
// tie), each as FindRequest reads it, never another workspace's; every
// filter narrows, and they combine.
func testFindRequests(t *testing.T, db *store.DB) {
	s := requestFixture(t, db)
	all := requestIDs(s.e, s.d, s.c, s.b, s.a)
	if s.d.ID > s.e.ID {
		all[0], all[1] = all[1], all[0]
	}
	require.Equal(t, all, findRequests(t, db, s.ws, notify.RequestFilter{}))
	view(t, db, func(ctx context.Context, tx notify.Tx) error {
		rs, err := tx.FindRequests(ctx, s.ws, notify.RequestFilter{Limit: 10, RequestID: s.b.ID})
		require.NoError(t, err)
		require.Len(t, rs, 1)
		one, err := tx.FindRequest(ctx, s.ws, s.b.ID)
		require.NoError(t, err)
		require.Equal(t, one, rs[0], "the list reads every field")
		return nil
	})
	require.Equal(t, requestIDs(s.foreign), findRequests(t, db, s.other, notify.RequestFilter{}))
	require.Empty(t, findRequests(t, db, Workspace0, notify.RequestFilter{}))

	for name, c := range map[string]struct {
		f    notify.RequestFilter
		want []string
	}{
		"channel":                {notify.RequestFilter{Channel: notify.ChannelEmail}, requestIDs(s.b)},
		"recipient":              {notify.RequestFilter{Recipient: "01011110000"}, requestIDs(s.c, s.a)},
		"recipient exact":        {notify.RequestFilter{Recipient: "0101111"}, nil},
		"request id":             {notify.RequestFilter{RequestID: s.c.ID}, requestIDs(s.c)},
		"other's request id":     {notify.RequestFilter{RequestID: s.foreign.ID}, nil},
		"from and to, inclusive": {notify.RequestFilter{From: timePtr(t0.Add(time.Second)), To: timePtr(t0.Add(2 * time.Second))}, requestIDs(s.c, s.b)},
		"from":                   {notify.RequestFilter{From: timePtr(t0.Add(2 * time.Second))}, all[:3]},
		"to":                     {notify.RequestFilter{To: timePtr(t0)}, requestIDs(s.a)},
		"combined":               {notify.RequestFilter{Channel: notify.ChannelSMS, Status: notify.StatusFailed, Recipient: "01011110000"}, requestIDs(s.c)},
		"combined, none":         {notify.RequestFilter{Channel: notify.ChannelEmail, Status: notify.StatusQueued}, nil},
	} {
		require.Equal(t, c.want, findRequests(t, db, s.ws, c.f), name)
	}
	require.Equal(t, []string{all[0], all[1], s.b.ID}, findRequests(t, db, s.ws, notify.RequestFilter{Status: notify.StatusSent}), "status")
}

// testFindRequestsPages: Limit cuts a page and a (requestedAt, id) cursor
// starts the next one after it, also between two requests of the same
// millisecond; the pages together are the whole list once.
func testFindRequestsPages(t *testing.T, db *store.DB) {
	s := requestFixture(t, db)
	all := findRequests(t, db, s.ws, notify.RequestFilter{})
	require.Len(t, all, 5)
	byID := map[string]*notify.Request{s.a.ID: s.a, s.b.ID: s.b, s.c.ID: s.c, s.d.ID: s.d, s.e.ID: s.e}
	var paged []string
	f := notify.RequestFilter{Limit: 2}
	for range len(all) + 1 { // a cursor that does not advance fails instead of looping
		page := findRequests(t, db, s.ws, f)
		require.LessOrEqual(t, len(page), 2)
		if len(page) == 0 {
			break
		}
		paged = append(paged, page...)
		last := byID[page[len(page)-1]]
		f.Before = &notify.Cursor{At: last.RequestedAt, ID: last.ID}
	}
	require.Equal(t, all, paged)
	first := byID[all[0]]
	require.Equal(t, all[1:], findRequests(t, db, s.ws, notify.RequestFilter{Before: &notify.Cursor{At: first.RequestedAt, ID: first.ID}}),
		"the other request of the same millisecond comes next")
	require.Equal(t, all[1:2], findRequests(t, db, s.ws, notify.RequestFilter{Limit: 1, Status: notify.StatusSent,
		Before: &notify.Cursor{At: first.RequestedAt, ID: first.ID}}), "a cursor keeps the filters")
}
