package sendwindow

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

var ny = mustZone("America/New_York")

func at(loc *time.Location, y int, m time.Month, d, h, min int) time.Time {
	return time.Date(y, m, d, h, min, 0, 0, loc)
}

func mustParse(t *testing.T, hours string, days ...string) Window {
	t.Helper()
	w, err := Parse(hours, days)
	require.NoError(t, err)
	return w
}

func TestParse(t *testing.T) {
	w := mustParse(t, "09:00-18:30", "mon", "FRI")
	require.Equal(t, Window{Start: 540, End: 1110, Days: []time.Weekday{time.Monday, time.Friday}}, w)
	require.Equal(t, "09:00-18:30 mon,fri", w.String())
	require.Equal(t, "22:00-24:00", mustParse(t, "22:00-24:00").String())
	for _, bad := range []string{"9:00-18:00", "09:00", "09:60-10:00", "25:00-01:00", "24:01-01:00", "ab:cd-01:00"} {
		_, err := Parse(bad, nil)
		require.Error(t, err, bad)
	}
	_, err := Parse("09:00-10:00", []string{"monday"})
	require.Error(t, err)
}

func TestNext(t *testing.T) {
	office := mustParse(t, "09:00-18:00")
	require.Equal(t, at(ny, 2026, 6, 2, 10, 0), office.Next(at(ny, 2026, 6, 2, 10, 0), ny), "open: at once")
	require.Equal(t, at(ny, 2026, 6, 3, 9, 0), office.Next(at(ny, 2026, 6, 2, 18, 0), ny), "closed at its end")
	require.Equal(t, at(ny, 2026, 6, 2, 9, 0), office.Next(at(ny, 2026, 6, 2, 3, 0), ny))

	weekdays := mustParse(t, "09:00-18:00", "mon", "tue", "wed", "thu", "fri")
	require.Equal(t, at(ny, 2026, 6, 8, 9, 0), weekdays.Next(at(ny, 2026, 6, 6, 10, 0), ny), "Saturday waits for Monday")

	night := mustParse(t, "22:00-06:00")
	require.Equal(t, at(ny, 2026, 6, 2, 23, 0), night.Next(at(ny, 2026, 6, 2, 23, 0), ny))
	require.Equal(t, at(ny, 2026, 6, 3, 5, 0), night.Next(at(ny, 2026, 6, 3, 5, 0), ny), "the span begun the evening before")
	require.Equal(t, at(ny, 2026, 6, 3, 22, 0), night.Next(at(ny, 2026, 6, 3, 7, 0), ny))
	friNight := mustParse(t, "22:00-06:00", "fri")
	require.Equal(t, at(ny, 2026, 6, 6, 5, 0), friNight.Next(at(ny, 2026, 6, 6, 5, 0), ny), "Saturday 05:00 is Friday's span")
	require.Equal(t, at(ny, 2026, 6, 12, 22, 0), friNight.Next(at(ny, 2026, 6, 6, 7, 0), ny))

	allDay := mustParse(t, "00:00-00:00", "sun")
	require.Equal(t, at(ny, 2026, 6, 7, 0, 0), allDay.Next(at(ny, 2026, 6, 5, 12, 0), ny))
}

