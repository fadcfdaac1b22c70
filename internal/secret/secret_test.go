package secret

import (
	"bytes"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
)

func mustRawStd(s string) []byte {
	b, err := base64.RawStdEncoding.DecodeString(s)
	if err != nil {
		panic(err)
	}
	return b
}

func testKey(b byte) []byte { return bytes.Repeat([]byte{b}, KeySize) }

func TestParseKey(t *testing.T) {
	t.Parallel()
	k := make([]byte, KeySize)
	for i := range k {
		k[i] = byte(i*7 + 250) // includes bytes that differ between std and url base64
	}
	tests := []struct {
		name    string
		in      string
		want    []byte
		wantErr string
	}{
		{"hex lower", hex.EncodeToString(k), k, ""},
		{"hex upper", strings.ToUpper(hex.EncodeToString(k)), k, ""},
		{"hex with newline", hex.EncodeToString(k) + "\n", k, ""},
		{"std base64", base64.StdEncoding.EncodeToString(k), k, ""},
		{"raw std base64", base64.RawStdEncoding.EncodeToString(k), k, ""},
		{"url base64", base64.URLEncoding.EncodeToString(k), k, ""},
		{"raw url base64", base64.RawURLEncoding.EncodeToString(k), k, ""},
		{"empty", "", nil, "empty"},
		{"blank", "  \n", nil, "empty"},
		{"short hex", hex.EncodeToString(k[:16]), nil, "hex key has 32 characters"},
		{"long hex", hex.EncodeToString(append(k, 0)), nil, "hex key has 66 characters"},
		{"long base64", base64.StdEncoding.EncodeToString(append(k, 1)), nil, "decodes to 33 bytes"},
		{"64 chars not hex", strings.Repeat("z", 64), nil, "base64 key decodes to 48 bytes"},
		{"odd hex-looking base64", strings.Repeat("a", 43), mustRawStd(strings.Repeat("a", 43)), ""},
		{"garbage", "not a key!", nil, "neither"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got, err := ParseKey(tc.in)
			if tc.wantErr != "" {
				require.Error(t, err)
				require.Contains(t, err.Error(), tc.wantErr)
				return
			}
			require.NoError(t, err)
			require.Equal(t, tc.want, got)
		})
	}
}

func TestLoadOrCreateKeyFile(t *testing.T) {
	t.Parallel()
	t.Run("creates then reloads", func(t *testing.T) {
		t.Parallel()
		path := filepath.Join(t.TempDir(), "nested", "dir", "secret.key")
		k1, err := LoadOrCreateKeyFile(path)
		require.NoError(t, err)
		require.Len(t, k1, KeySize)

		fi, err := os.Stat(path)
		require.NoError(t, err)
		require.Equal(t, os.FileMode(0o600), fi.Mode().Perm())
		di, err := os.Stat(filepath.Dir(path))
		require.NoError(t, err)
		require.Equal(t, os.FileMode(0o700), di.Mode().Perm())

		raw, err := os.ReadFile(path)
		require.NoError(t, err)
		require.Equal(t, hex.EncodeToString(k1)+"\n", string(raw))

		k2, err := LoadOrCreateKeyFile(path)
		require.NoError(t, err)
		require.Equal(t, k1, k2)

		entries, err := os.ReadDir(filepath.Dir(path))
		require.NoError(t, err)
		require.Len(t, entries, 1, "temporary file left behind")
	})
	t.Run("reads existing base64 key", func(t *testing.T) {
		t.Parallel()
		path := filepath.Join(t.TempDir(), "k")
		require.NoError(t, os.WriteFile(path, []byte(base64.StdEncoding.EncodeToString(testKey(3))), 0o600))
		k, err := LoadOrCreateKeyFile(path)
		require.NoError(t, err)
		require.Equal(t, testKey(3), k)
	})
	t.Run("invalid existing file is an error and kept", func(t *testing.T) {
		t.Parallel()
		path := filepath.Join(t.TempDir(), "k")
		require.NoError(t, os.WriteFile(path, []byte("junk"), 0o600))
		_, err := LoadOrCreateKeyFile(path)
		require.Error(t, err)
		require.Contains(t, err.Error(), path)
		raw, err := os.ReadFile(path)
		require.NoError(t, err)
		require.Equal(t, "junk", string(raw))
	})
	t.Run("path is a directory", func(t *testing.T) {
		t.Parallel()
		_, err := LoadOrCreateKeyFile(t.TempDir())
		require.Error(t, err)
	})
	t.Run("concurrent creators agree", func(t *testing.T) {
		t.Parallel()
		path := filepath.Join(t.TempDir(), "k")
		const n = 16
		keys := make([][]byte, n)
		errs := make([]error, n)
		var wg sync.WaitGroup
		for i := range n {
			wg.Go(func() { keys[i], errs[i] = LoadOrCreateKeyFile(path) })
		}
		wg.Wait()
		for i := range n {
			require.NoError(t, errs[i])
			require.Equal(t, keys[0], keys[i])
		}
	})
}

