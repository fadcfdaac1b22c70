package otp

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

// Claims is the payload of a verification token (SPEC "Verification
// token"). The JSON names and their order are part of the contract:
// customers verify tokens offline and may read the payload.
type Claims struct {
	VID     string `json:"vid"`     // verificationId
	WSID    string `json:"wsid"`    // workspace id
	Purpose string `json:"purpose"` // caller's tag
	Channel string `json:"channel"`
	Sub     string `json:"sub"` // masked recipient
	IAT     int64  `json:"iat"` // issued at, Unix seconds
	EXP     int64  `json:"exp"` // expires at, Unix seconds
}

// Errors of VerifyToken, distinct so that callers and logs can tell a
// garbled token from a forged one from a merely old one.
var (
	ErrMalformed = errors.New("otp: malformed verification token")
	ErrSignature = errors.New("otp: verification token signature mismatch")
	ErrExpired   = errors.New("otp: verification token expired")
)

// SignToken builds the compact token SPEC defines (not a JWT):
// base64url(JSON payload, unpadded) + "." + hex(HMAC-SHA256(secret, the
// base64url part)).
func SignToken(secret []byte, c Claims) string {
	payload, err := json.Marshal(c)
	if err != nil { // cannot happen: Claims holds only strings and integers
		panic("otp: marshal claims: " + err.Error())
	}
	body := base64.RawURLEncoding.EncodeToString(payload)
	return body + "." + hex.EncodeToString(tokenMAC(secret, body))
}

// VerifyToken checks a token made by SignToken and returns its claims. The
// signature is checked (in constant time) before the payload is parsed,
// as the text SignToken writes: lower-case hex only, so that one token has
// one spelling (an upper-case copy is malformed, not the same token).
// A token is expired when now is at or after exp (whole seconds); in that
// case the claims are returned together with ErrExpired. A token without a
// positive exp is malformed, so no token can live forever.
func VerifyToken(secret []byte, token string, now time.Time) (Claims, error) {
	body, sigHex, ok := strings.Cut(token, ".")
	if !ok || body == "" || strings.Contains(sigHex, ".") {
		return Claims{}, ErrMalformed
	}
	if len(sigHex) != 2*sha256.Size || strings.Trim(sigHex, "0123456789abcdef") != "" {
		return Claims{}, ErrMalformed
	}
	if !hmac.Equal([]byte(hex.EncodeToString(tokenMAC(secret, body))), []byte(sigHex)) {
		return Claims{}, ErrSignature
	}
	payload, err := base64.RawURLEncoding.DecodeString(body)
	if err != nil {
		return Claims{}, ErrMalformed
	}
	var c Claims
	if err := json.Unmarshal(payload, &c); err != nil || c.EXP <= 0 {
		return Claims{}, ErrMalformed
	}
	if now.Unix() >= c.EXP {
		return c, ErrExpired
	}
	return c, nil
}

func tokenMAC(secret []byte, body string) []byte {
	m := hmac.New(sha256.New, secret)
	m.Write([]byte(body))
	return m.Sum(nil)
}
