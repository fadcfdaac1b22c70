package api

import (
	"net/http"
	"strconv"

	"github.com/notifyd/notifyd/internal/notify"
	"github.com/notifyd/notifyd/internal/workflows"
)

// workflowsAPI serves the workflows room (issue 34): definitions on the
// Dashboard API (reads for every role, writes for operator and up, as
// templates), triggers and cancellations on the Notification API
// (notifications:send), runs on both (notifications:read).
type workflowsAPI struct {
	*API
	room *workflows.Service
}

func (a workflowsAPI) routes() []Route {
	all, op := notify.RolesAll, notify.RolesOperator
	send, read := notify.ScopeNotificationsSend, notify.ScopeNotificationsRead
	return []Route{
		{Method: "POST", Path: "/v1/workflows", auth: authDashboard, Roles: op, h: a.handleCreate},
		{Method: "GET", Path: "/v1/workflows", auth: authDashboard, Roles: all, h: a.handleList},
		{Method: "GET", Path: "/v1/workflows/{key}", auth: authDashboard, Roles: all, h: a.handleGet},
		{Method: "POST", Path: "/v1/workflows/{key}/versions", auth: authDashboard, Roles: op, h: a.handleVersionCreate},
		{Method: "POST", Path: "/v1/workflows/{key}/versions/{version}/publish", auth: authDashboard, Roles: op, h: a.handlePublish},
		{Method: "POST", Path: "/v1/workflows/{key}/trigger", auth: authSigned, Scope: send, ownNonce: true, rateLimited: true, h: a.handleTrigger},
		{Method: "POST", Path: "/v1/workflows/{key}/cancel", auth: authSigned, Scope: send, rateLimited: true, h: a.handleCancel},
		{Method: "GET", Path: "/v1/workflow-runs", auth: authEither, Roles: all, Scope: read, h: a.handleRunList},
		{Method: "GET", Path: "/v1/workflow-runs/{id}", auth: authEither, Roles: all, Scope: read, h: a.handleRunGet},
		{Method: "GET", Path: "/v1/topics/{topic}/subscribers", auth: authEither, Roles: all, Scope: notify.ScopeRecipientsRead, h: a.handleSubscribers},
		{Method: "PUT", Path: "/v1/topics/{topic}/subscribers/{externalId}", auth: authEither, Roles: op, Scope: notify.ScopeRecipientsWrite, h: a.handleSubscribe},
		{Method: "DELETE", Path: "/v1/topics/{topic}/subscribers/{externalId}", auth: authEither, Roles: op, Scope: notify.ScopeRecipientsWrite, h: a.handleUnsubscribe},
	}
}

// workspace is the caller's workspace on a route of either API.
func (c *call) workspace() string { return c.caller().Workspace() }

type workflowJSON struct {
	ID               string `json:"id"`
	Key              string `json:"key"`
	Name             string `json:"name"`
	PublishedVersion *int   `json:"publishedVersion"`
	CreatedAt        string `json:"createdAt"`
	UpdatedAt        string `json:"updatedAt"`
}

type workflowVersionJSON struct {
	Version     int                   `json:"version"`
	Steps       []notify.WorkflowStep `json:"steps"`
	CreatedAt   string                `json:"createdAt"`
	PublishedAt *string               `json:"publishedAt"`
}

func workflowBody(w *notify.Workflow) workflowJSON {
	out := workflowJSON{ID: w.ID, Key: w.Key, Name: w.Name, CreatedAt: Timestamp(w.CreatedAt), UpdatedAt: Timestamp(w.UpdatedAt)}
	if w.PublishedVersion > 0 {
		v := w.PublishedVersion
		out.PublishedVersion = &v
	}
	return out
}

func workflowVersionBody(v *notify.WorkflowVersion) workflowVersionJSON {
	return workflowVersionJSON{Version: v.Version, Steps: v.Steps, CreatedAt: Timestamp(v.CreatedAt), PublishedAt: TimestampPtr(v.PublishedAt)}
}

func definitionBody(d *workflows.Definition) map[string]any {
	vs := make([]workflowVersionJSON, len(d.Versions))
	for i, v := range d.Versions {
		vs[i] = workflowVersionBody(v)
	}
	return map[string]any{"workflow": workflowBody(d.Workflow), "versions": vs}
}

