package compose

import (
	"errors"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/notifyd/notifyd/internal/notify"
)

// detail is err's 400 detail.
func detail(t *testing.T, err error) string {
	t.Helper()
	e, ok := notify.AsError(err)
	require.True(t, ok, "%v", err)
	require.Equal(t, notify.CodeValidation, e.Code)
	return e.Detail
}

// A layout's header and footer count toward the bound of the part they
// wrap, and the fields are named after the prefix (issue 29).
func TestRenderMessageBounds(t *testing.T) {
	vars := map[string]string{"a": strings.Repeat("a", 10_000), "q": `"`}
	body := Message{Title: "t", Text: strings.Repeat("x", 60_000), HTML: "<p>{{q}}</p>"}
	l := &notify.Layout{Text: "{{a}}{{a}}{{a}}{{a}}{{ content }}", HTML: "<main>{{content}}{{q}}</main>"}
	m, err := Render(body, l, vars, "")
	require.NoError(t, err)
	require.Len(t, m.Text, 100_000, "exactly the bound")
	require.Equal(t, "<main><p>&#34;</p>&#34;</main>", m.HTML)

	l.Text += "!"
	_, err = Render(body, l, vars, "items[3].")
	require.Equal(t, "items[3].content.text must be at most 100000 characters after template variables are put in", detail(t, err))
	var tl *RenderedTooLarge
	require.ErrorAs(t, err, &tl, "a field rule a bulk send refuses the call with")

	_, err = Render(Message{Title: "{{a}}", Text: "t"}, nil, vars, "channelFallback[0].")
	require.Equal(t, "channelFallback[0].content.title must be at most 200 characters after template variables are put in", detail(t, err))
	_, err = Render(Message{Title: "Hi {{s}}", Text: "t"}, nil, map[string]string{"s": "x\r\nBcc: y@example.net"}, "")
	require.Equal(t, "content.title must not contain control characters", detail(t, err))
	require.False(t, errors.As(err, &tl), "not a bound: a bulk send leaves the item out")
}
