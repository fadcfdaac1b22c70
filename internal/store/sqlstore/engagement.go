package sqlstore

import (
	"context"
	"strings"

	"github.com/notifyd/notifyd/internal/notify"
)

// engagementTx holds the verbs of email engagement (issue 35, item 4).
type engagementTx struct{ *Tx }

func (t engagementTx) FindTrackingSettings(ctx context.Context, workspaceID string) ([]*notify.TrackingSetting, error) {
	rows, err := t.c.Query(ctx, `SELECT scope, scope_key, opens, clicks, updated_at FROM tracking_settings
		WHERE workspace_id = ? ORDER BY scope, scope_key`, workspaceID)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []*notify.TrackingSetting
	for rows.Next() {
		s := &notify.TrackingSetting{WorkspaceID: workspaceID}
		var up int64
		if err := rows.Scan(&s.Scope, &s.Key, &s.Opens, &s.Clicks, &up); err != nil {
			return nil, err
		}
		s.UpdatedAt = fromMs(up)
		out = append(out, s)
	}
	return out, rows.Err()
}

func (t engagementTx) PutTrackingSetting(ctx context.Context, s *notify.TrackingSetting) error {
	_, err := t.c.Exec(ctx, `INSERT INTO tracking_settings (workspace_id, scope, scope_key, opens, clicks, updated_at)
		VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (workspace_id, scope, scope_key)
		DO UPDATE SET opens = excluded.opens, clicks = excluded.clicks, updated_at = excluded.updated_at`,
		s.WorkspaceID, s.Scope, s.Key, s.Opens, s.Clicks, ms(s.UpdatedAt))
	return err
}

func (t engagementTx) DeleteTrackingSetting(ctx context.Context, workspaceID, scope, key string) error {
	n, err := t.c.Exec(ctx, `DELETE FROM tracking_settings WHERE workspace_id = ? AND scope = ? AND scope_key = ?`,
		workspaceID, scope, key)
	if err != nil {
		return err
	}
	if n == 0 {
		return notify.ErrNotFound
	}
	return nil
}

// AddEngagement upserts in multi-row statements: counts add up, the
// earlier first time stays.
func (t engagementTx) AddEngagement(ctx context.Context, rs []*notify.RequestEngagement, links []*notify.LinkClicks) error {
	const rcols = 10
	one := "(?" + strings.Repeat(", ?", rcols-1) + ")"
	start := 0
	for _, size := range t.chunks(len(rs), 256) {
		part := rs[start : start+size]
		start += size
		args := make([]any, 0, len(part)*rcols)
		for _, r := range part {
			args = append(args, r.RequestID, r.WorkspaceID, r.CampaignID, r.Opens, r.Clicks, r.ScannerOpens, r.ScannerClicks,
				msPtr(r.FirstOpenedAt), msPtr(r.FirstClickedAt), ms(r.LastAt))
		}
		if _, err := t.c.Exec(ctx, `INSERT INTO request_engagement (request_id, workspace_id, campaign_id, opens, clicks,
			scanner_opens, scanner_clicks, first_opened_at, first_clicked_at, last_at) VALUES `+one+strings.Repeat(", "+one, size-1)+`
			ON CONFLICT (request_id) DO UPDATE SET opens = request_engagement.opens + excluded.opens,
			clicks = request_engagement.clicks + excluded.clicks,
			scanner_opens = request_engagement.scanner_opens + excluded.scanner_opens,
			scanner_clicks = request_engagement.scanner_clicks + excluded.scanner_clicks,
			first_opened_at = COALESCE(request_engagement.first_opened_at, excluded.first_opened_at),
			first_clicked_at = COALESCE(request_engagement.first_clicked_at, excluded.first_clicked_at),
			last_at = CASE WHEN excluded.last_at > request_engagement.last_at THEN excluded.last_at ELSE request_engagement.last_at END`,
			args...); err != nil {
			return err
		}
	}
	const lcols = 7
	one = "(?" + strings.Repeat(", ?", lcols-1) + ")"
	start = 0
	for _, size := range t.chunks(len(links), 256) {
		part := links[start : start+size]
		start += size
		args := make([]any, 0, len(part)*lcols)
		for _, l := range part {
			args = append(args, l.CampaignID, l.URLHash, l.WorkspaceID, l.URL, l.Index, l.Clicks, l.ScannerClicks)
		}
		if _, err := t.c.Exec(ctx, `INSERT INTO campaign_links (campaign_id, url_hash, workspace_id, url, link_index, clicks,
			scanner_clicks) VALUES `+one+strings.Repeat(", "+one, size-1)+`
			ON CONFLICT (campaign_id, url_hash) DO UPDATE SET clicks = campaign_links.clicks + excluded.clicks,
			scanner_clicks = campaign_links.scanner_clicks + excluded.scanner_clicks,
			link_index = CASE WHEN excluded.link_index < campaign_links.link_index THEN excluded.link_index ELSE campaign_links.link_index END`,
			args...); err != nil {
			return err
		}
	}
	return nil
}

