package secret

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
)

// Errors of Box.Open, distinct so that callers can tell a corrupt column
// (ErrMalformed) from a missing old key after rotation (ErrUnknownKey) from
// tampering or a wrong binding (ErrDecrypt).
var (
	ErrMalformed  = errors.New("secret: malformed sealed value")
	ErrUnknownKey = errors.New("secret: sealed with an unknown key")
	ErrDecrypt    = errors.New("secret: cannot decrypt sealed value (wrong key, binding or tampered)")
)

// sealVersion prefixes every sealed value so the format can change later
// without guessing.
const sealVersion = "v1"

// Box encrypts small secrets for storage with AES-256-GCM. It keeps one
// primary key for new data and any number of older keys for reading data
// sealed before a key rotation. A Box is immutable and safe for concurrent
// use.
type Box struct {
	primary string // key id of the primary key
	aeads   map[string]cipher.AEAD
}

// NewBox builds a Box sealing with primary and opening with primary or any
// of older, so a key can be rotated without re-encrypting everything at once.
// Every key must be KeySize bytes.
func NewBox(primary []byte, older ...[]byte) (*Box, error) {
	b := &Box{aeads: make(map[string]cipher.AEAD, 1+len(older))}
	for i, k := range append([][]byte{primary}, older...) {
		if len(k) != KeySize {
			return nil, fmt.Errorf("secret: key %d is %d bytes, want %d", i, len(k), KeySize)
		}
		id := KeyID(k)
		if i == 0 {
			b.primary = id
		}
		if _, dup := b.aeads[id]; dup {
			continue // the same key given twice; a 32-bit id collision of distinct keys is not a practical concern
		}
		block, err := aes.NewCipher(k)
		if err != nil {
			return nil, fmt.Errorf("secret: key %d: %w", i, err)
		}
		aead, err := cipher.NewGCM(block)
		if err != nil {
			return nil, fmt.Errorf("secret: key %d: %w", i, err)
		}
		b.aeads[id] = aead
	}
	return b, nil
}

// KeyID names a key in sealed values: the first 4 bytes of its SHA-256, in
// hex. It identifies the key for rotation without revealing it.
func KeyID(key []byte) string {
	sum := sha256.Sum256(key)
	return hex.EncodeToString(sum[:4])
}

// PrimaryKeyID reports the id new values are sealed with, so a rotation job
// can tell which stored values still need re-sealing.
func (b *Box) PrimaryKeyID() string { return b.primary }

// HasKey reports whether the box opens values sealed with key id kid.
func (b *Box) HasKey(kid string) bool {
	_, ok := b.aeads[kid]
	return ok
}

// Seal encrypts plaintext with the primary key, unbound to any context. The
// result is "v1.<kid>.<base64url(nonce|ciphertext)>".
func (b *Box) Seal(plaintext []byte) (string, error) { return b.SealFor("", plaintext) }

// Open decrypts a value produced by Seal, with whichever known key sealed it.
func (b *Box) Open(s string) ([]byte, error) { return b.OpenFor("", s) }

// SealFor encrypts plaintext and binds it to aad (for example
// "provider:<workspace>:<id>"), so a ciphertext copied to another row or
// workspace does not open there. aad itself is not stored.
func (b *Box) SealFor(aad string, plaintext []byte) (string, error) {
	aead := b.aeads[b.primary]
	buf := make([]byte, aead.NonceSize(), aead.NonceSize()+len(plaintext)+aead.Overhead())
	_, _ = rand.Read(buf) // never fails
	buf = aead.Seal(buf, buf, plaintext, additional(b.primary, aad))
	return sealVersion + "." + b.primary + "." + base64.RawURLEncoding.EncodeToString(buf), nil
}

// OpenFor decrypts a value produced by SealFor with the same aad. A wrong
// aad, a wrong key or any modification gives ErrDecrypt.
func (b *Box) OpenFor(aad, s string) ([]byte, error) {
	ver, rest, ok := strings.Cut(s, ".")
	if !ok || ver != sealVersion {
		return nil, ErrMalformed
	}
	kid, body, ok := strings.Cut(rest, ".")
	if !ok || len(kid) != 8 || strings.Contains(body, ".") {
		return nil, ErrMalformed
	}
	raw, err := base64.RawURLEncoding.DecodeString(body)
	if err != nil {
		return nil, ErrMalformed
	}
	aead, found := b.aeads[kid]
	if !found {
		return nil, ErrUnknownKey
	}
	ns := aead.NonceSize()
	if len(raw) < ns+aead.Overhead() {
		return nil, ErrMalformed
	}
	pt, err := aead.Open(nil, raw[:ns], raw[ns:], additional(kid, aad))
	if err != nil {
		return nil, ErrDecrypt
	}
	if pt == nil {
		pt = []byte{}
	}
	return pt, nil
}

// additional binds the format version and key id along with the caller's
// context; the fixed-length prefix keeps the encoding unambiguous.
func additional(kid, aad string) []byte {
	return []byte(sealVersion + "." + kid + "." + aad)
}
