package web

import (
	"net/http"

	"github.com/notifyd/notifyd/internal/notify"
	"github.com/notifyd/notifyd/internal/workflows"
)

// workflowPages serve the workflows section (issue 34): the workspace's
// workflows with their versions and latest runs, and a run's timeline.
// Read-only: definitions change through the Dashboard API.
type workflowPages struct{ *Console }

func (c workflowPages) routes() []Route {
	return []Route{
		{Method: "GET", Path: "/workflows", Auth: Member, Roles: notify.RolesAll, h: c.listPage},
		{Method: "GET", Path: "/workflows/{key}", Auth: Member, Roles: notify.RolesAll, h: c.workflowPage},
		{Method: "GET", Path: "/workflow-runs/{id}", Auth: Member, Roles: notify.RolesAll, h: c.runPage},
	}
}

func (c workflowPages) listPage(x *Ctx) error {
	ws, err := c.rooms.Workflows.List(x.Context(), x.Actor.WorkspaceID)
	if err != nil {
		return err
	}
	return x.Render(http.StatusOK, "workflows.html", &Page{Title: "Workflows", Section: "/workflows", Data: map[string]any{"Workflows": ws}})
}

func (c workflowPages) workflowPage(x *Ctx) error {
	d, err := c.rooms.Workflows.Get(x.Context(), x.Actor.WorkspaceID, x.R.PathValue("key"))
	if err != nil {
		return err
	}
	runs, err := c.rooms.Workflows.ListRuns(x.Context(), x.Actor.WorkspaceID, workflows.RunQuery{WorkflowKey: d.Workflow.Key,
		Cursor: x.R.URL.Query().Get("cursor")})
	if err != nil {
		return err
	}
	return x.Render(http.StatusOK, "workflow.html", &Page{Title: "Workflow " + d.Workflow.Key, Section: "/workflows",
		Data: map[string]any{"Definition": d, "Runs": runs.Runs, "Next": notify.EncodeCursor(runs.Cursor)}})
}

func (c workflowPages) runPage(x *Ctx) error {
	r, err := c.rooms.Workflows.GetRun(x.Context(), x.Actor.WorkspaceID, x.R.PathValue("id"))
	if err != nil {
		return err
	}
	return x.Render(http.StatusOK, "workflow_run.html", &Page{Title: "Workflow run", Section: "/workflows", Data: map[string]any{"Run": r}})
}
