// Package render fills {{variable}} placeholders in message bodies (SPEC
// "Send a notification" rule 3.5 and the campaign contentText rule). It is
// a hand-written single pass without regular expressions because campaign
// fan-out runs it once per recipient, up to 100,000 times per campaign.
package render

import (
	"html"
	"math"
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
// "{{...}}" cannot inject further substitutions.
//
// The output is bounded: when it would be longer than limit characters
// (runes; a byte that is not UTF-8 counts as one), Substitute returns ""
// and false, having allocated nothing (issue 29: "{{a}}" repeated 100,000
// times with a 500 KB value asked for 50 GB). An output that fits is
// allocated once, at its exact size. When s holds no "{{", s itself is
// returned without allocating.
func Substitute(s string, vars map[string]string, limit int) (string, bool) {
	return substitute(s, source{vars: vars}, false, limit)
}

// SubstituteUnicode is Substitute with names of any Unicode letters,
// digits, combining marks and underscore, for campaign contentText, where
// SPEC allows non-ASCII variable names ("{{이름}}"). Marks are included so
// that names in scripts that need them (for example Devanagari vowel
// signs) work.
func SubstituteUnicode(s string, vars map[string]string, limit int) (string, bool) {
	return substitute(s, source{vars: vars}, true, limit)
}

// Fill is Substitute for a layout part s whose placeholder named slot
// (see Slot) takes body, as is: body is not scanned, and vars[slot] is not
// used. The whole output, body included, is held to limit characters.
func Fill(s, slot, body string, vars map[string]string, limit int) (string, bool) {
	return substitute(s, source{vars: vars, slot: slot, body: body, hasSlot: true}, false, limit)
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

// source gives the value of a placeholder: vars[name], or body for the
// slot of a layout (Fill).
type source struct {
	vars       map[string]string
	slot, body string
	hasSlot    bool
}

func (src *source) value(name string) string {
	if src.hasSlot && name == src.slot {
		return src.body
	}
	return src.vars[name]
}

// substitute renders s in up to three passes over its pieces (walk), none
// of which allocates until the output is known to fit: the sum of the
// pieces' bytes, stopped past utf8.UTFMax bytes a character (then it
// cannot fit); when that sum is over limit, a count of their characters,
// stopped past limit; then the writing, into a buffer of the exact size.
// A fitting output of limit bytes or less (the common case) is never
// counted in characters. Each pass stops early, so none runs longer than
// s itself plus limit×UTFMax bytes, whatever the values repeat.
func substitute(s string, src source, unicodeNames bool, limit int) (string, bool) {
	i := strings.Index(s, "{{")
	if i < 0 {
		if !fits(s, limit) {
			return "", false
		}
		return s, true
	}
	maxBytes := limit
	if limit < math.MaxInt/utf8.UTFMax {
		maxBytes = limit * utf8.UTFMax
	}
	size := 0
	if !walk(s, i, &src, unicodeNames, func(p string) bool {
		size += len(p)
		return size <= maxBytes
	}) {
		return "", false
	}
	if size > limit {
		chars := 0
		if !walk(s, i, &src, unicodeNames, func(p string) bool {
			chars += utf8.RuneCountInString(p)
			return chars <= limit
		}) {
			return "", false
		}
	}
	var b strings.Builder
	b.Grow(size)
	walk(s, i, &src, unicodeNames, func(p string) bool {
		b.WriteString(p)
		return true
	})
	return b.String(), true
}

// fits reports whether s has at most limit characters, counting them only
// when s has more than limit bytes.
func fits(s string, limit int) bool {
	return len(s) <= limit || utf8.RuneCountInString(s) <= limit
}

// walk calls emit with the pieces of s's rendering in order: the text
// between placeholders and each placeholder's value (src), from the first
// "{{" at i on. It stops, returning false, as soon as emit does.
func walk(s string, i int, src *source, unicodeNames bool, emit func(string) bool) bool {
	start := 0 // first byte of s not yet emitted
	for {
		from := i + 1 // not a placeholder: look again from the next byte, so "{{{x}}}" still finds "{{x}}"
		if name, end, ok := placeholder(s, i+2, unicodeNames); ok {
			if !emit(s[start:i]) || !emit(src.value(name)) {
				return false
			}
			start, from = end, end
		}
		next := strings.Index(s[from:], "{{")
		if next < 0 {
			return emit(s[start:])
		}
		i = from + next
	}
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
