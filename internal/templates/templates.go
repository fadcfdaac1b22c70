package templates

import (
	"context"
	"strconv"
	"strings"

	"github.com/notifyd/notifyd/internal/compose"
	"github.com/notifyd/notifyd/internal/notify"
	"github.com/notifyd/notifyd/internal/render"
	"github.com/notifyd/notifyd/internal/usecase"
)

// Template statuses and messenger review statuses (API-DECISIONS 4).
const (
	TemplateActive   = "active"
	TemplateInactive = "inactive"

	ReviewPending  = "PENDING"
	ReviewApproved = "APPROVED"
	ReviewRejected = "REJECTED"
)

// TemplateInput is the body of create and update. A nil field is absent;
// for the binding fields (ProviderAccountID, VendorTemplateID,
// SenderProfileKey) a pointer to "" clears the value.
type TemplateInput struct {
	Code              *string // create only
	Channel           *string // create only
	Name              *string
	Status            *string // update only
	ProviderAccountID *string
	VendorTemplateID  *string
	SenderProfileKey  *string
}

// Bounds of a template's versions (issue 29): every read of them is
// paged, and a template holds a bounded number.
const (
	// MaxTemplateVersions bounds the versions of one template (409 on one
	// more; a version no send uses can be deleted).
	MaxTemplateVersions = 100
	// TemplateVersionsShown is how many of the newest versions the
	// template answer carries, and the default page of the version list.
	TemplateVersionsShown = 10
	// MaxTemplateVersionPage bounds a page of the version list: each
	// version may hold about 600 KB of bodies.
	MaxTemplateVersionPage = 20
)

// TemplateView is a template with a page of its versions, newest first;
// Cursor continues the list when HasNext.
type TemplateView struct {
	Template *notify.Template
	Versions []*notify.TemplateVersion
	Cursor   *notify.Cursor
	HasNext  bool
}

// TemplateVersionInput is the body of a version create.
type TemplateVersionInput struct {
	Title *string
	Text  *string
	HTML  *string
	// Locale and LayoutID (issue 21): nil is the default locale and no
	// layout ("" is no layout too).
	Locale   *string
	LayoutID *string
}

func validTemplateName(n string) error {
	if strings.TrimSpace(n) == "" {
		return notify.Invalid("name must not be empty")
	}
	return usecase.MaxLen("name", n, 200)
}

// validateTemplateInput checks the field rules that need no database.
func validateTemplateInput(in TemplateInput, create bool) error {
	if create {
		if in.Code == nil || strings.TrimSpace(*in.Code) == "" {
			return notify.Invalid("code is required")
		}
		if err := usecase.MaxLen("code", *in.Code, 120); err != nil {
			return err
		}
		if in.Channel == nil || *in.Channel == "" {
			return notify.Invalid("channel is required")
		}
		if !notify.Channel(*in.Channel).Valid() {
			return notify.Invalid("channel must be one of the channel values")
		}
		if in.Name == nil {
			return notify.Invalid("name is required")
		}
	}
	if in.Name != nil {
		if err := validTemplateName(*in.Name); err != nil {
			return err
		}
	}
	if in.Status != nil && *in.Status != TemplateActive && *in.Status != TemplateInactive {
		return notify.Invalid("status must be active or inactive")
	}
	if in.VendorTemplateID != nil {
		if err := usecase.MaxLen("vendorTemplateId", *in.VendorTemplateID, 200); err != nil {
			return err
		}
	}
	if in.SenderProfileKey != nil {
		if err := usecase.MaxLen("senderProfileKey", *in.SenderProfileKey, 200); err != nil {
			return err
		}
	}
	return nil
}

// checkBinding verifies that id names a provider of the workspace sending
// on channel ch (400 otherwise). An empty id is no binding.
func checkBinding(ctx context.Context, tx notify.Tx, ws, id string, ch notify.Channel) error {
	if id == "" {
		return nil
	}
	p, err := tx.FindProviderAccount(ctx, ws, id)
	if notify.IsNotFound(err) {
		return notify.Invalid("providerAccountId does not name a provider of this workspace")
	}
	if err != nil {
		return err
	}
	if p.Channel != ch {
		return notify.Invalid("providerAccountId names a provider of channel %s, not %s", p.Channel, ch)
	}
	return nil
}

