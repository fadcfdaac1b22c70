package provider

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
)

// Sending identities: the adapters of the e-mail kinds implement the
// domain's notify.IdentityAPI (Kind.Identities), returning its errors
// (notify.ErrIdentity*, *notify.IdentityRefused) or a classified *Error
// for the vendor's other failures.

// IdentityCall sends one JSON request of an identity API through Do
// (in, when not nil, is the body). It returns the status and body of an
// answer that SPEC's status rules leave to the adapter (2xx, and 4xx other
// than 401, 403 and 429); transport failures and those statuses are *Error.
func IdentityCall(ctx context.Context, client *http.Client, method, url string, header http.Header, in any) (int, []byte, error) {
	h := header.Clone()
	h.Set("Accept", "application/json")
	c := Call{Method: method, URL: url, Header: h}
	if in != nil {
		b, err := json.Marshal(in)
		if err != nil {
			return 0, nil, err
		}
		h.Set("Content-Type", "application/json")
		c.Body, c.Logged = b, json.RawMessage(b)
	}
	ex, body, perr := Do(ctx, client, c)
	if perr != nil {
		return 0, nil, perr
	}
	return ex.Response.HTTPStatus, body, nil
}

// HostUnder qualifies a record name relative to domain ("send" becomes
// "send.example.com"); a name already under domain stays as it is.
func HostUnder(name, domain string) string {
	name = strings.TrimSuffix(strings.ToLower(name), ".")
	switch {
	case name == "" || name == "@":
		return domain
	case name == domain || strings.HasSuffix(name, "."+domain):
		return name
	}
	return name + "." + domain
}
