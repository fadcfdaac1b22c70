package sqlstore

import (
	"context"
	"time"

	"github.com/notifyd/notifyd/internal/notify"
)

func (t accountTx) CreateWorkspace(ctx context.Context, w *notify.Workspace) error {
	_, err := t.c.Exec(ctx, `INSERT INTO workspaces (id, name, created_at, updated_at) VALUES (?, ?, ?, ?)`,
		w.ID, w.Name, ms(w.CreatedAt), ms(w.UpdatedAt))
	return err
}

func (t accountTx) FindWorkspace(ctx context.Context, id string) (*notify.Workspace, error) {
	var w notify.Workspace
	var c, u int64
	err := t.c.QueryRow(ctx, `SELECT id, name, created_at, updated_at FROM workspaces WHERE id = ?`, id).
		Scan(&w.ID, &w.Name, &c, &u)
	if err != nil {
		return nil, err
	}
	w.CreatedAt, w.UpdatedAt = fromMs(c), fromMs(u)
	return &w, nil
}

func (t accountTx) UpdateWorkspaceName(ctx context.Context, id, name string, now time.Time) error {
	return expectOne(t.c.Exec(ctx, `UPDATE workspaces SET name = ?, updated_at = ? WHERE id = ?`, name, ms(now), id))
}

// LockWorkspace takes the workspace row's lock with a no-op update: a row
// lock on PostgreSQL, and on SQLite the one writer already serializes.
func (t accountTx) LockWorkspace(ctx context.Context, id string) error {
	return expectOne(t.c.Exec(ctx, `UPDATE workspaces SET updated_at = updated_at WHERE id = ?`, id))
}

func (t accountTx) CountWorkspaces(ctx context.Context) (int, error) {
	var n int
	err := t.c.QueryRow(ctx, `SELECT COUNT(*) FROM workspaces`).Scan(&n)
	return n, err
}

func (t accountTx) CreateUser(ctx context.Context, u *notify.User) error {
	_, err := t.c.Exec(ctx, `INSERT INTO users (id, email, password_hash, created_at) VALUES (?, ?, ?, ?)`,
		u.ID, u.Email, u.PasswordHash, ms(u.CreatedAt))
	return err
}

const userCols = `id, email, password_hash, created_at`

func scanUser(r Row) (*notify.User, error) {
	var u notify.User
	var c int64
	if err := r.Scan(&u.ID, &u.Email, &u.PasswordHash, &c); err != nil {
		return nil, err
	}
	u.CreatedAt = fromMs(c)
	return &u, nil
}

func (t accountTx) FindUserByEmail(ctx context.Context, email string) (*notify.User, error) {
	return scanUser(t.c.QueryRow(ctx, `SELECT `+userCols+` FROM users WHERE email = ?`, email))
}

func (t accountTx) FindUser(ctx context.Context, id string) (*notify.User, error) {
	return scanUser(t.c.QueryRow(ctx, `SELECT `+userCols+` FROM users WHERE id = ?`, id))
}

func (t accountTx) SetUserPassword(ctx context.Context, userID, hash string) error {
	return expectOne(t.c.Exec(ctx, `UPDATE users SET password_hash = ? WHERE id = ?`, hash, userID))
}

// PutMember inserts a membership or changes its role.
func (t accountTx) PutMember(ctx context.Context, m *notify.Member) error {
	_, err := t.c.Exec(ctx, `INSERT INTO members (workspace_id, user_id, role, created_at) VALUES (?, ?, ?, ?)
		ON CONFLICT (workspace_id, user_id) DO UPDATE SET role = excluded.role`,
		m.WorkspaceID, m.UserID, string(m.Role), ms(m.CreatedAt))
	return err
}

const memberSelect = `SELECT m.workspace_id, w.name, m.user_id, u.email, m.role, m.created_at,
		CASE WHEN u.password_hash = '' THEN 1 ELSE 0 END
	FROM members m JOIN users u ON u.id = m.user_id JOIN workspaces w ON w.id = m.workspace_id`

