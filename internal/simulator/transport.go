package simulator

import (
	"bytes"
	"io"
	"net/http"
	"strconv"
)

// Transport is an http.RoundTripper that answers every request from s in
// process, whatever host its URL names: it never dials. Only the path
// picks the vendor API, as on `notifyd simulate`'s one address. The
// daemon's test mode (issue 36) sends test requests' vendor calls
// through it; WithFault on a request's context makes that call fail.
func (s *Simulator) Transport() http.RoundTripper { return transport{s} }

type transport struct{ s *Simulator }

func (t transport) RoundTrip(r *http.Request) (*http.Response, error) {
	in := r.Clone(r.Context())
	in.RequestURI = r.URL.RequestURI()
	if in.Body == nil {
		in.Body = http.NoBody
	}
	if in.Host == "" {
		in.Host = r.URL.Host
	}
	w := &bufferedResponse{header: http.Header{}}
	t.s.ServeHTTP(w, in)
	if r.Body != nil {
		_ = r.Body.Close()
	}
	if w.status == 0 {
		w.status = http.StatusOK
	}
	return &http.Response{Status: strconv.Itoa(w.status) + " " + http.StatusText(w.status), StatusCode: w.status,
		Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1, Header: w.header, Body: io.NopCloser(&w.body),
		ContentLength: int64(w.body.Len()), Request: r}, nil
}

// bufferedResponse is the http.ResponseWriter of one call in process.
type bufferedResponse struct {
	header http.Header
	status int
	body   bytes.Buffer
}

func (b *bufferedResponse) Header() http.Header { return b.header }

func (b *bufferedResponse) WriteHeader(status int) {
	if b.status == 0 {
		b.status = status
	}
}

func (b *bufferedResponse) Write(p []byte) (int, error) {
	if b.status == 0 {
		b.status = http.StatusOK
	}
	return b.body.Write(p)
}
