package api

import (
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/notifyd/notifyd/internal/notify"
)

// intParam parses an optional integer query parameter (0 when absent).
func intParam(v, name string) (int, error) {
	if v == "" {
		return 0, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil {
		return 0, notify.Invalid("%s must be an integer", name)
	}
	if n == 0 {
		return -1, nil // explicit 0 is out of range, unlike "absent"
	}
	return n, nil
}

// Cursors are opaque (notify.EncodeCursor).
func encodeCursor(c *notify.Cursor) *string { return notify.EncodeCursor(c) }

func decodeCursor(s string) (*notify.Cursor, error) { return notify.DecodeCursor(s) }

// checkText refuses a query value that is not valid UTF-8 or holds a NUL
// byte: no stored value can match it, and PostgreSQL rejects such
// parameters outright.
func checkText(name, v string) error {
	if !utf8.ValidString(v) || strings.IndexByte(v, 0) >= 0 {
		return notify.Invalid("%s must be valid UTF-8 text without NUL characters", name)
	}
	return nil
}
