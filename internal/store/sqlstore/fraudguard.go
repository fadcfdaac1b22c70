package sqlstore

import (
	"context"
	"strings"
	"time"

	"github.com/notifyd/notifyd/internal/notify"
)

const fraudGuardCols = `workspace_id, enabled, default_country_code, allowed_countries, prefix_digits, prefix_window_seconds,
	prefix_max_sends, client_window_seconds, client_max_sends, daily_budget, updated_at, denied_prefixes`

func (t otpTx) FindOTPFraudGuard(ctx context.Context, workspaceID string) (*notify.OTPFraudGuard, error) {
	var g notify.OTPFraudGuard
	var allowed, denied *string
	var u int64
	err := t.c.QueryRow(ctx, `SELECT `+fraudGuardCols+` FROM otp_fraud_guards WHERE workspace_id = ?`, workspaceID).Scan(
		&g.WorkspaceID, &g.Enabled, &g.DefaultCountryCode, &allowed, &g.PrefixDigits, &g.PrefixWindowSeconds,
		&g.PrefixMaxSends, &g.ClientWindowSeconds, &g.ClientMaxSends, &g.DailyBudget, &u, &denied)
	if err != nil {
		return nil, err
	}
	g.UpdatedAt = fromMs(u)
	if allowed != nil {
		g.AllowedCountries = []string{}
		if err := fromJSON(*allowed, &g.AllowedCountries); err != nil {
			return nil, err
		}
	}
	if denied != nil {
		if err := fromJSON(*denied, &g.DeniedPrefixes); err != nil {
			return nil, err
		}
	}
	return &g, nil
}

func (t otpTx) PutOTPFraudGuard(ctx context.Context, g *notify.OTPFraudGuard) error {
	var allowed, denied *string
	if g.AllowedCountries != nil {
		s := toJSON(g.AllowedCountries)
		allowed = &s
	}
	if len(g.DeniedPrefixes) > 0 {
		s := toJSON(g.DeniedPrefixes)
		denied = &s
	}
	_, err := t.c.Exec(ctx, `INSERT INTO otp_fraud_guards (`+fraudGuardCols+`) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
		ON CONFLICT (workspace_id) DO UPDATE SET enabled = excluded.enabled,
		default_country_code = excluded.default_country_code, allowed_countries = excluded.allowed_countries,
		prefix_digits = excluded.prefix_digits, prefix_window_seconds = excluded.prefix_window_seconds,
		prefix_max_sends = excluded.prefix_max_sends, client_window_seconds = excluded.client_window_seconds,
		client_max_sends = excluded.client_max_sends, daily_budget = excluded.daily_budget, updated_at = excluded.updated_at,
		denied_prefixes = excluded.denied_prefixes`,
		g.WorkspaceID, g.Enabled, g.DefaultCountryCode, allowed, g.PrefixDigits, g.PrefixWindowSeconds,
		g.PrefixMaxSends, g.ClientWindowSeconds, g.ClientMaxSends, g.DailyBudget, ms(g.UpdatedAt), denied)
	return err
}

func (t otpTx) AddOTPFraudCounts(ctx context.Context, workspaceID string, ws []notify.OTPFraudWindow) ([]int, error) {
	out := make([]int, len(ws))
	if len(ws) == 0 {
		return out, nil
	}
	args := make([]any, 0, 4*len(ws))
	keys := make([]notify.RateWindow, len(ws))
	for i, w := range ws {
		args = append(args, workspaceID, w.Key, ms(w.Start), ms(w.End))
		keys[i] = notify.RateWindow{ScopeKey: w.Key, Start: w.Start}
	}
	rows, err := t.c.Query(ctx, `INSERT INTO otp_fraud_counters (workspace_id, counter_key, window_start, window_end, count)
		VALUES (?, ?, ?, ?, 1)`+strings.Repeat(", (?, ?, ?, ?, 1)", len(ws)-1)+`
		ON CONFLICT (workspace_id, counter_key, window_start) DO UPDATE SET count = otp_fraud_counters.count + 1
		RETURNING counter_key, window_start, count`, args...)
	if err != nil {
		return nil, err
	}
	return windowCounts(rows, keys, out)
}

func (t otpTx) DeleteOTPFraudCountersEndedBefore(ctx context.Context, before time.Time) (int, error) {
	n, err := t.c.Exec(ctx, `DELETE FROM otp_fraud_counters WHERE window_end < ?`, ms(before))
	return int(n), err
}