func templatePayload(t *notify.Template) map[string]any {
	return map[string]any{"code": t.Code, "channel": t.Channel, "name": t.Name, "status": t.Status,
		"providerAccountId": t.ProviderAccountID, "vendorTemplateId": t.VendorTemplateID, "senderProfileKey": t.SenderProfileKey}
}

// CreateTemplate creates an active template (audit template.create). The
// code is unique per workspace and channel (409). A msgr_alimtalk template
// starts with review status PENDING.
func (s *Service) CreateTemplate(ctx context.Context, a *usecase.Actor, in TemplateInput) (*notify.Template, error) {
	if in.Status != nil {
		return nil, notify.Invalid("status cannot be set at create")
	}
	if err := validateTemplateInput(in, true); err != nil {
		return nil, err
	}
	now := s.Now()
	t := &notify.Template{ID: usecase.NewID(), WorkspaceID: a.WorkspaceID, Code: *in.Code, Channel: notify.Channel(*in.Channel),
		Name: *in.Name, Status: TemplateActive, CreatedAt: now, UpdatedAt: now}
	if t.Channel == notify.ChannelAlimTalk {
		t.ReviewStatus = ReviewPending
	}
	if in.ProviderAccountID != nil {
		t.ProviderAccountID = *in.ProviderAccountID
	}
	if in.VendorTemplateID != nil {
		t.VendorTemplateID = *in.VendorTemplateID
	}
	if in.SenderProfileKey != nil {
		t.SenderProfileKey = *in.SenderProfileKey
	}
	err := s.Store.Update(ctx, func(tx notify.Tx) error {
		if err := checkBinding(ctx, tx, a.WorkspaceID, t.ProviderAccountID, t.Channel); err != nil {
			return err
		}
		// Checked before the insert: a unique violation aborts the
		// transaction on PostgreSQL.
		_, err := tx.FindTemplateByCode(ctx, a.WorkspaceID, t.Code, t.Channel)
		if err == nil {
			return notify.Conflict("A template with code %s already exists for channel %s", t.Code, t.Channel)
		}
		if !notify.IsNotFound(err) {
			return err
		}
		if err := tx.CreateTemplate(ctx, t); err != nil {
			return usecase.ConflictOr(err, "A template with code %s already exists for channel %s", t.Code, t.Channel)
		}
		return s.Audit(ctx, tx, a, a.WorkspaceID, "template.create", "template", t.ID, templatePayload(t))
	})
	if err != nil {
		return nil, err
	}
	return t, nil
}

// ListTemplates lists the workspace's templates in creation order.
func (s *Service) ListTemplates(ctx context.Context, a *usecase.Actor) ([]*notify.Template, error) {
	var out []*notify.Template
	err := s.Store.View(ctx, func(tx notify.Tx) (err error) {
		out, err = tx.FindTemplates(ctx, a.WorkspaceID)
		return err
	})
	return out, err
}

// GetTemplate returns one template with its newest
// TemplateVersionsShown versions.
func (s *Service) GetTemplate(ctx context.Context, a *usecase.Actor, id string) (*TemplateView, error) {
	return s.templatePage(ctx, a, id, notify.TemplateVersionFilter{Limit: TemplateVersionsShown})
}

// ListTemplateVersions pages a template's versions newest first: limit 1
// to MaxTemplateVersionPage (0: TemplateVersionsShown), cursor from the
// previous page (nil: from the newest).
func (s *Service) ListTemplateVersions(ctx context.Context, a *usecase.Actor, id string, limit int, cursor *notify.Cursor) (*TemplateView, error) {
	if limit == 0 {
		limit = TemplateVersionsShown
	}
	if limit < 1 || limit > MaxTemplateVersionPage {
		return nil, notify.Invalid("limit must be between 1 and %d", MaxTemplateVersionPage)
	}
	f := notify.TemplateVersionFilter{Limit: limit}
	if cursor != nil {
		n, err := strconv.Atoi(cursor.ID)
		if err != nil || n < 1 {
			return nil, notify.Invalid("cursor is not valid")
		}
		f.Before = n
	}
	return s.templatePage(ctx, a, id, f)
}

