// Package otp holds the pure parts of OTP verification (SPEC "OTP
// verification session", "Verification token", "OTP defaults"): code
// generation and session-bound hashing, link tokens, recipient
// normalization and masking, the signed verification token and the policy
// values. Storage and delivery live elsewhere.
package otp

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"fmt"
)

// MaxCodeDigits bounds GenerateCode; longer codes are of no use to a person
// typing them.
const MaxCodeDigits = 32

// GenerateCode returns a code of digits decimal digits, each uniform (bytes
// are drawn from crypto/rand and values 250-255 rejected, so there is no
// modulo bias). Leading zeros are kept: the code is a string.
func GenerateCode(digits int) (string, error) {
	if digits < 1 || digits > MaxCodeDigits {
		return "", fmt.Errorf("otp: code length %d out of range 1..%d", digits, MaxCodeDigits)
	}
	out := make([]byte, 0, digits)
	buf := make([]byte, digits+8)
	for len(out) < digits {
		if _, err := rand.Read(buf); err != nil {
			return "", fmt.Errorf("otp: random: %w", err)
		}
		for _, b := range buf {
			if b < 250 {
				out = append(out, '0'+b%10)
				if len(out) == digits {
					break
				}
			}
		}
	}
	return string(out), nil
}

// HashCode returns the hex HMAC-SHA256 under key of sessionID, a zero byte
// and code. Binding the session id means a stored hash cannot be moved to
// another session, and the key means a leaked table cannot be brute-forced
// over the small code space offline.
func HashCode(key []byte, sessionID, code string) string {
	return hex.EncodeToString(codeMAC(key, sessionID, code))
}

// CheckCode reports whether code matches hash (made by HashCode for the same
// key and session) in constant time, as SPEC requires. A malformed hash
// never matches.
func CheckCode(key []byte, sessionID, code, hash string) bool {
	want, err := hex.DecodeString(hash)
	if err != nil || len(want) != sha256.Size {
		return false
	}
	return hmac.Equal(codeMAC(key, sessionID, code), want)
}

func codeMAC(key []byte, sessionID, code string) []byte {
	m := hmac.New(sha256.New, key)
	m.Write([]byte(sessionID))
	m.Write([]byte{0})
	m.Write([]byte(code))
	return m.Sum(nil)
}

// linkTokenBytes is the entropy of a link token (256 bits).
const linkTokenBytes = 32

// NewLinkToken returns a fresh link-mode token (32 random bytes, unpadded
// base64url, so it fits in the link path) and its hex SHA-256, which is all
// that is stored (SPEC: link-token plaintext is never stored).
func NewLinkToken() (token, hash string) {
	b := make([]byte, linkTokenBytes)
	_, _ = rand.Read(b) // crypto/rand.Read never fails (it aborts the program instead)
	token = base64.RawURLEncoding.EncodeToString(b)
	return token, HashLinkToken(token)
}

// HashLinkToken returns the hex SHA-256 of a link token, to look up the
// session from the token in a link URL.
func HashLinkToken(token string) string {
	sum := sha256.Sum256([]byte(token))
	return hex.EncodeToString(sum[:])
}
