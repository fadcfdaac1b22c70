package otp

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/notifyd/notifyd/internal/notify"
)

func TestGenerateCode(t *testing.T) {
	t.Parallel()
	tests := []struct {
		digits  int
		wantErr bool
	}{
		{-1, true}, {0, true}, {1, false}, {4, false}, {6, false}, {10, false},
		{MaxCodeDigits, false}, {MaxCodeDigits + 1, true},
	}
	for _, tc := range tests {
		code, err := GenerateCode(tc.digits)
		if tc.wantErr {
			require.Error(t, err, "digits %d", tc.digits)
			continue
		}
		require.NoError(t, err)
		require.Len(t, code, tc.digits)
		for _, c := range code {
			require.True(t, c >= '0' && c <= '9', code)
		}
	}
}

func TestGenerateCodeUniform(t *testing.T) {
	t.Parallel()
	// 50,000 digits: each about 5,000. Modulo bias from bytes (256 % 10)
	// would put 0-5 about 2% high (~5,080); the spread here is a sanity
	// check that all digits occur evenly.
	var counts [10]int
	for range 50_000 / MaxCodeDigits {
		code, err := GenerateCode(MaxCodeDigits)
		require.NoError(t, err)
		for _, c := range code {
			counts[c-'0']++
		}
	}
	for d, n := range counts {
		require.InDelta(t, 5000, n, 400, "digit %d", d)
	}
}

func TestHashCode(t *testing.T) {
	t.Parallel()
	key := []byte("otp-key")
	h := HashCode(key, "sess-1", "123456")

	m := hmac.New(sha256.New, key)
	m.Write([]byte("sess-1\x00123456"))
	require.Equal(t, hex.EncodeToString(m.Sum(nil)), h)
	require.Len(t, h, 64)

	tests := []struct {
		name    string
		key     []byte
		session string
		code    string
		hash    string
		want    bool
	}{
		{"match", key, "sess-1", "123456", h, true},
		{"match upper-case hash", key, "sess-1", "123456", strings.ToUpper(h), true},
		{"wrong code", key, "sess-1", "123457", h, false},
		{"other session", key, "sess-2", "123456", h, false},
		{"other key", []byte("other"), "sess-1", "123456", h, false},
		{"boundary shift", key, "sess-11", "23456", h, false},
		{"empty hash", key, "sess-1", "123456", "", false},
		{"not hex", key, "sess-1", "123456", "zz" + h[2:], false},
		{"truncated", key, "sess-1", "123456", h[:62], false},
		{"extended", key, "sess-1", "123456", h + "00", false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			require.Equal(t, tc.want, CheckCode(tc.key, tc.session, tc.code, tc.hash))
		})
	}
}

func TestNewLinkToken(t *testing.T) {
	t.Parallel()
	tok, hash := NewLinkToken()
	raw, err := base64.RawURLEncoding.DecodeString(tok)
	require.NoError(t, err)
	require.Len(t, raw, 32)
	require.Len(t, tok, 43)
	sum := sha256.Sum256([]byte(tok))
	require.Equal(t, hex.EncodeToString(sum[:]), hash)
	require.Equal(t, hash, HashLinkToken(tok))

	tok2, hash2 := NewLinkToken()
	require.NotEqual(t, tok, tok2)
	require.NotEqual(t, hash, hash2)
}

func TestNormalize(t *testing.T) {
	t.Parallel()
	tests := []struct {
		channel notify.Channel
		in      string
		want    string
	}{
		{notify.ChannelSMS, "010-1234-5678", "01012345678"},
		{notify.ChannelSMS, "(010) 1234.5678", "01012345678"},
		{notify.ChannelSMS, "+82 10 1234 5678", "+821012345678"},
		{notify.ChannelSMS, " 010\t1234\u00a05678 ", "01012345678"},
		{notify.ChannelSMS, "01012345678", "01012345678"},
		{notify.ChannelSMS, "", ""},
		{notify.ChannelAlimTalk, "010-9999-0000", "01099990000"},
		{notify.ChannelEmail, "  User.Name+Tag@Example.COM ", "user.name+tag@example.com"},
		{notify.ChannelEmail, "a-b@x.io", "a-b@x.io"}, // no phone rule on email
		{notify.ChannelEmail, "", ""},
	}
	for _, tc := range tests {
		require.Equal(t, tc.want, Normalize(tc.channel, tc.in), "%s %q", tc.channel, tc.in)
	}
	require.Equal(t, "0101234", NormalizePhone("010-12.34"))
	require.Equal(t, "a@b.c", NormalizeEmail(" A@B.C\n"))
}

