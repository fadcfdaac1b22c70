package recipients_test

import (
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/notifyd/notifyd/client"
	"github.com/notifyd/notifyd/internal/notifytest"
)

var (
	seoul = mustZone("Asia/Seoul")
	ny    = mustZone("America/New_York")
)

func mustZone(name string) *time.Location {
	l, err := time.LoadLocation(name)
	if err != nil {
		panic(err)
	}
	return l
}

// windowSetup starts a daemon whose clock is River's too, moved to at
// (which must be later than now), with sendSetup's routes and profile,
// and the advertising category "marketing".
func windowSetup(t *testing.T, at time.Time) (*notifytest.Env, *client.Client, *notifytest.Clock) {
	t.Helper()
	clock := &notifytest.Clock{}
	clock.AdvanceTo(at)
	env := notifytest.StartDaemonQueueAt(t, clock.Now)
	sms := env.SimProvider(t, "vendora_sms", "sms", nil)
	mail := notifytest.RegisterProvider(t, env.Owner, "mailz_email", "mail", env.MailConfig("mailz_email", "noreply@example.com"))
	notifytest.PutRoutes(t, env.Owner, notifytest.Route{Channel: "sms", ProviderAccountID: sms, Priority: 1},
		notifytest.Route{Channel: "email", ProviderAccountID: mail, Priority: 1})
	put(t, env.Owner, "u-42", map[string]any{"phone": "010-1234-5678", "email": "minji@example.com", "timeZone": "Asia/Seoul"}, http.StatusCreated)
	dash(t, env.Owner, "POST", "/v1/categories", map[string]any{"key": "marketing", "name": "Marketing", "advertising": true}, http.StatusCreated)
	dash(t, env.Owner, "POST", "/v1/categories", map[string]any{"key": "security", "name": "Security", "required": true}, http.StatusCreated)
	key := env.SendKey(t)
	key.Now = clock.Now
	return env, key, clock
}

// next is the first time after now (real) at the wall clock h:m of loc.
func next(loc *time.Location, h, m int) time.Time {
	now := time.Now().In(loc)
	t := time.Date(now.Year(), now.Month(), now.Day(), h, m, 0, 0, loc)
	if !t.After(now.Add(time.Minute)) {
		t = time.Date(now.Year(), now.Month(), now.Day()+1, h, m, 0, 0, loc)
	}
	return t
}

func scheduled(t *testing.T, a notifytest.Accepted) time.Time {
	t.Helper()
	require.NotNil(t, a.ScheduledAt, "held: %+v", a)
	at, err := time.Parse(time.RFC3339Nano, *a.ScheduledAt)
	require.NoError(t, err)
	return at
}

