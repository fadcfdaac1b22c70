package compose

import (
	"strings"

	"github.com/notifyd/notifyd/internal/notify"
)

// Locales of template versions and sends (issue 21): a BCP 47 language
// tag made of a language (2 or 3 letters), then optionally a script (4
// letters), a region (2 letters or 3 digits) and variants (5 to 8 letters
// or digits, or 4 starting with a digit), joined by "-". Extensions and
// private-use subtags are not accepted. Tags are compared in their
// canonical case: language and variants lower case, script title case,
// region upper case ("zh-hant-tw" is "zh-Hant-TW").

const maxLocaleLen = 35

// ParseLocale checks a locale and returns it in canonical case; field
// names the value in the 400 detail.
func ParseLocale(field, s string) (string, error) {
	bad := notify.Invalid("%s must be a BCP 47 language tag such as ko, ko-KR or zh-Hant-TW", field)
	if s == "" || len(s) > maxLocaleLen {
		return "", bad
	}
	parts := strings.Split(s, "-")
	lang := parts[0]
	if len(lang) < 2 || len(lang) > 3 || !allASCII(lang, isLetter) {
		return "", bad
	}
	parts[0] = strings.ToLower(lang)
	stage := 0 // 1 after a script, 2 after a region, 3 in the variants
	for i := 1; i < len(parts); i++ {
		p := parts[i]
		switch {
		case stage < 1 && len(p) == 4 && allASCII(p, isLetter):
			parts[i], stage = strings.ToUpper(p[:1])+strings.ToLower(p[1:]), 1
		case stage < 2 && (len(p) == 2 && allASCII(p, isLetter) || len(p) == 3 && allASCII(p, isDigit)):
			parts[i], stage = strings.ToUpper(p), 2
		case (len(p) >= 5 && len(p) <= 8 || len(p) == 4 && isDigit(p[0])) && allASCII(p, isAlnum):
			parts[i], stage = strings.ToLower(p), 3
		default:
			return "", bad
		}
	}
	return strings.Join(parts, "-"), nil
}

// LocaleLookup lists the tags a send in locale looks for, most specific
// first: the tag, then the tag with its last subtag removed, down to the
// language ("zh-Hant-TW", "zh-Hant", "zh"; RFC 4647 lookup). After them
// comes the template's default locale, which is not in the list.
func LocaleLookup(locale string) []string {
	if locale == "" {
		return nil
	}
	out := []string{locale}
	for i := strings.LastIndexByte(locale, '-'); i > 0; i = strings.LastIndexByte(locale, '-') {
		locale = locale[:i]
		out = append(out, locale)
	}
	return out
}

func isLetter(c byte) bool { return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' }
func isDigit(c byte) bool  { return '0' <= c && c <= '9' }
func isAlnum(c byte) bool  { return isLetter(c) || isDigit(c) }

func allASCII(s string, ok func(byte) bool) bool {
	for i := 0; i < len(s); i++ {
		if !ok(s[i]) {
			return false
		}
	}
	return true
}
