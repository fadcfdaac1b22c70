// Package sendwindow decides when a message may leave (issue 32, item
// 5): the hours and days of a send window in the recipient's time zone,
// and the Korean rule for advertising to phones at night. It is pure:
// times in, times out; the zone database is Go's (embedded by the
// recipients room's time/tzdata import).
//
// Every computation is made on the wall clock of the window's zone with
// time.Date, which is what makes it correct across daylight-saving
// changes. An opening at 02:30 on a day whose clock jumps from 02:00 to
// 03:00 is the jump itself (03:00 that day, when the clock passes
// 02:30), and an hour that occurs twice opens at its first occurrence.
package sendwindow

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Window is a daily span of wall-clock time, [Start, End) in minutes after
// midnight, on the days listed (none: every day). Start after End spans
// midnight: 22:00–06:00 opens at 22:00 on each listed day and closes at
// 06:00 the next morning. Start equal to End is the whole day.
type Window struct {
	Start, End int
	Days       []time.Weekday
}

// Parse reads "HH:MM-HH:MM" and an optional list of days ("mon".."sun").
func Parse(hours string, days []string) (Window, error) {
	a, b, ok := strings.Cut(hours, "-")
	if !ok {
		return Window{}, fmt.Errorf("hours must be HH:MM-HH:MM")
	}
	start, err1 := clock(a)
	end, err2 := clock(b)
	if err1 != nil || err2 != nil {
		return Window{}, fmt.Errorf("hours must be HH:MM-HH:MM")
	}
	w := Window{Start: start, End: end}
	for _, d := range days {
		wd, ok := dayNames[strings.ToLower(d)]
		if !ok {
			return Window{}, fmt.Errorf("days must be among mon, tue, wed, thu, fri, sat, sun")
		}
		w.Days = append(w.Days, wd)
	}
	return w, nil
}

var dayNames = map[string]time.Weekday{"sun": time.Sunday, "mon": time.Monday, "tue": time.Tuesday, "wed": time.Wednesday,
	"thu": time.Thursday, "fri": time.Friday, "sat": time.Saturday}

// clock reads "HH:MM" (00:00 to 24:00) as minutes after midnight.
func clock(s string) (int, error) {
	h, m, ok := strings.Cut(strings.TrimSpace(s), ":")
	if !ok || len(h) != 2 || len(m) != 2 {
		return 0, fmt.Errorf("bad clock")
	}
	hh, err1 := strconv.Atoi(h)
	mm, err2 := strconv.Atoi(m)
	if err1 != nil || err2 != nil || hh < 0 || mm < 0 || mm > 59 || hh > 24 || (hh == 24 && mm != 0) {
		return 0, fmt.Errorf("bad clock")
	}
	return hh*60 + mm, nil
}

// String is the window as Parse reads it.
func (w Window) String() string {
	s := fmt.Sprintf("%02d:%02d-%02d:%02d", w.Start/60, w.Start%60, w.End/60, w.End%60)
	if len(w.Days) > 0 {
		names := make([]string, len(w.Days))
		for i, d := range w.Days {
			names[i] = strings.ToLower(d.String()[:3])
		}
		s += " " + strings.Join(names, ",")
	}
	return s
}

func (w Window) onDay(d time.Weekday) bool {
	if len(w.Days) == 0 {
		return true
	}
	for _, x := range w.Days {
		if x == d {
			return true
		}
	}
	return false
}

// span is the opening and closing instants of the window's span that
// starts on the local day of y, m, d in loc.
func (w Window) span(y int, m time.Month, d int, loc *time.Location) (time.Time, time.Time) {
	endDay := d
	if w.End <= w.Start {
		endDay++ // over midnight, or the whole day
	}
	return wall(y, m, d, w.Start, loc), wall(y, m, endDay, w.End, loc)
}

// wall is the instant the clock of loc shows min minutes after midnight
// of y, m, d. A time the clock skips (a daylight-saving gap) is the
// instant of the jump, when the clock passes it: time.Date alone would
// answer an instant before the jump, earlier on the wall clock.
func wall(y int, m time.Month, d, min int, loc *time.Location) time.Time {
	t := time.Date(y, m, d, 0, min, 0, 0, loc)
	if t.Hour()*60+t.Minute() != min%(24*60) {
		if _, end := t.ZoneBounds(); !end.IsZero() {
			return end
		}
	}
	return t
}

// Next is the first instant at or after t when the window is open, in
// loc: t itself when it is open. A window listing no day of the week is
// open every day.
func (w Window) Next(t time.Time, loc *time.Location) time.Time {
	lt := t.In(loc)
	// The span that began the day before may still be open (over midnight).
	for i := -1; i <= 8; i++ {
		day := time.Date(lt.Year(), lt.Month(), lt.Day()+i, 12, 0, 0, 0, loc)
		if !w.onDay(day.Weekday()) {
			continue
		}
		open, closed := w.span(day.Year(), day.Month(), day.Day(), loc)
		if !t.Before(closed) {
			continue
		}
		if t.Before(open) {
			return open
		}
		return t
	}
	return t // no listed day: Parse never builds one
}

// Seoul is the zone of the Korean night rule.
var Seoul = mustZone("Asia/Seoul")

func mustZone(name string) *time.Location {
	loc, err := time.LoadLocation(name)
	if err != nil {
		panic(err)
	}
	return loc
}

// KoreanAdDay is when advertising may reach a phone in Korea without the
// recipient's separate night consent (정보통신망법 제50조 ③): not between
// 21:00 and 08:00, Asia/Seoul.
var KoreanAdDay = Window{Start: 8 * 60, End: 21 * 60}

// Rule is one window with the zone it is read in and what it is called
// in explanations.
type Rule struct {
	Name   string
	Window Window
	Loc    *time.Location
}

// Earliest is the first instant at or after t when every rule's window
// is open, and the name of the rule that held the message last (""
// when none did). Windows with no common opening within two weeks
// answer ok false.
func Earliest(t time.Time, rules []Rule) (at time.Time, heldBy string, ok bool) {
	at = t
	limit := t.Add(15 * 24 * time.Hour)
	for at.Before(limit) {
		moved := false
		for _, r := range rules {
			if n := r.Window.Next(at, r.Loc); n.After(at) {
				at, heldBy, moved = n, r.Name, true
			}
		}
		if !moved {
			return at, heldBy, true
		}
	}
	return t, "", false
}
