// Package secret holds the service's small cryptographic building blocks:
// the master key, authenticated encryption of stored secrets (configJson,
// HMAC secrets), token hashing, random tokens and password hashing. Keeping
// them in one audited leaf package means no other package picks its own
// cipher mode, encoding or comparison.
package secret

import (
	"crypto/hkdf"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// KeySize is the length of the master key (AES-256), fixed so that a short
// or truncated NOTIFYD_SECRET_KEY is refused instead of silently weakened.
const KeySize = 32

// ParseKey decodes a 32-byte key given as 64 hex characters or as standard
// or URL-safe base64 (padded or not), the forms API-DECISIONS section 1
// allows for NOTIFYD_SECRET_KEY. Surrounding white space is ignored so a
// key pasted with a trailing newline still works.
func ParseKey(s string) ([]byte, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return nil, errors.New("secret: key is empty; want 32 bytes as 64 hex characters or base64")
	}
	if len(s)%2 == 0 && isHex(s) {
		// Even-length hex is never ambiguous with base64 of 32 bytes (43
		// characters unpadded, 44 with "=").
		if len(s) != 2*KeySize {
			return nil, fmt.Errorf("secret: hex key has %d characters, want %d", len(s), 2*KeySize)
		}
		k, _ := hex.DecodeString(s)
		return k, nil
	}
	for _, enc := range []*base64.Encoding{
		base64.StdEncoding, base64.RawStdEncoding,
		base64.URLEncoding, base64.RawURLEncoding,
	} {
		k, err := enc.DecodeString(s)
		if err != nil {
			continue
		}
		if len(k) != KeySize {
			return nil, fmt.Errorf("secret: base64 key decodes to %d bytes, want %d (or give %d hex characters)", len(k), KeySize, 2*KeySize)
		}
		return k, nil
	}
	return nil, fmt.Errorf("secret: key (%d characters) is neither %d hex characters nor base64 of %d bytes", len(s), 2*KeySize, KeySize)
}

func isHex(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F') {
			return false
		}
	}
	return true
}

// LoadOrCreateKeyFile returns the key kept in the file at path, creating the
// file with a fresh random key (hex, mode 0600, parent directory 0700) when
// it does not exist. This is how an embedded SQLite deployment gets a stable
// key without configuration (API-DECISIONS section 1). An existing file that
// does not hold a valid key is an error and is never overwritten: replacing
// it would make every stored secret unreadable.
//
// Creation is safe against a concurrent creator: the new file is written
// under a temporary name and hard-linked into place, so a reader never sees
// a half-written key and the loser of a race reads the winner's key.
func LoadOrCreateKeyFile(path string) ([]byte, error) {
	k, err := readKeyFile(path)
	if err == nil || !errors.Is(err, os.ErrNotExist) {
		return k, err
	}
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("secret: create key directory: %w", err)
	}
	key := make([]byte, KeySize)
	_, _ = rand.Read(key) // crypto/rand.Read never fails (it aborts the program instead)

	if err := createExclusive(path, []byte(hex.EncodeToString(key)+"\n")); err != nil {
		if errors.Is(err, os.ErrExist) {
			return readKeyFile(path)
		}
		return nil, fmt.Errorf("secret: create key file: %w", err)
	}
	return key, nil
}

func readKeyFile(path string) ([]byte, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, err
		}
		return nil, fmt.Errorf("secret: read key file: %w", err)
	}
	k, err := ParseKey(string(b))
	if err != nil {
		return nil, fmt.Errorf("secret: key file %s: %w", path, err)
	}
	return k, nil
}

// createExclusive writes data to path only if path does not exist yet,
// returning an error wrapping os.ErrExist otherwise.
func createExclusive(path string, data []byte) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return err
	}
	tmpName := tmp.Name()
	defer os.Remove(tmpName)
	if err := tmp.Chmod(0o600); err != nil {
		tmp.Close()
		return err
	}
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	err = os.Link(tmpName, path)
	if err == nil || errors.Is(err, os.ErrExist) {
		return err
	}
	// File systems without hard links: fall back to an exclusive create.
	f, ferr := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if ferr != nil {
		return ferr
	}
	if _, werr := f.Write(data); werr != nil {
		f.Close()
		os.Remove(path)
		return werr
	}
	if serr := f.Sync(); serr != nil {
		f.Close()
		os.Remove(path)
		return serr
	}
	return f.Close()
}

// Derive returns a 32-byte subkey of master for one purpose (HKDF-SHA256
// with label as info), so that one configured master key can supply
// independent keys, for example the OTP code-hash key or a default
// OTP_SIGNING_SECRET, without one use exposing another. Different labels
// give unrelated keys; the same inputs always give the same key.
func Derive(master []byte, label string) []byte {
	k, err := hkdf.Key(sha256.New, master, nil, label, KeySize)
	if err != nil { // only for absurd lengths, impossible with KeySize
		panic("secret: derive: " + err.Error())
	}
	return k
}
