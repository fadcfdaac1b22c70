package web

import (
	"fmt"
	"sort"
	"time"

	"github.com/notifyd/notifyd/internal/notify"
)

// RateChart is the overview's delivery rate of a range (issue 35): one
// column per time bucket whose height is the share of final receipts
// that arrived, and tables per channel and per provider account.
type RateChart struct {
	Title   string
	Columns []RateColumn
	// Width is the SVG's; columns share it.
	Width      int
	Total      RateRow
	ByChannel  []RateRow
	ByProvider []RateRow
}

// RateColumn is one bucket's column (H 0 when none is final).
type RateColumn struct {
	X, Y, W, H int
	Label      string
}

// RateRow is one line of the tables.
type RateRow struct {
	Name, Kind                               string
	Delivered, Undelivered, Pending, Unknown int
	Rate                                     string
}

// rate chart geometry: columns rateH high at most.
const rateChartW, rateH = 400, 80

func rateRow(name, kind string, t notify.ReceiptTally) RateRow {
	r := RateRow{Name: name, Kind: kind, Delivered: t.Delivered, Undelivered: t.Undelivered, Pending: t.Pending, Unknown: t.Unknown, Rate: "–"}
	if v, ok := t.Rate(); ok {
		r.Rate = fmt.Sprintf("%.1f%%", v*100)
	}
	return r
}

func newRateChart(title string, s *notify.ReceiptStats, names map[string]string) RateChart {
	c := RateChart{Title: title, Width: rateChartW, Total: rateRow("all", "", s.Total)}
	if s.Total.Total() == 0 {
		return c
	}
	w := rateChartW / max(len(s.Series), 1)
	layout := "Jan 2 15:04"
	if s.Interval >= 24*time.Hour {
		layout = "Jan 2"
	}
	for i, b := range s.Series {
		col := RateColumn{X: i * w, W: max(w-1, 1), Y: rateH}
		col.Label = b.Start.UTC().Format(layout) + " UTC: no final report"
		if v, ok := b.Total.Rate(); ok {
			col.H = max(int(v*rateH), 1)
			col.Y = rateH - col.H
			col.Label = fmt.Sprintf("%s UTC: %.1f%% of %d final", b.Start.UTC().Format(layout), v*100, b.Total.Delivered+b.Total.Undelivered)
		}
		c.Columns = append(c.Columns, col)
	}
	var chans []string
	for ch := range s.ByChannel {
		chans = append(chans, string(ch))
	}
	sort.Strings(chans)
	for _, ch := range chans {
		c.ByChannel = append(c.ByChannel, rateRow(ch, "", *s.ByChannel[notify.Channel(ch)]))
	}
	for _, p := range s.ByProvider {
		name := names[p.ProviderAccountID]
		if name == "" {
			name = p.ProviderAccountID // deleted since
		}
		c.ByProvider = append(c.ByProvider, rateRow(name, p.ProviderKind, p.ReceiptTally))
	}
	return c
}
