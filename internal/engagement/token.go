package engagement

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"encoding/hex"
	"hash"
	"time"
)

// link is what a tracking token names, under its signature: the
// message (workspace, request, campaign), when it was sent, and for a
// click the link's place in the message and its URL. Carrying the URL
// signed is what makes the redirect go only to a URL that was in that
// message without a lookup: an altered URL breaks the signature.
type link struct {
	kind        byte // 'o' open, 'c' click
	workspaceID string
	requestID   string
	campaignID  string
	index       int
	sentAt      time.Time // seconds
	url         string
}

const (
	tokenVersion = 1
	macLen       = 16 // 128-bit truncated HMAC-SHA256
	// maxToken bounds a token read from a URL before any work.
	maxToken = 4096
	// maxLinkURL is the longest URL rewritten; a longer one is left as it
	// is (its token would make the link too long for some clients).
	maxLinkURL = 2048
)

// sign encodes l and its MAC as one base64url string.
func (s *Service) sign(l link) string {
	b := make([]byte, 0, 80+len(l.url))
	b = append(b, tokenVersion, l.kind)
	b = putID(b, l.workspaceID)
	b = putID(b, l.requestID)
	b = putID(b, l.campaignID)
	b = binary.AppendUvarint(b, uint64(l.index))
	b = binary.AppendVarint(b, l.sentAt.Unix())
	b = append(b, l.url...)
	m := s.mac()
	m.Write(b)
	b = m.Sum(b)[:len(b)+macLen]
	s.macs.Put(m)
	return base64.RawURLEncoding.EncodeToString(b)
}

// verify decodes a token and checks its MAC in constant time; ok is false
// for anything but a token this service signed, unchanged.
func (s *Service) verify(tok string, kind byte) (l link, ok bool) {
	if len(tok) > maxToken || len(tok) < 8 {
		return l, false
	}
	b, err := base64.RawURLEncoding.DecodeString(tok)
	if err != nil || len(b) < 2+macLen {
		return l, false
	}
	body, mac := b[:len(b)-macLen], b[len(b)-macLen:]
	m := s.mac()
	m.Write(body)
	var sum [sha256.Size]byte
	good := hmac.Equal(m.Sum(sum[:0])[:macLen], mac)
	s.macs.Put(m)
	if !good {
		return l, false
	}
	if body[0] != tokenVersion || body[1] != kind {
		return l, false
	}
	l.kind = body[1]
	rest := body[2:]
	if l.workspaceID, rest, ok = getID(rest); !ok {
		return l, false
	}
	if l.requestID, rest, ok = getID(rest); !ok {
		return l, false
	}
	if l.campaignID, rest, ok = getID(rest); !ok {
		return l, false
	}
	idx, n := binary.Uvarint(rest)
	if n <= 0 || idx > 1<<20 {
		return l, false
	}
	rest = rest[n:]
	sent, n := binary.Varint(rest)
	if n <= 0 {
		return l, false
	}
	l.index, l.sentAt, l.url = int(idx), time.Unix(sent, 0).UTC(), string(rest[n:])
	return l, l.workspaceID != "" && l.requestID != ""
}

// mac is a reset HMAC of the token key from the pool (a campaign signs
// several per mail, the redirect one per click).
func (s *Service) mac() hash.Hash {
	if m, ok := s.macs.Get().(hash.Hash); ok {
		m.Reset()
		return m
	}
	return hmac.New(sha256.New, s.key)
}

// putID appends an id: a canonical UUID as 0xFF and its 16 bytes (ids
// are UUIDs, and the links stay short), anything else as its length
// (under 255) and bytes.
func putID(b []byte, id string) []byte {
	if u, ok := uuidBytes(id); ok {
		return append(append(b, 0xFF), u[:]...)
	}
	if len(id) >= 0xFF {
		id = id[:0xFE]
	}
	return append(append(b, byte(len(id))), id...)
}

func getID(b []byte) (string, []byte, bool) {
	if len(b) == 0 {
		return "", nil, false
	}
	if b[0] == 0xFF {
		if len(b) < 17 {
			return "", nil, false
		}
		return uuidString(b[1:17]), b[17:], true
	}
	n := int(b[0])
	if len(b) < 1+n {
		return "", nil, false
	}
	return string(b[1 : 1+n]), b[1+n:], true
}

// uuidBytes parses a lowercase canonical UUID (8-4-4-4-12), as
// usecase.NewID writes them; anything else is not compressed, so it
// comes back exactly as it was.
func uuidBytes(s string) (u [16]byte, ok bool) {
	if len(s) != 36 || s[8] != '-' || s[13] != '-' || s[18] != '-' || s[23] != '-' {
		return u, false
	}
	h := s[0:8] + s[9:13] + s[14:18] + s[19:23] + s[24:36]
	for i := 0; i < len(h); i++ {
		if c := h[i]; !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
			return u, false
		}
	}
	if _, err := hex.Decode(u[:], []byte(h)); err != nil {
		return u, false
	}
	return u, true
}

func uuidString(b []byte) string {
	h := hex.EncodeToString(b)
	return h[0:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:32]
}

// urlHash keys a campaign's link by its URL.
func urlHash(u string) string {
	h := sha256.Sum256([]byte(u))
	return hex.EncodeToString(h[:12])
}
