package sqlstore

import (
	"context"
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

func (t *Tx) CreateTemplate(ctx context.Context, x *notify.Template) error {
	_, err := t.c.Exec(ctx, `INSERT INTO templates (id, workspace_id, code, channel, name, status, review_status, provider_account_id,
		vendor_template_id, sender_profile_key, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		x.ID, x.WorkspaceID, x.Code, string(x.Channel), x.Name, x.Status, nullable(x.ReviewStatus), nullable(x.ProviderAccountID),
		nullable(x.VendorTemplateID), nullable(x.SenderProfileKey), ms(x.CreatedAt), ms(x.UpdatedAt))
	return err
}

func (t *Tx) UpdateTemplate(ctx context.Context, x *notify.Template) error {
	return expectOne(t.c.Exec(ctx, `UPDATE templates SET name = ?, status = ?, review_status = ?, provider_account_id = ?,
		vendor_template_id = ?, sender_profile_key = ?, updated_at = ? WHERE workspace_id = ? AND id = ?`,
		x.Name, x.Status, nullable(x.ReviewStatus), nullable(x.ProviderAccountID), nullable(x.VendorTemplateID),
		nullable(x.SenderProfileKey), ms(x.UpdatedAt), x.WorkspaceID, x.ID))
}

func (t *Tx) FindTemplate(ctx context.Context, workspaceID, id string) (*notify.Template, error) {
	return scanTemplate(t.c.QueryRow(ctx, `SELECT `+templateCols+` FROM templates t WHERE t.workspace_id = ? AND t.id = ?`, workspaceID, id))
}

func (t *Tx) FindTemplateByCode(ctx context.Context, workspaceID, code string, channel notify.Channel) (*notify.Template, error) {
	return scanTemplate(t.c.QueryRow(ctx, `SELECT `+templateCols+` FROM templates t WHERE t.workspace_id = ? AND t.code = ? AND t.channel = ?`,
		workspaceID, code, string(channel)))
}

func (t *Tx) FindTemplates(ctx context.Context, workspaceID string) ([]*notify.Template, error) {
	return queryAll(ctx, t.c, scanTemplate, `SELECT `+templateCols+` FROM templates t WHERE t.workspace_id = ? ORDER BY t.created_at, t.id`, workspaceID)
}

func (t *Tx) CreateTemplateVersion(ctx context.Context, v *notify.TemplateVersion) error {
	_, err := t.c.Exec(ctx, `INSERT INTO template_versions (template_id, version, title, text, html, published_at, created_at, locale, layout_id)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`, v.TemplateID, v.Version, nullable(v.Title), v.Text, nullable(v.HTML), msPtr(v.PublishedAt), ms(v.CreatedAt),
		nullable(v.Locale), nullable(v.LayoutID))
	return err
}

// FindTemplateVersions lists versions, newest first.
func (t *Tx) FindTemplateVersions(ctx context.Context, templateID string) ([]*notify.TemplateVersion, error) {
	return queryAll(ctx, t.c, func(row Row) (*notify.TemplateVersion, error) {
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
	}, `SELECT template_id, version, title, text, html, published_at, created_at, locale, layout_id FROM template_versions
		WHERE template_id = ? ORDER BY version DESC`, templateID)
}

func (t *Tx) PublishTemplateVersion(ctx context.Context, templateID string, version int, at time.Time) error {
	return expectOne(t.c.Exec(ctx, `UPDATE template_versions SET published_at = COALESCE(published_at, ?) WHERE template_id = ? AND version = ?`,
		ms(at), templateID, version))
}
