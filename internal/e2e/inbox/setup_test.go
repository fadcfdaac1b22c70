// Package inbox_test runs the in-app inbox (issue 33) end to end on the
// suite's backend (SQLite, or PostgreSQL when NOTIFYD_TEST_DATABASE_URL
// is set): channel inapp, its fallback and preferences.
package inbox_test

import (
	"context"
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/notifyd/notifyd/client"
	"github.com/notifyd/notifyd/internal/notify"
	"github.com/notifyd/notifyd/internal/notifytest"
)

// setup starts a daemon with an email route and the profiles u-1 and
// u-2, and answers a key that sends, reads and mints recipient tokens.
func setup(t *testing.T, opts ...notifytest.Option) (*notifytest.Env, *client.Client) {
	t.Helper()
	env := notifytest.StartDaemon(t, opts...)
	mail := notifytest.RegisterProvider(t, env.Owner, "mailz_email", "mail", env.MailConfig("mailz_email", "noreply@example.com"))
	notifytest.PutRoutes(t, env.Owner, notifytest.Route{Channel: "email", ProviderAccountID: mail, Priority: 1})
	for _, id := range []string{"u-1", "u-2"} {
		notifytest.DashboardCall(t, env.Owner, "PUT", "/v1/recipients/"+id, map[string]any{"email": id + "@example.com"}, http.StatusCreated)
	}
	key, _ := env.APIKey(t, "app", "notifications:send", "notifications:read", "recipients:write")
	return env, key
}

func inapp(id, title, text string) map[string]any {
	return map[string]any{"channel": "inapp", "recipient": map[string]any{"id": id},
		"content": map[string]any{"title": title, "text": text}}
}

// stored reads the inbox of profile id of the env's workspace from the
// store.
func stored(t *testing.T, env *notifytest.Env, id string) []*notify.InboxMessage {
	t.Helper()
	ctx := context.Background()
	var ms []*notify.InboxMessage
	require.NoError(t, env.Daemon.DB.View(ctx, func(tx notify.Tx) error {
		p, err := tx.FindRecipient(ctx, env.Workspace, id)
		if err != nil {
			return err
		}
		ms, err = tx.FindInboxMessages(ctx, env.Workspace, p.ID, notify.InboxFilter{Limit: 100})
		return err
	}))
	return ms
}
