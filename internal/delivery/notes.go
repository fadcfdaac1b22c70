package delivery

import (
	"context"
	"encoding/json"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/notifyd/notifyd/internal/groupcommit"
	"github.com/notifyd/notifyd/internal/notify"
)

// Outcome notes (notify.OutcomeNotes). The full record of an outcome
// (recorder.go) shares the database's writer with acceptance and waits
// its turn; on SQLite that took 50–85 ms under load, and a crash then
// resent every outcome still waiting: a fifth of the messages in one
// run. So each outcome is also noted, in a group commit of its own that
// never waits for that writer (on SQLite a file of its own), within a
// few milliseconds of its call's answer. A run taken over after its
// process died records the noted outcome instead of sending again (claim
// in run.go), so a crash resends only the calls in flight and the notes
// not yet written. Once the full record is committed the note is
// forgotten.

// maxNoteBatch bounds one transaction of notes, maxForgetBatch one of
// forgets: forgets are not urgent, and a short transaction of them keeps
// the next notes from waiting behind it (on SQLite they share the notes
// file's writer). noteKeep is how long a note left behind (its process
// died before forgetting it) is kept; a stale note never applies
// (notify.OutcomeNote), so this only bounds the file.
const (
	maxNoteBatch   = 1024
	maxForgetBatch = 200
	noteKeep       = 24 * time.Hour
	notePruneEach  = 10 * time.Minute
)

// notes writes outcome notes as their calls answer, and forgets those of
// recorded runs, in two group commits.
type notes struct {
	add       *groupcommit.Queue[*pendingNote]
	forget    *groupcommit.Queue[string]
	lastPrune atomic.Int64
}

func (e *Engine) newNotes() *notes {
	writers := 1
	if e.store != nil {
		writers = max(e.store.NoteWriters(), 1)
	}
	return &notes{
		add: groupcommit.New(writers, maxNoteBatch, e.writePending),
		forget: groupcommit.New(1, maxForgetBatch, func(batch []string) {
			e.writeNotes(nil, batch)
			e.pruneNotes()
		}),
	}
}

// pendingNote is a note waiting for its write; done is closed once the
// write ended (committed or failed).
type pendingNote struct {
	note *notify.OutcomeNote
	done chan struct{}
}

// writePending writes one batch of notes and tells their runs.
func (e *Engine) writePending(batch []*pendingNote) {
	add := make([]*notify.OutcomeNote, len(batch))
	for i, p := range batch {
		add[i] = p.note
	}
	e.writeNotes(add, nil)
	for _, p := range batch {
		close(p.done)
	}
}

// writeNotes writes one batch of notes or forgets; a failed write is
// logged (the outcome is still recorded in full; only a crash before that
// would send its message again).
func (e *Engine) writeNotes(add []*notify.OutcomeNote, forget []string) {
	ctx, cancel := context.WithTimeout(context.Background(), recordGrace)
	defer cancel()
	if err := e.store.NoteOutcomes(ctx, add, forget); err != nil {
		e.log.WarnContext(ctx, "writing outcome notes failed", "err", err, "notes", len(add), "forgets", len(forget))
	}
}

// pruneNotes deletes notes left behind by dead processes, at most every
// notePruneEach.
func (e *Engine) pruneNotes() {
	now := time.Now()
	last := e.notes.lastPrune.Load()
	if now.Sub(time.Unix(0, last)) < notePruneEach || !e.notes.lastPrune.CompareAndSwap(last, now.UnixNano()) {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), recordGrace)
	defer cancel()
	if _, err := e.store.PruneOutcomeNotes(ctx, now.Add(-noteKeep)); err != nil {
		e.log.WarnContext(ctx, "pruning outcome notes failed", "err", err)
	}
}

// noteBody is a run's outcome and attempts as a note holds them. The
// attempts' provider call and answer are JSON already and go in as they
// are (escaping them as strings cost a tenth of an acceptance's CPU);
// what the run itself knows (workspace, request, job, channel) is left
// out.
type noteBody struct {
	Success   bool               `json:"success"`
	AccountID string             `json:"accountId,omitempty"`
	MessageID string             `json:"messageId,omitempty"`
	Code      notify.FailureCode `json:"code,omitempty"`
	Msg       string             `json:"msg,omitempty"`
	Final     bool               `json:"final,omitempty"`
	Attempts  []noteAttempt      `json:"attempts"`
}

type noteAttempt struct {
	ID                  string          `json:"id"`
	ProviderAccountID   string          `json:"account"`
	ProviderKind        string          `json:"kind"`
	ProviderDisplayName string          `json:"name"`
	Success             bool            `json:"ok,omitempty"`
	FailureCode         string          `json:"code,omitempty"`
	FailureMessage      string          `json:"msg,omitempty"`
	ProviderMessageID   string          `json:"messageId,omitempty"`
	StartedAt           time.Time       `json:"start"`
	FinishedAt          time.Time       `json:"end"`
	Request             json.RawMessage `json:"request,omitempty"`
	Response            json.RawMessage `json:"response,omitempty"`
}

// note queues the note of a run whose send made a vendor call (a run
// stopped before any call has nothing to note: it sends when taken over),
// and answers a channel closed once the note's write ended; nil when
// there is nothing to note.
func (e *Engine) note(rn *run) <-chan struct{} {
	body, ok := noteOf(rn)
	if !ok {
		return nil
	}
	done := make(chan struct{})
	e.notes.add.Add(&pendingNote{note: &notify.OutcomeNote{JobID: rn.job.ID, RunStartedAt: *rn.job.StartedAt,
		AttemptsMade: rn.job.AttemptsMade, Body: body, CreatedAt: e.now()}, done: done})
	return done
}

