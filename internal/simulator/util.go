package simulator

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"
)

// writeJSON answers v as JSON with the given status.
func writeJSON(w http.ResponseWriter, status int, v any) {
	writeJSONType(w, status, "application/json; charset=utf-8", v)
}

func writeJSONType(w http.ResponseWriter, status int, contentType string, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		http.Error(w, "simulator: "+err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", contentType)
	w.Header().Set("Content-Length", strconv.Itoa(len(b)))
	w.WriteHeader(status)
	_, _ = w.Write(b)
}

// writeText answers a plain body, as Slack webhooks and load balancers do.
func writeText(w http.ResponseWriter, status int, contentType, body string) {
	w.Header().Set("Content-Type", contentType)
	w.Header().Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(status)
	_, _ = io.WriteString(w, body)
}

// writeGatewayError mimics the HTML error page a vendor's front proxy answers
// for 5xx (and for vendors without a JSON error format).
func writeGatewayError(w http.ResponseWriter, status int) {
	if status == http.StatusTooManyRequests {
		w.Header().Set("Retry-After", "1")
	}
	text := http.StatusText(status)
	writeText(w, status, "text/html; charset=utf-8",
		fmt.Sprintf("<html>\r\n<head><title>%d %s</title></head>\r\n<body>\r\n<center><h1>%d %s</h1></center>\r\n</body>\r\n</html>\r\n", status, text, status, text))
}

// readBody reads the whole (size-capped) body.
func readBody(r *http.Request) ([]byte, error) {
	return io.ReadAll(r.Body)
}

// isTooLarge reports whether err comes from http.MaxBytesReader.
func isTooLarge(err error) bool {
	var mbe *http.MaxBytesError
	return errors.As(err, &mbe)
}

// parseForm reads a urlencoded or multipart body, as Aligo accepts both.
// Query parameters are ignored: the vendors read the body only.
func parseForm(r *http.Request) (url.Values, error) {
	ct, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type"))
	switch ct {
	case "multipart/form-data":
		if err := r.ParseMultipartForm(maxBody); err != nil {
			return nil, err
		}
	case "application/x-www-form-urlencoded":
		if err := r.ParseForm(); err != nil {
			return nil, err
		}
	default:
		return nil, fmt.Errorf("content type %q is not a form", ct)
	}
	return r.PostForm, nil
}

// authToken returns the token of an "Authorization: <scheme> <token>" header,
// scheme compared case-insensitively as RFC 9110 says.
func authToken(r *http.Request, scheme string) (string, bool) {
	h := r.Header.Get("Authorization")
	if len(h) <= len(scheme)+1 || !strings.EqualFold(h[:len(scheme)], scheme) || h[len(scheme)] != ' ' {
		return "", false
	}
	t := strings.TrimSpace(h[len(scheme)+1:])
	return t, t != ""
}

// byteLen approximates the EUC-KR length Korean carriers count: ASCII one
// byte, everything else two.
func byteLen(s string) int {
	n := 0
	for _, r := range s {
		if r < 0x80 {
			n++
		} else {
			n += 2
		}
	}
	return n
}

// validPhone accepts a domestic or international number: digits with
// optional hyphens (and a leading +), 8 to 15 digits.
func validPhone(s string) bool {
	digits := 0
	for i, c := range s {
		switch {
		case c >= '0' && c <= '9':
			digits++
		case c == '-':
		case c == '+' && i == 0:
		default:
			return false
		}
	}
	return digits >= 8 && digits <= 15
}

func isLowerHex(s string, n int) bool {
	if len(s) != n {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
			return false
		}
	}
	return true
}

func isDigits(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// stringOrList decodes a JSON string or array of strings (Resend's to/cc/bcc).
func stringOrList(raw json.RawMessage) ([]string, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return nil, nil
	}
	var one string
	if err := json.Unmarshal(raw, &one); err == nil {
		return []string{one}, nil
	}
	var many []string
	if err := json.Unmarshal(raw, &many); err != nil {
		return nil, errors.New("must be a string or an array of strings")
	}
	return many, nil
}

// next returns a new sequence number, unique within this simulator.
func (s *core) next() uint64 { return s.seq.Add(1) }

// uuid formats a version-4-shaped UUID unique within this simulator.
func (s *core) uuid() string {
	n := s.next()
	r := s.instance
	return fmt.Sprintf("%08x-%04x-4%03x-%04x-%012x",
		uint32(r>>32), uint16(r>>16), uint16(r)&0xfff, 0x8000|uint16(n>>48)&0x3fff, n&0xffffffffffff)
}

// signedToken makes a stateless token valid until exp: checking it needs only
// the simulator's secret, no map of issued tokens.
func (s *core) signedToken(prefix string, exp time.Time) string {
	e := fmt.Sprintf("%016x", exp.Unix())
	return prefix + e + s.mac(prefix+e)
}

// checkToken reports whether tok was made by signedToken with prefix, and
// whether it is still valid.
func (s *core) checkToken(prefix, tok string) (known, valid bool) {
	if !strings.HasPrefix(tok, prefix) || len(tok) != len(prefix)+16+48 {
		return false, false
	}
	e := tok[len(prefix) : len(prefix)+16]
	if !hmac.Equal([]byte(tok[len(prefix)+16:]), []byte(s.mac(prefix+e))) {
		return false, false
	}
	exp, err := strconv.ParseInt(e, 16, 64)
	if err != nil {
		return false, false
	}
	return true, s.now().Unix() < exp
}

func (s *core) mac(msg string) string {
	m := hmac.New(sha256.New, s.secret[:])
	m.Write([]byte(msg))
	return hex.EncodeToString(m.Sum(nil))[:48]
}

// sigCache remembers recent Solapi signatures to answer DuplicatedSignature
// like the vendor. It keeps the newest sigCacheSize signatures (and at most 15
// minutes of them), so that memory stays bounded under load.
type sigCache struct {
	mu   sync.Mutex
	seen map[string]sigEntry
	ring []string
	pos  uint64
}

type sigEntry struct {
	slot uint64
	at   int64
}

const sigCacheSize = 1 << 16

func (c *sigCache) init() {
	c.seen = make(map[string]sigEntry, 1024)
	c.ring = make([]string, sigCacheSize)
}

// seenRecently records key and reports whether it was seen within window.
func (c *sigCache) seenRecently(key string, now time.Time, window time.Duration) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if e, ok := c.seen[key]; ok && now.Unix()-e.at < int64(window/time.Second) {
		return true
	}
	slot := c.pos % sigCacheSize
	if old := c.ring[slot]; old != "" {
		if e, ok := c.seen[old]; ok && e.slot == c.pos-sigCacheSize {
			delete(c.seen, old)
		}
	}
	c.ring[slot] = key
	c.seen[key] = sigEntry{slot: c.pos, at: now.Unix()}
	c.pos++
	return false
}
