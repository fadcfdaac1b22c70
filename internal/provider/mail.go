package provider

import (
	"bytes"
	"encoding/json"
	"fmt"
	"mime"
	"sort"
	"strings"
)

// What the e-mail adapters share: the From of a display name and an
// address, extra headers as a list, and JSON that keeps "<" and "&".

// MailFrom builds a From, "Name <addr>", for vendors that encode a
// non-ASCII display name themselves (Postmark): such a name is left as
// UTF-8. The name is quoted when it holds characters outside RFC 5322
// atext (a comma or a dot would otherwise split or break the address); CR
// and LF are dropped so a name cannot add a header.
func MailFrom(name, addr string) string {
	name = cleanName(name)
	switch {
	case name == "":
		return addr
	case needsQuoting(name):
		return quoteName(name) + " <" + addr + ">"
	}
	return name + " <" + addr + ">"
}

// MailFromASCII builds a From for vendors that do not encode display
// names (SES): a non-ASCII name goes as an RFC 2047 encoded word, an ASCII
// name as MailFrom writes it.
func MailFromASCII(name, addr string) string {
	name = cleanName(name)
	if !isASCII(name) {
		return mime.QEncoding.Encode("UTF-8", name) + " <" + addr + ">"
	}
	return MailFrom(name, addr)
}

func cleanName(name string) string {
	return strings.TrimSpace(strings.NewReplacer("\r", "", "\n", "").Replace(name))
}

func quoteName(name string) string {
	return `"` + strings.NewReplacer(`\`, `\\`, `"`, `\"`).Replace(name) + `"`
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			return false
		}
	}
	return true
}

// needsQuoting reports whether name is not a run of atext words (UTF-8
// counting as atext, RFC 6532).
func needsQuoting(name string) bool {
	for _, r := range name {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == ' ', r >= 0x80:
		case strings.ContainsRune("!#$%&'*+-/=?^_`{|}~", r):
		default:
			return true
		}
	}
	return false
}

// MailHeader is one extra mail header as Postmark and SES take them.
type MailHeader struct {
	Name  string `json:"Name"`
	Value string `json:"Value"`
}

// MailHeaders lists h sorted by name, a stable payload for golden files
// and logs; nil when h is empty.
func MailHeaders(h map[string]string) []MailHeader {
	names := make([]string, 0, len(h))
	for k := range h {
		names = append(names, k)
	}
	sort.Strings(names)
	var out []MailHeader
	for _, k := range names {
		out = append(out, MailHeader{Name: k, Value: h[k]})
	}
	return out
}

// EncodeJSON encodes v without HTML escaping, so that "Name <addr>" and
// HTML bodies go out as written.
func EncodeJSON(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, fmt.Errorf("marshal: %w", err)
	}
	return bytes.TrimRight(b.Bytes(), "\n"), nil
}
