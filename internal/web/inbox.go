package web

import (
	"net/http"

	"github.com/notifyd/notifyd/internal/notify"
)

// inboxPages serve the in-app inbox section (issue 33): the workspace's
// inbox settings and how the application uses the inbox. Read-only, as
// the recipients pages are: the Dashboard API changes the settings. A
// recipient's inbox shows on the recipient's page, a request's inbox
// message on the message's page.
type inboxPages struct{ *Console }

func (c inboxPages) routes() []Route {
	return []Route{
		{Method: "GET", Path: "/inbox", Auth: Member, Roles: notify.RolesAll, h: c.inboxPage},
	}
}

func (c inboxPages) inboxPage(x *Ctx) error {
	s, err := c.rooms.Inbox.Settings(x.Context(), x.Actor)
	if err != nil {
		return err
	}
	return x.Render(http.StatusOK, "inbox.html", &Page{Title: "Inbox", Section: "/inbox",
		Data: map[string]any{"Settings": s, "BaseURL": c.baseURL, "Workspace": x.Actor.WorkspaceID}})
}
