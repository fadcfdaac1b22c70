package otp

import (
	"strconv"
	"strings"
)

// DefaultCountryCode is the country of a phone number written without an
// international prefix when a workspace names none: the Korean vendors of
// PROVIDERS.md send to country 82 unless told otherwise, so a national
// number such as 010-1234-5678 is a Korean number.
const DefaultCountryCode = "82"

// callingCodes are the ITU-T E.164 country calling codes assigned to a
// country, territory or international service (global networks such as
// 881-883, which SMS pumping favours, included). The set is prefix-free:
// no code is the beginning of another, so a number has at most one.
var callingCodes = func() map[string]bool {
	m := map[string]bool{"1": true, "7": true}
	for _, c := range strings.Fields(`
		20 27 30 31 32 33 34 36 39 40 41 43 44 45 46 47 48 49 51 52 53 54 55 56 57 58
		60 61 62 63 64 65 66 81 82 84 86 90 91 92 93 94 95 98`) {
		m[c] = true
	}
	ranges := [][2]int{{211, 213}, {216, 216}, {218, 218}, {220, 258}, {260, 269}, {290, 291}, {297, 299},
		{350, 359}, {370, 383}, {385, 387}, {389, 389}, {420, 421}, {423, 423}, {500, 509}, {590, 599},
		{670, 670}, {672, 683}, {685, 692}, {800, 800}, {808, 808}, {850, 850}, {852, 853}, {855, 856},
		{870, 870}, {878, 878}, {880, 883}, {886, 886}, {888, 888}, {960, 968}, {970, 977}, {979, 979},
		{992, 996}, {998, 998}}
	for _, r := range ranges {
		for c := r[0]; c <= r[1]; c++ {
			m[strconv.Itoa(c)] = true
		}
	}
	return m
}()

// IsCallingCode reports whether cc (digits, no '+') is an assigned
// country calling code.
func IsCallingCode(cc string) bool { return callingCodes[cc] }

// Destination is where a phone number leads: its country calling code and
// its national significant number (without the national trunk prefix 0).
type Destination struct {
	CountryCode string
	National    string
}

// ParseDestination reads a phone number as NormalizePhone left it:
//
//   - "+<digits>": E.164; the country code is the one assigned code the
//     digits start with (1 to 3 digits, the set is prefix-free).
//   - "00<digits>": an international prefix without '+'. Which carrier
//     prefix it is (00, 001, 002, 00700, ...) depends on the sender's
//     country, so the destination is not known: ok is false.
//   - any other digits: a national number of defaultCC; one leading 0 (the
//     trunk prefix, as in 010-1234-5678) is dropped from the national part.
//
// ok is false when the country cannot be established (also for a '+'
// number with no assigned code). National then holds the digits after
// the prefix, for counting.
func ParseDestination(normalized, defaultCC string) (d Destination, ok bool) {
	switch {
	case strings.HasPrefix(normalized, "+"):
		digits := normalized[1:]
		for n := 1; n <= 3 && n <= len(digits); n++ {
			if callingCodes[digits[:n]] {
				return Destination{CountryCode: digits[:n], National: digits[n:]}, true
			}
		}
		return Destination{National: digits}, false
	case strings.HasPrefix(normalized, "00"):
		return Destination{National: normalized[2:]}, false
	}
	return Destination{CountryCode: defaultCC, National: strings.TrimPrefix(normalized, "0")}, true
}
