package otp_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/notifyd/notifyd/client"
	"github.com/notifyd/notifyd/internal/config"
)

// TestPatternA: with OTP_SIGNING_SECRET set, a customer backend verifies
// the token offline with client.VerifyToken and the same secret (docs/OTP.md
// pattern A); pattern B is the status lookup, which answers the same
// session verified.
func TestPatternA(t *testing.T) {
	t.Parallel()
	const signing = "customer-shared-signing-secret"
	b := setupAt(t, nil, func(c *config.Config) { c.OTPSigningSecret = signing })
	s := b.send(t, map[string]any{"channel": "sms", "to": "010 7070 7070", "purpose": "signup"})
	v := b.verify(t, s.VerificationID, b.code(t, "01070707070"))
	require.Equal(t, "verified", v.Status)

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
