package secret

import (
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/hex"
)

// HashToken returns the lower-case hex SHA-256 of token. Bearer tokens, API
// key secrets and unsubscribe tokens are high-entropy, so a fast hash is
// enough for storing them without keeping the plaintext.
func HashToken(token string) string {
	sum := sha256.Sum256([]byte(token))
	return hex.EncodeToString(sum[:])
}

// RandomToken returns nBytes from crypto/rand as unpadded base64url, safe in
// URLs, headers and JSON without escaping. It panics when nBytes < 1, since
// an empty token is always a programming error.
func RandomToken(nBytes int) string {
	return base64.RawURLEncoding.EncodeToString(randomBytes(nBytes))
}

// RandomHex returns nBytes from crypto/rand as lower-case hex, for
// identifiers that must survive case-insensitive handling. It panics when
// nBytes < 1.
func RandomHex(nBytes int) string {
	return hex.EncodeToString(randomBytes(nBytes))
}

func randomBytes(n int) []byte {
	if n < 1 {
		panic("secret: random token length must be at least 1 byte")
	}
	b := make([]byte, n)
	_, _ = rand.Read(b) // crypto/rand.Read never fails (it aborts the program instead)
	return b
}

// Equal compares two secrets in constant time. Both sides are hashed first,
// so not even their lengths leak through timing.
func Equal(a, b string) bool {
	ha := sha256.Sum256([]byte(a))
	hb := sha256.Sum256([]byte(b))
	return subtle.ConstantTimeCompare(ha[:], hb[:]) == 1
}
