package client

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"strings"
	"time"
)

// TokenClaims are the claims of an OTP verification token (SPEC
// "Verification token"). IAT and EXP are Unix seconds.
type TokenClaims struct {
	VID     string `json:"vid"`     // verificationId
	WSID    string `json:"wsid"`    // workspace id
	Purpose string `json:"purpose"` // the purpose given at send
	Channel string `json:"channel"`
	Sub     string `json:"sub"` // masked recipient
	IAT     int64  `json:"iat"`
	EXP     int64  `json:"exp"`
}

// Errors of VerifyToken.
var (
	ErrTokenMalformed = errors.New("notifyd: malformed verification token")
	ErrTokenSignature = errors.New("notifyd: verification token signature mismatch")
	ErrTokenExpired   = errors.New("notifyd: verification token expired")
)

// VerifyToken checks a verification token offline ("pattern A" of
// docs/OTP.md): it recomputes HMAC-SHA256 over the base64url part with
// secret (the server's OTP_SIGNING_SECRET, as the bytes of the string),
// compares it in constant time, and then checks exp against now (expired
// at or after exp). On ErrTokenExpired the claims are returned too, for
// logging. The caller must still check that VID, WSID and Purpose are the
// ones it expects: a valid token proves only that notifyd verified that
// session. It is written apart from the server's signer on purpose, so
// the tests check one against the other.
func VerifyToken(secret []byte, token string, now time.Time) (*TokenClaims, error) {
	body, sigHex, ok := strings.Cut(token, ".")
	if !ok || body == "" || strings.Contains(sigHex, ".") {
		return nil, ErrTokenMalformed
	}
	// The signature is lower-case hex, compared as text: one token, one
	// spelling (an upper-case copy is malformed).
	if len(sigHex) != 2*sha256.Size || strings.Trim(sigHex, "0123456789abcdef") != "" {
		return nil, ErrTokenMalformed
	}
	m := hmac.New(sha256.New, secret)
	m.Write([]byte(body))
	if !hmac.Equal([]byte(hex.EncodeToString(m.Sum(nil))), []byte(sigHex)) {
		return nil, ErrTokenSignature
	}
	payload, err := base64.RawURLEncoding.DecodeString(body)
	if err != nil {
		return nil, ErrTokenMalformed
	}
	var c TokenClaims
	if err := json.Unmarshal(payload, &c); err != nil || c.VID == "" || c.EXP <= 0 {
		return nil, ErrTokenMalformed
	}
	if now.Unix() >= c.EXP {
		return &c, ErrTokenExpired
	}
	return &c, nil
}