func TestNewBox(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		primary []byte
		older   [][]byte
		wantErr bool
	}{
		{"primary only", testKey(1), nil, false},
		{"with older", testKey(1), [][]byte{testKey(2), testKey(3)}, false},
		{"duplicate older", testKey(1), [][]byte{testKey(1)}, false},
		{"short primary", testKey(1)[:16], nil, true},
		{"nil primary", nil, nil, true},
		{"short older", testKey(1), [][]byte{testKey(2)[:31]}, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			b, err := NewBox(tc.primary, tc.older...)
			if tc.wantErr {
				require.Error(t, err)
				return
			}
			require.NoError(t, err)
			require.Equal(t, KeyID(tc.primary), b.PrimaryKeyID())
		})
	}
}

func TestKeyID(t *testing.T) {
	t.Parallel()
	// sha256 of 32 zero bytes starts with 66687aad.
	require.Equal(t, "66687aad", KeyID(make([]byte, 32)))
	require.NotEqual(t, KeyID(testKey(1)), KeyID(testKey(2)))
}

func TestBoxRoundTrip(t *testing.T) {
	t.Parallel()
	box, err := NewBox(testKey(1))
	require.NoError(t, err)
	for _, pt := range [][]byte{
		{},
		[]byte("x"),
		[]byte(`{"api_key":"k","api_secret":"s"}`),
		bytes.Repeat([]byte{0, 255}, 5000),
	} {
		s, err := box.Seal(pt)
		require.NoError(t, err)
		require.True(t, strings.HasPrefix(s, "v1."+KeyID(testKey(1))+"."), s)
		require.Len(t, strings.Split(s, "."), 3)
		got, err := box.Open(s)
		require.NoError(t, err)
		require.Equal(t, pt, got)
		require.NotNil(t, got)
	}
	// Fresh nonce every time.
	a, _ := box.Seal([]byte("same"))
	b, _ := box.Seal([]byte("same"))
	require.NotEqual(t, a, b)
}

func TestBoxRotation(t *testing.T) {
	t.Parallel()
	oldBox, err := NewBox(testKey(1))
	require.NoError(t, err)
	sealedOld, err := oldBox.SealFor("row:1", []byte("old secret"))
	require.NoError(t, err)

	rotated, err := NewBox(testKey(2), testKey(1))
	require.NoError(t, err)
	got, err := rotated.OpenFor("row:1", sealedOld)
	require.NoError(t, err)
	require.Equal(t, "old secret", string(got))

	sealedNew, err := rotated.SealFor("row:1", []byte("new secret"))
	require.NoError(t, err)
	require.Contains(t, sealedNew, "."+KeyID(testKey(2))+".")

	_, err = oldBox.OpenFor("row:1", sealedNew)
	require.ErrorIs(t, err, ErrUnknownKey)

	newOnly, err := NewBox(testKey(2))
	require.NoError(t, err)
	_, err = newOnly.OpenFor("row:1", sealedOld)
	require.ErrorIs(t, err, ErrUnknownKey)
}

func TestBoxOpenErrors(t *testing.T) {
	t.Parallel()
	box, err := NewBox(testKey(1))
	require.NoError(t, err)
	good, err := box.SealFor("ws1:provider:7", []byte("payload"))
	require.NoError(t, err)
	parts := strings.Split(good, ".")
	raw, err := base64.RawURLEncoding.DecodeString(parts[2])
	require.NoError(t, err)

	flip := func(i int) string {
		c := bytes.Clone(raw)
		c[i] ^= 1
		return parts[0] + "." + parts[1] + "." + base64.RawURLEncoding.EncodeToString(c)
	}
	otherKid := KeyID(testKey(9))

	tests := []struct {
		name string
		aad  string
		in   string
		want error
	}{
		{"good", "ws1:provider:7", good, nil},
		{"other aad", "ws2:provider:7", good, ErrDecrypt},
		{"no aad", "", good, ErrDecrypt},
		{"flipped nonce", "ws1:provider:7", flip(0), ErrDecrypt},
		{"flipped ciphertext", "ws1:provider:7", flip(len(raw) - 20), ErrDecrypt},
		{"flipped tag", "ws1:provider:7", flip(len(raw) - 1), ErrDecrypt},
		{"empty", "", "", ErrMalformed},
		{"wrong version", "ws1:provider:7", "v2." + parts[1] + "." + parts[2], ErrMalformed},
		{"missing body", "ws1:provider:7", "v1." + parts[1], ErrMalformed},
		{"extra part", "ws1:provider:7", good + ".x", ErrMalformed},
		{"bad kid length", "ws1:provider:7", "v1.abc." + parts[2], ErrMalformed},
		{"bad base64", "ws1:provider:7", "v1." + parts[1] + ".***", ErrMalformed},
		{"too short", "ws1:provider:7", "v1." + parts[1] + "." + base64.RawURLEncoding.EncodeToString(raw[:20]), ErrMalformed},
		{"unknown kid", "ws1:provider:7", "v1." + otherKid + "." + parts[2], ErrUnknownKey},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got, err := box.OpenFor(tc.aad, tc.in)
			if tc.want == nil {
				require.NoError(t, err)
				require.Equal(t, "payload", string(got))
				return
			}
			require.ErrorIs(t, err, tc.want)
			require.Nil(t, got)
		})
	}
}

