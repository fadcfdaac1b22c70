package web

import (
	"net/http"
	"sort"

	"github.com/notifyd/notifyd/internal/notify"
	"github.com/notifyd/notifyd/internal/sends"
)

// overviewPages serve the overview page.
type overviewPages struct{ *Console }

func (c overviewPages) routes() []Route {
	return []Route{
		{Method: "GET", Path: "/{$}", Auth: Member, Roles: notify.RolesAll, h: c.overviewPage},
	}
}

// Chart is one server-rendered SVG bar chart: a stacked bar per channel
// of sent, failed and queued (queued and processing) requests.
type Chart struct {
	Title  string
	Height int
	Rows   []ChartRow
}

// ChartRow is one channel's bar.
type ChartRow struct {
	Channel              string
	Sent, Failed, Queued int
	Y                    int
	Bars                 []ChartBar
}

// ChartBar is one segment of a row.
type ChartBar struct {
	Class      string
	X, Y, W, N int
}

// chart geometry: labels left, bars in [chartX, chartX+chartW).
const (
	chartX, chartW, chartRowH = 110, 280, 26
)

func newChart(title string, cs *notify.Counts) Chart {
	ch := Chart{Title: title}
	var chans []string
	for c := range cs.ByChannelStatus {
		chans = append(chans, c)
	}
	sort.Strings(chans)
	max := 0
	for _, c := range chans {
		m := cs.ByChannelStatus[c]
		row := ChartRow{Channel: c, Sent: m[string(notify.StatusSent)], Failed: m[string(notify.StatusFailed)],
			Queued: m[string(notify.StatusQueued)] + m[string(notify.StatusProcessing)]}
		if t := row.Sent + row.Failed + row.Queued; t > max {
			max = t
		}
		ch.Rows = append(ch.Rows, row)
	}
	for i := range ch.Rows {
		r := &ch.Rows[i]
		r.Y = i * chartRowH
		x := chartX
		for _, seg := range []struct {
			class string
			n     int
		}{{"bar-sent", r.Sent}, {"bar-failed", r.Failed}, {"bar-queued", r.Queued}} {
			if seg.n == 0 {
				continue
			}
			w := seg.n * chartW / max
			if w < 2 {
				w = 2
			}
			r.Bars = append(r.Bars, ChartBar{Class: seg.class, X: x, Y: r.Y + 3, W: w, N: seg.n})
			x += w
		}
	}
	ch.Height = len(ch.Rows)*chartRowH + 4
	return ch
}

type overviewData struct {
	*sends.Overview
	Charts []Chart
	// Rates are the delivery rates of the same ranges (issue 35).
	Rates []RateChart
}

func (c overviewPages) overviewPage(x *Ctx) error {
	o, err := c.rooms.Sends.Overview(x.Context(), x.Actor)
	if err != nil {
		return err
	}
	return x.Render(http.StatusOK, "overview.html", &Page{Title: "Overview", Data: overviewData{Overview: o,
		Charts: []Chart{newChart("Last 24 hours", o.Day), newChart("Last 7 days", o.Week)},
		Rates: []RateChart{newRateChart("Delivery rate, last 24 hours (hourly)", o.DayReceipts, o.ProviderNames),
			newRateChart("Delivery rate, last 7 days (daily)", o.WeekReceipts, o.ProviderNames)}}})
}