func scanMember(r Row) (*notify.Member, error) {
	var m notify.Member
	var role string
	var c, noPassword int64
	if err := r.Scan(&m.WorkspaceID, &m.WorkspaceName, &m.UserID, &m.Email, &role, &c, &noPassword); err != nil {
		return nil, err
	}
	m.Role, m.CreatedAt, m.NoPassword = notify.Role(role), fromMs(c), noPassword == 1
	return &m, nil
}

func (t accountTx) FindMember(ctx context.Context, workspaceID, userID string) (*notify.Member, error) {
	return scanMember(t.c.QueryRow(ctx, memberSelect+` WHERE m.workspace_id = ? AND m.user_id = ?`, workspaceID, userID))
}

func (t accountTx) FindMembers(ctx context.Context, workspaceID string) ([]*notify.Member, error) {
	return queryAll(ctx, t.c, scanMember, memberSelect+` WHERE m.workspace_id = ? ORDER BY m.created_at, m.user_id`, workspaceID)
}

func (t accountTx) FindMembershipsOfUser(ctx context.Context, userID string) ([]*notify.Member, error) {
	return queryAll(ctx, t.c, scanMember, memberSelect+` WHERE m.user_id = ? ORDER BY m.created_at, m.workspace_id`, userID)
}

func (t accountTx) DeleteMember(ctx context.Context, workspaceID, userID string) error {
	return expectOne(t.c.Exec(ctx, `DELETE FROM members WHERE workspace_id = ? AND user_id = ?`, workspaceID, userID))
}

func (t accountTx) CountOwners(ctx context.Context, workspaceID string) (int, error) {
	var n int
	err := t.c.QueryRow(ctx, `SELECT COUNT(*) FROM members WHERE workspace_id = ? AND role = 'owner'`, workspaceID).Scan(&n)
	return n, err
}

func (t accountTx) CreateSession(ctx context.Context, s *notify.Session) error {
	var ws *string
	if s.WorkspaceID != "" {
		ws = &s.WorkspaceID
	}
	_, err := t.c.Exec(ctx, `INSERT INTO sessions (token_hash, user_id, workspace_id, expires_at, created_at) VALUES (?, ?, ?, ?, ?)`,
		s.TokenHash, s.UserID, ws, ms(s.ExpiresAt), ms(s.CreatedAt))
	return err
}

func (t accountTx) FindSession(ctx context.Context, tokenHash string, now time.Time) (*notify.Session, error) {
	var s notify.Session
	var ws *string
	var e, c int64
	err := t.c.QueryRow(ctx, `SELECT token_hash, user_id, workspace_id, expires_at, created_at FROM sessions
		WHERE token_hash = ? AND expires_at > ?`, tokenHash, ms(now)).Scan(&s.TokenHash, &s.UserID, &ws, &e, &c)
	if err != nil {
		return nil, err
	}
	if ws != nil {
		s.WorkspaceID = *ws
	}
	s.ExpiresAt, s.CreatedAt = fromMs(e), fromMs(c)
	return &s, nil
}

func (t accountTx) DeleteSession(ctx context.Context, tokenHash string) error {
	_, err := t.c.Exec(ctx, `DELETE FROM sessions WHERE token_hash = ?`, tokenHash)
	return err
}

func (t accountTx) DeleteExpiredSessions(ctx context.Context, now time.Time) (int, error) {
	n, err := t.c.Exec(ctx, `DELETE FROM sessions WHERE expires_at <= ?`, ms(now))
	return int(n), err
}

// queryAll runs a query and scans every row with scan.
func queryAll[T any](ctx context.Context, q Querier, scan func(Row) (T, error), query string, args ...any) ([]T, error) {
	rows, err := q.Query(ctx, query, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []T
	for rows.Next() {
		v, err := scan(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	return out, rows.Err()
}
