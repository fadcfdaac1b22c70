package delivery

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/notifyd/notifyd/internal/notify"
)

// TestNoteRoundTrip: a noted outcome rebuilds the run's outcome and
// attempt records exactly, provider calls and answers included.
func TestNoteRoundTrip(t *testing.T) {
	start := time.Date(2026, 11, 28, 1, 2, 3, 4_000_000, time.UTC)
	req := &notify.Request{ID: "r1", WorkspaceID: "w1", Channel: notify.ChannelSMS}
	job := &notify.Job{ID: "j1", AttemptsMade: 2, StartedAt: &start}
	rn := &run{req: req, msg: req, job: job, out: outcome{code: notify.FailureTemporaryUnavailable, msg: "busy"}}
	rn.attempts = []*notify.Attempt{
		{ID: "a1", WorkspaceID: "w1", RequestID: "r1", JobID: "j1", ProviderAccountID: "p1", ProviderKind: "vendorb_sms",
			ProviderDisplayName: "B", Channel: notify.ChannelSMS, FailureCode: "temporary_unavailable", FailureMessage: "busy",
			StartedAt: start, FinishedAt: start.Add(time.Millisecond),
			RequestJSON: `{"body":{"to":"010"},"method":"POST","url":"https://x"}`, ResponseJSON: `{"status":503,"body":"\"busy\""}`},
		{ID: "a2", WorkspaceID: "w1", RequestID: "r1", JobID: "j1", ProviderAccountID: "p2", ProviderKind: "vendora_sms",
			ProviderDisplayName: "A", Channel: notify.ChannelSMS, Success: true, ProviderMessageID: "m1",
			StartedAt: start, FinishedAt: start.Add(2 * time.Millisecond), RequestJSON: "not json", ResponseJSON: "null"},
	}
	body, ok := noteOf(rn)
	require.True(t, ok)
	var b noteBody
	require.NoError(t, json.Unmarshal(body, &b))
	got := b.attempts(rn)
	want := rn.attempts
	want[1].RequestJSON = `"not json"` // kept, as a JSON string
	require.Equal(t, want, got)
	require.Equal(t, notify.FailureTemporaryUnavailable, b.Code)
	require.Equal(t, "busy", b.Msg)

	none := &run{req: req, msg: req, job: job}
	_, ok = noteOf(none)
	require.False(t, ok, "a run that made no call has nothing to note")
}

// BenchmarkNoteOfMail: the note of a tracked campaign mail's send, whose
// provider call carries its whole HTML body (about 3.4 kB).
func BenchmarkNoteOfMail(b *testing.B) {
	start := time.Date(2026, 11, 28, 1, 2, 3, 4_000_000, time.UTC)
	req := &notify.Request{ID: "r1", WorkspaceID: "w1", Channel: notify.ChannelEmail}
	job := &notify.Job{ID: "j1", AttemptsMade: 1, StartedAt: &start}
	html := "<html><body><p>" + strings.Repeat("News and offers. ", 40) + "</p>" +
		strings.Repeat(`<a href="http://127.0.0.1:36137/t/c/`+strings.Repeat("AWP_AaIovEqkfNu7-OiJ", 9)+`">link</a>`, 3) + "</body></html>"
	call, _ := json.Marshal(map[string]any{"batchIndex": 12, "batchSize": 100, "method": "POST", "url": "http://127.0.0.1:45757/emails/batch",
		"body": map[string]any{"from": "from@example.com", "to": []string{"user018990@example.com"}, "subject": "Weekly news",
			"text": strings.Repeat("news and offers ", 40), "html": html}})
	rn := &run{req: req, msg: req, job: job, out: outcome{success: true, accountID: "p1", messageID: "m1"}}
	rn.attempts = []*notify.Attempt{{ID: "a1", ProviderAccountID: "p1", ProviderKind: "mailx_email", ProviderDisplayName: "Mail",
		Success: true, ProviderMessageID: "m1", StartedAt: start, FinishedAt: start, RequestJSON: string(call),
		ResponseJSON: `{"status":200,"body":{"id":"m1"}}`}}
	b.ReportAllocs()
	for b.Loop() {
		if _, ok := noteOf(rn); !ok {
			b.Fatal("no note")
		}
	}
}
