package sqlstore

import (
	"context"
	"strconv"
	"strings"
	"time"

	"github.com/notifyd/notifyd/internal/notify"
)

const templateCols = `t.id, t.workspace_id, t.code, t.channel, t.name, t.status, t.review_status, t.provider_account_id,
	t.vendor_template_id, t.sender_profile_key, t.created_at, t.updated_at,
	(SELECT MAX(v.version) FROM template_versions v WHERE v.template_id = t.id AND v.published_at IS NOT NULL AND v.locale IS NULL)`

func scanTemplate(row Row) (*notify.Template, error) {
	var t notify.Template
	var ch string
	var review, prov, vtid, spk *string
	var c, u int64
	var latest *int
	if err := row.Scan(&t.ID, &t.WorkspaceID, &t.Code, &ch, &t.Name, &t.Status, &review, &prov, &vtid, &spk, &c, &u, &latest); err != nil {
		return nil, err
	}
	t.Channel, t.ReviewStatus, t.ProviderAccountID, t.VendorTemplateID, t.SenderProfileKey = notify.Channel(ch), str(review), str(prov), str(vtid), str(spk)
	t.CreatedAt, t.UpdatedAt = fromMs(c), fromMs(u)
	if latest != nil {
		t.LatestPublishedVersion = *latest
	}
	return &t, nil
}

