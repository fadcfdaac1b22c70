package console_test

import (
	"encoding/json"
	"net/http"
	"net/url"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/notifyd/notifyd/internal/notify"
)

// jobOf answers the job id of request id from the API's job list.
func (f *fixture) jobOf(t *testing.T, id string) string {
	t.Helper()
	r, err := f.env.Owner.Dashboard(ctx, "GET", "/v1/jobs", nil)
	require.NoError(t, err)
	var out struct {
		Jobs []struct {
			ID        string `json:"id"`
			RequestID string `json:"notificationRequestId"`
		} `json:"jobs"`
	}
	require.NoError(t, json.Unmarshal(r.Body, &out))
	for _, j := range out.Jobs {
		if j.RequestID == id {
			return j.ID
		}
	}
	t.Fatalf("no open job of request %s", id)
	return ""
}

// TestConsoleJobs: the job list shows a scheduled job; a viewer sees no
// cancel and a forged cancel is refused; an operator cancels it (job and
// request canceled); another workspace's job is 404.
func TestConsoleJobs(t *testing.T) {
	t.Parallel()
	f := setup(t)
	at := time.Now().Add(time.Hour)
	id := f.send(t, "010-1234-5678", "", "later", &at)
	job := f.jobOf(t, id)

	viewer := f.env.ConsoleMember(t, "viewer")
	resp, body := viewer.Get(t, "/jobs")
	require.Equal(t, http.StatusOK, resp.StatusCode)
	require.Contains(t, body, `data-job-id="`+job+`"`)
	require.Contains(t, body, `class="job-status">scheduled<`)
	require.NotContains(t, body, "job-cancel")
	resp, body = viewer.Post(t, "/jobs/"+job+"/cancel", nil)
	require.Equal(t, http.StatusForbidden, resp.StatusCode)
	require.Contains(t, body, "Role viewer is not allowed")

	f.env.NewWorkspace(t, "Other", "other-jobs@example.com")
	other := f.env.ConsoleLogin(t, "other-jobs@example.com", "correct horse battery")
	_, body = other.Get(t, "/jobs")
	require.NotContains(t, body, job)
	resp, _ = other.Post(t, "/jobs/"+job+"/cancel", nil)
	require.Equal(t, http.StatusNotFound, resp.StatusCode, "another workspace's job")
	f.waitStatus(t, id, notify.StatusQueued)

	operator := f.env.ConsoleMember(t, "operator")
	_, body = operator.Get(t, "/jobs")
	require.Contains(t, body, "job-cancel")
	resp, _ = operator.Post(t, "/jobs/"+job+"/cancel", nil)
	require.Equal(t, http.StatusSeeOther, resp.StatusCode)
	f.waitStatus(t, id, notify.StatusCanceled)
	_, body = operator.Get(t, "/jobs")
	require.Contains(t, body, "The job and its request are canceled.")
	require.NotContains(t, body, `data-job-id="`+job+`"`)
	resp, body = operator.Post(t, "/jobs/"+job+"/cancel", nil)
	require.Equal(t, http.StatusConflict, resp.StatusCode)
	require.Contains(t, body, "Only a job in scheduled state can be canceled")
}

// TestConsoleDeadLetters: a request that ran out of attempts is in the
// dead-letter list (admin's, as the API's); an operator cannot read the
// list but replays; a viewer sees no replay and a forged replay is
// refused; a set replay with a bad filter shows the service's problem;
// one replay and a filtered set replay put requests back and they are
// sent.
func TestConsoleDeadLetters(t *testing.T) {
	t.Parallel()
	f := setup(t)
	// Two dead letters, with a success between them so that the
	// provider's circuit stays closed.
	fail := func(to string) string {
		f.env.Fault(t, map[string]any{"kind": "vendorb_sms", "status": 500, "count": 3})
		id := f.send(t, to, "", "dead", nil)
		f.waitStatus(t, id, notify.StatusFailed)
		f.waitStatus(t, f.send(t, "010-9999-0000", "", "fine", nil), notify.StatusSent)
		return id
	}
	a, b := fail("010-1111-0000"), fail("010-2222-0000")
	jobA, jobB := f.jobOf(t, a), f.jobOf(t, b)

	c := f.env.ConsoleLogin(t, f.env.Email, f.env.Password)
	resp, body := c.Get(t, "/dead-letters")
	require.Equal(t, http.StatusOK, resp.StatusCode)
	require.Contains(t, body, `id="dead-letter-count">2<`)
	require.Contains(t, body, `data-job-id="`+jobA+`"`)
	require.Contains(t, body, `id="replay-set"`)

	viewer := f.env.ConsoleMember(t, "viewer")
	resp, _ = viewer.Get(t, "/dead-letters")
	require.Equal(t, http.StatusForbidden, resp.StatusCode, "the list is admin's, as GET /v1/dead-letter")
	viewer.Get(t, "/jobs")
	resp, _ = viewer.Post(t, "/dead-letters/"+jobA+"/replay", nil)
	require.Equal(t, http.StatusForbidden, resp.StatusCode)
	resp, _ = viewer.Post(t, "/dead-letters/replay", nil)
	require.Equal(t, http.StatusForbidden, resp.StatusCode)

	resp, body = c.Post(t, "/dead-letters/replay", url.Values{"failureCode": {"nope"}})
	require.Equal(t, http.StatusBadRequest, resp.StatusCode)
	require.Contains(t, body, "failureCode must be one of the failure codes")
	f.waitStatus(t, a, notify.StatusFailed)

	operator := f.env.ConsoleMember(t, "operator")
	resp, _ = operator.Post(t, "/dead-letters/"+jobA+"/replay", nil)
	require.Equal(t, http.StatusSeeOther, resp.StatusCode)
	require.Equal(t, "/jobs", resp.Header.Get("Location"), "an operator cannot read the list")
	f.waitStatus(t, a, notify.StatusSent)
	resp, body = operator.Post(t, "/dead-letters/"+jobA+"/replay", nil)
	require.Equal(t, http.StatusConflict, resp.StatusCode, "no longer a dead letter")
	require.Contains(t, body, "Only a job in the dead-letter queue can be replayed")

	resp, _ = c.Post(t, "/dead-letters/replay", url.Values{"channel": {"email"}})
	require.Equal(t, http.StatusSeeOther, resp.StatusCode)
	_, body = c.Get(t, "/dead-letters")
	require.Contains(t, body, "Replayed 0 dead letters.", "the filter selects no sms item")
	require.Contains(t, body, `data-job-id="`+jobB+`"`)
	resp, _ = c.Post(t, "/dead-letters/replay", url.Values{"channel": {"sms"}})
	require.Equal(t, http.StatusSeeOther, resp.StatusCode)
	_, body = c.Get(t, "/dead-letters")
	require.Contains(t, body, "Replayed 1 dead letters.")
	require.Contains(t, body, `id="no-dead-letters"`)
	f.waitStatus(t, b, notify.StatusSent)
}