func (a workflowsAPI) handleCreate(c *call) error {
	var in struct {
		Key     *string                `json:"key"`
		Name    *string                `json:"name"`
		Steps   *[]notify.WorkflowStep `json:"steps"`
		Publish bool                   `json:"publish"`
	}
	if err := c.decode(&in); err != nil {
		return err
	}
	d, err := a.room.Create(c.ctx, c.actor, workflows.Input{Key: in.Key, Name: in.Name, Steps: in.Steps, Publish: in.Publish})
	if err != nil {
		return err
	}
	return c.ok(http.StatusCreated, definitionBody(d))
}

func (a workflowsAPI) handleList(c *call) error {
	ws, err := a.room.List(c.ctx, c.actor.WorkspaceID)
	if err != nil {
		return err
	}
	out := make([]workflowJSON, len(ws))
	for i, w := range ws {
		out[i] = workflowBody(w)
	}
	return c.ok(http.StatusOK, map[string]any{"workflows": out})
}

func (a workflowsAPI) handleGet(c *call) error {
	d, err := a.room.Get(c.ctx, c.actor.WorkspaceID, c.r.PathValue("key"))
	if err != nil {
		return err
	}
	return c.ok(http.StatusOK, definitionBody(d))
}

func (a workflowsAPI) handleVersionCreate(c *call) error {
	var in struct {
		Steps *[]notify.WorkflowStep `json:"steps"`
	}
	if err := c.decode(&in); err != nil {
		return err
	}
	v, err := a.room.CreateVersion(c.ctx, c.actor, c.r.PathValue("key"), in.Steps)
	if err != nil {
		return err
	}
	return c.ok(http.StatusCreated, map[string]any{"version": workflowVersionBody(v)})
}

func (a workflowsAPI) handlePublish(c *call) error {
	v, err := strconv.Atoi(c.r.PathValue("version"))
	if err != nil || v < 1 {
		return notify.NotFound("Workflow version")
	}
	w, err := a.room.Publish(c.ctx, c.actor, c.r.PathValue("key"), v)
	if err != nil {
		return err
	}
	return c.ok(http.StatusOK, map[string]any{"workflow": workflowBody(w)})
}

func (a workflowsAPI) handleTrigger(c *call) error {
	var in struct {
		Recipients      *[]string      `json:"recipients"`
		Topic           string         `json:"topic"`
		Payload         map[string]any `json:"payload"`
		IdempotencyKey  string         `json:"idempotencyKey"`
		CancellationKey string         `json:"cancellationKey"`
	}
	if err := c.decode(&in); err != nil {
		return err
	}
	if in.Recipients == nil && in.Topic == "" {
		return notify.Invalid("recipients or topic is required")
	}
	var recipients []string
	if in.Recipients != nil {
		recipients = *in.Recipients
	}
	started, err := a.room.Trigger(c.ctx, c.key.WorkspaceID, c.r.PathValue("key"), &workflows.Door{Key: c.key, Nonce: c.nonce}, workflows.TriggerInput{Recipients: recipients,
		Topic: in.Topic, Payload: in.Payload, IdempotencyKey: in.IdempotencyKey, CancellationKey: in.CancellationKey})
	if err != nil {
		return err
	}
	type runJSON struct {
		RunID        string `json:"runId"`
		RecipientID  string `json:"recipientId"`
		Deduplicated bool   `json:"deduplicated"`
	}
	out := make([]runJSON, len(started))
	for i, s := range started {
		out[i] = runJSON{RunID: s.RunID, RecipientID: s.RecipientID, Deduplicated: !s.Created}
	}
	return c.ok(http.StatusAccepted, map[string]any{"runs": out})
}

func (a workflowsAPI) handleCancel(c *call) error {
	var in struct {
		CancellationKey string `json:"cancellationKey"`
	}
	if err := c.decode(&in); err != nil {
		return err
	}
	n, err := a.room.Cancel(c.ctx, c.key.WorkspaceID, c.r.PathValue("key"), in.CancellationKey)
	if err != nil {
		return err
	}
	return c.ok(http.StatusOK, map[string]any{"canceledRuns": n})
}

type workflowRunStepJSON struct {
	Index     int     `json:"index"`
	Key       string  `json:"key"`
	Type      string  `json:"type"`
	Status    string  `json:"status"`
	Outcome   *string `json:"outcome"`
	RequestID *string `json:"requestId"`
	DueAt     string  `json:"dueAt"`
	CreatedAt string  `json:"createdAt"`
	EndedAt   *string `json:"endedAt"`
}

