package api

import (
	"encoding/base64"
	"strconv"
	"strings"
	"time"
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

// Cursors are opaque: base64url of "<unix ms>:<id>".
func encodeCursor(c *notify.Cursor) *string {
	if c == nil {
		return nil
	}
	s := base64.RawURLEncoding.EncodeToString([]byte(strconv.FormatInt(c.At.UnixMilli(), 10) + ":" + c.ID))
	return &s
}

func decodeCursor(s string) (*notify.Cursor, error) {
	if s == "" {
		return nil, nil
	}
	bad := notify.Invalid("cursor is not valid")
	if len(s) > 200 {
		return nil, bad
	}
	b, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil {
		return nil, bad
	}
	at, id, ok := strings.Cut(string(b), ":")
	ms, err := strconv.ParseInt(at, 10, 64)
	if !ok || err != nil || id == "" || checkText("cursor", id) != nil {
		return nil, bad
	}
	return &notify.Cursor{At: time.UnixMilli(ms).UTC(), ID: id}, nil
}

// checkText refuses a query value that is not valid UTF-8 or holds a NUL
// byte: no stored value can match it, and PostgreSQL rejects such
// parameters outright.
func checkText(name, v string) error {
	if !utf8.ValidString(v) || strings.IndexByte(v, 0) >= 0 {
		return notify.Invalid("%s must be valid UTF-8 text without NUL characters", name)
	}
	return nil
}
