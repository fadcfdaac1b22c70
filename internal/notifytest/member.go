package notifytest

import (
	"context"
	"net/http"
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/notifyd/notifyd/client"
)

// Member adds a new user of role to the owner's workspace and answers
// that user's logged-in dashboard client (for role tests).
func (e *Env) Member(t testing.TB, role string) *client.Client {
	t.Helper()
	email, password := e.AddMember(t, role)
	c := client.New(e.Daemon.URL())
	require.NoError(t, c.Login(context.Background(), email, password))
	return c
}

// AddMember adds a new user of role to the owner's workspace and answers
// the user's email and password.
func (e *Env) AddMember(t testing.TB, role string) (email, password string) {
	t.Helper()
	email, password = role+"-"+uuid.NewString()[:8]+"@example.com", "member password 1"
	r, err := e.Owner.Dashboard(context.Background(), "POST", "/v1/workspace/members", map[string]string{"email": email, "role": role, "password": password})
	require.NoError(t, err)
	require.Equal(t, http.StatusCreated, r.Status, string(r.Body))
	return email, password
}