func (t templateTx) CreateTemplate(ctx context.Context, x *notify.Template) error {
	_, err := t.c.Exec(ctx, `INSERT INTO templates (id, workspace_id, code, channel, name, status, review_status, provider_account_id,
		vendor_template_id, sender_profile_key, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		x.ID, x.WorkspaceID, x.Code, string(x.Channel), x.Name, x.Status, nullable(x.ReviewStatus), nullable(x.ProviderAccountID),
		nullable(x.VendorTemplateID), nullable(x.SenderProfileKey), ms(x.CreatedAt), ms(x.UpdatedAt))
	return err
}

func (t templateTx) UpdateTemplate(ctx context.Context, x *notify.Template) error {
	return expectOne(t.c.Exec(ctx, `UPDATE templates SET name = ?, status = ?, review_status = ?, provider_account_id = ?,
		vendor_template_id = ?, sender_profile_key = ?, updated_at = ? WHERE workspace_id = ? AND id = ?`,
		x.Name, x.Status, nullable(x.ReviewStatus), nullable(x.ProviderAccountID), nullable(x.VendorTemplateID),
		nullable(x.SenderProfileKey), ms(x.UpdatedAt), x.WorkspaceID, x.ID))
}

func (t templateTx) FindTemplate(ctx context.Context, workspaceID, id string) (*notify.Template, error) {
	return scanTemplate(t.c.QueryRow(ctx, `SELECT `+templateCols+` FROM templates t WHERE t.workspace_id = ? AND t.id = ?`, workspaceID, id))
}

func (t templateTx) FindTemplateByCode(ctx context.Context, workspaceID, code string, channel notify.Channel) (*notify.Template, error) {
	return scanTemplate(t.c.QueryRow(ctx, `SELECT `+templateCols+` FROM templates t WHERE t.workspace_id = ? AND t.code = ? AND t.channel = ?`,
		workspaceID, code, string(channel)))
}

func (t templateTx) FindTemplates(ctx context.Context, workspaceID string) ([]*notify.Template, error) {
	return queryAll(ctx, t.c, scanTemplate, `SELECT `+templateCols+` FROM templates t WHERE t.workspace_id = ? ORDER BY t.created_at, t.id`, workspaceID)
}

func (t templateTx) CreateTemplateVersion(ctx context.Context, v *notify.TemplateVersion) error {
	_, err := t.c.Exec(ctx, `INSERT INTO template_versions (template_id, version, title, text, html, published_at, created_at, locale, layout_id)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`, v.TemplateID, v.Version, nullable(v.Title), v.Text, nullable(v.HTML), msPtr(v.PublishedAt), ms(v.CreatedAt),
		nullable(v.Locale), nullable(v.LayoutID))
	return err
}

const versionCols = `v.template_id, v.version, v.title, v.text, v.html, v.published_at, v.created_at, v.locale, v.layout_id`

// versionSummaryCols are versionCols with the bodies (text and html) left
// out: a summary reads only the small columns.
const versionSummaryCols = `v.template_id, v.version, v.title, '', NULL, v.published_at, v.created_at, v.locale, v.layout_id`

// ofTemplate scopes template_versions v to a template of the workspace
// (arguments: workspace id, template id).
const ofTemplate = ` FROM template_versions v JOIN templates t ON t.id = v.template_id WHERE t.workspace_id = ? AND v.template_id = ?`

func scanTemplateVersion(row Row) (*notify.TemplateVersion, error) {
	var v notify.TemplateVersion
	var title, html, locale, layout *string
	var pub *int64
	var c int64
	if err := row.Scan(&v.TemplateID, &v.Version, &title, &v.Text, &html, &pub, &c, &locale, &layout); err != nil {
		return nil, err
	}
	v.Title, v.HTML, v.PublishedAt, v.CreatedAt = str(title), str(html), fromMsPtr(pub), fromMs(c)
	v.Locale, v.LayoutID = str(locale), str(layout)
	return &v, nil
}

func (t templateTx) FindTemplateVersions(ctx context.Context, workspaceID, templateID string, f notify.TemplateVersionFilter) ([]*notify.TemplateVersion, error) {
	cols := versionCols
	if f.Summary {
		cols = versionSummaryCols
	}
	q, args := `SELECT `+cols+ofTemplate, []any{workspaceID, templateID}
	if f.Before > 0 {
		q, args = q+` AND v.version < ?`, append(args, f.Before)
	}
	return queryAll(ctx, t.c, scanTemplateVersion, q+` ORDER BY v.version DESC LIMIT ?`, append(args, f.Limit)...)
}

func (t templateTx) FindTemplateVersion(ctx context.Context, workspaceID, templateID string, version int) (*notify.TemplateVersion, error) {
	return scanTemplateVersion(t.c.QueryRow(ctx, `SELECT `+versionCols+ofTemplate+` AND v.version = ?`, workspaceID, templateID, version))
}

// FindPublishedTemplateVersion chooses the version in a subquery that
// reads no body (published versions of the locales and of the default
// locale, ranked by the locale's place in the list, the default last, then
// newest first), then reads that one row by its key.
func (t templateTx) FindPublishedTemplateVersion(ctx context.Context, workspaceID, templateID string, locales []string) (*notify.TemplateVersion, error) {
	args := []any{workspaceID, templateID, templateID}
	in, order := "", "p.version DESC"
	if len(locales) > 0 {
		rank := ""
		for i, l := range locales {
			args = append(args, l)
			rank += " WHEN ? THEN " + strconv.Itoa(i)
		}
		for _, l := range locales {
			args = append(args, l)
		}
		in = " OR p.locale IN (?" + strings.Repeat(", ?", len(locales)-1) + ")"
		order = "CASE p.locale" + rank + " ELSE " + strconv.Itoa(len(locales)) + " END, " + order
	}
	return scanTemplateVersion(t.c.QueryRow(ctx, `SELECT `+versionCols+ofTemplate+` AND v.version = (SELECT p.version FROM template_versions p
		WHERE p.template_id = ? AND p.published_at IS NOT NULL AND (p.locale IS NULL`+in+`) ORDER BY `+order+` LIMIT 1)`, args...))
}

func (t templateTx) CountTemplateVersions(ctx context.Context, workspaceID, templateID string) (n, highest int, err error) {
	err = t.c.QueryRow(ctx, `SELECT COUNT(*), COALESCE(MAX(v.version), 0)`+ofTemplate, workspaceID, templateID).Scan(&n, &highest)
	return n, highest, err
}

func (t templateTx) PublishTemplateVersion(ctx context.Context, templateID string, version int, at time.Time) error {
	return expectOne(t.c.Exec(ctx, `UPDATE template_versions SET published_at = COALESCE(published_at, ?) WHERE template_id = ? AND version = ?`,
		ms(at), templateID, version))
}

// DeleteTemplateVersion's draft condition is evaluated on the row as it
// is when the statement runs, so a publish that committed meanwhile wins.
func (t templateTx) DeleteTemplateVersion(ctx context.Context, templateID string, version int, draft bool) error {
	q := `DELETE FROM template_versions WHERE template_id = ? AND version = ?`
	if draft {
		q += ` AND published_at IS NULL`
	}
	return expectOne(t.c.Exec(ctx, q, templateID, version))
}