// noteOf encodes a run's note body; false when there is nothing to note.
// The provider calls and answers are spliced in as they are (checked
// once to be JSON, not compacted again by json.Marshal): a mail's call
// carries its whole HTML body, so each pass over it is a pass over a few
// kilobytes per send (docs/DECISIONS.md "A tracked mail's cost on
// PostgreSQL").
func noteOf(rn *run) ([]byte, bool) {
	if len(rn.attempts) == 0 || rn.job.StartedAt == nil {
		return nil, false
	}
	o := rn.out
	head, err := json.Marshal(noteBody{Success: o.success, AccountID: o.accountID, MessageID: o.messageID, Code: o.code, Msg: o.msg,
		Final: o.final})
	if err != nil {
		return nil, false
	}
	size := len(head) + 16
	for _, a := range rn.attempts {
		size += len(a.RequestJSON) + len(a.ResponseJSON) + 512
	}
	// head ends with `"attempts":null}`: the attempts go in its place.
	out := make([]byte, 0, size)
	out = append(out, head[:len(head)-len(`null}`)]...)
	out = append(out, '[')
	for i, a := range rn.attempts {
		at, err := json.Marshal(noteAttempt{ID: a.ID, ProviderAccountID: a.ProviderAccountID, ProviderKind: a.ProviderKind,
			ProviderDisplayName: a.ProviderDisplayName, Success: a.Success, FailureCode: a.FailureCode, FailureMessage: a.FailureMessage,
			ProviderMessageID: a.ProviderMessageID, StartedAt: a.StartedAt, FinishedAt: a.FinishedAt})
		if err != nil {
			return nil, false
		}
		if i > 0 {
			out = append(out, ',')
		}
		out = append(out, at[:len(at)-1]...)
		out = appendRaw(out, `,"request":`, a.RequestJSON)
		out = appendRaw(out, `,"response":`, a.ResponseJSON)
		out = append(out, '}')
	}
	return append(out, "]}"...), true
}

// appendRaw appends key and s as raw JSON when it is some (a provider
// call or answer always is), else as a JSON string; nothing when s is
// empty.
func appendRaw(out []byte, key, s string) []byte {
	if s == "" {
		return out
	}
	out = append(out, key...)
	if json.Valid(unsafe.Slice(unsafe.StringData(s), len(s))) { // read only
		return append(out, s...)
	}
	q, _ := json.Marshal(s)
	return append(out, q...)
}

// attempts rebuilds a noted run's attempt records.
func (b noteBody) attempts(rn *run) []*notify.Attempt {
	out := make([]*notify.Attempt, len(b.Attempts))
	for i, a := range b.Attempts {
		out[i] = &notify.Attempt{ID: a.ID, WorkspaceID: rn.req.WorkspaceID, RequestID: rn.req.ID, JobID: rn.job.ID,
			ProviderAccountID: a.ProviderAccountID, ProviderKind: a.ProviderKind, ProviderDisplayName: a.ProviderDisplayName,
			Channel: rn.msg.Channel, Success: a.Success, FailureCode: a.FailureCode, FailureMessage: a.FailureMessage,
			ProviderMessageID: a.ProviderMessageID, StartedAt: a.StartedAt, FinishedAt: a.FinishedAt,
			RequestJSON: string(a.Request), ResponseJSON: string(a.Response)}
	}
	return out
}

// forget queues the removal of the notes of recorded runs.
func (e *Engine) forget(runs []*run) {
	for _, rn := range runs {
		if rn.noted {
			e.notes.forget.Add(rn.job.ID)
		}
	}
}

// takeNoted gives the runs taken over from a dead process (their job rows
// as they were before the claim, in was) the outcome their earlier run
// noted, when it noted one: such a run is decided, and recorded without
// sending again.
func (e *Engine) takeNoted(ctx context.Context, runs []*run, was map[string]*notify.Job) error {
	if len(was) == 0 {
		return nil
	}
	ids := make([]string, 0, len(was))
	for id := range was {
		ids = append(ids, id)
	}
	found, err := e.store.FindOutcomeNotes(ctx, ids)
	if err != nil {
		return err
	}
	for _, rn := range runs {
		rn.takenOver = was[rn.job.ID] != nil
		n, j := found[rn.job.ID], was[rn.job.ID]
		if n == nil || j == nil || j.StartedAt == nil || !n.RunStartedAt.Equal(j.StartedAt.Truncate(time.Millisecond)) ||
			n.AttemptsMade != j.AttemptsMade {
			continue // a note of another run of this job row
		}
		var b noteBody
		if json.Unmarshal(n.Body, &b) != nil {
			continue
		}
		rn.decided, rn.noted, rn.attempts = true, true, b.attempts(rn)
		rn.out = outcome{success: b.Success, accountID: b.AccountID, messageID: b.MessageID, code: b.Code, msg: b.Msg, final: b.Final}
		rn.job.AttemptsMade = n.AttemptsMade
	}
	return nil
}

// countTakeovers counts the runs a committed claim took over: noted ones
// are recorded, the others sent again.
func (e *Engine) countTakeovers(runs []*run) {
	noted, resent := 0, 0
	for _, rn := range runs {
		switch {
		case rn.takenOver && rn.noted:
			noted++
		case rn.takenOver:
			resent++
		}
	}
	e.takeovers.Add(noted, resent)
}
