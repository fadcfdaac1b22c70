package notify

import (
	"encoding/base64"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// EncodeCursor makes a page cursor opaque: base64url of "<unix ms>:<id>"
// (nil for none). The API and the console page the same way.
func EncodeCursor(c *Cursor) *string {
	if c == nil {
		return nil
	}
	s := base64.RawURLEncoding.EncodeToString([]byte(strconv.FormatInt(c.At.UnixMilli(), 10) + ":" + c.ID))
	return &s
}

// DecodeCursor reads a cursor of EncodeCursor; "" is none, anything else
// unreadable is 400 "cursor is not valid".
func DecodeCursor(s string) (*Cursor, error) {
	if s == "" {
		return nil, nil
	}
	bad := Invalid("cursor is not valid")
	if len(s) > 200 {
		return nil, bad
	}
	b, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil {
		return nil, bad
	}
	at, id, ok := strings.Cut(string(b), ":")
	ms, err := strconv.ParseInt(at, 10, 64)
	if !ok || err != nil || id == "" || !utf8.ValidString(id) || strings.IndexByte(id, 0) >= 0 {
		return nil, bad
	}
	return &Cursor{At: time.UnixMilli(ms).UTC(), ID: id}, nil
}
