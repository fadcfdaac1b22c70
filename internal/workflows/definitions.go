package workflows

import (
	"context"
	"strings"

	"github.com/notifyd/notifyd/internal/notify"
	"github.com/notifyd/notifyd/internal/usecase"
)

// Input is the body of a create: a key, a name and the first version's
// steps, published at once when Publish.
type Input struct {
	Key     *string
	Name    *string
	Steps   *[]notify.WorkflowStep
	Publish bool
}

// Definition is a workflow with its versions, newest first.
type Definition struct {
	Workflow *notify.Workflow
	Versions []*notify.WorkflowVersion
}

// Create makes a workflow and its version 1 (audit workflow.create).
func (s *Service) Create(ctx context.Context, a *usecase.Actor, in Input) (*Definition, error) {
	if err := usecase.RequireWorkspace(a); err != nil {
		return nil, err
	}
	if in.Key == nil {
		return nil, notify.Invalid("key is required")
	}
	if err := CheckKey("key", *in.Key); err != nil {
		return nil, err
	}
	if in.Name == nil || strings.TrimSpace(*in.Name) == "" {
		return nil, notify.Invalid("name is required")
	}
	name := strings.TrimSpace(*in.Name)
	if err := usecase.MaxLen("name", name, MaxName); err != nil {
		return nil, err
	}
	if err := usecase.OneLine("name", name); err != nil {
		return nil, err
	}
	if in.Steps == nil {
		return nil, notify.Invalid("steps is required")
	}
	if err := Check(*in.Steps); err != nil {
		return nil, err
	}
	now := s.Now()
	w := &notify.Workflow{ID: usecase.NewID(), WorkspaceID: a.WorkspaceID, Key: *in.Key, Name: name, CreatedAt: now, UpdatedAt: now}
	v := &notify.WorkflowVersion{WorkflowID: w.ID, WorkspaceID: a.WorkspaceID, Version: 1, Steps: *in.Steps, CreatedAt: now}
	if in.Publish {
		v.PublishedAt, w.PublishedVersion = &now, 1
	}
	err := s.Store.Update(ctx, func(tx notify.Tx) error {
		if err := checkReferences(ctx, tx, a.WorkspaceID, v.Steps); err != nil {
			return err
		}
		if err := tx.CreateWorkflow(ctx, w); err != nil {
			return usecase.ConflictOr(err, "A workflow with key %s already exists", w.Key)
		}
		if err := tx.CreateWorkflowVersion(ctx, v); err != nil {
			return err
		}
		return s.Audit(ctx, tx, a, a.WorkspaceID, "workflow.create", "workflow", w.ID,
			map[string]any{"key": w.Key, "name": w.Name, "published": in.Publish})
	})
	if err != nil {
		return nil, err
	}
	return &Definition{Workflow: w, Versions: []*notify.WorkflowVersion{v}}, nil
}

// List lists the workspace's workflows by key.
func (s *Service) List(ctx context.Context, ws string) ([]*notify.Workflow, error) {
	var out []*notify.Workflow
	err := s.Store.View(ctx, func(tx notify.Tx) (err error) {
		out, err = tx.FindWorkflows(ctx, ws)
		return err
	})
	return out, err
}

// findWorkflow loads a workflow of the workspace by key; a malformed key
// is as unknown as a missing one.
func findWorkflow(ctx context.Context, tx notify.Tx, ws, key string) (*notify.Workflow, error) {
	if CheckKey("key", key) != nil {
		return nil, notify.NotFound("Workflow")
	}
	w, err := tx.FindWorkflowByKey(ctx, ws, key)
	return w, usecase.NotFound(err, "Workflow")
}

// Get reads a workflow and its versions.
func (s *Service) Get(ctx context.Context, ws, key string) (*Definition, error) {
	var d Definition
	err := s.Store.View(ctx, func(tx notify.Tx) (err error) {
		if d.Workflow, err = findWorkflow(ctx, tx, ws, key); err != nil {
			return err
		}
		d.Versions, err = tx.FindWorkflowVersions(ctx, ws, d.Workflow.ID)
		return err
	})
	return &d, err
}

// CreateVersion adds a draft version of the steps (audit
// workflow.version_create); runs keep using the published one.
func (s *Service) CreateVersion(ctx context.Context, a *usecase.Actor, key string, steps *[]notify.WorkflowStep) (*notify.WorkflowVersion, error) {
	if err := usecase.RequireWorkspace(a); err != nil {
		return nil, err
	}
	if steps == nil {
		return nil, notify.Invalid("steps is required")
	}
	if err := Check(*steps); err != nil {
		return nil, err
	}
	var v *notify.WorkflowVersion
	err := s.Store.Update(ctx, func(tx notify.Tx) error {
		w, err := findWorkflow(ctx, tx, a.WorkspaceID, key)
		if err != nil {
			return err
		}
		if err := checkReferences(ctx, tx, a.WorkspaceID, *steps); err != nil {
			return err
		}
		vs, err := tx.FindWorkflowVersions(ctx, a.WorkspaceID, w.ID)
		if err != nil {
			return err
		}
		v = &notify.WorkflowVersion{WorkflowID: w.ID, WorkspaceID: w.WorkspaceID, Version: vs[0].Version + 1, Steps: *steps, CreatedAt: s.Now()}
		if err := tx.CreateWorkflowVersion(ctx, v); err != nil {
			return usecase.ConflictOr(err, "Another version of workflow %s was created at the same time; try again", w.Key)
		}
		return s.Audit(ctx, tx, a, a.WorkspaceID, "workflow.version_create", "workflow", w.ID, map[string]any{"key": w.Key, "version": v.Version})
	})
	return v, err
}

// Publish makes a version the one triggers start (audit
// workflow.publish). Its templates are checked again: one deleted since
// the draft was written would make its send steps fail.
func (s *Service) Publish(ctx context.Context, a *usecase.Actor, key string, version int) (*notify.Workflow, error) {
	if err := usecase.RequireWorkspace(a); err != nil {
		return nil, err
	}
	var w *notify.Workflow
	err := s.Store.Update(ctx, func(tx notify.Tx) error {
		var err error
		if w, err = findWorkflow(ctx, tx, a.WorkspaceID, key); err != nil {
			return err
		}
		v, err := tx.FindWorkflowVersion(ctx, a.WorkspaceID, w.ID, version)
		if err != nil {
			return usecase.NotFound(err, "Workflow version")
		}
		if err := checkReferences(ctx, tx, a.WorkspaceID, v.Steps); err != nil {
			return err
		}
		now := s.Now()
		if err := tx.PublishWorkflowVersion(ctx, a.WorkspaceID, w.ID, version, now); err != nil {
			return err
		}
		w.PublishedVersion, w.UpdatedAt = version, now
		return s.Audit(ctx, tx, a, a.WorkspaceID, "workflow.publish", "workflow", w.ID, map[string]any{"key": w.Key, "version": version})
	})
	return w, err
}
