package workflows

import (
	"context"

	"github.com/notifyd/notifyd/internal/notify"
	"github.com/notifyd/notifyd/internal/usecase"
)

// Page bounds of run lists.
const (
	DefaultRunPage = 50
	MaxRunPage     = 200
)

// GetRun reads a run of the workspace with its steps; another
// workspace's, or a malformed id, is 404.
func (s *Service) GetRun(ctx context.Context, ws, id string) (*notify.WorkflowRun, error) {
	if !usecase.IsUUID(id) {
		return nil, notify.NotFound("Workflow run")
	}
	var r *notify.WorkflowRun
	err := s.Store.View(ctx, func(tx notify.Tx) (err error) {
		r, err = tx.FindWorkflowRun(ctx, ws, id)
		return usecase.NotFound(err, "Workflow run")
	})
	return r, err
}

// RunQuery selects a page of runs: of a workflow (by key), of a
// recipient (by external id), or both.
type RunQuery struct {
	WorkflowKey string
	RecipientID string
	Limit       int
	Cursor      string
}

// RunPage is a page of runs, newest first.
type RunPage struct {
	Runs    []*notify.WorkflowRun
	Cursor  *notify.Cursor
	HasNext bool
}

// ListRuns pages the workspace's runs, newest first.
func (s *Service) ListRuns(ctx context.Context, ws string, q RunQuery) (*RunPage, error) {
	limit := q.Limit
	switch {
	case limit == 0:
		limit = DefaultRunPage
	case limit < 1 || limit > MaxRunPage:
		return nil, notify.Invalid("limit must be from 1 to %d", MaxRunPage)
	}
	before, err := notify.DecodeCursor(q.Cursor)
	if err != nil {
		return nil, err
	}
	var rows []*notify.WorkflowRun
	err = s.Store.View(ctx, func(tx notify.Tx) error {
		f := notify.WorkflowRunFilter{RecipientID: q.RecipientID, Limit: limit + 1, Before: before}
		if q.WorkflowKey != "" {
			w, err := findWorkflow(ctx, tx, ws, q.WorkflowKey)
			if err != nil {
				return err
			}
			f.WorkflowID = w.ID
		}
		var err error
		rows, err = tx.FindWorkflowRuns(ctx, ws, f)
		return err
	})
	if err != nil {
		return nil, err
	}
	p := &RunPage{}
	p.Runs, p.Cursor, p.HasNext = usecase.Trim(rows, limit, func(r *notify.WorkflowRun) notify.Cursor {
		return notify.Cursor{At: r.CreatedAt, ID: r.ID}
	})
	return p, nil
}
