package sqlstore

import (
	"context"
	"time"

	"github.com/notifyd/notifyd/internal/notify"
)

const otpCols = `id, workspace_id, channel, mode, purpose, recipient, recipient_masked, status, code_hash, link_hash,
	attempts, resend_count, expires_at, verified_at, resend_available_at, request_id, created_at, updated_at`

func scanOTPSession(r Row) (*notify.OTPSession, error) {
	var s notify.OTPSession
	var ch string
	var code, link, req *string
	var exp, ra, cr, up int64
	var ver *int64
	if err := r.Scan(&s.ID, &s.WorkspaceID, &ch, &s.Mode, &s.Purpose, &s.Recipient, &s.RecipientMasked, &s.Status, &code, &link,
		&s.Attempts, &s.ResendCount, &exp, &ver, &ra, &req, &cr, &up); err != nil {
		return nil, err
	}
	s.Channel, s.CodeHash, s.LinkHash, s.RequestID = notify.Channel(ch), str(code), str(link), str(req)
	s.ExpiresAt, s.VerifiedAt, s.ResendAvailableAt, s.CreatedAt, s.UpdatedAt = fromMs(exp), fromMsPtr(ver), fromMs(ra), fromMs(cr), fromMs(up)
	return &s, nil
}

func (t otpTx) CreateOTPSession(ctx context.Context, s *notify.OTPSession) error {
	_, err := t.c.Exec(ctx, `INSERT INTO otp_sessions (`+otpCols+`) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		s.ID, s.WorkspaceID, string(s.Channel), s.Mode, s.Purpose, s.Recipient, s.RecipientMasked, s.Status, nullable(s.CodeHash),
		nullable(s.LinkHash), s.Attempts, s.ResendCount, ms(s.ExpiresAt), msPtr(s.VerifiedAt), ms(s.ResendAvailableAt),
		nullable(s.RequestID), ms(s.CreatedAt), ms(s.UpdatedAt))
	return err
}

func (t otpTx) FindOTPSession(ctx context.Context, workspaceID, id string) (*notify.OTPSession, error) {
	return scanOTPSession(t.c.QueryRow(ctx, `SELECT `+otpCols+` FROM otp_sessions WHERE workspace_id = ? AND id = ?`, workspaceID, id))
}

func (t otpTx) FindOTPSessionByLink(ctx context.Context, linkHash string) (*notify.OTPSession, error) {
	return scanOTPSession(t.c.QueryRow(ctx, `SELECT `+otpCols+` FROM otp_sessions WHERE link_hash = ?`, linkHash))
}

func (t otpTx) UpdateOTPSession(ctx context.Context, s *notify.OTPSession, expectStatus string, expectResends int) (bool, error) {
	n, err := t.c.Exec(ctx, `UPDATE otp_sessions SET status = ?, code_hash = ?, link_hash = ?, attempts = ?, resend_count = ?,
		expires_at = ?, verified_at = ?, resend_available_at = ?, request_id = ?, updated_at = ?
		WHERE workspace_id = ? AND id = ? AND status = ? AND resend_count = ?`,
		s.Status, nullable(s.CodeHash), nullable(s.LinkHash), s.Attempts, s.ResendCount, ms(s.ExpiresAt), msPtr(s.VerifiedAt),
		ms(s.ResendAvailableAt), nullable(s.RequestID), ms(s.UpdatedAt), s.WorkspaceID, s.ID, expectStatus, expectResends)
	return n == 1, err
}

func (t otpTx) UseOTPAttempt(ctx context.Context, workspaceID, id string, max int, now time.Time) (bool, error) {
	n, err := t.c.Exec(ctx, `UPDATE otp_sessions SET attempts = attempts + 1, updated_at = ?
		WHERE workspace_id = ? AND id = ? AND status = ? AND mode = ? AND attempts < ? AND expires_at > ?`,
		ms(now), workspaceID, id, notify.OTPPending, notify.OTPModeCode, max, ms(now))
	return n == 1, err
}

func (t otpTx) IncrementOTPSendCount(ctx context.Context, workspaceID, recipient, windowKind string, windowStart time.Time) (int, error) {
	var n int
	err := t.c.QueryRow(ctx, `INSERT INTO otp_send_counters (workspace_id, recipient, window_kind, window_start, count)
		VALUES (?, ?, ?, ?, 1)
		ON CONFLICT (workspace_id, recipient, window_kind, window_start) DO UPDATE SET count = otp_send_counters.count + 1
		RETURNING count`, workspaceID, recipient, windowKind, ms(windowStart)).Scan(&n)
	return n, err
}

func (t otpTx) DeleteOTPSessionsExpiredBefore(ctx context.Context, before time.Time) (int, error) {
	n, err := t.c.Exec(ctx, `DELETE FROM otp_sessions WHERE expires_at < ?`, ms(before))
	return int(n), err
}

func (t otpTx) DeleteOTPSendCountersBefore(ctx context.Context, hourStart, dayStart time.Time) (int, error) {
	n, err := t.c.Exec(ctx, `DELETE FROM otp_send_counters
		WHERE (window_kind = ? AND window_start < ?) OR (window_kind = ? AND window_start < ?)`,
		notify.OTPWindowHour, ms(hourStart), notify.OTPWindowDay, ms(dayStart))
	return int(n), err
}
