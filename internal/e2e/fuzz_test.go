package e2e_test

import (
	"bytes"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/notifyd/notifyd/internal/api"
)

// FuzzHTTPSurface sends random requests at every route of the route table:
// a method (the route's or another), the route's path with random ids, a
// random header and body, and no credentials, the owner's dashboard token
// or a valid signature of an API key holding every scope. No answer may
// be a 5xx, and the server must not panic (a recovered panic is a 500).
// `go test` runs the seeds; CI fuzzes it for a bounded time
// (go test -fuzz=FuzzHTTPSurface -fuzztime=…).
func FuzzHTTPSurface(f *testing.F) {
	e := start(f)
	nk := createKey(f, e.Owner, map[string]any{"name": "fuzz",
		"scopes": []string{"notifications:send", "notifications:read", "otp:send", "otp:verify"}})
	key := e.anon()
	key.APIKey, key.HMACSecret = nk.Key, nk.HMACSecret
	routes := api.New(e.Daemon.APIOptions()).Routes()
	methods := []string{"GET", "POST", "PUT", "PATCH", "DELETE", "HEAD", "OPTIONS", "TRACE", "X-Custom"}

	f.Add(uint16(0), uint8(0), "00000000-0000-7000-8000-000000000000", []byte(`{"channel":"sms","recipient":{"address":"01012345678"},"content":{"text":"hi"}}`), uint8(2), "Content-Type", "application/json")
	f.Add(uint16(1), uint8(1), "x", []byte(`{"items":[{}]}`), uint8(2), "X-Nonce", "")
	f.Add(uint16(5), uint8(2), "../../etc", []byte(`{"email":"a@b.c","password":"x"}`), uint8(0), "X-Forwarded-For", "1.2.3.4")
	f.Add(uint16(9), uint8(3), "%00", []byte("\xff\xfe"), uint8(1), "Content-Length", "5")
	f.Add(uint16(20), uint8(4), "", []byte(`[]`), uint8(1), "Authorization", "Bearer x")
	f.Add(uint16(40), uint8(8), strings.Repeat("a", 300), []byte(`{"routes":[{"channel":"sms","priority":1e309}]}`), uint8(1), "Accept", "*/*")
	f.Add(uint16(60), uint8(0), "1", []byte(`{"a":{"b":{"c":[1,2,{"d":null}]}}}`), uint8(2), "X-Timestamp", "0")

	f.Fuzz(func(t *testing.T, routeIdx uint16, methodSel uint8, id string, body []byte, mode uint8, hname, hval string) {
		rt := routes[int(routeIdx)%len(routes)]
		method := rt.Method
		if methodSel%4 == 3 { // a quarter of the inputs use another method
			method = methods[int(methodSel)%len(methods)]
		}
		path := rt.Path
		for strings.Contains(path, "{") {
			i, j := strings.Index(path, "{"), strings.Index(path, "}")
			seg := strings.NewReplacer("/", "%2F", "?", "%3F", "#", "%23", " ", "%20", "{", "%7B", "}", "%7D").Replace(id)
			path = path[:i] + seg + path[j+1:]
		}
		req, err := http.NewRequest(method, e.Daemon.URL()+path, bytes.NewReader(body))
		if err != nil {
			return // not a request a client could send
		}
		if hname != "" && validHeader(hname, hval) {
			req.Header.Set(hname, hval)
		}
		switch mode % 3 {
		case 1:
			req.Header.Set("Authorization", "Bearer "+e.Owner.Token)
		case 2:
			key.SignHeaders(req, body)
		}
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			return // the server refused the bytes (malformed header): not a 5xx
		}
		b, _ := io.ReadAll(io.LimitReader(res.Body, 4096))
		_ = res.Body.Close()
		if res.StatusCode >= 500 {
			t.Fatalf("%s %s (mode %d, header %q): %d %s", method, path, mode%3, hname, res.StatusCode, b)
		}
	})
}

// validHeader leaves out header fields net/http refuses to send.
func validHeader(name, val string) bool {
	for _, c := range name {
		if c <= ' ' || c >= 0x7f || strings.ContainsRune("()<>@,;:\\\"/[]?={}", c) {
			return false
		}
	}
	for _, c := range val {
		if c == '\r' || c == '\n' || c == 0 {
			return false
		}
	}
	return !strings.EqualFold(name, "Host") && !strings.EqualFold(name, "Content-Length") && !strings.EqualFold(name, "Transfer-Encoding")
}
