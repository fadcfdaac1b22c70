package sends

import (
	"context"
	"time"

	"github.com/notifyd/notifyd/internal/notify"
	"github.com/notifyd/notifyd/internal/usecase"
)

// ReplayInput is the filter of a dead-letter set replay as the API
// received it; every field left nil selects everything.
type ReplayInput struct {
	Channel     *string
	FailureCode *string
	From, To    *string
}

// ReplayDeadLetter puts the request of one dead letter (named by its
// jobId) back to queued with a fresh attempt budget. An item another
// replay took first, or a job that is not a dead letter, is 409; a job
// of no item of the workspace is 404.
func (s *Service) ReplayDeadLetter(ctx context.Context, a *usecase.Actor, jobID string) (*notify.DeadLetter, error) {
	var out *notify.DeadLetter
	err := s.Store.Update(ctx, func(tx notify.Tx) error {
		ds, err := s.replay(ctx, tx, a, notify.DeadLetterFilter{JobID: jobID}, nil)
		if err != nil {
			return err
		}
		if len(ds) > 0 {
			out = ds[0]
			return nil
		}
		j, err := tx.FindJob(ctx, a.WorkspaceID, jobID)
		if err != nil {
			return usecase.NotFound(err, "Job")
		}
		return notify.Conflict("Only a job in the dead-letter queue can be replayed; this job is %s", j.Status)
	})
	return out, err
}

// ReplayDeadLetters puts the requests of every dead letter in selects back
// to queued, and answers how many; items a concurrent replay took are not
// counted.
func (s *Service) ReplayDeadLetters(ctx context.Context, a *usecase.Actor, in ReplayInput) (int, error) {
	f, filter, err := replayFilter(in)
	if err != nil {
		return 0, err
	}
	var n int
	err = s.Store.Update(ctx, func(tx notify.Tx) error {
		ds, err := s.replay(ctx, tx, a, f, filter)
		n = len(ds)
		return err
	})
	return n, err
}

// replay runs the store's conditional replay and writes one audit entry
// per item replayed (filter, the set call's criteria, rides along).
func (s *Service) replay(ctx context.Context, tx notify.Tx, a *usecase.Actor, f notify.DeadLetterFilter, filter map[string]any) ([]*notify.DeadLetter, error) {
	now := s.Now()
	ds, err := tx.ReplayDeadLetters(ctx, a.WorkspaceID, f, s.jobAttempts, now)
	if err != nil || len(ds) == 0 {
		return ds, err
	}
	var actor *string
	if id := a.UserID; id != "" {
		actor = &id
	}
	es := make([]*notify.AuditEntry, len(ds))
	for i, d := range ds {
		p := map[string]any{"requestId": d.RequestID, "channel": d.Channel, "failedReason": d.FailedReason,
			"attemptsMade": d.AttemptsMade}
		if filter != nil {
			p["filter"] = filter
		}
		es[i] = &notify.AuditEntry{ID: usecase.NewID(), WorkspaceID: a.WorkspaceID, ActorUserID: actor, Action: "dead_letter.replay",
			TargetType: "dead_letter", TargetID: d.JobID, Payload: p, CreatedAt: now}
	}
	return ds, tx.CreateAudits(ctx, es)
}

// replayFilter validates a set replay's filter: a channel value, a
// failure code of SPEC's list, ISO 8601 bounds with from not after to.
// It also answers the criteria given, for the audit log.
func replayFilter(in ReplayInput) (notify.DeadLetterFilter, map[string]any, error) {
	var f notify.DeadLetterFilter
	given := map[string]any{}
	if in.Channel != nil {
		f.Channel = notify.Channel(*in.Channel)
		if !f.Channel.Valid() {
			return f, nil, notify.Invalid("channel must be one of the channel values")
		}
		given["channel"] = *in.Channel
	}
	if in.FailureCode != nil {
		f.FailureCode = notify.FailureCode(*in.FailureCode)
		if !f.FailureCode.Valid() {
			return f, nil, notify.Invalid("failureCode must be one of the failure codes")
		}
		given["failureCode"] = *in.FailureCode
	}
	for _, b := range []struct {
		name string
		in   *string
		out  **time.Time
	}{{"from", in.From, &f.From}, {"to", in.To, &f.To}} {
		if b.in == nil {
			continue
		}
		t, err := time.Parse(time.RFC3339Nano, *b.in)
		if err != nil {
			return f, nil, notify.Invalid("%s must be an ISO 8601 date-time", b.name)
		}
		*b.out = &t
		given[b.name] = *b.in
	}
	if f.From != nil && f.To != nil && f.From.After(*f.To) {
		return f, nil, notify.Invalid("from must not be after to")
	}
	return f, given, nil
}
