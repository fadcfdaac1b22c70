package accounts

import (
	"context"
	"errors"
	"net/mail"
	"strings"
	"time"

	"github.com/notifyd/notifyd/internal/notify"
	"github.com/notifyd/notifyd/internal/secret"
	"github.com/notifyd/notifyd/internal/usecase"
)

// WorkspaceRole is a workspace as seen by one member.
type WorkspaceRole struct {
	ID   string      `json:"id"`
	Name string      `json:"name"`
	Role notify.Role `json:"role"`
}

// LoginResult is what login and select-workspace answer.
type LoginResult struct {
	AccessToken string
	ExpiresAt   time.Time
	User        *notify.User
	Workspace   *WorkspaceRole
}

// BootstrapResult is what `notifyd bootstrap` prints.
type BootstrapResult struct {
	WorkspaceID string `json:"workspaceId"`
	UserID      string `json:"userId"`
	Email       string `json:"email"`
	Password    string `json:"password"`
	AccessToken string `json:"accessToken"`
}

// ErrEmailTaken is returned by Bootstrap for an existing email.
var ErrEmailTaken = errors.New("a user with this email already exists")

// NormalizeEmail trims and lower-cases an email; invalid addresses are 400.
func NormalizeEmail(email string) (string, error) {
	e := strings.ToLower(strings.TrimSpace(email))
	if !usecase.Storable(e) {
		return "", notify.Invalid("email is not a valid email address")
	}
	if len(e) > 320 {
		return "", notify.Invalid("email must be at most 320 characters")
	}
	a, err := mail.ParseAddress(e)
	if err != nil || a.Address != e {
		return "", notify.Invalid("email is not a valid email address")
	}
	return e, nil
}

// Bootstrap creates a workspace and its owner; a generated password is
// used when password is empty.
func (s *Service) Bootstrap(ctx context.Context, workspace, email, password string) (*BootstrapResult, error) {
	email, err := NormalizeEmail(email)
	if err != nil {
		return nil, err
	}
	workspace = strings.TrimSpace(workspace)
	if workspace == "" || len([]rune(workspace)) > 120 || !usecase.Storable(workspace) {
		return nil, notify.Invalid("workspace name must be 1 to 120 characters")
	}
	if password == "" {
		password = secret.GeneratePassword()
	} else if err := CheckPasswordRule("password", password); err != nil {
		return nil, err
	}
	hash, err := secret.HashPassword(password)
	if err != nil {
		return nil, err
	}
	now := s.Now()
	res := &BootstrapResult{WorkspaceID: usecase.NewID(), UserID: usecase.NewID(), Email: email, Password: password}
	token := "nds_" + secret.RandomToken(32)
	res.AccessToken = token
	err = s.Store.Update(ctx, func(tx notify.Tx) error {
		if _, err := tx.FindUserByEmail(ctx, email); err == nil {
			return ErrEmailTaken
		} else if !errors.Is(err, notify.ErrNotFound) {
			return err
		}
		if err := tx.CreateWorkspace(ctx, &notify.Workspace{ID: res.WorkspaceID, Name: workspace, CreatedAt: now, UpdatedAt: now}); err != nil {
			return err
		}
		if err := tx.CreateUser(ctx, &notify.User{ID: res.UserID, Email: email, PasswordHash: hash, CreatedAt: now}); err != nil {
			return err
		}
		if err := tx.PutMember(ctx, &notify.Member{WorkspaceID: res.WorkspaceID, UserID: res.UserID, Role: notify.RoleOwner, CreatedAt: now}); err != nil {
			return err
		}
		return tx.CreateSession(ctx, &notify.Session{TokenHash: secret.HashToken(token), UserID: res.UserID,
			WorkspaceID: res.WorkspaceID, ExpiresAt: now.Add(s.ttl), CreatedAt: now})
	})
	if err != nil {
		return nil, err
	}
	return res, nil
}

// HasWorkspaces reports whether any workspace exists (first start check).
func (s *Service) HasWorkspaces(ctx context.Context) (bool, error) {
	var n int
	err := s.Store.View(ctx, func(tx notify.Tx) (err error) {
		n, err = tx.CountWorkspaces(ctx)
		return err
	})
	return n > 0, err
}

