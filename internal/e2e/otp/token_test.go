package otp_test

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/notifyd/notifyd/client"
	"github.com/notifyd/notifyd/internal/config"
	"github.com/notifyd/notifyd/internal/otp"
)

// signing is the OTP_SIGNING_SECRET the customer's backend shares.
const signing = "customer-shared-signing-secret"

// verifiedWithSecret starts a daemon with OTP_SIGNING_SECRET set, sends an
// OTP to to (digits as the simulator stores it) and verifies it.
func verifiedWithSecret(t *testing.T, to, digits string) (*bundle, sendOut, verifyOut) {
	t.Helper()
	b := setupAt(t, nil, func(c *config.Config) { c.OTPSigningSecret = signing })
	s := b.send(t, map[string]any{"channel": "sms", "to": to, "purpose": "signup"})
	v := b.verify(t, s.VerificationID, b.code(t, digits))
	require.Equal(t, "verified", v.Status)
	return b, s, v
}

// TestPatternA: with OTP_SIGNING_SECRET set, a customer backend verifies
// the token offline with client.VerifyToken and the same secret (docs/OTP.md
// pattern A); pattern B is the status lookup, which answers the same
// session verified.
func TestPatternA(t *testing.T) {
	t.Parallel()
	b, s, v := verifiedWithSecret(t, "010 7070 7070", "01070707070")

	c, err := client.VerifyToken([]byte(signing), v.VerificationToken, time.Now())
	require.NoError(t, err)
	require.Equal(t, client.TokenClaims{VID: s.VerificationID, WSID: b.env.Workspace, Purpose: "signup", Channel: "sms",
		Sub: "*******7070", IAT: c.IAT, EXP: c.IAT + 300}, *c)
	require.InDelta(t, time.Now().Unix(), c.IAT, 5)
	_, err = client.VerifyToken([]byte("wrong secret"), v.VerificationToken, time.Now())
	require.ErrorIs(t, err, client.ErrTokenSignature)
	_, err = client.VerifyToken([]byte(signing), v.VerificationToken, time.Unix(c.EXP, 0))
	require.ErrorIs(t, err, client.ErrTokenExpired)

	// Pattern B: the status lookup.
	g := b.get(t, s.VerificationID)
	require.Equal(t, "verified", g.Status)
	c2, err := client.VerifyToken([]byte(signing), g.VerificationToken, time.Now())
	require.NoError(t, err)
	require.Equal(t, s.VerificationID, c2.VID)
}

// TestTokenOneSpelling is issue 29 finding 10: a verification token has
// one spelling. With its signature upper-cased, the offline verifier
// (client.VerifyToken) and the server's (otp.VerifyToken) call it
// malformed; the token as issued verifies.
func TestTokenOneSpelling(t *testing.T) {
	t.Parallel()
	_, _, v := verifiedWithSecret(t, "010 7171 7171", "01071717171")
	body, sig, _ := strings.Cut(v.VerificationToken, ".")
	upper := body + "." + strings.ToUpper(sig)
	require.NotEqual(t, v.VerificationToken, upper, "the signature has letters")

	_, err := client.VerifyToken([]byte(signing), v.VerificationToken, time.Now())
	require.NoError(t, err)
	_, err = client.VerifyToken([]byte(signing), upper, time.Now())
	require.ErrorIs(t, err, client.ErrTokenMalformed)
	_, err = otp.VerifyToken([]byte(signing), upper, time.Now())
	require.ErrorIs(t, err, otp.ErrMalformed)
}