// TemplateVersionSummaries returns a template with the newest
// MaxTemplateVersions of its versions without their bodies (the console's
// version table).
func (s *Service) TemplateVersionSummaries(ctx context.Context, a *usecase.Actor, id string) (*TemplateView, error) {
	return s.templatePage(ctx, a, id, notify.TemplateVersionFilter{Limit: MaxTemplateVersions, Summary: true})
}

// templatePage reads a template and one page of its versions (one more
// than f.Limit, to know whether another page follows).
func (s *Service) templatePage(ctx context.Context, a *usecase.Actor, id string, f notify.TemplateVersionFilter) (*TemplateView, error) {
	var v TemplateView
	want := f.Limit
	f.Limit++
	err := s.Store.View(ctx, func(tx notify.Tx) (err error) {
		if v.Template, err = tx.FindTemplate(ctx, a.WorkspaceID, id); err != nil {
			return usecase.NotFound(err, "Template")
		}
		v.Versions, err = tx.FindTemplateVersions(ctx, a.WorkspaceID, v.Template.ID, f)
		return err
	})
	if err != nil {
		return nil, err
	}
	if v.Versions == nil {
		v.Versions = []*notify.TemplateVersion{}
	}
	v.Versions, v.Cursor, v.HasNext = usecase.Trim(v.Versions, want, func(x *notify.TemplateVersion) notify.Cursor {
		return notify.Cursor{At: x.CreatedAt, ID: strconv.Itoa(x.Version)}
	})
	return &v, nil
}

// GetTemplateVersion returns a template and one of its versions (404
// Template version not found).
func (s *Service) GetTemplateVersion(ctx context.Context, a *usecase.Actor, id string, version int) (*notify.Template, *notify.TemplateVersion, error) {
	var t *notify.Template
	var v *notify.TemplateVersion
	err := s.Store.View(ctx, func(tx notify.Tx) (err error) {
		if t, err = tx.FindTemplate(ctx, a.WorkspaceID, id); err != nil {
			return usecase.NotFound(err, "Template")
		}
		v, err = tx.FindTemplateVersion(ctx, a.WorkspaceID, t.ID, version)
		return usecase.NotFound(err, "Template version")
	})
	if err != nil {
		return nil, nil, err
	}
	return t, v, nil
}

// UpdateTemplate changes name, status and the binding fields (audit
// template.update). Code and channel never change.
func (s *Service) UpdateTemplate(ctx context.Context, a *usecase.Actor, id string, in TemplateInput) (*notify.Template, error) {
	if in.Code != nil {
		return nil, notify.Invalid("code cannot be changed")
	}
	if in.Channel != nil {
		return nil, notify.Invalid("channel cannot be changed")
	}
	if err := validateTemplateInput(in, false); err != nil {
		return nil, err
	}
	var t *notify.Template
	err := s.Store.Update(ctx, func(tx notify.Tx) error {
		var err error
		if t, err = tx.FindTemplate(ctx, a.WorkspaceID, id); err != nil {
			return usecase.NotFound(err, "Template")
		}
		payload := map[string]any{}
		if in.Name != nil {
			t.Name = *in.Name
			payload["name"] = t.Name
		}
		if in.Status != nil {
			t.Status = *in.Status
			payload["status"] = t.Status
		}
		if in.ProviderAccountID != nil {
			if err := checkBinding(ctx, tx, a.WorkspaceID, *in.ProviderAccountID, t.Channel); err != nil {
				return err
			}
			t.ProviderAccountID = *in.ProviderAccountID
			payload["providerAccountId"] = t.ProviderAccountID
		}
		if in.VendorTemplateID != nil {
			t.VendorTemplateID = *in.VendorTemplateID
			payload["vendorTemplateId"] = t.VendorTemplateID
		}
		if in.SenderProfileKey != nil {
			t.SenderProfileKey = *in.SenderProfileKey
			payload["senderProfileKey"] = t.SenderProfileKey
		}
		t.UpdatedAt = s.Now()
		if err := tx.UpdateTemplate(ctx, t); err != nil {
			return usecase.NotFound(err, "Template")
		}
		return s.Audit(ctx, tx, a, a.WorkspaceID, "template.update", "template", t.ID, payload)
	})
	if err != nil {
		return nil, err
	}
	return t, nil
}

