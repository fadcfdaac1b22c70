package api

import (
	"time"

	"github.com/notifyd/notifyd/internal/notify"
)

// receiptIntervals are the bucket widths of /v1/metrics' receipts series.
var receiptIntervals = map[string]time.Duration{"hour": time.Hour, "day": 24 * time.Hour}

// receiptInterval reads ?interval= (hour or day); without it, hours for a
// range of two days at most, else days.
func receiptInterval(v string, from, to time.Time) (time.Duration, error) {
	if v == "" {
		if to.Sub(from) <= 48*time.Hour {
			return time.Hour, nil
		}
		return 24 * time.Hour, nil
	}
	d, ok := receiptIntervals[v]
	if !ok {
		return 0, notify.Invalid("interval must be hour or day")
	}
	if n := notify.ReceiptBuckets(from, to, d); n > notify.MaxReceiptBuckets {
		return 0, notify.Invalid("interval %s gives %d buckets from from to to; at most %d: use a longer interval or a shorter range",
			v, n, notify.MaxReceiptBuckets)
	}
	return d, nil
}

// receiptTallyBody renders a tally with its delivery rate (null when no
// receipt is final).
func receiptTallyBody(t notify.ReceiptTally) map[string]any {
	out := map[string]any{"pending": t.Pending, "delivered": t.Delivered, "undelivered": t.Undelivered, "unknown": t.Unknown,
		"total": t.Total(), "deliveryRate": nil}
	if r, ok := t.Rate(); ok {
		out["deliveryRate"] = r
	}
	return out
}

func receiptTalliesBody[K ~string](m map[K]*notify.ReceiptTally) map[string]any {
	out := make(map[string]any, len(m))
	for k, t := range m {
		out[string(k)] = receiptTallyBody(*t)
	}
	return out
}

// receiptStatsBody renders the delivery rates of /v1/metrics.
func receiptStatsBody(s *notify.ReceiptStats) map[string]any {
	interval := "hour"
	if s.Interval == 24*time.Hour {
		interval = "day"
	}
	providers := make([]map[string]any, len(s.ByProvider))
	for i, p := range s.ByProvider {
		b := receiptTallyBody(p.ReceiptTally)
		b["providerAccountId"], b["providerKind"], b["channel"] = p.ProviderAccountID, p.ProviderKind, p.Channel
		providers[i] = b
	}
	series := make([]map[string]any, len(s.Series))
	for i, b := range s.Series {
		series[i] = map[string]any{"start": Timestamp(b.Start), "total": receiptTallyBody(b.Total),
			"byChannel": receiptTalliesBody(b.ByChannel), "byProvider": receiptTalliesBody(b.ByProvider)}
	}
	return map[string]any{"interval": interval, "total": receiptTallyBody(s.Total), "byChannel": receiptTalliesBody(s.ByChannel),
		"byProvider": providers, "series": series}
}
