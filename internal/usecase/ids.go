package usecase

import (
	"crypto/rand"

	"github.com/google/uuid"
)

// NewID is a new row id: a UUIDv7, so ids sort by creation time.
func NewID() string { return uuid.Must(uuid.NewV7()).String() }

// IsUUID reports whether s is a UUID in its 36-character text form.
func IsUUID(s string) bool {
	if len(s) != 36 {
		return false
	}
	for i := 0; i < 36; i++ {
		c := s[i]
		if i == 8 || i == 13 || i == 18 || i == 23 {
			if c != '-' {
				return false
			}
			continue
		}
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F') {
			return false
		}
	}
	return true
}

// RandomKey is 32 random bytes: the fallback key of a room built without
// one (one process only).
func RandomKey() []byte {
	b := make([]byte, 32)
	_, _ = rand.Read(b)
	return b
}