// CreateTemplateVersion adds a draft version numbered one above the
// highest so far (audit template.version.create). The template's
// updatedAt moves first, which also locks its row on PostgreSQL so that
// concurrent creates number their versions one after the other.
func (s *Service) CreateTemplateVersion(ctx context.Context, a *usecase.Actor, id string, in TemplateVersionInput) (*notify.TemplateVersion, error) {
	if in.Text == nil || strings.TrimSpace(*in.Text) == "" {
		return nil, notify.Invalid("text is required")
	}
	if err := usecase.MaxLen("text", *in.Text, 100_000); err != nil {
		return nil, err
	}
	v := &notify.TemplateVersion{Text: *in.Text}
	if in.Title != nil {
		if err := usecase.MaxLen("title", *in.Title, 200); err != nil {
			return nil, err
		}
		if err := usecase.OneLine("title", *in.Title); err != nil {
			return nil, err
		}
		v.Title = *in.Title
	}
	if in.HTML != nil {
		if err := usecase.MaxLen("html", *in.HTML, 500_000); err != nil {
			return nil, err
		}
		v.HTML = *in.HTML
	}
	if in.Locale != nil {
		canon, err := compose.ParseLocale("locale", *in.Locale)
		if err != nil {
			return nil, err
		}
		v.Locale = canon
	}
	if in.LayoutID != nil {
		v.LayoutID = *in.LayoutID
	}
	err := s.Store.Update(ctx, func(tx notify.Tx) error {
		if v.LayoutID != "" {
			// Taken before the template's row, as DeleteLayout takes it:
			// the layout cannot go while this version is written.
			if err := tx.LockWorkspace(ctx, a.WorkspaceID); err != nil {
				return err
			}
		}
		t, err := tx.FindTemplate(ctx, a.WorkspaceID, id)
		if err != nil {
			return usecase.NotFound(err, "Template")
		}
		if err := checkVersionLayout(ctx, tx, t, v.LayoutID); err != nil {
			return err
		}
		now := s.Now()
		t.UpdatedAt = now
		if err := tx.UpdateTemplate(ctx, t); err != nil {
			return usecase.NotFound(err, "Template")
		}
		n, highest, err := tx.CountTemplateVersions(ctx, a.WorkspaceID, t.ID)
		if err != nil {
			return err
		}
		if n >= MaxTemplateVersions {
			return notify.Conflict("A template holds at most %d versions; delete one that no send uses first", MaxTemplateVersions)
		}
		v.TemplateID, v.Version, v.CreatedAt = t.ID, highest+1, now
		if err := tx.CreateTemplateVersion(ctx, v); err != nil {
			return usecase.ConflictOr(err, "Version %d of this template was created concurrently; try again", v.Version)
		}
		payload := map[string]any{"code": t.Code, "channel": t.Channel, "version": v.Version}
		if v.Locale != "" {
			payload["locale"] = v.Locale
		}
		if v.LayoutID != "" {
			payload["layoutId"] = v.LayoutID
		}
		return s.Audit(ctx, tx, a, a.WorkspaceID, "template.version.create", "template", t.ID, payload)
	})
	if err != nil {
		return nil, err
	}
	return v, nil
}

