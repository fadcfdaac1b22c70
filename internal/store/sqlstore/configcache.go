package sqlstore

import (
	"context"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"

	"github.com/notifyd/notifyd/internal/notify"
)

// configCache keeps each workspace's send configuration (its categories,
// default preferences and send windows) in process. Every send by
// recipient or category reads it at acceptance and again at dispatch,
// while it changes a few times a day: three statements a send became one
// column read (issue 32's serve target).
//
// An entry is good while the workspace's config_version is the value it
// was read at. Every write of that configuration stores a fresh random
// config_version in its own transaction (bumpConfig), so the check is
// exact across processes and transactions: a reader that sees a version
// sees the configuration committed with it. A version is never reused, so
// an entry filled inside a transaction that later rolled back is labelled
// with a value no committed row holds, and is never matched.
//
// The same version labels the workflows triggers read (their published
// version with them; FindTriggerWorkflow): every write of a workflow, its
// versions or which one is published renews it too.
type configCache struct {
	mu sync.Mutex
	m  map[string]*wsConfig
	// wf holds trigger workflows by workspace id and key (wfKey).
	wf map[string]*wsWorkflow
}

// wsWorkflow is a workflow and its published version (nil: none) as read
// at version. Its values are shared by every reader and never changed.
type wsWorkflow struct {
	version int64
	w       *notify.Workflow
	v       *notify.WorkflowVersion
}

func wfKey(ws, key string) string { return ws + "\x00" + key }

// workflow answers the kept workflow of ws and key, whatever its version
// (the caller checks it), or nil.
func (c *configCache) workflow(ws, key string) *wsWorkflow {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.wf[wfKey(ws, key)]
}

func (c *configCache) putWorkflow(ws, key string, e *wsWorkflow) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.wf == nil || len(c.wf) >= configCacheMax {
		c.wf = map[string]*wsWorkflow{}
	}
	c.wf[wfKey(ws, key)] = e
}

// configCacheMax bounds the workspaces kept; past it the cache starts
// over (a fill is four indexed reads).
const configCacheMax = 10000

// wsConfig is one workspace's send configuration at version. Its values
// are shared by every reader and never changed.
type wsConfig struct {
	version    int64
	categories map[string]*notify.Category // by key
	defaults   []choice                    // the workspace default's choices
	windows    []*notify.SendWindow        // every scope, ordered by scope
}

// choice is one stored preference: key nil is the channel's switch.
type choice struct {
	key     *string
	channel string
	allowed bool
}

func (c *configCache) get(ws string, version int64) *wsConfig {
	c.mu.Lock()
	defer c.mu.Unlock()
	if e := c.m[ws]; e != nil && e.version == version {
		return e
	}
	return nil
}

func (c *configCache) put(ws string, e *wsConfig) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.m == nil || len(c.m) >= configCacheMax {
		c.m = map[string]*wsConfig{}
	}
	c.m[ws] = e
}

// bumpConfig gives the workspace a new configuration version; every
// writer of categories, default preferences, send windows and workflows
// calls it in the transaction of its write.
func (t *Tx) bumpConfig(ctx context.Context, workspaceID string) error {
	t.versioned = true
	_, err := t.c.Exec(ctx, `UPDATE workspaces SET config_version = ? WHERE id = ?`, rand.Int64(), workspaceID)
	return err
}

// configVersionOf is a column reading the version of the row's workspace.
const configVersionOf = `(SELECT config_version FROM workspaces WHERE id = ?)`

// sendConfig answers the workspace's configuration at version (seen by the
// caller's statement), reading it when the cache holds another.
func (t *Tx) sendConfig(ctx context.Context, ws string, version int64) (*wsConfig, error) {
	if t.cfg == nil {
		return t.readConfig(ctx, ws)
	}
	if e := t.cfg.get(ws, version); e != nil {
		return e, nil
	}
	e, err := t.readConfig(ctx, ws)
	if err != nil {
		return nil, err
	}
	t.cfg.put(ws, e)
	return e, nil
}

// readConfig reads the configuration, its version first: on PostgreSQL the
// pipelined reads may each see a later commit, so the content is at least
// as new as its label (never older, which could be served until the next
// change).
func (t *Tx) readConfig(ctx context.Context, ws string) (*wsConfig, error) {
	e := &wsConfig{categories: map[string]*notify.Category{}}
	reads := []Read{
		{SQL: `SELECT config_version FROM workspaces WHERE id = ?`, Args: []any{ws}, Scan: func(rows Rows) error {
			if rows.Next() {
				return rows.Scan(&e.version)
			}
			return nil
		}},
		{SQL: `SELECT ` + categoryCols + ` FROM categories WHERE workspace_id = ?`, Args: []any{ws}, Scan: func(rows Rows) error {
			for rows.Next() {
				c, err := scanCategory(rows)
				if err != nil {
					return err
				}
				e.categories[c.Key] = c
			}
			return nil
		}},
		{SQL: `SELECT c.key, p.channel, p.allowed FROM preferences p LEFT JOIN categories c ON c.id = p.category_id
			WHERE p.workspace_id = ? AND COALESCE(p.recipient_id, '') = ''`, Args: []any{ws}, Scan: func(rows Rows) error {
			for rows.Next() {
				var ch choice
				if err := rows.Scan(&ch.key, &ch.channel, &ch.allowed); err != nil {
					return err
				}
				e.defaults = append(e.defaults, ch)
			}
			return nil
		}},
		{SQL: windowSelect + ` WHERE w.workspace_id = ? ORDER BY w.scope`, Args: []any{ws}, Scan: collect(&e.windows, scanWindow)},
	}
	if err := pipeline(ctx, t.c, reads); err != nil {
		return nil, err
	}
	return e, nil
}

// pick is the Preferences of the choices on chans; with byKey, only the
// switches and the choices of category key.
func pick(cs []choice, chans []string, key string, byKey bool) *notify.Preferences {
	p := emptyPreferences()
	for _, c := range cs {
		if !slices.Contains(chans, c.channel) || (byKey && c.key != nil && *c.key != key) {
			continue
		}
		addPreference(p, c.key, c.channel, c.allowed)
	}
	return p
}

// windowsOf answers the workspace's window and the category's (id), in
// scope order, as a read of the two scopes would.
func (e *wsConfig) windowsOf(categoryID string) []*notify.SendWindow {
	var out []*notify.SendWindow
	for _, w := range e.windows {
		if w.CategoryID == "" || (categoryID != "" && w.CategoryID == categoryID) {
			out = append(out, w)
		}
	}
	return out
}

// prefixCols qualifies each column of cols with the table alias a.
func prefixCols(a, cols string) string {
	cs := splitCols(cols)
	for i, c := range cs {
		cs[i] = a + c
	}
	return strings.Join(cs, ", ")
}
