// Package render fills {{variable}} placeholders in message bodies (SPEC
// "Send a notification" rule 3.5 and the campaign contentText rule). It is
// a hand-written single pass without regular expressions because campaign
// fan-out runs it once per recipient, up to 100,000 times per campaign.
package render

import (
	"html"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Substitute replaces every {{name}} in s with vars[name], where name is
// ASCII letters, digits and underscore (SPEC send rule 3.5). Spaces and
// tabs are allowed around the name inside the braces ("{{ name }}"). A
// name missing from vars becomes the empty string. Anything that is not a
// valid placeholder ("{{first-name}}", "{{}}", an unclosed "{{x") is left
// as is. Substituted values are not scanned again, so a value containing
// "{{...}}" cannot inject further substitutions. When s holds no "{{", s
// itself is returned without allocating.
func Substitute(s string, vars map[string]string) string {
	return substitute(s, vars, false)
}

// SubstituteUnicode is Substitute with names of any Unicode letters,
// digits, combining marks and underscore, for campaign contentText, where
// SPEC allows non-ASCII variable names ("{{이름}}"). Marks are included so
// that names in scripts that need them (for example Devanagari vowel
// signs) work.
func SubstituteUnicode(s string, vars map[string]string) string {
	return substitute(s, vars, true)
}

// HTMLEscapeVars returns a copy of vars with every value HTML-escaped, so
// that subscriber attributes or template variables substituted into an
// HTML body cannot add markup or scripts. The input is not modified.
func HTMLEscapeVars(vars map[string]string) map[string]string {
	out := make(map[string]string, len(vars))
	for k, v := range vars {
		out[k] = html.EscapeString(v)
	}
	return out
}

func substitute(s string, vars map[string]string, unicodeNames bool) string {
	i := strings.Index(s, "{{")
	if i < 0 {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + len(s)/4)
	start := 0 // first byte of s not yet written
	for {
		b.WriteString(s[start:i])
		if name, end, ok := placeholder(s, i+2, unicodeNames); ok {
			b.WriteString(vars[name])
			start = end
		} else {
			// Not a placeholder: keep one '{' and look again from the next
			// byte, so "{{{x}}}" still finds "{{x}}".
			b.WriteByte('{')
			start = i + 1
		}
		next := strings.Index(s[start:], "{{")
		if next < 0 {
			break
		}
		i = start + next
	}
	b.WriteString(s[start:])
	return b.String()
}

// placeholder parses `[ \t]* name [ \t]* "}}"` starting at j (just after
// "{{") and returns the name and the index just past "}}".
func placeholder(s string, j int, unicodeNames bool) (name string, end int, ok bool) {
	j = skipBlanks(s, j)
	n0 := j
	for j < len(s) {
		c := s[j]
		if c < utf8.RuneSelf {
			if !isASCIINameByte(c) {
				break
			}
			j++
			continue
		}
		if !unicodeNames {
			break
		}
		r, size := utf8.DecodeRuneInString(s[j:])
		if r == utf8.RuneError || !(unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.In(r, unicode.Mn, unicode.Mc)) {
			break
		}
		j += size
	}
	if j == n0 {
		return "", 0, false
	}
	name = s[n0:j]
	j = skipBlanks(s, j)
	if !strings.HasPrefix(s[j:], "}}") {
		return "", 0, false
	}
	return name, j + 2, true
}

func skipBlanks(s string, j int) int {
	for j < len(s) && (s[j] == ' ' || s[j] == '\t') {
		j++
	}
	return j
}

func isASCIINameByte(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '_'
}

// Names lists the names of the ASCII placeholders of s (the ones
// Substitute replaces), each once, in order of first appearance.
func Names(s string) []string { return names(s, false) }

// NamesUnicode is Names for SubstituteUnicode.
func NamesUnicode(s string) []string { return names(s, true) }

func names(s string, unicodeNames bool) []string {
	var out []string
	seen := map[string]bool{}
	placeholders(s, unicodeNames, func(name string, _, _ int) {
		if !seen[name] {
			seen[name] = true
			out = append(out, name)
		}
	})
	return out
}

// Slot splits s around its placeholders named slot ("{{content}}",
// blanks allowed inside the braces as in Substitute) and reports how many
// there are; before and after are set only when there is exactly one.
func Slot(s, slot string) (before, after string, n int) {
	placeholders(s, false, func(name string, start, end int) {
		if name == slot {
			n++
			before, after = s[:start], s[end:]
		}
	})
	if n != 1 {
		return "", "", n
	}
	return before, after, n
}

// placeholders calls fn with each placeholder of s, as substitute finds
// them: its name and the byte range from "{{" to past "}}".
func placeholders(s string, unicodeNames bool, fn func(name string, start, end int)) {
	for i := strings.Index(s, "{{"); i >= 0; {
		next := i + 1
		if name, end, ok := placeholder(s, i+2, unicodeNames); ok {
			fn(name, i, end)
			next = end
		}
		j := strings.Index(s[next:], "{{")
		if j < 0 {
			return
		}
		i = next + j
	}
}