// TestNextAcrossDST: the opening is 09:00 on the wall clock on both
// sides of each change, so its UTC instant moves by an hour.
func TestNextAcrossDST(t *testing.T) {
	office := mustParse(t, "09:00-17:00")
	// 2026-03-08: clocks go from 02:00 EST to 03:00 EDT.
	spring := office.Next(at(ny, 2026, 3, 7, 20, 0), ny)
	require.Equal(t, time.Date(2026, 3, 8, 13, 0, 0, 0, time.UTC), spring.UTC(), "09:00 EDT")
	require.Equal(t, time.Date(2026, 3, 7, 14, 0, 0, 0, time.UTC), office.Next(at(ny, 2026, 3, 7, 2, 0), ny).UTC(), "09:00 EST")
	// 2026-11-01: clocks go from 02:00 EDT back to 01:00 EST.
	fall := office.Next(at(ny, 2026, 10, 31, 20, 0), ny)
	require.Equal(t, time.Date(2026, 11, 1, 14, 0, 0, 0, time.UTC), fall.UTC(), "09:00 EST")
	// Closing at 17:00 local on the change day too: 16:59 EDT is open,
	// 17:00 EST (22:00 UTC) is closed.
	require.Equal(t, time.Date(2026, 11, 1, 21, 59, 0, 0, time.UTC),
		office.Next(time.Date(2026, 11, 1, 21, 59, 0, 0, time.UTC), ny).UTC())
	require.Equal(t, time.Date(2026, 11, 2, 14, 0, 0, 0, time.UTC),
		office.Next(time.Date(2026, 11, 1, 22, 0, 0, 0, time.UTC), ny).UTC())

	// A window opening inside the skipped hour opens when the clock
	// passes it: 02:30 does not exist on 2026-03-08; the clock jumps from
	// 02:00 EST to 03:00 EDT (07:00 UTC).
	early := mustParse(t, "02:30-05:00")
	got := early.Next(at(ny, 2026, 3, 8, 0, 30), ny)
	require.Equal(t, time.Date(2026, 3, 8, 7, 0, 0, 0, time.UTC), got.UTC(), "03:00 EDT")
	require.Equal(t, time.Date(2026, 3, 9, 6, 30, 0, 0, time.UTC), early.Next(time.Date(2026, 3, 8, 9, 0, 0, 0, time.UTC), ny).UTC(),
		"after 05:00 EDT: 02:30 EDT the next day")
	// The repeated hour: 01:30 on 2026-11-01 happens twice; the window
	// opens at the first.
	rep := mustParse(t, "01:30-03:00")
	got = rep.Next(at(ny, 2026, 11, 1, 0, 0), ny)
	require.Equal(t, time.Date(2026, 11, 1, 5, 30, 0, 0, time.UTC), got.UTC(), "01:30 EDT")
}

func TestKoreanAdDay(t *testing.T) {
	seoul := func(d, h, m int) time.Time { return at(Seoul, 2026, 11, d, h, m) }
	require.Equal(t, seoul(29, 8, 0), KoreanAdDay.Next(seoul(28, 22, 30), Seoul))
	require.Equal(t, seoul(29, 8, 0), KoreanAdDay.Next(seoul(29, 7, 59), Seoul))
	require.Equal(t, seoul(29, 8, 0), KoreanAdDay.Next(seoul(29, 8, 0), Seoul))
	require.Equal(t, seoul(29, 20, 59), KoreanAdDay.Next(seoul(29, 20, 59), Seoul))
	require.Equal(t, seoul(30, 8, 0), KoreanAdDay.Next(seoul(29, 21, 0), Seoul))
}

func TestEarliest(t *testing.T) {
	evening := Rule{Name: "workspace", Window: mustParse(t, "17:00-20:00", "mon", "tue", "wed", "thu", "fri"), Loc: ny}
	korea := Rule{Name: "kr-night-ad", Window: KoreanAdDay, Loc: Seoul}
	// Friday 21:00 New York: closed until Monday 17:00 New York, which is
	// Tuesday 07:00 Seoul (closed); Seoul opens at 08:00, Monday 18:00 New
	// York, open for both.
	got, by, ok := Earliest(at(ny, 2026, 11, 27, 21, 0), []Rule{evening, korea})
	require.True(t, ok)
	require.Equal(t, at(ny, 2026, 11, 30, 18, 0).UTC(), got.UTC())
	require.Equal(t, "kr-night-ad", by)
	// Friday 19:00 New York is Saturday 09:00 Seoul: both open.
	got, by, ok = Earliest(at(ny, 2026, 11, 27, 19, 0), []Rule{evening, korea})
	require.True(t, ok)
	require.Equal(t, at(ny, 2026, 11, 27, 19, 0).UTC(), got.UTC())
	require.Equal(t, "", by)

	// New York office hours and Seoul's day never meet (09:00-18:00 EST
	// is 23:00-08:00 Seoul).
	_, _, ok = Earliest(at(ny, 2026, 11, 27, 19, 0), []Rule{
		{Name: "office", Window: mustParse(t, "09:00-18:00"), Loc: ny}, korea})
	require.False(t, ok, "disjoint windows never open together")

	got, by, ok = Earliest(at(Seoul, 2026, 11, 28, 22, 30), []Rule{korea})
	require.True(t, ok)
	require.Equal(t, "kr-night-ad", by)
	require.Equal(t, at(Seoul, 2026, 11, 29, 8, 0).UTC(), got.UTC())
}