func TestMask(t *testing.T) {
	t.Parallel()
	tests := []struct {
		channel notify.Channel
		in      string
		want    string
	}{
		{notify.ChannelSMS, "01012345678", "*******5678"},
		{notify.ChannelSMS, "+821012345678", "*********5678"},
		{notify.ChannelAlimTalk, "01099990000", "*******0000"},
		{notify.ChannelSMS, "12345", "*2345"},
		{notify.ChannelSMS, "1234", "1234"},
		{notify.ChannelSMS, "12", "12"},
		{notify.ChannelSMS, "", ""},
		{notify.ChannelEmail, "abcdef@example.com", "ab****@example.com"},
		{notify.ChannelEmail, "abc@example.com", "ab*@example.com"},
		{notify.ChannelEmail, "ab@example.com", "ab@example.com"},
		{notify.ChannelEmail, "a@example.com", "a@example.com"},
		{notify.ChannelEmail, "@example.com", "@example.com"},
		{notify.ChannelEmail, "a\"b@c\"@example.com", "a\"****@example.com"},
		{notify.ChannelEmail, "홍길동님@example.com", "홍길**@example.com"},
		{notify.ChannelEmail, "noatsign", "no******"},
		{notify.ChannelEmail, "", ""},
	}
	for _, tc := range tests {
		require.Equal(t, tc.want, Mask(tc.channel, tc.in), "%s %q", tc.channel, tc.in)
	}
}

func TestSignToken(t *testing.T) {
	t.Parallel()
	secret := []byte("otp-signing-secret")
	c := Claims{VID: "v-1", WSID: "ws-1", Purpose: "login", Channel: "sms", Sub: "*******5678", IAT: 1700000000, EXP: 1700000300}
	tok := SignToken(secret, c)

	body, sig, ok := strings.Cut(tok, ".")
	require.True(t, ok)
	payload, err := base64.RawURLEncoding.DecodeString(body)
	require.NoError(t, err)
	require.JSONEq(t, `{"vid":"v-1","wsid":"ws-1","purpose":"login","channel":"sms","sub":"*******5678","iat":1700000000,"exp":1700000300}`, string(payload))
	// Field order of the contract.
	require.Equal(t, `{"vid":"v-1","wsid":"ws-1","purpose":"login","channel":"sms","sub":"*******5678","iat":1700000000,"exp":1700000300}`, string(payload))
	require.NotContains(t, body, "=")

	m := hmac.New(sha256.New, secret)
	m.Write([]byte(body))
	require.Equal(t, hex.EncodeToString(m.Sum(nil)), sig)
}

func TestVerifyToken(t *testing.T) {
	t.Parallel()
	secret := []byte("otp-signing-secret")
	iat := time.Unix(1700000000, 0)
	c := Claims{VID: "v-1", WSID: "ws-1", Purpose: "login", Channel: "email", Sub: "ab****@example.com", IAT: iat.Unix(), EXP: iat.Unix() + 300}
	good := SignToken(secret, c)
	body, sig, _ := strings.Cut(good, ".")

	// sign builds a correctly signed token over an arbitrary body.
	sign := func(body string) string {
		m := hmac.New(sha256.New, secret)
		m.Write([]byte(body))
		return body + "." + hex.EncodeToString(m.Sum(nil))
	}
	enc := func(s string) string { return base64.RawURLEncoding.EncodeToString([]byte(s)) }
	tampered, _ := json.Marshal(Claims{VID: "v-2", WSID: "ws-1", EXP: c.EXP})

	tests := []struct {
		name    string
		secret  []byte
		token   string
		now     time.Time
		want    error
		wantVID string
	}{
		{"valid", secret, good, iat, nil, "v-1"},
		{"valid last second", secret, good, iat.Add(299*time.Second + 999*time.Millisecond), nil, "v-1"},
		{"expired at exp", secret, good, iat.Add(300 * time.Second), ErrExpired, "v-1"},
		{"expired later", secret, good, iat.Add(time.Hour), ErrExpired, "v-1"},
		{"wrong secret", []byte("other"), good, iat, ErrSignature, ""},
		{"tampered payload", secret, enc(string(tampered)) + "." + sig, iat, ErrSignature, ""},
		{"tampered signature", secret, body + "." + strings.Repeat("0", 64), iat, ErrSignature, ""},
		{"upper-case signature", secret, body + "." + strings.ToUpper(sig), iat, ErrMalformed, ""},
		{"empty", secret, "", iat, ErrMalformed, ""},
		{"no dot", secret, body, iat, ErrMalformed, ""},
		{"empty body", secret, "." + sig, iat, ErrMalformed, ""},
		{"three parts", secret, good + ".x", iat, ErrMalformed, ""},
		{"signature not hex", secret, body + ".zz", iat, ErrMalformed, ""},
		{"signature short", secret, body + "." + sig[:62], iat, ErrMalformed, ""},
		{"padded body", secret, sign(base64.URLEncoding.EncodeToString([]byte(`{"vid":"x","exp":9999999999}`))), iat, ErrMalformed, ""},
		{"body not json", secret, sign(enc("not json")), iat, ErrMalformed, ""},
		{"no exp", secret, sign(enc(`{"vid":"x"}`)), iat, ErrMalformed, ""},
		{"exp wrong type", secret, sign(enc(`{"vid":"x","exp":"soon"}`)), iat, ErrMalformed, ""},
		{"signed by us, other body", secret, sign(enc(`{"vid":"x","exp":9999999999}`)), iat, nil, "x"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got, err := VerifyToken(tc.secret, tc.token, tc.now)
			if tc.want != nil {
				require.ErrorIs(t, err, tc.want)
			} else {
				require.NoError(t, err)
			}
			require.Equal(t, tc.wantVID, got.VID)
		})
	}

	got, err := VerifyToken(secret, good, iat)
	require.NoError(t, err)
	require.Equal(t, c, got)
}

