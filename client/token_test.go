package client_test

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/notifyd/notifyd/client"
	"github.com/notifyd/notifyd/internal/otp"
)

// The server's signer (internal/otp) and the client's verifier are written
// apart; each token here is made by the server's code.
func TestVerifyToken(t *testing.T) {
	secret := []byte("otp-signing-secret")
	iat := time.Unix(1_800_000_000, 0)
	claims := otp.Claims{VID: "01a2-vid", WSID: "ws-1", Purpose: "login", Channel: "sms", Sub: "*******5678",
		IAT: iat.Unix(), EXP: iat.Add(300 * time.Second).Unix()}
	tok := otp.SignToken(secret, claims)

	c, err := client.VerifyToken(secret, tok, iat.Add(299*time.Second))
	require.NoError(t, err)
	require.Equal(t, client.TokenClaims{VID: claims.VID, WSID: claims.WSID, Purpose: "login", Channel: "sms", Sub: "*******5678",
		IAT: claims.IAT, EXP: claims.EXP}, *c)

	c, err = client.VerifyToken(secret, tok, iat.Add(300*time.Second))
	require.ErrorIs(t, err, client.ErrTokenExpired)
	require.Equal(t, "01a2-vid", c.VID)

	_, err = client.VerifyToken([]byte("other secret"), tok, iat)
	require.ErrorIs(t, err, client.ErrTokenSignature)

	body, sig, _ := strings.Cut(tok, ".")
	// A payload changed after signing (here: a longer exp) fails the MAC.
	forged := claims
	forged.EXP += 3600
	fbody, _, _ := strings.Cut(otp.SignToken(secret, forged), ".")
	_, err = client.VerifyToken(secret, fbody+"."+sig, iat)
	require.ErrorIs(t, err, client.ErrTokenSignature)
	// A flipped signature digit.
	flip := []byte(sig)
	flip[0] ^= 1
	_, err = client.VerifyToken(secret, body+"."+string(flip), iat)
	require.ErrorIs(t, err, client.ErrTokenSignature)

	for _, bad := range []string{"", ".", body, body + ".", "." + sig, body + "." + sig + ".x", body + ".zz", body + "." + sig[:10],
		"!!!." + sig, strings.ToUpper(body) + "." + sig} {
		_, err = client.VerifyToken(secret, bad, iat)
		require.Error(t, err, bad)
		require.NotErrorIs(t, err, client.ErrTokenExpired, bad)
	}
	// A correctly signed payload that is not a token is malformed.
	for _, payload := range []string{`{}`, `[]`, `{"vid":"x"}`, `{"vid":"x","exp":-1}`} {
		p := base64.RawURLEncoding.EncodeToString([]byte(payload))
		_, err = client.VerifyToken(secret, p+"."+hexMAC(secret, p), iat)
		require.ErrorIs(t, err, client.ErrTokenMalformed, payload)
	}
}

func hexMAC(secret []byte, body string) string {
	m := hmac.New(sha256.New, secret)
	m.Write([]byte(body))
	return hex.EncodeToString(m.Sum(nil))
}
