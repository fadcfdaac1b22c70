package secret

import (
	"crypto/rand"
	"crypto/subtle"
	"encoding/base64"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"golang.org/x/crypto/argon2"
)

// Argon2id parameters of new password hashes: the OWASP baseline
// (19 MiB, 2 passes, 1 lane). They are written into every hash, so raising
// them later leaves existing hashes verifiable.
const (
	argonMemoryKiB = 19456
	argonTime      = 2
	argonThreads   = 1
	argonSaltLen   = 16
	argonKeyLen    = 32
)

// Bounds accepted when reading a stored hash, so a corrupt or hostile value
// cannot make CheckPassword allocate gigabytes or spin for minutes.
const (
	maxArgonMemoryKiB = 1 << 20 // 1 GiB
	maxArgonTime      = 16
	minArgonSaltLen   = 8
	minArgonKeyLen    = 16
	maxArgonKeyLen    = 128
)

// ErrEmptyPassword is returned by HashPassword for an empty password, which
// should never be stored as a usable credential.
var ErrEmptyPassword = errors.New("secret: empty password")

// HashPassword returns an argon2id hash of pw in PHC string format
// ("$argon2id$v=19$m=19456,t=2,p=1$<salt>$<hash>", unpadded standard
// base64), the slow adaptive hash API-DECISIONS section 2 asks for.
func HashPassword(pw string) (string, error) {
	if pw == "" {
		return "", ErrEmptyPassword
	}
	salt := make([]byte, argonSaltLen)
	_, _ = rand.Read(salt) // never fails
	key := argon2.IDKey([]byte(pw), salt, argonTime, argonMemoryKiB, argonThreads, argonKeyLen)
	return fmt.Sprintf("$argon2id$v=%d$m=%d,t=%d,p=%d$%s$%s",
		argon2.Version, argonMemoryKiB, argonTime, argonThreads,
		base64.RawStdEncoding.EncodeToString(salt),
		base64.RawStdEncoding.EncodeToString(key)), nil
}

// CheckPassword reports whether pw matches the PHC-format argon2id hash
// encoded, using the parameters stored in it and a constant-time compare. A
// malformed hash, or one with out-of-range parameters, never matches.
func CheckPassword(encoded, pw string) bool {
	p, ok := parsePHC(encoded)
	if !ok {
		return false
	}
	key := argon2.IDKey([]byte(pw), p.salt, p.time, p.memory, p.threads, uint32(len(p.hash)))
	return subtle.ConstantTimeCompare(key, p.hash) == 1
}

type phc struct {
	memory, time uint32
	threads      uint8
	salt, hash   []byte
}

func parsePHC(s string) (phc, bool) {
	var p phc
	// "", "argon2id", "v=19", "m=..,t=..,p=..", salt, hash
	parts := strings.Split(s, "$")
	if len(parts) != 6 || parts[0] != "" || parts[1] != "argon2id" {
		return p, false
	}
	if parts[2] != "v="+strconv.Itoa(argon2.Version) {
		return p, false
	}
	params := strings.Split(parts[3], ",")
	if len(params) != 3 {
		return p, false
	}
	var seen [3]bool
	for _, kv := range params {
		k, v, ok := strings.Cut(kv, "=")
		if !ok {
			return p, false
		}
		n, err := strconv.ParseUint(v, 10, 32)
		if err != nil {
			return p, false
		}
		switch k {
		case "m":
			if seen[0] || n < 8 || n > maxArgonMemoryKiB {
				return p, false
			}
			seen[0], p.memory = true, uint32(n)
		case "t":
			if seen[1] || n < 1 || n > maxArgonTime {
				return p, false
			}
			seen[1], p.time = true, uint32(n)
		case "p":
			if seen[2] || n < 1 || n > 255 {
				return p, false
			}
			seen[2], p.threads = true, uint8(n)
		default:
			return p, false
		}
	}
	if uint64(p.memory) < 8*uint64(p.threads) { // argon2 requires m >= 8p
		return p, false
	}
	var err error
	if p.salt, err = base64.RawStdEncoding.DecodeString(parts[4]); err != nil || len(p.salt) < minArgonSaltLen {
		return p, false
	}
	if p.hash, err = base64.RawStdEncoding.DecodeString(parts[5]); err != nil ||
		len(p.hash) < minArgonKeyLen || len(p.hash) > maxArgonKeyLen {
		return p, false
	}
	return p, true
}

// passwordAlphabet is letters and digits only: 62 symbols give about 143
// bits over 24 characters, and the result needs no quoting in shells, JSON
// or URLs (bootstrap prints it).
const passwordAlphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"

// GeneratedPasswordLen is the length of GeneratePassword's result.
const GeneratedPasswordLen = 24

// GeneratePassword returns a strong random password (24 characters, each
// uniformly from letters and digits, with at least one upper-case letter,
// lower-case letter and digit so that it passes common password rules), for
// bootstrap and invited members who get no password.
func GeneratePassword() string {
	for {
		pw := randomString(passwordAlphabet, GeneratedPasswordLen)
		if strings.ContainsAny(pw, passwordAlphabet[:26]) &&
			strings.ContainsAny(pw, passwordAlphabet[26:52]) &&
			strings.ContainsAny(pw, passwordAlphabet[52:]) {
			return pw
		}
	}
}

// randomString picks n characters uniformly from alphabet (at most 256
// single-byte characters) by rejection sampling, so there is no modulo bias.
func randomString(alphabet string, n int) string {
	limit := 256 - 256%len(alphabet) // largest multiple of len(alphabet) <= 256
	out := make([]byte, 0, n)
	buf := make([]byte, n+n/4+8)
	for len(out) < n {
		_, _ = rand.Read(buf)
		for _, c := range buf {
			if int(c) < limit {
				out = append(out, alphabet[int(c)%len(alphabet)])
				if len(out) == n {
					break
				}
			}
		}
	}
	return string(out)
}