func TestBoxKidIsBound(t *testing.T) {
	t.Parallel()
	// Relabelling a value with another known key id must not open.
	box, err := NewBox(testKey(1), testKey(2))
	require.NoError(t, err)
	s, err := box.Seal([]byte("x"))
	require.NoError(t, err)
	parts := strings.Split(s, ".")
	_, err = box.Open("v1." + KeyID(testKey(2)) + "." + parts[2])
	require.ErrorIs(t, err, ErrDecrypt)
}

func TestHashToken(t *testing.T) {
	t.Parallel()
	tests := []struct{ in, want string }{
		{"", "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"},
		{"abc", "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"},
	}
	for _, tc := range tests {
		require.Equal(t, tc.want, HashToken(tc.in))
	}
}

func TestRandomToken(t *testing.T) {
	t.Parallel()
	tests := []struct {
		n, wantLen int
	}{{1, 2}, {16, 22}, {32, 43}, {33, 44}}
	for _, tc := range tests {
		tok := RandomToken(tc.n)
		require.Len(t, tok, tc.wantLen)
		raw, err := base64.RawURLEncoding.DecodeString(tok)
		require.NoError(t, err)
		require.Len(t, raw, tc.n)
		require.NotContains(t, tok, "=")
	}
	seen := map[string]bool{}
	for range 100 {
		tok := RandomToken(16)
		require.False(t, seen[tok])
		seen[tok] = true
	}
	require.Panics(t, func() { RandomToken(0) })
}

func TestRandomHex(t *testing.T) {
	t.Parallel()
	for _, n := range []int{1, 8, 32} {
		h := RandomHex(n)
		require.Len(t, h, 2*n)
		require.Equal(t, strings.ToLower(h), h)
		_, err := hex.DecodeString(h)
		require.NoError(t, err)
	}
	require.NotEqual(t, RandomHex(16), RandomHex(16))
	require.Panics(t, func() { RandomHex(-1) })
}

func TestEqual(t *testing.T) {
	t.Parallel()
	tests := []struct {
		a, b string
		want bool
	}{
		{"", "", true},
		{"abc", "abc", true},
		{"abc", "abd", false},
		{"abc", "abcd", false},
		{"", "a", false},
	}
	for _, tc := range tests {
		require.Equal(t, tc.want, Equal(tc.a, tc.b), "%q vs %q", tc.a, tc.b)
	}
}

func TestHashPassword(t *testing.T) {
	t.Parallel()
	h, err := HashPassword("correct horse battery staple")
	require.NoError(t, err)
	require.True(t, strings.HasPrefix(h, "$argon2id$v=19$m=19456,t=2,p=1$"), h)
	parts := strings.Split(h, "$")
	require.Len(t, parts, 6)
	salt, err := base64.RawStdEncoding.DecodeString(parts[4])
	require.NoError(t, err)
	require.Len(t, salt, 16)
	key, err := base64.RawStdEncoding.DecodeString(parts[5])
	require.NoError(t, err)
	require.Len(t, key, 32)

	h2, err := HashPassword("correct horse battery staple")
	require.NoError(t, err)
	require.NotEqual(t, h, h2, "salt must be random")

	_, err = HashPassword("")
	require.ErrorIs(t, err, ErrEmptyPassword)
}

