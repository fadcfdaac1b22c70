package console_test

import (
	"net/http"
	"net/url"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestConsoleTemplatePreview: the template page previews a version with
// sample variables (substituted in title, text and html, the html shown as
// escaped source), lists the variables with no value, keeps a value's
// markup as text, takes a version or locale, and shows bad input with the
// form; a viewer may preview too.
func TestConsoleTemplatePreview(t *testing.T) {
	t.Parallel()
	f := setup(t)
	c := f.env.ConsoleLogin(t, f.env.Email, f.env.Password)
	const evil = `<script>alert(1)</script>`

	resp, _ := c.Post(t, "/templates", url.Values{"name": {"Receipt"}, "code": {"receipt"}, "channel": {"email"}})
	id := createdID(t, resp)
	resp, _ = c.Post(t, "/templates/"+id+"/versions", url.Values{"title": {"Order {{order}}"},
		"text": {"Hi {{name}}, order {{order}} ships {{day}}."}, "html": {"<p>Hi <b>{{name}}</b></p>"}})
	require.Equal(t, http.StatusSeeOther, resp.StatusCode)
	resp, _ = c.Post(t, "/templates/"+id+"/versions", url.Values{"title": {"v2 {{order}}"}, "text": {"Second {{name}}"}, "html": {""}})
	require.Equal(t, http.StatusSeeOther, resp.StatusCode)
	resp, _ = c.Post(t, "/templates/"+id+"/versions/1/publish", nil)
	require.Equal(t, http.StatusSeeOther, resp.StatusCode)

	_, body := c.Get(t, "/templates/"+id)
	require.Contains(t, body, `id="preview-form"`)
	require.NotContains(t, body, `id="preview-result"`)

	// The published version (what a send uses), one variable missing.
	resp, body = c.Post(t, "/templates/"+id+"/preview", url.Values{"variables": {"name=Kim " + evil + "\r\n order = A-17\n\n"}})
	require.Equal(t, http.StatusOK, resp.StatusCode, body)
	require.Contains(t, body, `<span id="preview-version">1</span>`)
	require.Contains(t, body, `<dd id="preview-title">Order A-17</dd>`, "spaces around name and value are trimmed")
	require.Contains(t, body, `<pre id="preview-text">Hi Kim &lt;script&gt;alert(1)&lt;/script&gt;, order A-17 ships .</pre>`, "a missing variable renders empty")
	require.Contains(t, body, `<pre id="preview-html">&lt;p&gt;Hi &lt;b&gt;Kim`, "the html is shown as source")
	require.Contains(t, body, `Kim &amp;lt;script&amp;gt;`, "the value escaped in the html, then the html escaped as text")
	require.NotContains(t, body, evil)
	require.NotContains(t, body, "<p>Hi <b>")
	require.Regexp(t, `<dd id="preview-missing"><span class="mono missing-variable">day</span></dd>`, body)
	require.Contains(t, body, `>name=Kim &lt;script&gt;`, "the form keeps the variables")

	// A chosen version, draft included; nothing missing.
	_, body = c.Post(t, "/templates/"+id+"/preview", url.Values{"variables": {"name=Lee\norder=9"}, "version": {"2"}})
	require.Contains(t, body, `<span id="preview-version">2</span>`)
	require.Contains(t, body, `<pre id="preview-text">Second Lee</pre>`)
	require.Contains(t, body, `<dd id="preview-missing">none</dd>`)
	require.NotContains(t, body, `id="preview-html"`)

	// Bad input: the page again with the problem and the form.
	resp, body = c.Post(t, "/templates/"+id+"/preview", url.Values{"variables": {"no equals sign"}})
	require.Equal(t, http.StatusBadRequest, resp.StatusCode)
	require.Contains(t, body, "variables are key=value lines")
	require.Contains(t, body, `>no equals sign</textarea>`)
	resp, body = c.Post(t, "/templates/"+id+"/preview", url.Values{"version": {"2"}, "locale": {"ko"}})
	require.Equal(t, http.StatusBadRequest, resp.StatusCode)
	require.Contains(t, body, "version and locale cannot both be given")
	resp, _ = c.Post(t, "/templates/"+id+"/preview", url.Values{"version": {"9"}})
	require.Equal(t, http.StatusNotFound, resp.StatusCode)

	// A viewer previews (it changes nothing); without the csrf token, 403.
	email, password := f.env.AddMember(t, "viewer")
	v := f.env.ConsoleLogin(t, email, password)
	_, body = v.Get(t, "/templates/"+id)
	require.Contains(t, body, `id="preview-form"`)
	require.NotContains(t, body, `id="version-form"`)
	resp, body = v.Post(t, "/templates/"+id+"/preview", url.Values{"variables": {"name=Park"}})
	require.Equal(t, http.StatusOK, resp.StatusCode)
	require.Contains(t, body, "<pre id=\"preview-text\">Hi Park, order  ships .</pre>")
	resp, _ = v.Post(t, "/templates/"+id+"/preview", url.Values{"variables": {"name=Park"}, "csrf": {""}})
	require.Equal(t, http.StatusForbidden, resp.StatusCode)
}