func TestDefaultPolicy(t *testing.T) {
	t.Parallel()
	require.Equal(t, Policy{
		CodeLength:     6,
		CodeTTL:        180 * time.Second,
		MaxAttempts:    5,
		ResendCooldown: 30 * time.Second,
		MaxResends:     3,
		SendsPerHour:   5,
		SendsPerDay:    10,
		TokenTTL:       300 * time.Second,
	}, DefaultPolicy())
}

func TestWindows(t *testing.T) {
	t.Parallel()
	kst := time.FixedZone("KST", 9*3600)
	tests := []struct {
		name               string
		at                 time.Time
		hourStart, hourEnd string
		dayStart, dayEnd   string
	}{
		{"mid hour", time.Date(2026, 3, 4, 10, 30, 15, 5, time.UTC),
			"2026-03-04T10:00:00Z", "2026-03-04T11:00:00Z", "2026-03-04T00:00:00Z", "2026-03-05T00:00:00Z"},
		{"on the hour", time.Date(2026, 3, 4, 10, 0, 0, 0, time.UTC),
			"2026-03-04T10:00:00Z", "2026-03-04T11:00:00Z", "2026-03-04T00:00:00Z", "2026-03-05T00:00:00Z"},
		{"last nanosecond of day", time.Date(2026, 3, 4, 23, 59, 59, 999999999, time.UTC),
			"2026-03-04T23:00:00Z", "2026-03-05T00:00:00Z", "2026-03-04T00:00:00Z", "2026-03-05T00:00:00Z"},
		{"midnight", time.Date(2026, 3, 5, 0, 0, 0, 0, time.UTC),
			"2026-03-05T00:00:00Z", "2026-03-05T01:00:00Z", "2026-03-05T00:00:00Z", "2026-03-06T00:00:00Z"},
		{"other zone uses UTC day", time.Date(2026, 3, 5, 8, 30, 0, 0, kst), // 23:30 UTC on the 4th
			"2026-03-04T23:00:00Z", "2026-03-05T00:00:00Z", "2026-03-04T00:00:00Z", "2026-03-05T00:00:00Z"},
		{"half-hour zone", time.Date(2026, 3, 5, 5, 45, 0, 0, time.FixedZone("IST", 5*3600+1800)), // 00:15 UTC
			"2026-03-05T00:00:00Z", "2026-03-05T01:00:00Z", "2026-03-05T00:00:00Z", "2026-03-06T00:00:00Z"},
		{"leap day end of year", time.Date(2028, 12, 31, 23, 10, 0, 0, time.UTC),
			"2028-12-31T23:00:00Z", "2029-01-01T00:00:00Z", "2028-12-31T00:00:00Z", "2029-01-01T00:00:00Z"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			hs, he := HourWindow(tc.at)
			ds, de := DayWindow(tc.at)
			require.Equal(t, tc.hourStart, hs.Format(time.RFC3339Nano))
			require.Equal(t, tc.hourEnd, he.Format(time.RFC3339Nano))
			require.Equal(t, tc.dayStart, ds.Format(time.RFC3339Nano))
			require.Equal(t, tc.dayEnd, de.Format(time.RFC3339Nano))
			require.Equal(t, time.UTC, hs.Location())
			require.False(t, tc.at.Before(hs))
			require.True(t, tc.at.Before(he))
		})
	}
}
