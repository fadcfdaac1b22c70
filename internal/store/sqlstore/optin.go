package sqlstore

import (
	"context"
	"strings"

	"github.com/notifyd/notifyd/internal/notify"
)

// FindNewsletterSettings answers the defaults when the workspace has no
// stored row.
func (t newsletterTx) FindNewsletterSettings(ctx context.Context, workspaceID string) (*notify.NewsletterSettings, error) {
	s := &notify.NewsletterSettings{WorkspaceID: workspaceID}
	var u int64
	err := t.c.QueryRow(ctx, `SELECT double_opt_in, updated_at FROM newsletter_settings WHERE workspace_id = ?`, workspaceID).
		Scan(&s.DoubleOptIn, &u)
	if IsNotFound(err) {
		return s, nil
	}
	if err != nil {
		return nil, err
	}
	s.UpdatedAt = fromMsPtr(&u)
	return s, nil
}

func (t newsletterTx) PutNewsletterSettings(ctx context.Context, s *notify.NewsletterSettings) error {
	_, err := t.c.Exec(ctx, `INSERT INTO newsletter_settings (workspace_id, double_opt_in, updated_at) VALUES (?, ?, ?)
		ON CONFLICT (workspace_id) DO UPDATE SET double_opt_in = excluded.double_opt_in, updated_at = excluded.updated_at`,
		s.WorkspaceID, s.DoubleOptIn, msPtr(s.UpdatedAt))
	return err
}

// confirmationChunk rows of 5 parameters per statement.
const confirmationChunk = 500

// PutConfirmationsSent upserts in multi-row statements; the count of a
// subscriber's row grows by one per mail.
func (t newsletterTx) PutConfirmationsSent(ctx context.Context, workspaceID string, sent []notify.ConfirmationSent) error {
	for start := 0; start < len(sent); start += confirmationChunk {
		chunk := sent[start:min(start+confirmationChunk, len(sent))]
		args := make([]any, 0, len(chunk)*5)
		for _, c := range chunk {
			args = append(args, c.SubscriberID, workspaceID, c.RequestID, ms(c.SentAt), 1)
		}
		if _, err := t.c.Exec(ctx, `INSERT INTO subscriber_confirmations (subscriber_id, workspace_id, request_id, sent_at, sends)
			VALUES (?, ?, ?, ?, ?)`+strings.Repeat(", (?, ?, ?, ?, ?)", len(chunk)-1)+`
			ON CONFLICT (subscriber_id) DO UPDATE SET request_id = excluded.request_id, sent_at = excluded.sent_at,
			sends = subscriber_confirmations.sends + 1`, args...); err != nil {
			return err
		}
	}
	return nil
}

func (t newsletterTx) FindConfirmationSent(ctx context.Context, workspaceID, subscriberID string) (*notify.ConfirmationSent, error) {
	c := &notify.ConfirmationSent{WorkspaceID: workspaceID, SubscriberID: subscriberID}
	var at int64
	if err := t.c.QueryRow(ctx, `SELECT request_id, sent_at, sends FROM subscriber_confirmations
		WHERE workspace_id = ? AND subscriber_id = ?`, workspaceID, subscriberID).Scan(&c.RequestID, &at, &c.Sends); err != nil {
		return nil, err
	}
	c.SentAt = fromMs(at)
	return c, nil
}
