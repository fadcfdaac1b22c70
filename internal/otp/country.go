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
// its national part (without the national trunk prefix), and the
// canonical form of the whole number.
type Destination struct {
	CountryCode string // "" when the country cannot be told
	// National is the national part without its trunk prefix; when the
	// country cannot be told, the digits after the '+' or the
	// international access prefix.
	National string
	// Canonical is the number in one spelling for every way of writing
	// it: '+', the calling code, then National ("+821012345678" for
	// 010-1234-5678, +82 10 1234 5678 and +82 010 1234 5678). A number
	// whose national part starts with an international access prefix
	// keeps it ("+8200447700900123" for +82 0044 7700900123 and, in
	// country 82, 0044 7700900123). It is the recipient's key for SPEC's
	// per-recipient counts and the guard's deny-list.
	Canonical string
}

// dialPlan is how numbers of one calling code are written after it, where
// that differs from the usual trunk prefix 0 and international access
// prefix 00 (ITU-T operational bulletins, as libphonenumber's metadata
// records them). An entry is listed only when its prefixes cannot begin
// one of the country's own numbers, so reading them cannot refuse a real
// number; countries whose other access prefixes can (Chile, Finland,
// China's carrier prefixes...) keep the default.
type dialPlan struct {
	trunk string // national trunk prefix, dropped from the national part
	// trunkDigits, when set, drops the trunk only before exactly that
	// many digits: in country 7 an 8 is the trunk prefix and also the
	// first digit of area codes such as 812.
	trunkDigits int
	access      []string // international access prefixes
}

var defaultPlan = dialPlan{trunk: "0", access: []string{"00"}}

var dialPlans = func() map[string]dialPlan {
	m := map[string]dialPlan{
		"1":   {trunk: "1", access: []string{"011", "0"}}, // NANP numbers begin with 2-9
		"7":   {trunk: "8", trunkDigits: 10, access: []string{"810", "0"}},
		"36":  {trunk: "06", access: []string{"00"}},
		"52":  {access: []string{"00", "09"}},
		"64":  {trunk: "0", access: []string{"0161", "00"}},
		"81":  {trunk: "0", access: []string{"010", "00"}},
		"235": {access: []string{"00", "16"}},
		"692": {trunk: "1", access: []string{"011", "0"}},
		"886": {trunk: "0", access: []string{"019", "00"}},
		"972": {trunk: "0", access: []string{"00", "012", "013", "014", "015", "016", "017", "018", "019"}},
		// The 0 begins numbers here (Italian landlines, West and Central
		// African mobiles, Tajik mobiles even with 00): no trunk prefix.
		"992": {access: []string{"810"}},
	}
	for _, cc := range []string{"39", "225", "226", "227", "229", "241", "242", "378"} {
		m[cc] = dialPlan{access: []string{"00"}}
	}
	// No trunk prefix, no number begins with 0, and every international
	// access prefix does.
	for _, cc := range []string{"65", "230", "238", "248", "677", "679", "680", "685", "960"} {
		m[cc] = dialPlan{access: []string{"0"}}
	}
	return m
}()

// accessPrefix is the international access prefix w (a national part as
// written) starts with, the longest one; "" when none.
func (p dialPlan) accessPrefix(w string) string {
	best := ""
	for _, a := range p.access {
		if len(a) > len(best) && strings.HasPrefix(w, a) {
			best = a
		}
	}
	return best
}

// national drops the trunk prefix from w.
func (p dialPlan) national(w string) string {
	if p.trunk != "" && strings.HasPrefix(w, p.trunk) && (p.trunkDigits == 0 || len(w)-len(p.trunk) == p.trunkDigits) {
		return w[len(p.trunk):]
	}
	return w
}

// ParseDestination reads a phone number as NormalizePhone left it:
//
//   - "+<digits>": E.164; the country code is the one assigned code the
//     digits start with (1 to 3 digits, the set is prefix-free), the rest
//     is the national part as written.
//   - any other digits: the national part of a number of defaultCC.
//
// The national part is then read by the country's plan: one trunk prefix
// (0 in most countries; as in 010-1234-5678 or +82 010 1234 5678) is
// dropped. A national part that starts with an international access
// prefix (00 in most countries, as in 0014155550100 or
// +82 0044 7700900123) leads abroad through a carrier that the prefix
// names (001, 002, 00700...) and the sender's country decides, so the
// destination is not known: ok is false. ok is false too for a '+'
// number with no assigned code.
func ParseDestination(normalized, defaultCC string) (d Destination, ok bool) {
	cc, w := defaultCC, normalized
	if digits, intl := strings.CutPrefix(normalized, "+"); intl {
		cc = ""
		for n := 1; n <= 3 && n <= len(digits); n++ {
			if callingCodes[digits[:n]] {
				cc, w = digits[:n], digits[n:]
				break
			}
		}
		if cc == "" {
			return Destination{National: digits, Canonical: normalized}, false
		}
	}
	p, listed := dialPlans[cc]
	if !listed {
		p = defaultPlan
	}
	if a := p.accessPrefix(w); a != "" {
		return Destination{National: w[len(a):], Canonical: "+" + cc + w}, false
	}
	n := p.national(w)
	return Destination{CountryCode: cc, National: n, Canonical: "+" + cc + n}, true
}
