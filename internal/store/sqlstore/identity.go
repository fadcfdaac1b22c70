package sqlstore

import (
	"context"

	"github.com/notifyd/notifyd/internal/notify"
)

const identityCols = `id, workspace_id, provider_account_id, type, name, vendor_id, status, origin, mail_from_domain, spf_include,
	records, created_at, updated_at, checked_at, verified_at`

func (t providerTx) CreateSendingIdentity(ctx context.Context, s *notify.SendingIdentity) error {
	_, err := t.c.Exec(ctx, `INSERT INTO sending_identities (`+identityCols+`) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		s.ID, s.WorkspaceID, s.ProviderAccountID, s.Type, s.Name, s.VendorID, s.Status, s.Origin, s.MailFromDomain, s.SPFInclude,
		recordsJSON(s.Records), ms(s.CreatedAt), ms(s.UpdatedAt), ms(s.CheckedAt), msPtr(s.VerifiedAt))
	return err
}

// recordsJSON stores no records as [] rather than null.
func recordsJSON(rs []notify.DNSRecord) string {
	if rs == nil {
		rs = []notify.DNSRecord{}
	}
	return toJSON(rs)
}

func scanIdentity(r Row) (*notify.SendingIdentity, error) {
	var s notify.SendingIdentity
	var records string
	var c, u, ch int64
	var v *int64
	if err := r.Scan(&s.ID, &s.WorkspaceID, &s.ProviderAccountID, &s.Type, &s.Name, &s.VendorID, &s.Status, &s.Origin,
		&s.MailFromDomain, &s.SPFInclude, &records, &c, &u, &ch, &v); err != nil {
		return nil, err
	}
	if err := fromJSON(records, &s.Records); err != nil {
		return nil, err
	}
	s.CreatedAt, s.UpdatedAt, s.CheckedAt, s.VerifiedAt = fromMs(c), fromMs(u), fromMs(ch), fromMsPtr(v)
	return &s, nil
}

func (t providerTx) UpdateSendingIdentity(ctx context.Context, s *notify.SendingIdentity) error {
	return expectOne(t.c.Exec(ctx, `UPDATE sending_identities SET vendor_id = ?, status = ?, mail_from_domain = ?, spf_include = ?,
		records = ?, updated_at = ?, checked_at = ?, verified_at = ? WHERE workspace_id = ? AND provider_account_id = ? AND id = ?`,
		s.VendorID, s.Status, s.MailFromDomain, s.SPFInclude, recordsJSON(s.Records), ms(s.UpdatedAt), ms(s.CheckedAt),
		msPtr(s.VerifiedAt), s.WorkspaceID, s.ProviderAccountID, s.ID))
}

func (t providerTx) FindSendingIdentity(ctx context.Context, workspaceID, providerAccountID, id string) (*notify.SendingIdentity, error) {
	return scanIdentity(t.c.QueryRow(ctx, `SELECT `+identityCols+` FROM sending_identities
		WHERE workspace_id = ? AND provider_account_id = ? AND id = ?`, workspaceID, providerAccountID, id))
}

func (t providerTx) FindSendingIdentities(ctx context.Context, workspaceID, providerAccountID string) ([]*notify.SendingIdentity, error) {
	return queryAll(ctx, t.c, scanIdentity, `SELECT `+identityCols+` FROM sending_identities
		WHERE workspace_id = ? AND provider_account_id = ? ORDER BY created_at, id`, workspaceID, providerAccountID)
}
