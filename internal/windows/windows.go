// Package windows is the room of send windows (issue 32, item 5): the
// hours and days a workspace lets its messages leave, its own and per
// category. The arithmetic of windows is internal/sendwindow; sends
// apply them when they accept a message (internal/sends).
package windows

import (
	"context"
	"log/slog"
	"time"

	// Zones are checked with time.LoadLocation against the embedded
	// database, as profiles' are.
	_ "time/tzdata"

	"github.com/notifyd/notifyd/internal/notify"
	"github.com/notifyd/notifyd/internal/sendwindow"
	"github.com/notifyd/notifyd/internal/usecase"
)

// Options are what the room is built with.
type Options struct {
	Store  notify.Store
	Now    func() time.Time
	Logger *slog.Logger
}

// Service is the send windows room.
type Service struct {
	usecase.Kit
}

// New builds the room.
func New(o Options) *Service {
	return &Service{Kit: usecase.NewKit(o.Store, o.Now, o.Logger)}
}

// Input is a window as a caller gives it.
type Input struct {
	Hours    string
	Days     []string
	TimeZone string // the workspace window's only
}

// Check validates a window as a workspace, a category or a send gives it
// (field names the object: "", "sendWindow.").
func Check(field string, in Input) (sendwindow.Window, error) {
	w, err := sendwindow.Parse(in.Hours, in.Days)
	if err != nil {
		return w, notify.Invalid("%s%s", field, err.Error())
	}
	if in.TimeZone != "" {
		if _, err := Zone(in.TimeZone); err != nil {
			return w, notify.Invalid("%stimeZone must be an IANA time zone such as Asia/Seoul or America/New_York", field)
		}
	}
	return w, nil
}

// Zone loads an IANA zone; "Local" names the server's, never a person's.
func Zone(name string) (*time.Location, error) { return sendwindow.Zone(name) }

// List answers the workspace's windows: its own (nil when none) and its
// categories'.
func (s *Service) List(ctx context.Context, a *usecase.Actor) (own *notify.SendWindow, cats []*notify.SendWindow, err error) {
	err = s.Store.Lookup(ctx, func(tx notify.Tx) error {
		ws, err := tx.FindSendWindows(ctx, a.WorkspaceID, "", true)
		for _, w := range ws {
			if w.CategoryID == "" {
				own = w
			} else {
				cats = append(cats, w)
			}
		}
		return err
	})
	return own, cats, err
}

// Put sets the workspace's window (category "") or a category's (audit
// send_window.put).
func (s *Service) Put(ctx context.Context, a *usecase.Actor, category string, in Input) (*notify.SendWindow, error) {
	if category != "" && in.TimeZone != "" {
		return nil, notify.Invalid("timeZone is the workspace window's: a category's window is read in the recipient's or the workspace's zone")
	}
	if _, err := Check("", in); err != nil {
		return nil, err
	}
	w := &notify.SendWindow{WorkspaceID: a.WorkspaceID, CategoryKey: category, Hours: in.Hours, Days: in.Days, TimeZone: in.TimeZone,
		UpdatedAt: s.Now()}
	if w.Days == nil {
		w.Days = []string{}
	}
	err := s.Store.Update(ctx, func(tx notify.Tx) error {
		if category != "" {
			c, err := tx.FindCategory(ctx, a.WorkspaceID, category)
			if err != nil {
				return usecase.NotFound(err, "Category")
			}
			w.CategoryID = c.ID
		}
		if err := tx.PutSendWindow(ctx, w); err != nil {
			return err
		}
		return s.Audit(ctx, tx, a, a.WorkspaceID, "send_window.put", "send_window", scope(category),
			map[string]any{"hours": w.Hours, "days": w.Days, "timeZone": w.TimeZone})
	})
	if err != nil {
		return nil, err
	}
	return w, nil
}

// Delete removes the workspace's window or a category's (audit
// send_window.delete); 404 when there is none.
func (s *Service) Delete(ctx context.Context, a *usecase.Actor, category string) error {
	return s.Store.Update(ctx, func(tx notify.Tx) error {
		id := ""
		if category != "" {
			c, err := tx.FindCategory(ctx, a.WorkspaceID, category)
			if err != nil {
				return usecase.NotFound(err, "Category")
			}
			id = c.ID
		}
		if err := tx.DeleteSendWindow(ctx, a.WorkspaceID, id); err != nil {
			return usecase.NotFound(err, "Send window")
		}
		return s.Audit(ctx, tx, a, a.WorkspaceID, "send_window.delete", "send_window", scope(category), nil)
	})
}

// scope names a window in the audit log: "workspace" or "category:KEY".
func scope(category string) string {
	if category == "" {
		return "workspace"
	}
	return "category:" + category
}
