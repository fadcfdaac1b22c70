// Package redact hides the secrets that travel in URLs (OTP link tokens,
// unsubscribe tokens, inbound hook tokens, query tokens) before a path or
// a query reaches a log line or an error text. It is the one list of
// where such secrets sit: a new kind of token in a URL is added here.
package redact

import (
	"net/url"
	"strings"
)

// Mask replaces a secret.
const Mask = "[redacted]"

// tokenPaths are the path prefixes whose next segment is a bearer secret,
// with the segments that are route names there rather than secrets.
var tokenPaths = []struct {
	prefix string
	keep   []string
}{
	{"/v1/otp/link/", nil},
	// An unsubscribe token put in the path instead of the query.
	{"/v1/newsletter/unsubscribe/", []string{"one-click"}},
	// Inbound hooks (issue 36): /v1/hooks/{token}[/{topic}], and the
	// Apprise API's layout /v1/hooks/notify/{token}.
	{"/v1/hooks/notify/", nil},
	{"/v1/hooks/", []string{"notify"}},
	// Tracked links and open pixels (issue 35): the token names a
	// request and carries the link's URL, which may be personal.
	{"/t/c/", nil},
	{"/t/o/", nil},
}

// Path is p with the secret segment of a token path replaced by Mask.
func Path(p string) string {
	for _, tp := range tokenPaths {
		rest, ok := strings.CutPrefix(p, tp.prefix)
		if !ok || rest == "" {
			continue
		}
		token, tail, _ := strings.Cut(rest, "/")
		for _, k := range tp.keep {
			if token == k {
				token = ""
			}
		}
		if token == "" {
			continue
		}
		p = tp.prefix + Mask
		if tail != "" {
			p += "/" + tail
		}
		return p
	}
	return p
}

// queryKeys are the query parameters that carry secrets.
var queryKeys = []string{"token", "access_token", "auth"}

// Query is the raw query q with the values of secret parameters replaced
// by Mask; other parameters are kept as given. A query that does not
// parse is hidden whole.
func Query(q string) string {
	if q == "" {
		return ""
	}
	vs, err := url.ParseQuery(q)
	if err != nil {
		return Mask
	}
	changed := false
	for _, k := range queryKeys {
		if _, ok := vs[k]; ok {
			for i := range vs[k] {
				vs[k][i] = Mask
			}
			changed = true
		}
	}
	if !changed {
		return q
	}
	return strings.ReplaceAll(vs.Encode(), url.QueryEscape(Mask), Mask)
}

// Target is a request target (path and optional query) as logs and error
// texts may show it.
func Target(u *url.URL) string {
	p := Path(u.Path)
	if q := Query(u.RawQuery); q != "" {
		p += "?" + q
	}
	return p
}
