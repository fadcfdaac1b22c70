package notifytest

import (
	"bytes"
	"html"
	"io"
	"mime/multipart"
	"net/http"
	"net/url"
	"testing"

	"github.com/stretchr/testify/require"
)

// PostFile submits a multipart form (a file upload) to path: the fields
// of form, with c.CSRF in csrf unless form sets it (an empty value sends
// none), and content as the file of field named filename.
func (c *Console) PostFile(t testing.TB, path string, form url.Values, field, filename string, content []byte) (*http.Response, string) {
	t.Helper()
	if form == nil {
		form = url.Values{}
	}
	if _, ok := form["csrf"]; !ok {
		form.Set("csrf", c.CSRF)
	}
	var buf bytes.Buffer
	w := multipart.NewWriter(&buf)
	for k, vs := range form {
		for _, v := range vs {
			if k != "csrf" || v != "" {
				require.NoError(t, w.WriteField(k, v))
			}
		}
	}
	fw, err := w.CreateFormFile(field, filename)
	require.NoError(t, err)
	_, err = fw.Write(content)
	require.NoError(t, err)
	require.NoError(t, w.Close())
	req, err := http.NewRequest("POST", c.URL+path, &buf)
	require.NoError(t, err)
	req.Header.Set("Content-Type", w.FormDataContentType())
	resp, err := c.HTTP.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	if m := csrfRE.FindSubmatch(b); m != nil {
		c.CSRF = html.UnescapeString(string(m[1]))
	}
	return resp, string(b)
}