// TestKoreanNightAdvertising: an advertising SMS accepted at 22:30 KST is
// held and leaves at 08:00 KST (the test clock, which River follows); one
// to a recipient with the night consent leaves at once; advertising by
// email, a required category and an urgent send are not held.
func TestKoreanNightAdvertising(t *testing.T) {
	t.Parallel()
	night := next(seoul, 22, 30)
	env, key, clock := windowSetup(t, night)
	put(t, env.Owner, "u-night", map[string]any{"phone": "010-5555-6666"}, http.StatusCreated)
	dash(t, env.Owner, "PUT", "/v1/recipients/u-night/consents/night-advertising", map[string]any{"source": "app settings"}, http.StatusOK)

	held := notifytest.Send(t, key, withCategory(byID("sms", "u-42", "night sale"), "marketing"))
	require.Equal(t, "queued", held.Status)
	eight := time.Date(night.Year(), night.Month(), night.Day()+1, 8, 0, 0, 0, seoul)
	require.True(t, scheduled(t, held).Equal(eight), "held until 08:00 KST: %s", scheduled(t, held).In(seoul))
	out := notifytest.Lookup(t, key, held.RequestID)
	require.Equal(t, "scheduled", out.Job.Status)
	ex := explain(t, key, held.RequestID)
	last := ex.Decisions[len(ex.Decisions)-1]
	require.Equal(t, "window", last.Kind)
	require.Equal(t, "held", last.Outcome)
	require.Equal(t, "kr-night-advertising", *last.Rule)

	consented := notifytest.Send(t, key, withCategory(byID("sms", "u-night", "night sale"), "marketing"))
	require.Nil(t, consented.ScheduledAt, "the night consent lets it go")
	require.Equal(t, "sent", notifytest.Wait(t, key, consented.RequestID).Status)
	for _, body := range []map[string]any{
		withCategory(byID("email", "u-42", "by mail"), "marketing"),
		withCategory(byID("sms", "u-42", "new login"), "security"),
		func() map[string]any {
			b := withCategory(byID("sms", "u-42", "urgent"), "marketing")
			b["urgent"] = true
			return b
		}(),
	} {
		a := notifytest.Send(t, key, body)
		require.Nil(t, a.ScheduledAt, "%v", body)
		require.Equal(t, "sent", notifytest.Wait(t, key, a.RequestID).Status)
	}
	require.Len(t, env.Sim.Messages("vendora_sms", "01012345678", 0), 2, "security and urgent only")

	// 07:59 KST: still held. 08:00 KST: it leaves.
	clock.AdvanceTo(eight.Add(-time.Minute))
	time.Sleep(6 * time.Second) // longer than River's scheduler interval
	require.Equal(t, "queued", notifytest.Lookup(t, key, held.RequestID).Status)
	clock.AdvanceTo(eight)
	out = notifytest.Wait(t, key, held.RequestID)
	require.Equal(t, "sent", out.Status)
	started, err := time.Parse(time.RFC3339Nano, out.Attempts[0].StartedAt)
	require.NoError(t, err)
	require.False(t, started.Before(eight), "left at %s", started.In(seoul))
}

// TestSendWindowAcrossDST: a workspace window of 09:00-17:00
// America/New_York holds a send accepted the evening before each
// daylight-saving change until 09:00 local on the day of the change.
func TestSendWindowAcrossDST(t *testing.T) {
	t.Parallel()
	spring := time.Date(2027, 3, 13, 20, 0, 0, 0, ny) // the night before 2027-03-14, when EST becomes EDT
	env, key, clock := windowSetup(t, spring)
	dash(t, env.Owner, "PUT", "/v1/send-windows/workspace", map[string]any{"hours": "09:00-17:00", "timeZone": "America/New_York"}, http.StatusOK)
	put(t, env.Owner, "u-ny", map[string]any{"email": "ny@example.com"}, http.StatusCreated)

	a := notifytest.Send(t, key, byID("email", "u-ny", "spring"))
	require.Equal(t, time.Date(2027, 3, 14, 13, 0, 0, 0, time.UTC), scheduled(t, a).UTC(), "09:00 EDT")
	// A profile's own zone wins over the workspace's: 20:00 in New York
	// is 10:00 the next morning in the recipient's Seoul, open.
	k := notifytest.Send(t, key, byID("sms", "u-42", "seoul"))
	require.Nil(t, k.ScheduledAt)

	clock.AdvanceTo(time.Date(2027, 11, 6, 20, 0, 0, 0, ny)) // the night before 2027-11-07, when EDT becomes EST
	a = notifytest.Send(t, key, byID("email", "u-ny", "fall"))
	require.Equal(t, time.Date(2027, 11, 7, 14, 0, 0, 0, time.UTC), scheduled(t, a).UTC(), "09:00 EST")
	// The send's own window narrows it further; an impossible pair is a 400.
	own := byID("email", "u-ny", "own")
	own["sendWindow"] = map[string]any{"hours": "10:30-11:00", "days": []string{"mon"}}
	a = notifytest.Send(t, key, own)
	require.Equal(t, time.Date(2027, 11, 8, 15, 30, 0, 0, time.UTC), scheduled(t, a).UTC(), "Monday 10:30 EST")
	own["sendWindow"] = map[string]any{"hours": "18:00-19:00", "timeZone": "America/New_York"}
	require.Equal(t, "sendWindow: the windows of this send never open together", sendProblem(t, key, own))
	own["sendWindow"] = map[string]any{"hours": "25:00-01:00"}
	require.Equal(t, "sendWindow.hours must be HH:MM-HH:MM", sendProblem(t, key, own))

	// A send by address without a category ignores the workspace window:
	// SPEC's send.
	plain := notifytest.Send(t, key, notifytest.Email("plain@example.com", "s", "t"))
	require.Nil(t, plain.ScheduledAt)
}