func TestCheckPassword(t *testing.T) {
	t.Parallel()
	h, err := HashPassword("s3cret-Pässword")
	require.NoError(t, err)
	parts := strings.Split(h, "$")
	with := func(i int, v string) string {
		c := append([]string(nil), parts...)
		c[i] = v
		return strings.Join(c, "$")
	}
	tests := []struct {
		name    string
		encoded string
		pw      string
		want    bool
	}{
		{"match", h, "s3cret-Pässword", true},
		{"wrong", h, "s3cret-Password", false},
		{"empty pw", h, "", false},
		{"empty hash", "", "s3cret-Pässword", false},
		{"argon2i", with(1, "argon2i"), "s3cret-Pässword", false},
		{"wrong version", with(2, "v=16"), "s3cret-Pässword", false},
		{"changed memory", with(3, "m=19457,t=2,p=1"), "s3cret-Pässword", false},
		{"param order", with(3, "t=2,m=19456,p=1"), "s3cret-Pässword", true},
		{"missing param", with(3, "m=19456,t=2"), "s3cret-Pässword", false},
		{"duplicate param", with(3, "m=19456,m=19456,t=2"), "s3cret-Pässword", false},
		{"unknown param", with(3, "m=19456,t=2,x=1"), "s3cret-Pässword", false},
		{"huge memory", with(3, "m=4294967295,t=2,p=1"), "s3cret-Pässword", false},
		{"huge time", with(3, "m=19456,t=1000,p=1"), "s3cret-Pässword", false},
		{"zero threads", with(3, "m=19456,t=2,p=0"), "s3cret-Pässword", false},
		{"non-numeric", with(3, "m=abc,t=2,p=1"), "s3cret-Pässword", false},
		{"bad salt", with(4, "!!"), "s3cret-Pässword", false},
		{"short salt", with(4, "YWJj"), "s3cret-Pässword", false},
		{"bad hash", with(5, "!!"), "s3cret-Pässword", false},
		{"short hash", with(5, "YWJj"), "s3cret-Pässword", false},
		{"truncated", strings.Join(parts[:5], "$"), "s3cret-Pässword", false},
		{"extra field", h + "$x", "s3cret-Pässword", false},
		{"bcrypt", "$2a$10$N9qo8uLOickgx2ZMRZoMyeIjZAgcfl7p92ldGxad68LJZdL17lhWy", "x", false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			require.Equal(t, tc.want, CheckPassword(tc.encoded, tc.pw))
		})
	}
}

func TestCheckPasswordReferenceVectors(t *testing.T) {
	t.Parallel()
	// Known answers of the Argon2 reference implementation for password
	// "password", salt "somesalt" (as used by x/crypto/argon2's own tests),
	// wrapped in PHC strings with parameters other than ours: proves that
	// CheckPassword reads m, t and p from the string.
	tests := []struct {
		params, hashHex string
	}{
		{"m=64,t=1,p=1", "655ad15eac652dc59f7170a7332bf49b8469be1fdb9c28bb"},
		{"m=64,t=2,p=1", "068d62b26455936aa6ebe60060b0a65870dbfa3ddf8d41f7"},
		{"m=64,t=2,p=2", "350ac37222f436ccb5c0972f1ebd3bf6b958bf2071841362"},
	}
	for _, tc := range tests {
		t.Run(tc.params, func(t *testing.T) {
			t.Parallel()
			sum, err := hex.DecodeString(tc.hashHex)
			require.NoError(t, err)
			enc := "$argon2id$v=19$" + tc.params + "$c29tZXNhbHQ$" + base64.RawStdEncoding.EncodeToString(sum)
			require.True(t, CheckPassword(enc, "password"))
			require.False(t, CheckPassword(enc, "Password"))
		})
	}
}

func TestGeneratePassword(t *testing.T) {
	t.Parallel()
	seen := map[string]bool{}
	for range 200 {
		pw := GeneratePassword()
		require.Len(t, pw, GeneratedPasswordLen)
		require.True(t, strings.ContainsAny(pw, "ABCDEFGHIJKLMNOPQRSTUVWXYZ"))
		require.True(t, strings.ContainsAny(pw, "abcdefghijklmnopqrstuvwxyz"))
		require.True(t, strings.ContainsAny(pw, "0123456789"))
		for _, c := range pw {
			require.True(t, strings.ContainsRune(passwordAlphabet, c))
		}
		require.False(t, seen[pw])
		seen[pw] = true
	}
}

func TestRandomStringUniform(t *testing.T) {
	t.Parallel()
	// 62 symbols, 62,000 draws: each should appear about 1,000 times. A
	// modulo-biased generator would put the first 8 symbols near 1,120.
	s := randomString(passwordAlphabet, 62_000)
	counts := map[rune]int{}
	for _, c := range s {
		counts[c]++
	}
	require.Len(t, counts, 62)
	for c, n := range counts {
		require.InDelta(t, 1000, n, 150, "symbol %q", c)
	}
}

func TestErrorsDistinct(t *testing.T) {
	t.Parallel()
	require.False(t, errors.Is(ErrMalformed, ErrDecrypt))
	require.False(t, errors.Is(ErrUnknownKey, ErrDecrypt))
}

func TestDerive(t *testing.T) {
	t.Parallel()
	master := testKey(7)
	a := Derive(master, "otp-code")
	b := Derive(master, "otp-token")
	require.Len(t, a, KeySize)
	require.Len(t, b, KeySize)
	require.NotEqual(t, a, b)
	require.Equal(t, a, Derive(master, "otp-code"))
	require.NotEqual(t, a, Derive(testKey(8), "otp-code"))
	require.NotEqual(t, master, Derive(master, ""))
}
