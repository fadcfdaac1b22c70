package usecase

import "github.com/notifyd/notifyd/internal/notify"

// Trim cuts rows read with one more than want (the row that tells a next
// page exists) down to want, and gives the cursor of the page's last row
// and whether a next page exists.
func Trim[T any](rows []T, want int, key func(T) notify.Cursor) ([]T, *notify.Cursor, bool) {
	if len(rows) <= want {
		return rows, nil, false
	}
	rows = rows[:want]
	c := key(rows[want-1])
	return rows, &c, true
}