// PublishTemplateVersion publishes a version (audit
// template.version.publish). publishedAt is set by the first publish only;
// publishing again answers the version unchanged. Sends use the highest
// published version.
func (s *Service) PublishTemplateVersion(ctx context.Context, a *usecase.Actor, id string, version int) (*notify.TemplateVersion, error) {
	var out *notify.TemplateVersion
	err := s.Store.Update(ctx, func(tx notify.Tx) error {
		t, err := tx.FindTemplate(ctx, a.WorkspaceID, id)
		if err != nil {
			return usecase.NotFound(err, "Template")
		}
		if out, err = tx.FindTemplateVersion(ctx, a.WorkspaceID, t.ID, version); err != nil {
			return usecase.NotFound(err, "Template version")
		}
		already := out.PublishedAt != nil
		if !already {
			now := s.Now()
			if err := tx.PublishTemplateVersion(ctx, t.ID, version, now); err != nil {
				return usecase.NotFound(err, "Template version")
			}
			out.PublishedAt = &now
		}
		return s.Audit(ctx, tx, a, a.WorkspaceID, "template.version.publish", "template", t.ID,
			map[string]any{"code": t.Code, "channel": t.Channel, "version": version, "alreadyPublished": already})
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// DeleteTemplateVersion deletes a version that no send uses (audit
// template.version.delete), so that a template at MaxTemplateVersions
// can take new ones. Refused with 409: the newest version (numbers are
// never given twice: a new version is numbered one above the highest),
// and the version sends in its locale use (the highest published one of
// its locale; deleting it would change what sends carry without a
// publish). The template's updatedAt moves first, which locks its row on
// PostgreSQL: deletes and creates of one template run one after the other.
func (s *Service) DeleteTemplateVersion(ctx context.Context, a *usecase.Actor, id string, version int) error {
	return s.Store.Update(ctx, func(tx notify.Tx) error {
		t, err := tx.FindTemplate(ctx, a.WorkspaceID, id)
		if err != nil {
			return usecase.NotFound(err, "Template")
		}
		t.UpdatedAt = s.Now()
		if err := tx.UpdateTemplate(ctx, t); err != nil {
			return usecase.NotFound(err, "Template")
		}
		v, err := tx.FindTemplateVersion(ctx, a.WorkspaceID, t.ID, version)
		if err != nil {
			return usecase.NotFound(err, "Template version")
		}
		_, highest, err := tx.CountTemplateVersions(ctx, a.WorkspaceID, t.ID)
		if err != nil {
			return err
		}
		if version == highest {
			return notify.Conflict("Version %d is the newest version of this template and cannot be deleted", version)
		}
		if v.PublishedAt != nil {
			var own []string // v's own locale only (none: the default locale)
			if v.Locale != "" {
				own = []string{v.Locale}
			}
			used, err := tx.FindPublishedTemplateVersion(ctx, a.WorkspaceID, t.ID, own)
			if err != nil {
				return err
			}
			if used.Version == version {
				return notify.Conflict("Version %d is the published version sends use; publish a newer version first", version)
			}
		}
		if err := tx.DeleteTemplateVersion(ctx, t.ID, version, v.PublishedAt == nil); err != nil {
			if notify.IsNotFound(err) {
				return notify.Conflict("Version %d was published meanwhile; try again", version)
			}
			return err
		}
		payload := map[string]any{"code": t.Code, "channel": t.Channel, "version": version}
		if v.Locale != "" {
			payload["locale"] = v.Locale
		}
		return s.Audit(ctx, tx, a, a.WorkspaceID, "template.version.delete", "template", t.ID, payload)
	})
}

// SetReviewStatus records the vendor's review result of a msgr_alimtalk
// template (audit template.review_status); other channels answer 400.
func (s *Service) SetReviewStatus(ctx context.Context, a *usecase.Actor, id, status string) (*notify.Template, error) {
	if status != ReviewPending && status != ReviewApproved && status != ReviewRejected {
		return nil, notify.Invalid("reviewStatus must be PENDING, APPROVED or REJECTED")
	}
	var t *notify.Template
	err := s.Store.Update(ctx, func(tx notify.Tx) error {
		var err error
		if t, err = tx.FindTemplate(ctx, a.WorkspaceID, id); err != nil {
			return usecase.NotFound(err, "Template")
		}
		if t.Channel != notify.ChannelAlimTalk {
			return notify.Invalid("reviewStatus applies only to msgr_alimtalk templates")
		}
		previous := t.ReviewStatus
		t.ReviewStatus, t.UpdatedAt = status, s.Now()
		if err := tx.UpdateTemplate(ctx, t); err != nil {
			return usecase.NotFound(err, "Template")
		}
		return s.Audit(ctx, tx, a, a.WorkspaceID, "template.review_status", "template", t.ID,
			map[string]any{"code": t.Code, "reviewStatus": status, "previous": previous})
	})
	if err != nil {
		return nil, err
	}
	return t, nil
}

// checkVersionLayout verifies that id (when not empty) names a layout of
// the workspace and that t is an email template (400 otherwise).
func checkVersionLayout(ctx context.Context, tx notify.Tx, t *notify.Template, id string) error {
	if id == "" {
		return nil
	}
	if t.Channel != notify.ChannelEmail {
		return notify.Invalid("layoutId applies only to email templates")
	}
	if _, err := tx.FindLayout(ctx, t.WorkspaceID, id); err != nil {
		if notify.IsNotFound(err) {
			return notify.Invalid("layoutId does not name a layout of this workspace")
		}
		return err
	}
	return nil
}

// PreviewInput is the body of a template preview.
type PreviewInput struct {
	Version   *int    // a version of any state; nil: the one a send would use
	Locale    *string // chooses the version as a send does; not with Version
	Variables map[string]string
}

// Preview is a template version rendered as a send through it would be.
type Preview struct {
	Template         *notify.Template
	Version          *notify.TemplateVersion
	Layout           *notify.Layout
	Title, Text      string
	HTML             string
	MissingVariables []string // placeholders with no value in Variables
}

// PreviewTemplate renders a template version with sample variables
// through renderMessage, the rendering of a send (issue 21). Without a
// version it renders the version a send in Locale would use. It changes
// nothing, and does not check what a send checks besides (the template's
// status, an API key's template list, the review status).
func (s *Service) PreviewTemplate(ctx context.Context, a *usecase.Actor, id string, in PreviewInput) (*Preview, error) {
	locale := ""
	if in.Locale != nil {
		if in.Version != nil {
			return nil, notify.Invalid("version and locale cannot both be given")
		}
		var err error
		if locale, err = compose.ParseLocale("locale", *in.Locale); err != nil {
			return nil, err
		}
	}
	if in.Version != nil && *in.Version < 1 {
		return nil, notify.Invalid("version must be a positive integer")
	}
	if err := compose.CheckVariables("variables", in.Variables); err != nil {
		return nil, err
	}
	p := &Preview{}
	err := s.Store.View(ctx, func(tx notify.Tx) error {
		var err error
		if p.Template, err = tx.FindTemplate(ctx, a.WorkspaceID, id); err != nil {
			return usecase.NotFound(err, "Template")
		}
		if in.Version == nil {
			p.Version, err = compose.PublishedVersion(ctx, tx, p.Template, locale)
		} else {
			p.Version, err = tx.FindTemplateVersion(ctx, a.WorkspaceID, p.Template.ID, *in.Version)
			err = usecase.NotFound(err, "Template version")
		}
		if err != nil {
			return err
		}
		p.Layout, err = compose.VersionLayout(ctx, tx, a.WorkspaceID, p.Version)
		return err
	})
	if err != nil {
		return nil, err
	}
	src := compose.Message{Title: p.Version.Title, Text: p.Version.Text, HTML: p.Version.HTML}
	m, err := compose.Render(src, p.Layout, in.Variables, "")
	if err != nil {
		return nil, err
	}
	p.Title, p.Text, p.HTML = m.Title, m.Text, m.HTML
	p.MissingVariables = compose.MissingVariables(in.Variables, render.Names, compose.Parts(src, p.Layout)...)
	return p, nil
}