// TestSendWindowRoutes: the windows are set, listed and removed by admins,
// read by every role, audited, and a category's goes with its category.
func TestSendWindowRoutes(t *testing.T) {
	t.Parallel()
	env := notifytest.StartDaemon(t)
	dash(t, env.Owner, "POST", "/v1/categories", map[string]any{"key": "digest", "name": "Digest"}, http.StatusCreated)
	dash(t, env.Owner, "PUT", "/v1/send-windows/workspace", map[string]any{"hours": "08:00-21:00", "timeZone": "Asia/Seoul"}, http.StatusOK)
	dash(t, env.Owner, "PUT", "/v1/send-windows/categories/digest", map[string]any{"hours": "18:00-20:00", "days": []string{"sat", "sun"}}, http.StatusOK)
	var list struct {
		Workspace  map[string]any   `json:"workspace"`
		Categories []map[string]any `json:"categories"`
	}
	viewer := env.Member(t, "viewer")
	require.NoError(t, dash(t, viewer, "GET", "/v1/send-windows", nil, http.StatusOK).Decode(&list))
	require.Equal(t, "08:00-21:00", list.Workspace["hours"])
	require.Equal(t, "Asia/Seoul", list.Workspace["timeZone"])
	require.Len(t, list.Categories, 1)
	require.Equal(t, "digest", list.Categories[0]["category"])
	require.Equal(t, []any{"sat", "sun"}, list.Categories[0]["days"])
	dash(t, viewer, "PUT", "/v1/send-windows/workspace", map[string]any{"hours": "08:00-21:00"}, http.StatusForbidden)
	dash(t, env.Member(t, "operator"), "DELETE", "/v1/send-windows/workspace", nil, http.StatusForbidden)

	require.Equal(t, "hours must be HH:MM-HH:MM", problem(t, env.Owner, "PUT", "/v1/send-windows/workspace", map[string]any{"hours": "8-21"}))
	require.Equal(t, "days must be among mon, tue, wed, thu, fri, sat, sun",
		problem(t, env.Owner, "PUT", "/v1/send-windows/workspace", map[string]any{"hours": "08:00-21:00", "days": []string{"monday"}}))
	require.Equal(t, "timeZone must be an IANA time zone such as Asia/Seoul or America/New_York",
		problem(t, env.Owner, "PUT", "/v1/send-windows/workspace", map[string]any{"hours": "08:00-21:00", "timeZone": "Mars/Olympus"}))
	dash(t, env.Owner, "PUT", "/v1/send-windows/categories/nope", map[string]any{"hours": "08:00-21:00"}, http.StatusNotFound)

	dash(t, env.Owner, "DELETE", "/v1/categories/digest", nil, http.StatusNoContent)
	require.NoError(t, dash(t, env.Owner, "GET", "/v1/send-windows", nil, http.StatusOK).Decode(&list))
	require.Empty(t, list.Categories, "gone with its category")
	dash(t, env.Owner, "DELETE", "/v1/send-windows/workspace", nil, http.StatusNoContent)
	dash(t, env.Owner, "DELETE", "/v1/send-windows/workspace", nil, http.StatusNotFound)
	require.Len(t, notifytest.Audit(t, env.Owner, "send_window.put"), 2)
	require.Len(t, notifytest.Audit(t, env.Owner, "send_window.delete"), 1)
	other, _ := env.NewWorkspace(t, "Other", "other-windows@example.com")
	require.NoError(t, dash(t, other, "GET", "/v1/send-windows", nil, http.StatusOK).Decode(&list))
	require.Nil(t, list.Workspace)
}