type workflowRunJSON struct {
	ID              string                       `json:"id"`
	WorkflowKey     string                       `json:"workflowKey"`
	Version         int                          `json:"version"`
	RecipientID     string                       `json:"recipientId"`
	Status          string                       `json:"status"`
	Payload         map[string]any               `json:"payload"`
	CancellationKey *string                      `json:"cancellationKey"`
	Digest          *notify.WorkflowDigestResult `json:"digest"`
	CreatedAt       string                       `json:"createdAt"`
	UpdatedAt       string                       `json:"updatedAt"`
	EndedAt         *string                      `json:"endedAt"`
	Steps           []workflowRunStepJSON        `json:"steps,omitempty"`
	RequestIDs      []string                     `json:"requestIds"`
}

func workflowRunBody(r *notify.WorkflowRun) workflowRunJSON {
	out := workflowRunJSON{ID: r.ID, WorkflowKey: r.WorkflowKey, Version: r.Version, RecipientID: r.RecipientID, Status: r.Status,
		Payload: r.Payload, CancellationKey: strOrNil(r.CancellationKey), Digest: r.Digest, CreatedAt: Timestamp(r.CreatedAt),
		UpdatedAt: Timestamp(r.UpdatedAt), EndedAt: TimestampPtr(r.EndedAt), RequestIDs: []string{}}
	for _, s := range r.Steps {
		out.Steps = append(out.Steps, workflowRunStepJSON{Index: s.Index, Key: s.Key, Type: s.Type, Status: s.Status,
			Outcome: strOrNil(s.Outcome), RequestID: strOrNil(s.RequestID), DueAt: Timestamp(s.DueAt),
			CreatedAt: Timestamp(s.CreatedAt), EndedAt: TimestampPtr(s.EndedAt)})
		if s.RequestID != "" {
			out.RequestIDs = append(out.RequestIDs, s.RequestID)
		}
	}
	return out
}

func (a workflowsAPI) handleRunGet(c *call) error {
	r, err := a.room.GetRun(c.ctx, c.workspace(), c.r.PathValue("id"))
	if err != nil {
		return err
	}
	return c.ok(http.StatusOK, map[string]any{"run": workflowRunBody(r)})
}

func (a workflowsAPI) handleRunList(c *call) error {
	q := c.r.URL.Query()
	limit, err := intParam(q.Get("limit"), "limit")
	if err != nil {
		return err
	}
	p, err := a.room.ListRuns(c.ctx, c.workspace(), workflows.RunQuery{WorkflowKey: q.Get("workflow"),
		RecipientID: q.Get("recipientId"), Limit: limit, Cursor: q.Get("cursor")})
	if err != nil {
		return err
	}
	out := make([]workflowRunJSON, len(p.Runs))
	for i, r := range p.Runs {
		out[i] = workflowRunBody(r)
	}
	return c.ok(http.StatusOK, map[string]any{"runs": out, "cursor": encodeCursor(p.Cursor), "hasNext": p.HasNext})
}

func (a workflowsAPI) handleSubscribe(c *call) error {
	created, err := a.room.Subscribe(c.ctx, c.caller(), c.r.PathValue("topic"), c.r.PathValue("externalId"))
	if err != nil {
		return err
	}
	status := http.StatusOK
	if created {
		status = http.StatusCreated
	}
	return c.ok(status, map[string]any{"topic": c.r.PathValue("topic"), "recipientId": c.r.PathValue("externalId")})
}

func (a workflowsAPI) handleUnsubscribe(c *call) error {
	if err := a.room.Unsubscribe(c.ctx, c.caller(), c.r.PathValue("topic"), c.r.PathValue("externalId")); err != nil {
		return err
	}
	return c.noContent()
}

func (a workflowsAPI) handleSubscribers(c *call) error {
	q := c.r.URL.Query()
	limit, err := intParam(q.Get("limit"), "limit")
	if err != nil {
		return err
	}
	p, err := a.room.Subscribers(c.ctx, c.workspace(), c.r.PathValue("topic"), q.Get("cursor"), limit)
	if err != nil {
		return err
	}
	return c.ok(http.StatusOK, map[string]any{"subscribers": p.Subscribers, "cursor": strOrNil(p.Next), "hasNext": p.Next != ""})
}