// Login checks a password and opens a session. Wrong email and wrong
// password answer the same, and attempts are throttled per email, per
// client address and per pair (login.go).
func (s *Service) Login(ctx context.Context, email, password, workspaceID, clientAddr string) (*LoginResult, error) {
	if len(email) > 320 || len(password) > 256 {
		return nil, notify.Unauthorized("Invalid email or password")
	}
	email = strings.ToLower(strings.TrimSpace(email))
	user, err := s.logins.verify(ctx, email, password, clientAddr)
	if err != nil {
		return nil, err
	}
	return s.openSession(ctx, user, workspaceID)
}

func (s *Service) openSession(ctx context.Context, user *notify.User, workspaceID string) (*LoginResult, error) {
	now := s.Now()
	token := "nds_" + secret.RandomToken(32)
	res := &LoginResult{AccessToken: token, ExpiresAt: now.Add(s.ttl), User: user}
	err := s.Store.Update(ctx, func(tx notify.Tx) error {
		ms, err := tx.FindMembershipsOfUser(ctx, user.ID)
		if err != nil {
			return err
		}
		var pick *notify.Member
		switch {
		case workspaceID != "":
			for _, m := range ms {
				if m.WorkspaceID == workspaceID {
					pick = m
				}
			}
			if pick == nil {
				return notify.Forbidden("You are not a member of this workspace")
			}
		case len(ms) == 1:
			pick = ms[0]
		}
		sess := &notify.Session{TokenHash: secret.HashToken(token), UserID: user.ID, ExpiresAt: res.ExpiresAt, CreatedAt: now}
		if pick != nil {
			sess.WorkspaceID = pick.WorkspaceID
			res.Workspace = &WorkspaceRole{ID: pick.WorkspaceID, Name: pick.WorkspaceName, Role: pick.Role}
		}
		return tx.CreateSession(ctx, sess)
	})
	if err != nil {
		return nil, err
	}
	return res, nil
}

// SelectWorkspace opens a new session on workspaceID and ends the old one.
func (s *Service) SelectWorkspace(ctx context.Context, a *usecase.Actor, workspaceID string) (*LoginResult, error) {
	if workspaceID == "" {
		return nil, notify.Invalid("workspaceId is required")
	}
	var user *notify.User
	err := s.Store.View(ctx, func(tx notify.Tx) (err error) {
		user, err = tx.FindUser(ctx, a.UserID)
		return err
	})
	if err != nil {
		return nil, err
	}
	res, err := s.openSession(ctx, user, workspaceID)
	if err != nil {
		return nil, err
	}
	_ = s.Logout(ctx, a)
	return res, nil
}

// Logout ends the session at once.
func (s *Service) Logout(ctx context.Context, a *usecase.Actor) error {
	return s.Store.Update(ctx, func(tx notify.Tx) error { return tx.DeleteSession(ctx, a.TokenHash) })
}

// Authenticate resolves a bearer token to an actor. Any failure is 401.
func (s *Service) Authenticate(ctx context.Context, token string) (*usecase.Actor, error) {
	if token == "" {
		return nil, notify.Unauthorized("Missing access token")
	}
	hash := secret.HashToken(token)
	var a *usecase.Actor
	err := s.Store.View(ctx, func(tx notify.Tx) error {
		sess, err := tx.FindSession(ctx, hash, s.Now())
		if err != nil {
			return err
		}
		u, err := tx.FindUser(ctx, sess.UserID)
		if err != nil {
			return err
		}
		a = &usecase.Actor{UserID: u.ID, Email: u.Email, TokenHash: hash}
		if sess.WorkspaceID != "" {
			m, err := tx.FindMember(ctx, sess.WorkspaceID, u.ID)
			if errors.Is(err, notify.ErrNotFound) {
				return nil // removed from the workspace: no workspace selected
			}
			if err != nil {
				return err
			}
			a.WorkspaceID, a.Role = m.WorkspaceID, m.Role
		}
		return nil
	})
	if errors.Is(err, notify.ErrNotFound) {
		return nil, notify.Unauthorized("Invalid or expired access token")
	}
	return a, err
}

// Me lists the actor's user and workspaces.
func (s *Service) Me(ctx context.Context, a *usecase.Actor) (*notify.User, []WorkspaceRole, error) {
	var u *notify.User
	var out []WorkspaceRole
	err := s.Store.View(ctx, func(tx notify.Tx) error {
		var err error
		if u, err = tx.FindUser(ctx, a.UserID); err != nil {
			return err
		}
		ms, err := tx.FindMembershipsOfUser(ctx, a.UserID)
		for _, m := range ms {
			out = append(out, WorkspaceRole{ID: m.WorkspaceID, Name: m.WorkspaceName, Role: m.Role})
		}
		return err
	})
	return u, out, err
}