func (t engagementTx) ClaimEngagementEvents(ctx context.Context, kind string, requestIDs []string) ([]string, error) {
	if len(requestIDs) == 0 {
		return nil, nil
	}
	flag, first := "opened_event", "first_opened_at"
	if kind == notify.HitClick {
		flag, first = "clicked_event", "first_clicked_at"
	}
	args := make([]any, len(requestIDs))
	for i, id := range requestIDs {
		args[i] = id
	}
	rows, err := t.c.Query(ctx, `UPDATE request_engagement SET `+flag+` = TRUE WHERE request_id IN (?`+
		strings.Repeat(", ?", len(requestIDs)-1)+`) AND NOT `+flag+` AND `+first+` IS NOT NULL RETURNING request_id`, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			return nil, err
		}
		out = append(out, id)
	}
	return out, rows.Err()
}

func (t engagementTx) FindRequestEngagement(ctx context.Context, workspaceID, requestID string) (*notify.RequestEngagement, error) {
	r := notify.RequestEngagement{WorkspaceID: workspaceID, RequestID: requestID}
	var fo, fc *int64
	var last int64
	err := t.c.QueryRow(ctx, `SELECT campaign_id, opens, clicks, scanner_opens, scanner_clicks, first_opened_at, first_clicked_at,
		last_at FROM request_engagement WHERE request_id = ? AND workspace_id = ?`, requestID, workspaceID).
		Scan(&r.CampaignID, &r.Opens, &r.Clicks, &r.ScannerOpens, &r.ScannerClicks, &fo, &fc, &last)
	if err != nil {
		return nil, err
	}
	r.FirstOpenedAt, r.FirstClickedAt, r.LastAt = fromMsPtr(fo), fromMsPtr(fc), fromMs(last)
	return &r, nil
}

func (t engagementTx) FindCampaignEngagement(ctx context.Context, workspaceID, campaignID string) (*notify.CampaignEngagement, error) {
	var c notify.CampaignEngagement
	var opened, clicked, so, sc *int
	if err := t.c.QueryRow(ctx, `SELECT
		SUM(CASE WHEN first_opened_at IS NOT NULL THEN 1 ELSE 0 END),
		SUM(CASE WHEN first_clicked_at IS NOT NULL THEN 1 ELSE 0 END),
		SUM(CASE WHEN first_opened_at IS NULL AND scanner_opens > 0 THEN 1 ELSE 0 END),
		SUM(CASE WHEN first_clicked_at IS NULL AND scanner_clicks > 0 THEN 1 ELSE 0 END)
		FROM request_engagement WHERE campaign_id = ? AND workspace_id = ?`, campaignID, workspaceID).
		Scan(&opened, &clicked, &so, &sc); err != nil {
		return nil, err
	}
	for dst, v := range map[*int]*int{&c.Opened: opened, &c.Clicked: clicked, &c.ScannerOpened: so, &c.ScannerClick: sc} {
		if v != nil {
			*dst = *v
		}
	}
	rows, err := t.c.Query(ctx, `SELECT url_hash, url, link_index, clicks, scanner_clicks FROM campaign_links
		WHERE campaign_id = ? AND workspace_id = ? ORDER BY clicks DESC, link_index, url_hash LIMIT 1000`, campaignID, workspaceID)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	for rows.Next() {
		l := &notify.LinkClicks{WorkspaceID: workspaceID, CampaignID: campaignID}
		if err := rows.Scan(&l.URLHash, &l.URL, &l.Index, &l.Clicks, &l.ScannerClicks); err != nil {
			return nil, err
		}
		c.Links = append(c.Links, l)
	}
	return &c, rows.Err()
}

func (t engagementTx) CampaignReceiptCounts(ctx context.Context, workspaceID, campaignID string) (map[string]int, error) {
	rows, err := t.c.Query(ctx, `SELECT d.status, COUNT(DISTINCT d.request_id) FROM delivery_receipts d
		JOIN notification_requests r ON r.id = d.request_id
		WHERE r.campaign_id = ? AND r.workspace_id = ? AND d.workspace_id = ? GROUP BY d.status`, campaignID, workspaceID, workspaceID)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := map[string]int{}
	for rows.Next() {
		var s string
		var n int
		if err := rows.Scan(&s, &n); err != nil {
			return nil, err
		}
		out[s] = n
	}
	return out, rows.Err()
}
