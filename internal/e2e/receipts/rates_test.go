package receipts_test

import (
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/notifyd/notifyd/internal/notifytest"
	"github.com/notifyd/notifyd/internal/simulator"
)

type tally struct {
	Pending, Delivered, Undelivered, Unknown, Total int
	DeliveryRate                                    *float64
}

type rates struct {
	Interval   string           `json:"interval"`
	Total      tally            `json:"total"`
	ByChannel  map[string]tally `json:"byChannel"`
	ByProvider []struct {
		tally
		ProviderAccountID string `json:"providerAccountId"`
		ProviderKind      string `json:"providerKind"`
		Channel           string `json:"channel"`
	} `json:"byProvider"`
	Series []struct {
		Start      string           `json:"start"`
		Total      tally            `json:"total"`
		ByChannel  map[string]tally `json:"byChannel"`
		ByProvider map[string]tally `json:"byProvider"`
	} `json:"series"`
}

func metricsRates(t *testing.T, b *bundle, query string) rates {
	t.Helper()
	var m struct {
		Receipts rates `json:"receipts"`
	}
	b.dashOK(t, "GET", "/v1/metrics"+query, nil, &m)
	return m.Receipts
}

// Delivery rates (issue 35, item 5): /v1/metrics counts the receipts of
// the range per channel, per provider account and per hour, the rate
// being delivered over final; Prometheus counts them by channel and kind;
// the console overview shows them; another workspace sees none.
func TestDeliveryRates(t *testing.T) {
	t.Parallel()
	b := setup(t, "vendorb_sms")
	require.True(t, b.env.Sim.QueueReport(simulator.ReportRule{Kind: "vendorb_sms", To: "01000000003", Outcome: "undelivered", DelayMs: 0}))
	var ids []string
	for i := 1; i <= 3; i++ {
		ids = append(ids, b.send(t, notifytest.SMS(fmt.Sprintf("0100000000%d", i), "hello")))
	}
	b.waitReceipt(t, ids[0], "delivered")
	b.waitReceipt(t, ids[1], "delivered")
	b.waitReceipt(t, ids[2], "undelivered")
	// A chat send has no receipt and counts nowhere.
	b.send(t, map[string]any{"channel": "chata_webhook", "recipient": map[string]any{"address": "ops"}, "content": map[string]any{"text": "hi"}})

	r := metricsRates(t, b, "")
	require.Equal(t, "hour", r.Interval)
	require.Equal(t, tally{Delivered: 2, Undelivered: 1, Total: 3, DeliveryRate: r.Total.DeliveryRate}, r.Total)
	require.InDelta(t, 2.0/3, *r.Total.DeliveryRate, 1e-9)
	require.Equal(t, []string{"sms"}, keys(r.ByChannel))
	require.Equal(t, 2, r.ByChannel["sms"].Delivered)
	require.Len(t, r.ByProvider, 1)
	require.Equal(t, b.accounts["vendorb_sms"], r.ByProvider[0].ProviderAccountID)
	require.Equal(t, "vendorb_sms", r.ByProvider[0].ProviderKind)
	require.Equal(t, "sms", r.ByProvider[0].Channel)
	require.Equal(t, 1, r.ByProvider[0].Undelivered)
	require.Len(t, r.Series, 25, "the default last 24 h, hourly, both ends' hours included")
	last := r.Series[len(r.Series)-1]
	require.Equal(t, 3, last.Total.Total, "the sends are in the current hour")
	require.Equal(t, 2, last.ByChannel["sms"].Delivered)
	require.Equal(t, 1, last.ByProvider[b.accounts["vendorb_sms"]].Undelivered)
	require.Zero(t, r.Series[0].Total.Total)
	require.Nil(t, r.Series[0].Total.DeliveryRate, "no final receipt: no rate")

	// Daily buckets on request; a range before the sends counts none.
	now := time.Now().UTC()
	q := func(from, to time.Time, interval string) string {
		return "?from=" + url.QueryEscape(from.Format(time.RFC3339)) + "&to=" + url.QueryEscape(to.Format(time.RFC3339)) + "&interval=" + interval
	}
	d := metricsRates(t, b, q(now.Add(-72*time.Hour), now.Add(time.Minute), "day"))
	require.Equal(t, "day", d.Interval)
	require.Len(t, d.Series, 4)
	require.Equal(t, 3, d.Total.Total)
	require.Equal(t, 3, d.Series[3].Total.Total)
	require.Zero(t, metricsRates(t, b, q(now.Add(-72*time.Hour), now.Add(-48*time.Hour), "hour")).Total.Total)

	// Bad intervals are 400 with a clear detail.
	for _, query := range []string{"?interval=minute", q(now.Add(-90*24*time.Hour), now, "hour")} {
		r := notifytest.Dash(t, b.env.Owner, "GET", "/v1/metrics"+query, nil)
		require.Equal(t, http.StatusBadRequest, r.Status, "%s: %s", query, r.Body)
		require.Contains(t, string(r.Body), "interval")
	}

	// Another workspace counts none of them.
	other, _ := b.env.NewWorkspace(t, "other", "other-rates@example.com")
	or := notifytest.Dash(t, other, "GET", "/v1/metrics", nil)
	require.Equal(t, http.StatusOK, or.Status)
	var om struct {
		Receipts rates `json:"receipts"`
	}
	require.NoError(t, or.Decode(&om))
	require.Zero(t, om.Receipts.Total.Total)
	require.Empty(t, om.Receipts.ByProvider)

	// Prometheus: by channel and kind, created and final.
	reg := b.env.Daemon.Metrics.Registry
	require.Equal(t, 3.0, notifytest.Counter(t, reg, "notifyd_receipts_created_total", map[string]string{"channel": "sms", "provider_kind": "vendorb_sms"}))
	require.Equal(t, 2.0, notifytest.Counter(t, reg, "notifyd_receipts_total", map[string]string{"channel": "sms", "provider_kind": "vendorb_sms", "status": "delivered"}))
	require.Equal(t, 1.0, notifytest.Counter(t, reg, "notifyd_receipts_total", map[string]string{"channel": "sms", "provider_kind": "vendorb_sms", "status": "undelivered"}))

	// The console overview's delivery-rate charts, for any member.
	c := b.env.ConsoleMember(t, "viewer")
	resp, body := c.Get(t, "/")
	require.Equal(t, http.StatusOK, resp.StatusCode)
	require.Contains(t, body, "Delivery rate, last 24 hours")
	require.Contains(t, body, `<strong class="rate">66.7%</strong>`)
	require.Contains(t, body, "vendorb_sms")
	require.Len(t, regexp.MustCompile(`class="bar-rate" x="\d+" y="\d+" width="\d+" height="[1-9]`).FindAllString(body, -1), 2,
		"one column with a rate in each chart (hourly, daily)")
}

func keys[V any](m map[string]V) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}
